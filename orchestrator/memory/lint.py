"""Lint an agent instruction file (AGENTS.md, CLAUDE.md, `.cursorrules`,
`.github/copilot-instructions.md`, any markdown): each bullet, table row, line of a code
block and sentence of a paragraph is a claim; each claim that names code is checked
against the working tree, as a memory's body would be (see `verify` and `kinds`).

A claim is `ok`, `moved` (a path it names is gone, but git's rename detection or a file
of the same name says where the thing lives now) or `stale` (the fact no longer holds).
It needs no `orch init`: only a git repository.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.memory.claims import CODE_SPAN, Claim
from orchestrator.memory.codeindex import git, is_code
from orchestrator.memory.verify import Verifier, bare_name, counter_examples, states_change
from orchestrator.store.layout import Layout

STATUSES = ("ok", "moved", "stale")
_FENCE = re.compile(r"^\s*(```|~~~)")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\[*(\"])")


@dataclass(frozen=True)
class Finding:
    line: int
    text: str
    status: str  # ok | moved | stale
    reason: str = ""
    end_line: int = 0  # the claim's last line (a wrapped bullet or sentence), 0: `line`

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "end_line": self.end_line or self.line,
            "text": self.text,
            "status": self.status,
            "reason": self.reason,
        }


def split_claims(source: str) -> list[tuple[int, int, str, bool]]:
    """(first line, last line, words, whether the words are a line of code) for each claim.
    A bullet's wrapped lines are one claim; a paragraph's sentences run across its lines."""
    out: list[tuple[int, int, str, bool]] = []
    lines = source.splitlines()
    start = 0
    if lines and lines[0].strip() == "---":  # frontmatter (.mdc rules)
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                start = i + 1
                break
    in_code = False
    block: list[tuple[int, str]] = []  # the lines of the bullet or paragraph being read
    for number, line in enumerate(lines[start:], start=start + 1):
        text = line.strip()
        if in_code or _FENCE.match(line) or not text or _HEADING.match(line) or text[0] == "|":
            out += _block_claims(block)
            block = []
            if _FENCE.match(line):
                in_code = not in_code
            elif in_code and text:
                out.append((number, number, text, True))
            elif text[:1] == "|" and not set(text) <= set("|-: "):
                out.append((number, number, text, False))  # a table row
            continue
        if _BULLET.match(line):
            out += _block_claims(block)
            block = []
        block.append((number, text))
    return out + _block_claims(block)


def headings(source: str) -> dict[int, str]:
    """Each line's heading: the words of the last heading above it, outside code blocks."""
    out: dict[int, str] = {}
    current, in_code = "", False
    for number, line in enumerate(source.splitlines(), start=1):
        if _FENCE.match(line):
            in_code = not in_code
        elif not in_code and _HEADING.match(line):
            current = line.strip().lstrip("#").strip()
        out[number] = current
    return out


def _block_claims(block: list[tuple[int, str]]) -> list[tuple[int, int, str, bool]]:
    """A bullet (its first line is one) as one claim, else a paragraph's sentences, each
    with the lines it spans."""
    if not block:
        return []
    text = " ".join(words for _, words in block)
    if _BULLET.match(block[0][1]):
        return [(block[0][0], block[-1][0], text, False)]
    starts, at = [], 0  # where each line begins in the joined text
    for number, words in block:
        starts.append((at, number))
        at += len(words) + 1

    def line_at(offset: int) -> int:
        return max(number for begin, number in starts if begin <= offset)

    return [(line_at(a), line_at(b - 1), text[a:b], False) for a, b in _sentences(text)]


def _sentences(text: str) -> list[tuple[int, int]]:
    """Where each sentence of `text` begins and ends, never cut inside a code span."""
    spans = [(m.start(), m.end()) for m in CODE_SPAN.finditer(text)]
    out, begin = [], 0
    for cut in _SENTENCE_END.finditer(text):
        if any(a < cut.start() < b for a, b in spans):
            continue
        out.append((begin, cut.start()))
        begin = cut.end()
    out.append((begin, len(text)))
    return [(a, b) for a, b in out if text[a:b].strip()]


# Claude Code's import: `@path` at a line's start or after a space, outside code
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[\w.~-]+/)*[\w.-]+)")
IMPORT_DEPTH = 5  # imports of imports, as deep as Claude Code follows them


def imports(root: Path, path: str, source: str) -> list[tuple[str, str]]:
    """(path, text) of each repository file `source` (the file at `path`) imports with Claude Code's
    `@path` (relative to its folder; `@AGENTS.md` in a CLAUDE.md), then theirs, each once,
    up to `IMPORT_DEPTH` deep. An import outside the repository (`@~/.claude/x.md`) or of
    no file is left out: the lint reads the project only."""
    out: dict[str, str] = {}
    todo = [(path, source, 0)]
    base = root.resolve()
    while todo:
        at, text, depth = todo.pop(0)
        if depth >= IMPORT_DEPTH:
            continue
        for target in _import_targets(text):
            if target.startswith("~"):
                continue
            full = (base / at).parent / target
            try:
                rel = full.resolve().relative_to(base).as_posix()
            except ValueError:
                continue
            if rel in out or rel == path or not full.is_file():
                continue
            try:
                out[rel] = full.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            todo.append((rel, out[rel], depth + 1))
    return list(out.items())


