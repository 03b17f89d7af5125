"""A reader for the plain subset of YAML that memory frontmatter uses, without PyYAML.

`fast_frontmatter` accepts `key: scalar` lines, one-line `[...]`/`{...}` collections of
plain scalars, and `key:` followed by a block list of scalars or of flat `key: scalar`
mappings. Whatever it accepts, it reads exactly as PyYAML's safe loader does (with
timestamps left as text); anything else (anchors, tags, block scalars, comments, quoting
with escapes, numbers other than plain integers...) it declines with None, and the caller
uses PyYAML. Property tests hold it to PyYAML.
"""

from __future__ import annotations

import re
from typing import Any

from orchestrator.store.memfile import KEY_ORDER

# YAML 1.1 implicit types as PyYAML resolves plain scalars (timestamps excepted: orch's
# loader keeps them as text).
_NULL_WORDS = frozenset(("~", "null", "Null", "NULL", ""))
_TRUE_WORDS = frozenset(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"))
_FALSE_WORDS = frozenset(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"))
_SIMPLE_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
# ints, floats (PyYAML's patterns), merge `<<` and value `=`: anything not a plain string
_NUMBERISH = re.compile(
    r"""^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+
    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
    |[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
    |<<|=)$""",
    re.X,
)
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_ITEM_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?$")
# Characters that make YAML do more than read a plain line: decline the fast path.
# (control characters, surrogates, BOM, non-characters PyYAML refuses, and the line breaks
# YAML knows beside \n)
_UNSAFE_TEXT = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufeff\ufffe\uffff\u2028\u2029]"
)
_PLAIN_FIRST_BAD = frozenset("-?:,[]{}#&*!|>'\"%@`")
_FLOW_BAD = frozenset("[]{}'\"#,")


_KNOWN_KEYS = frozenset((*KEY_ORDER, "path", "line", "symbol", "task", "phase", "commit", "at"))


class _Decline(Exception):
    """The text uses YAML beyond the plain subset: let PyYAML read it."""


def _plain(value: str, *, flow: bool = False) -> Any:
    value = value.rstrip(" ")
    if value.startswith("'"):
        if flow or len(value) < 2 or not value.endswith("'"):
            raise _Decline
        inner = value[1:-1]
        if "'" in inner.replace("''", ""):
            raise _Decline
        return inner.replace("''", "'")
    if value.startswith('"'):
        inner = value[1:-1]
        if flow or len(value) < 2 or not value.endswith('"') or '"' in inner or "\\" in inner:
            raise _Decline
        return inner
    if value and (value[0] in _PLAIN_FIRST_BAD or value[0] == " "):
        raise _Decline
    if ": " in value or " #" in value or value.endswith(":"):
        raise _Decline
    if flow and any(c in _FLOW_BAD for c in value):
        raise _Decline
    if value in _NULL_WORDS:
        return None
    if value in _TRUE_WORDS:
        return True
    if value in _FALSE_WORDS:
        return False
    if not _NUMBERISH.match(value):
        return value
    if _SIMPLE_INT.match(value) and len(value) < 100:
        return int(value)
    raise _Decline


def _key(text: str) -> str:
    if text in _KNOWN_KEYS:
        return text
    if (
        not _PLAIN_KEY.match(text)
        or text in _NULL_WORDS
        or text in _TRUE_WORDS
        or text in _FALSE_WORDS
    ):
        raise _Decline
    return text


def _value(text: str) -> Any:
    """A value on the same line as its key: a scalar or a one-line flow collection."""
    text = text.strip(" ")
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip(" ")
        return [_plain(i.strip(" "), flow=True) for i in inner.split(",")] if inner else []
    if text.startswith("{") and text.endswith("}"):
        inner = text[1:-1].strip(" ")
        out: dict[str, Any] = {}
        for item in inner.split(",") if inner else []:
            k, sep, v = item.strip(" ").partition(": ")
            if not sep:
                raise _Decline
            k = _key(k)
            if k in out:
                raise _Decline
            out[k] = _plain(v.strip(" "), flow=True)
        return out
    return _plain(text)


def fast_frontmatter(fm_text: str) -> dict[str, Any] | None:
    """The frontmatter mapping if it uses only plain YAML (None: use PyYAML instead).

    Accepted: `key: scalar` lines, one-line `[...]`/`{...}` collections of plain scalars,
    and `key:` followed by a block list of scalars or of flat `key: scalar` mappings.
    Whatever it accepts, it reads exactly as PyYAML's safe loader (tests hold it to that).
    """
    if "\t" in fm_text or "\r" in fm_text or _UNSAFE_TEXT.search(fm_text):
        return None
    try:
        return _fast(fm_text)
    except _Decline:
        return None


def _fast(fm_text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    lines = [line for line in fm_text.split("\n") if line.strip(" ")]
    if not lines:
        raise _Decline  # PyYAML reads an empty document as null, not as a mapping
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _ITEM_KEY.match(line)
        if match is None:
            raise _Decline
        key = _key(match.group(1))
        if key in out:
            raise _Decline
        rest = match.group(2)
        i += 1
        if rest is not None and rest.strip(" "):
            out[key] = _value(rest)
            continue
        items, i = _block_list(lines, i)
        out[key] = items
    return out


def _block_list(lines: list[str], i: int) -> tuple[list[Any] | None, int]:
    """A block sequence under a top-level key (None when the key has no value at all)."""
    if i >= len(lines) or not lines[i].lstrip(" ").startswith("-"):
        return None, i
    indent = len(lines[i]) - len(lines[i].lstrip(" "))
    items: list[Any] = []
    while i < len(lines):
        line = lines[i]
        lead = len(line) - len(line.lstrip(" "))
        if lead == 0 and not line.startswith("-"):
            break  # the next top-level key
        if lead != indent or not line[indent:].startswith("- "):
            raise _Decline
        first = line[indent + 2 :]
        i += 1
        match = _ITEM_KEY.match(first)
        if match is None:
            items.append(_value(first))
            continue
        entry: dict[str, Any] = {}
        inner = indent + 2
        while True:
            k = _key(match.group(1))
            if k in entry or match.group(2) is None or not match.group(2).strip(" "):
                raise _Decline
            entry[k] = _value(match.group(2))
            if i >= len(lines):
                break
            nxt = lines[i]
            nlead = len(nxt) - len(nxt.lstrip(" "))
            if nlead <= indent:
                break
            if nlead != inner:
                raise _Decline
            match = _ITEM_KEY.match(nxt[inner:])
            if match is None:
                raise _Decline
            i += 1
        items.append(entry)
    return items, i
