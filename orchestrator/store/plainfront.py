"""The frontmatter orch writes, read without PyYAML's constructor: a fast path, exact or silent.

Reading 10,000 memory files is mostly PyYAML building Python objects node by node (its C
parser only scans). The files orch writes have one plain shape: `key: value` lines, a
block list of strings or of small mappings (`citations`), and one-line flow mappings
(`verified: {commit: ..., at: '...'}`). `plain_mapping` reads that shape and nothing
else: every scalar is either single-quoted or plain and then typed by PyYAML's own
implicit resolvers (a plain scalar that would not be text, other than a decimal integer,
is left to PyYAML). On anything outside the shape (double quotes, comments, anchors,
tags, blank lines, tabs, multi-line scalars, repeated keys, characters YAML refuses) it
returns None and the caller loads the text with PyYAML, so what a file means never
depends on which path read it (a test holds the two equal).

A `PlainReader` reads the files of one listing: it keeps the keys and how each scalar and
flow mapping it met reads, as a store's files repeat most of theirs (`type: reference`,
`status: active`, the keys, `verified: {...}`), and forgets them with itself.
"""

from __future__ import annotations

import re
from typing import Any

from yaml.nodes import ScalarNode
from yaml.reader import Reader
from yaml.resolver import Resolver

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?")
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_QUOTED = re.compile(r"'((?:[^']|'')*)'")
# what may open a plain scalar (PyYAML's indicators, a space and a dash excluded)
_PLAIN_START = re.compile(r"[^-?:,\[\]{}#&*!|>'\"%@` ]")
# a flow mapping item: `key: value`, the value single-quoted or plain without flow
# indicators or colons
_FLOW_ITEM = re.compile(
    r"([A-Za-z_][A-Za-z0-9_]*): ('(?:[^']|'')*'|[^,\[\]{}:#'\"\s][^,\[\]{}:#]*)"
)
# what the plain shape refuses: what YAML refuses (PyYAML's own compiled pattern: compiling
# a copy of it costs more than the rest of this module's import) and what YAML reads in a
# way this reader does not (tabs, other line breaks, a byte-order mark)
_NON_PRINTABLE = Reader.NON_PRINTABLE
_REFUSED = re.compile("[\t\r\x85\u2028\u2029\ufeff]")


def _readable(text: str) -> bool:
    """Whether every character of `text` is one the plain shape reads: neither refused by
    YAML nor read by it in a way this reader does not."""
    if text.isascii():  # then that is printable ASCII and line feeds: one pass, no pattern
        return text.replace("\n", "").isprintable()
    return not (_REFUSED.search(text) or _NON_PRINTABLE.search(text))


class _Outside(Exception):
    """The text leaves the plain shape: PyYAML reads it."""


def plain_mapping(text: str, resolver: Resolver) -> dict[str, Any] | None:
    """The mapping `text` holds, when it has the plain shape; None when it has not (or is
    empty). `resolver` types plain scalars as the loader that would read it otherwise."""
    return PlainReader(resolver).mapping(text)


class PlainReader:
    """Reads texts of the plain shape, typing plain scalars with `resolver` (see the
    module docstring for what it keeps between texts)."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self._names: set[str] = set()  # the keys met: each a plain text scalar
        self._scalars: dict[str, Any] = {}  # a scalar's text -> its value (str or int)
        self._flows: dict[str, dict[str, Any]] = {}  # a flow mapping's text -> its mapping

    def mapping(self, text: str) -> dict[str, Any] | None:
        """The mapping `text` holds, when it has the plain shape; None when it has not (or
        is empty)."""
        if not text or not text.endswith("\n") or not _readable(text):
            return None
        lines = text[:-1].split("\n")
        try:
            return self._mapping(lines)
        except _Outside:
            return None

    def _mapping(self, lines: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        i = 0
        while i < len(lines):
            key, rest = self._key(lines[i])
            i += 1
            if rest is None:  # `key:` then a block list, or nothing (null)
                items = []
                while i < len(lines) and lines[i].startswith("- "):
                    item = [lines[i][2:]]
                    i += 1
                    while i < len(lines) and lines[i].startswith("  "):
                        item.append(lines[i][2:])
                        i += 1
                    items.append(self._item(item))
                value: Any = items or None
            else:
                value = self._value(rest)
            if key in out:
                raise _Outside
            out[key] = value
        return out

    def _key(self, line: str) -> tuple[str, str | None]:
        """(key, the text after `: `, or None after a bare `key:`)."""
        name, colon, rest = line.partition(":")
        if not colon or name not in self._names:  # a key not met yet: the full check
            match = _KEY.fullmatch(line)
            if match is None or self._tag(match.group(1)) != _STR:
                raise _Outside
            self._names.add(match.group(1))
            return match.group(1), match.group(2)
        if not rest:
            return name, None
        if rest[0] != " ":
            raise _Outside
        return name, rest[1:]

    def _item(self, lines: list[str]) -> Any:
        """One block list item: a scalar on one line, or a mapping of `key: scalar` lines."""
        if len(lines) == 1 and _KEY.fullmatch(lines[0]) is None:
            return self._scalar(lines[0])
        out: dict[str, Any] = {}
        for line in lines:
            key, rest = self._key(line)
            if rest is None or key in out:
                raise _Outside
            out[key] = self._scalar(rest)
        return out

    def _value(self, text: str) -> Any:
        if text == "[]":
            return []
        if text == "{}":
            return {}
        if text.startswith("{") and text.endswith("}"):
            return self._flow_mapping(text[1:-1])
        return self._scalar(text)

    def _flow_mapping(self, text: str) -> dict[str, Any]:
        """A one-line flow mapping's items; read once a text (files verified together
        share theirs), a copy each time: the caller owns what it gets."""
        known = self._flows.get(text)
        if known is None:
            known = self._flows[text] = self._flow_items(text)
        return dict(known)

    def _flow_items(self, text: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        at = 0
        while True:
            match = _FLOW_ITEM.match(text, at)
            if match is None or match.group(1) in out or self._tag(match.group(1)) != _STR:
                raise _Outside
            out[match.group(1)] = self._scalar(match.group(2))
            at = match.end()
            if at == len(text):
                return out
            if not text.startswith(", ", at):
                raise _Outside
            at += 2

    def _scalar(self, text: str) -> Any:
        """A single-quoted or plain scalar on one line, as PyYAML would load it."""
        if text in self._scalars:
            return self._scalars[text]
        quoted = _QUOTED.fullmatch(text)
        if quoted is not None:
            value: Any = quoted.group(1).replace("''", "'")
        elif (
            not _PLAIN_START.match(text)
            or text != text.rstrip(" ")
            or ": " in text
            or " #" in text
            or text.endswith(":")
        ):
            raise _Outside
        else:
            tag = self._tag(text)
            if tag == _STR:
                value = text
            elif tag == _INT and _DECIMAL.fullmatch(text):
                value = int(text)
            else:
                raise _Outside
        self._scalars[text] = value
        return value

    def _tag(self, text: str) -> str:
        if text[:1] not in self.resolver.yaml_implicit_resolvers:
            return _STR  # no implicit type starts with this character
        tag: str = self.resolver.resolve(ScalarNode, text, (True, False))
        return tag
