"""A fast reader for frontmatter in the shape orch writes; PyYAML reads everything else.

Reading 10,000 memories without the parse cache (a fresh clone, the first audit) is bound
by PyYAML's constructor: about 110 us a file even with the C parser, more than the rest
of a listing. orch writes frontmatter in one narrow shape: `key: scalar` lines, block lists
(of scalars, or of flat `key: scalar` maps) that start at the key's own column, and
one-line flow maps. `read(text)` reads that shape only, in about a third of the time, and
returns None for anything else (comments, anchors, tags, block scalars, multi-line or
escaped scalars, tabs, nested indentation, duplicate keys...); the caller then hands the
text to PyYAML. Plain scalars are typed with PyYAML's own implicit resolvers (minus
timestamps, as in `memfile._yaml`), so `yes`, `1e3` or `~` mean what YAML says: only
strings and decimal integers are taken here, other types fall back.
tests/foundation/test_foundation_quickyaml.py holds the two readers equal on every text
this one answers, and checks that the files orch writes take this path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

STR = "tag:yaml.org,2002:str"
INT = "tag:yaml.org,2002:int"
_KEY = r"[A-Za-z_][A-Za-z0-9_-]*"
_TOP = re.compile(rf"({_KEY}):(?: (.+))?")
_ITEM_MAP = re.compile(rf"- ({_KEY}): (.+)")
_MORE = re.compile(rf"  ({_KEY}): (.+)")
_FLOW_PAIR = re.compile(rf"({_KEY}): ('[^',]*'|[^,:\[\]{{}}'\"]+)")
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
# what a plain scalar must not hold or start with to mean just its own text
_PLAIN_BAD = re.compile(r": |:$| #|^[-?:,\[\]{}#&*!|>'\"%@`\s]|\s$")
# characters that make PyYAML's reader or scanner do something this reader does not: tabs,
# carriage returns, YAML 1.1's other line breaks, the byte-order mark, non-printables
_ODD = re.compile(
    "[^\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_FAIL = object()


@cache
def _resolver() -> Callable[[str], str]:
    """PyYAML's implicit typing of a plain scalar (the tag it would give it)."""
    from orchestrator.store.memfile import _yaml

    _, loader, _ = _yaml()
    table: dict[Any, list[tuple[str, re.Pattern[str]]]] = loader.yaml_implicit_resolvers
    wildcard = table.get(None, [])
    by_first = {first: found + wildcard for first, found in table.items() if first is not None}

    def resolve(value: str) -> str:
        for tag, rx in by_first.get(value[:1], wildcard):
            if rx.match(value):
                return tag
        return STR

    return resolve


@lru_cache(maxsize=1024)
def _str_key(key: str) -> bool:
    return _resolver()(key) == STR


def _plain(raw: str) -> Any:
    if _PLAIN_BAD.search(raw):
        return _FAIL
    tag = _resolver()(raw)
    if tag == STR:
        return raw
    if tag == INT and _DECIMAL.fullmatch(raw):
        return int(raw)
    return _FAIL


def _scalar(raw: str) -> Any:
    if not raw:
        return _FAIL
    first = raw[0]
    if first == "'":
        inner = raw[1:-1]
        if len(raw) < 2 or raw[-1] != "'" or "'" in inner.replace("''", ""):
            return _FAIL
        return inner.replace("''", "'")
    if first == '"':
        inner = raw[1:-1]
        if len(raw) < 2 or raw[-1] != '"' or '"' in inner or "\\" in inner:
            return _FAIL
        return inner
    if raw == "[]":
        return []
    if raw == "{}":
        return {}
    if first == "{":
        return _flow_map(raw)
    return _plain(raw)


def _flow_map(raw: str) -> Any:
    if raw[-1] != "}" or "#" in raw:
        return _FAIL
    out: dict[str, Any] = {}
    for part in raw[1:-1].split(", "):
        m = _FLOW_PAIR.fullmatch(part)
        if m is None or m.group(1) in out or not _str_key(m.group(1)):
            return _FAIL
        raw = m.group(2)
        value = raw[1:-1] if raw[0] == "'" else _plain(raw)
        if value is _FAIL:
            return _FAIL
        out[m.group(1)] = value
    return out


def _key_ok(key: str, into: dict[str, Any]) -> bool:
    return key not in into and _str_key(key)


def read(text: str) -> dict[str, Any] | None:
    """The mapping `text` holds, when it is in orch's shape; None: ask PyYAML."""
    if _ODD.search(text):
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        return None
    out: dict[str, Any] = {}
    i, n = 0, len(lines)
    while i < n:
        m = _TOP.fullmatch(lines[i])
        if m is None or not _key_ok(m.group(1), out):
            return None
        key, raw = m.group(1), m.group(2)
        i += 1
        if raw is not None:
            value = _scalar(raw)
            if value is _FAIL:
                return None
            out[key] = value
            continue
        items: list[Any] = []
        while i < n and lines[i].startswith("- "):
            item = _item(lines, i)
            if item is None:
                return None
            value, i = item
            items.append(value)
        if not items:
            return None  # `key:` alone is null, or opens something this reader leaves alone
        out[key] = items
    return out


def _item(lines: list[str], i: int) -> tuple[Any, int] | None:
    """One block-list item starting at line `i`: its value and the line after it."""
    m = _ITEM_MAP.fullmatch(lines[i])
    if m is None:
        value = _scalar(lines[i][2:])
        if value is _FAIL or isinstance(value, dict):
            return None
        return value, i + 1
    entry: dict[str, Any] = {}
    i += 1
    pairs = [(m.group(1), m.group(2))]
    while i < len(lines) and lines[i].startswith("  "):
        more = _MORE.fullmatch(lines[i])
        if more is None:
            return None
        pairs.append((more.group(1), more.group(2)))
        i += 1
    for key, raw in pairs:
        if not _key_ok(key, entry):
            return None
        value = _scalar(raw)
        if value is _FAIL or isinstance(value, dict):
            return None
        entry[key] = value
    return entry, i
