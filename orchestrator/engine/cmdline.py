"""A shell command line, read the way `sh` reads it, into simple commands.

`parse(text)` returns a `Line`: its simple commands in order, each with its words (quotes
removed by `shlex`), its redirections, whether its input comes through a pipe (and from
which command), and the text of a here-string or here-document fed to it; plus the
command substitutions (`$(...)`, backticks, `<(...)`, `>(...)`) found anywhere, which run
too. A substitution's place in a word is taken by a placeholder (`SUBST`), so a program
whose name is only known at run time can be recognised.

Operators are split by a small scanner that knows quotes, escapes, comments, newlines and
here-documents; the words between them are split by `shlex` (POSIX rules). This is a
reader for a policy, not an interpreter: it never expands anything but the variables the
line itself assigns (`expand`).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

SUBST = "__orch_subst__"  # stands for a substitution's output inside a word
REDIRECTS = ("&>>", "<<<", "&>", ">>", ">|", ">&", "<&", "<>", ">", "<")
SEPARATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")")
OPERATORS = tuple(sorted(REDIRECTS + SEPARATORS, key=len, reverse=True))
WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z0-9_.-]+)\2")
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


class Unreadable(ValueError):
    """The line cannot be read (an unclosed quote or substitution)."""


@dataclass
class Simple:
    """One simple command: `words` after quote removal, `redirects` as (operator, target)."""

    words: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)
    pipe_from: Simple | None = None  # the command whose output this one reads
    stdin_text: str | None = None  # a here-string's or here-document's text

    @property
    def writes(self) -> list[str]:
        return [target for op, target in self.redirects if op in WRITES]


@dataclass
class Line:
    commands: list[Simple]
    substitutions: list[str]  # the text of every $(...), `...`, <(...), >(...)


# the scanner ---------------------------------------------------------------------------------


@dataclass
class _Scan:
    text: str
    i: int = 0
    raw: str = ""
    items: list[tuple[str, str]] = field(default_factory=list)  # ("raw"|"op", text)
    substitutions: list[str] = field(default_factory=list)
    docs: dict[str, str] = field(default_factory=dict)
    pending: list[tuple[str, str, bool]] = field(default_factory=list)  # heredocs to read

    def flush(self) -> None:
        if self.raw.strip():
            self.items.append(("raw", self.raw))
        self.raw = ""

    def op(self, op: str) -> None:
        if op in REDIRECTS:
            self.raw = re.sub(r"(^|\s)\d+$", r"\1", self.raw)  # `2>`: a descriptor, not a word
        self.flush()
        self.items.append(("op", op))


def _closing(text: str, start: int, opener: str, closer: str) -> int:
    """The index of the `closer` matching the `opener` before `start` (quotes respected)."""
    depth, i = 1, start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "'\"":
            end = text.find(ch, i + 1)
            i = (end if end >= 0 else len(text)) + 1
            continue
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise Unreadable(f"no closing {closer!r}")


def _substitution(s: _Scan) -> bool:
    """`$(...)`, `$((...))`, backticks, `<(...)`, `>(...)` at s.i: a placeholder."""
    text, i = s.text, s.i
    if text.startswith("$((", i):
        end = text.find("))", i)
        if end < 0:
            raise Unreadable("no closing '))'")
        s.raw += "0"
        s.i = end + 2
        return True
    if text.startswith(("$(", "<(", ">("), i):
        end = _closing(text, i + 2, "(", ")")
        inner = text[i + 2 : end]
    elif text[i] == "`":
        end = text.find("`", i + 1)
        if end < 0:
            raise Unreadable("no closing '`'")
        inner = text[i + 1 : end]
    else:
        return False
    s.substitutions.append(inner)
    s.raw += SUBST
    s.i = end + 1
    return True


def _double_quoted(s: _Scan) -> None:
    """From an opening `"`: copy the quoted text, replacing substitutions inside it."""
    s.raw += '"'
    s.i += 1
    while s.i < len(s.text):
        ch = s.text[s.i]
        if ch == "\\":
            s.raw += s.text[s.i : s.i + 2]
            s.i += 2
        elif ch == '"':
            s.raw += ch
            s.i += 1
            return
        elif ch in "$`" and _substitution(s):
            continue
        else:
            s.raw += ch
            s.i += 1
    raise Unreadable("no closing '\"'")


def _heredoc(s: _Scan) -> bool:
    match = _HEREDOC.match(s.text, s.i)
    if match is None or s.text.startswith("<<<", s.i):
        return False
    key = f"__orch_doc_{len(s.docs)}__"
    s.docs[key] = ""
    s.pending.append((match.group(3), key, match.group(1) == "-"))
    s.op("<<<")
    s.raw += f" {key} "
    s.i = match.end()
    return True


def _read_heredocs(s: _Scan) -> None:
    """After a newline: the bodies of the here-documents opened on the line before."""
    for delimiter, key, strip in s.pending:
        body: list[str] = []
        while s.i < len(s.text):
            end = s.text.find("\n", s.i)
            end = len(s.text) if end < 0 else end
            line = s.text[s.i : end]
            s.i = end + 1
            if (line.lstrip("\t") if strip else line) == delimiter:
                break
            body.append(line)
        s.docs[key] = "\n".join(body)
    s.pending.clear()


def _step(s: _Scan) -> None:
    text, ch = s.text, s.text[s.i]
    if ch == "\\":
        s.raw += text[s.i : s.i + 2] if text[s.i + 1 : s.i + 2] != "\n" else ""
        s.i += 2
    elif ch == "'":
        end = text.find("'", s.i + 1)
        if end < 0:
            raise Unreadable('no closing "\'"')
        s.raw += text[s.i : end + 1]
        s.i = end + 1
    elif ch == '"':
        _double_quoted(s)
    elif ch == "#" and (not s.raw or s.raw[-1].isspace()):
        end = text.find("\n", s.i)
        s.i = len(text) if end < 0 else end
    elif ch == "\n":
        s.op(";")
        s.i += 1
        _read_heredocs(s)
    elif ((ch in "$`<>") and _substitution(s)) or (ch == "<" and _heredoc(s)):
        return
    else:
        _operator_or_char(s)


def _operator_or_char(s: _Scan) -> None:
    for op in OPERATORS:
        if s.text.startswith(op, s.i):
            s.op(op)
            s.i += len(op)
            return
    s.raw += s.text[s.i]
    s.i += 1


def scan(text: str) -> _Scan:
    s = _Scan(text)
    while s.i < len(text):
        _step(s)
    s.flush()
    return s


# the parser ----------------------------------------------------------------------------------


def _words(raw: str) -> list[str]:
    try:
        return shlex.split(raw, posix=True)
    except ValueError as exc:
        raise Unreadable(str(exc)) from None


def parse(text: str) -> Line:
    """The simple commands of `text` (raises Unreadable)."""
    s = scan(text)
    commands: list[Simple] = []
    current = Simple()
    items = s.items
    k = 0
    while k < len(items):
        kind, value = items[k]
        if kind == "raw":
            current.words += _words(value)
        elif value in REDIRECTS:
            k = _redirect(items, k, current, s.docs)
        else:
            previous = current
            if current.words or current.redirects:
                commands.append(current)
            current = Simple()
            if value in ("|", "|&"):
                current.pipe_from = previous
        k += 1
    if current.words or current.redirects:
        commands.append(current)
    return Line(commands, s.substitutions)


def _redirect(items: list[tuple[str, str]], k: int, cmd: Simple, docs: dict[str, str]) -> int:
    """Attach the redirection at items[k] (its target is the next word) to `cmd`."""
    op = items[k][1]
    if k + 1 >= len(items) or items[k + 1][0] != "raw":
        return k
    words = _words(items[k + 1][1])
    if not words:
        return k + 1
    target, rest = words[0], words[1:]
    if op == "<<<":
        cmd.stdin_text = docs.get(target, target)
    elif not (op in (">&", "<&") and (target.isdigit() or target == "-")):
        cmd.redirects.append((op, target))
    cmd.words += rest
    return k + 1


def expand(word: str, env: dict[str, str]) -> str | None:
    """`word` with the variables the line assigned put in; None when one is not known."""
    missing = False

    def value(match: re.Match[str]) -> str:
        nonlocal missing
        name = match.group(1) or match.group(2)
        if name not in env:
            missing = True
            return ""
        return env[name]

    out = _VAR.sub(value, word)
    return None if missing else out