def _import_targets(source: str) -> list[str]:
    found, in_code = [], False
    for line in source.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
        elif not in_code:
            found += _IMPORT.findall(CODE_SPAN.sub(" ", line))
    return found


def _followed(root: Path, path: str, words: str, code: bool) -> str:
    """`words` without the imports the lint follows (`@docs/more.md`, linted on its own):
    an import is no claim about the code."""
    if code or "@" not in words:
        return words
    folder = (root / path).parent
    return _IMPORT.sub(lambda m: "" if (folder / m.group(1)).is_file() else m.group(0), words)


def as_body(words: str, code: bool) -> str:
    """A claim's words as a memory body: a line of code becomes a code span, its trailing
    `# comment` kept as prose."""
    if not code:
        return words
    if words.startswith(("#", "//")):
        return words.lstrip("#/ ")
    command, _, comment = words.partition(" # ")
    return f"`{command.strip().replace('`', '')}`" + (f" ({comment})" if comment else "")


def lint(root: Path, path: str, source: str) -> list[Finding]:
    """The findings of every claim of `source` (the file at `path`) that names code."""
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    findings = []
    written = written_at(root, path, source)
    gone = folder_gone(root, path, written)
    with Verifier(Layout(root), use_cache=False) as verifier:
        bodies = [
            (number, end, words, as_body(_followed(root, path, words, code), code))
            for number, end, words, code in split_claims(source)
        ]
        split = [(*row, verifier.body_claims(row[-1])) for row in bodies]
        # one search of the tree for every name the file's claims ask about
        verifier.answer(c for *_, claims in split for c in claims)
        heading = headings(source)
        for number, end, words, body, claims in split:
            lapsed = {}
            if written is not None:
                about = heading.get(number, "")
                lapsed = {f.claim: f.reason for f in verifier.lapsed(body, claims, written, about)}
            if not claims and not lapsed:
                continue
            status, reasons = "ok", []
            # a removal or a replacement ("use `a` instead of `b`"): its names may be gone;
            # a name a rule warns against ("never name tests `TestBug4821`") is expected gone
            warned = counter_examples(words)
            every = [*claims, *(c for c in lapsed if c not in claims)]
            for claim in [] if states_change(words) else every:
                if warned(claim):
                    continue
                reason = lapsed.get(claim) or _failure(verifier, claim, words, folder)
                if reason is None:
                    continue
                moved = verifier.moved_since(claim.path, written) if claim.path else None
                if moved is not None:
                    reasons.append(f"{claim.path} moved to {moved}")
                    status = "stale" if status == "stale" else "moved"
                else:
                    reasons.append(reason)
                    status = "stale"
            if gone is not None and claims:
                status, reasons = "stale", [gone]
            if status == "stale":
                reasons = [r for r in reasons if " moved to " not in r] or reasons
            findings.append(Finding(number, words, status, "; ".join(reasons), end))
    return findings


def _failure(verifier: Verifier, claim: Claim, words: str, folder: str) -> str | None:
    """Why the claim fails in the tree, or None when it holds: from the root, or from the
    linted file's own folder for a path (`src/App.tsx` in `frontend/AGENTS.md`); a file
    name given beside a folder git ignores is a build's output, not the repository's."""
    reason = verifier.check_claim(claim)
    if reason is not None and claim.path and folder:
        reason = None if verifier.check_claim(_within(claim, folder)) is None else reason
    if reason is not None and bare_name(claim) and verifier.names_build_output(words):
        return None
    return reason


def written_at(root: Path, path: str, source: str) -> str | None:
    """The commit that last wrote the file at `path` with exactly this text (None: never
    committed so): its claims held there, as far as their author knew."""
    blob = git(root, "hash-object", "--stdin", input=source.encode()).decode().strip()
    if not blob:
        return None
    listed = git(root, "log", "--format=%H", f"--find-object={blob}", "--", path).decode()
    for commit in listed.split():
        if git(root, "rev-parse", "-q", "--verify", f"{commit}:{path}").decode().strip() == blob:
            return commit
    return None


def folder_gone(root: Path, path: str, written: str | None) -> str | None:
    """Why every claim of a nested instruction file fails when the folder it describes was
    deleted since the file was written (`tools/legacy/AGENTS.md` left alone in its folder,
    which held code then), else None: what it says of that folder's code is gone. A folder
    that held only prose and instruction files (`is_code` says no, or `.mdc` rules:
    `.cursor/rules/`) described no code of its own."""
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    if not folder or written is None:
        return None
    if any(entry.name != path.rsplit("/", 1)[1] for entry in (root / folder).iterdir()):
        return None
    held = git(root, "ls-tree", "-r", "--name-only", written, "--", f"{folder}/").decode()
    if not any(is_code(name) and not name.endswith(".mdc") for name in held.splitlines()):
        return None
    return f"its folder {folder}/ was deleted since {written[:12]}"


def _within(claim: Claim, folder: str) -> Claim:
    path = f"{folder}/{(claim.path or '').lstrip('/')}"
    return Claim(claim.kind, claim.text, claim.origin, path, claim.line, claim.symbol, claim.value)


def report(path: str, findings: list[Finding]) -> dict[str, Any]:
    counts = {s: sum(1 for f in findings if f.status == s) for s in STATUSES}
    return {"file": path, "claims": [f.to_dict() for f in findings], "counts": counts}
