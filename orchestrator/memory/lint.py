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
from orchestrator.memory.codeindex import git, index_words
from orchestrator.memory.verify import Verifier
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

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "text": self.text, "status": self.status, "reason": self.reason}


def split_claims(source: str) -> list[tuple[int, str, bool]]:
    """(line number, words, whether the words are a line of code) for each claim."""
    out: list[tuple[int, str, bool]] = []
    lines = source.splitlines()
    start = 0
    if lines and lines[0].strip() == "---":  # frontmatter (.mdc rules)
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                start = i + 1
                break
    in_code = False
    for number, line in enumerate(lines[start:], start=start + 1):
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if not line.strip():
            continue
        if in_code:
            out.append((number, line.strip(), True))
            continue
        if _HEADING.match(line) or set(line.strip()) <= set("|-: "):
            continue
        if _BULLET.match(line) or line.lstrip().startswith("|"):
            out.append((number, line.strip(), False))
            continue
        for sentence in _sentences(line.strip()):
            out.append((number, sentence, False))
    return out


def _sentences(text: str) -> list[str]:
    """The sentences of a line, never cut inside a code span."""
    spans = [(m.start(), m.end()) for m in CODE_SPAN.finditer(text)]
    out, begin = [], 0
    for cut in _SENTENCE_END.finditer(text):
        if any(a < cut.start() < b for a, b in spans):
            continue
        out.append(text[begin : cut.start()])
        begin = cut.end()
    out.append(text[begin:])
    return [s for s in out if s.strip()]


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
    with Verifier(Layout(root), use_cache=False) as verifier:
        split = [
            (number, words, code, verifier.body_claims(as_body(words, code)))
            for number, words, code in split_claims(source)
        ]
        # one search of the tree for every name the file's claims ask about
        verifier.facts.index(index_words(c for *_, claims in split for c in claims))
        for number, words, code, claims in split:
            lapsed = {}
            if written is not None:
                body = as_body(words, code)
                lapsed = {f.claim: f.reason for f in verifier.lapsed(body, claims, written)}
            if not claims and not lapsed:
                continue
            status, reasons = "ok", []
            for claim in [*claims, *(c for c in lapsed if c not in claims)]:
                reason = lapsed.get(claim)
                if reason is None:
                    reason = verifier.check_claim(claim)
                if reason is not None and claim not in lapsed and claim.path and folder:
                    # a path written from the file's own folder (frontend/AGENTS.md)
                    local = verifier.check_claim(_within(claim, folder))
                    reason = None if local is None else reason
                if reason is None:
                    continue
                moved = verifier.moved_to(claim.path) if claim.path else None
                if moved is not None:
                    reasons.append(f"{claim.path} moved to {moved}")
                    status = "stale" if status == "stale" else "moved"
                else:
                    reasons.append(reason)
                    status = "stale"
            if status == "stale":
                reasons = [r for r in reasons if " moved to " not in r] or reasons
            findings.append(Finding(number, words, status, "; ".join(reasons)))
    return findings


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


def _within(claim: Claim, folder: str) -> Claim:
    path = f"{folder}/{(claim.path or '').lstrip('/')}"
    return Claim(claim.kind, claim.text, claim.origin, path, claim.line, claim.symbol, claim.value)


def report(path: str, findings: list[Finding]) -> dict[str, Any]:
    counts = {s: sum(1 for f in findings if f.status == s) for s in STATUSES}
    return {"file": path, "claims": [f.to_dict() for f in findings], "counts": counts}
