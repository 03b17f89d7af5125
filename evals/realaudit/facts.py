"""Facts out of agent-memory files: where they sit, their text, and their subject.

Pure functions over a file's text (no I/O). A memory file (a Cline `memory-bank/` page, a
`.cursor/rules/*.mdc`, `.windsurfrules`, `.clinerules`, AGENTS.md or CLAUDE.md) is split
into facts: each list item (a nested item is its own fact) and each sentence of a
paragraph. Front matter, fenced code, tables, rules (`---`) and HTML comments are not
facts. A fact's subject is the heading it sits under, else the file's own name.

`split_facts` drafts the references once (`python -m evals.realaudit.draft`); afterwards the
evaluation rebuilds each fact from its recorded offsets (`fact_text`, `subject_at`) and
checks its sha256, so a change to the splitter never silently moves a labelled fact.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

MIN_WORDS = 3

_FENCE = re.compile(r"^\s*(?:```|~~~)\s*(\S*)")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+•]|\d{1,3}[.)])[ \t]+")
_RULE = re.compile(r"^\s*(?:[-*_=]\s*){3,}$|^\s*⸻\s*$")
_TABLE = re.compile(r"^\s*\|")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z`*\"(\[])")
_EDGE_NOISE = re.compile(r"^[\W_]+|[\W_]+$")
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*[.)]?|[A-Z][.)])\s+")


@dataclass(frozen=True)
class Span:
    """One fact's place in its file: character offsets [start, end) and 1-based line."""

    start: int
    end: int
    line: int


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fact_text(raw: str) -> str:
    """A span of the file as a one-paragraph fact: the list marker and quote marks off,
    lines joined, runs of white space as one space."""
    lines = [line.strip() for line in raw.splitlines()]
    lines = [line[1:].strip() if line.startswith(">") else line for line in lines]
    text = " ".join(line for line in lines if line)
    text = _BULLET.sub("", text, count=1)
    return " ".join(text.split())


def clean_heading(text: str) -> str:
    """A heading as a subject: no emphasis marks, numbering, emoji or trailing colon."""
    text = text.replace("**", "").replace("__", "").replace("`", "")
    text = _EDGE_NOISE.sub("", text.strip())
    text = _NUMBERING.sub("", text)
    text = _EDGE_NOISE.sub("", text)
    if text.count("(") > text.count(")"):  # the closing bracket went with the edge noise
        text += ")"
    return " ".join(text.split())


def default_subject(path: str) -> str:
    """The subject of a fact under no heading: the file's name in words
    (`.windsurfrules` -> "windsurfrules", `memory-bank/techContext.md` -> "tech context")."""
    stem = PurePosixPath(path).name.lstrip(".")
    stem = stem.split(".", 1)[0] or stem
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", stem)
    return " ".join(re.split(r"[\s_-]+", words)).lower()


def _in_code(fences: list[bool], line: str) -> bool | None:
    """Track fenced blocks; None for a fence line, else whether the line is inside code.
    `fences` is a stack (True: code, False: a ```markdown block, read as prose: some
    memory files wrap their whole text in one)."""
    match = _FENCE.match(line)
    if match is None:
        return bool(fences) and fences[-1]
    info = match.group(1).lower()
    if fences and fences[-1]:
        if not info:
            fences.pop()
    elif info in ("markdown", "md"):
        fences.append(False)
    elif not info and fences:
        fences.pop()
    else:
        fences.append(True)
    return None


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset of the line's first character, the line without its end)."""
    out: list[tuple[int, str]] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        out.append((offset, line.rstrip("\r\n")))
        offset += len(line)
    return out


def _front_matter_end(lines: list[tuple[int, str]]) -> int:
    """Index of the first line after any leading front matter blocks (`.mdc` files may
    carry two)."""
    i = 0
    while i < len(lines) and not lines[i][1].strip():
        i += 1
    while i < len(lines) and lines[i][1].strip() == "---":
        close = next((j for j in range(i + 1, len(lines)) if lines[j][1].strip() == "---"), None)
        if close is None:
            return i
        i = close + 1
        while i < len(lines) and not lines[i][1].strip():
            i += 1
    return i


def headings(text: str) -> list[tuple[int, str]]:
    """(offset, subject) of every heading outside fences, in order."""
    out: list[tuple[int, str]] = []
    fences: list[bool] = []
    lines = _lines(text)
    for offset, line in lines[_front_matter_end(lines) :]:
        code = _in_code(fences, line)
        if code is None:
            continue
        match = None if code else _HEADING.match(line)
        if match:
            subject = clean_heading(match.group(2))
            if subject:
                out.append((offset, subject))
    return out


def subject_at(text: str, path: str, offset: int) -> str:
    """The subject of the fact starting at `offset`: the nearest heading above it."""
    subject = default_subject(path)
    for at, heading in headings(text):
        if at > offset:
            break
        subject = heading
    return subject


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    cursor = start
    for match in _SENTENCE_END.finditer(text, start, end):
        out.append(_trim(text, cursor, match.start() + len(match.group(0).rstrip())))
        cursor = match.end()
    out.append(_trim(text, cursor, end))
    return [(a, b) for a, b in out if b > a]


def _is_fact(raw: str) -> bool:
    text = fact_text(raw)
    words = re.findall(r"[A-Za-z0-9][\w'/.-]*", text)
    if len(words) < MIN_WORDS:
        return False
    label_only = re.fullmatch(r"\*\*[^*]+\*\*:?|[^:]{0,40}:", text)
    return label_only is None


def split_facts(text: str) -> list[Span]:
    """Every fact of a memory file, in order."""
    lines = _lines(text)
    blocks: list[tuple[str, int, int]] = []  # (kind, start, end)
    kind: str | None = None
    fences: list[bool] = []
    body_from = _front_matter_end(lines)
    for number, (offset, line) in enumerate(lines, start=1):
        if number <= body_from:
            continue
        end = offset + len(line)
        stripped = line.strip()
        code = _in_code(fences, line)
        if code is None:
            kind = None
            continue
        if code or stripped.startswith("<!--"):
            continue
        if not stripped or _HEADING.match(line) or _RULE.match(line) or _TABLE.match(line):
            kind = None
            continue
        if _BULLET.match(line):
            kind = "item"
            blocks.append(("item", offset, end))
            continue
        if kind is not None:  # a paragraph's next line, or an item's (lazy) continuation
            last = blocks[-1]
            blocks[-1] = (last[0], last[1], end)
            continue
        kind = "para"
        blocks.append(("para", offset, end))

    spans: list[Span] = []
    for block_kind, start, end in blocks:
        parts = [(start, end)] if block_kind == "item" else _sentences(text, start, end)
        for a, b in parts:
            if _is_fact(text[a:b]):
                spans.append(Span(a, b, text.count("\n", 0, a) + 1))
    return spans
