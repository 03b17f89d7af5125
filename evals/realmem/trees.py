"""Working trees of a mirrored repository at one commit, with the claims written as memories.

A tree is a fresh git repository whose object store borrows the mirror's (an `alternates`
file: nothing is copied), with the commit's files checked out and the commit as HEAD's
parent, so `git` inside it sees the whole history (the older commit included). A mirror
lacks files of 4 MiB and more; each such file is written as a short placeholder so that
its path still exists, and counted. Every git command runs without the user's global or
system configuration.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from evals.realmem.dataset import Claim, Text

PLACEHOLDER = b"(realmem: this file is absent from the mirror; a placeholder keeps its path)\n"
GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "realmem",
    "GIT_AUTHOR_EMAIL": "realmem@example.invalid",
    "GIT_COMMITTER_NAME": "realmem",
    "GIT_COMMITTER_EMAIL": "realmem@example.invalid",
    "GIT_TERMINAL_PROMPT": "0",
}
BRANCH = "realmem"


class TreeError(Exception):
    """A tree could not be built (one line)."""


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_ENV)
    return env


def git(root: Path, *args: str, data: bytes | None = None) -> bytes:
    done = subprocess.run(
        ["git", "-C", str(root), *args], input=data, capture_output=True, env=environment()
    )
    if done.returncode != 0:
        first = done.stderr.decode(errors="replace").strip().splitlines()[:1]
        raise TreeError(f"git {args[0]} failed in {root}: {first[0] if first else done.returncode}")
    return done.stdout


@dataclass(frozen=True)
class Tree:
    root: Path
    commit: str  # the mirrored commit the files come from (HEAD's parent)
    placeholders: int  # files absent from the mirror, written as placeholders


def materialise(mirror: Path, commit: str, dest: Path) -> Tree:
    """Check `commit` of the mirror `mirror` (a git dir) out into the new folder `dest`."""
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", BRANCH)
    info = dest / ".git" / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(str((mirror / "objects").resolve()) + "\n")
    git(dest, "config", "gc.auto", "0")
    entries = []
    for record in git(dest, "ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            mode, kind, oid = meta.split()
            entries.append((mode, kind, oid, path))
    blobs = [oid for _, kind, oid, _ in entries if kind == b"blob"]
    checked = git(dest, "cat-file", "--batch-check", data=b"\n".join(blobs) + b"\n")
    missing = {line.split()[0] for line in checked.splitlines() if line.endswith(b" missing")}
    placeholder = b""
    if missing:
        placeholder = git(dest, "hash-object", "-w", "--stdin", data=PLACEHOLDER).strip()
    index = b"".join(
        mode + b" " + (placeholder if oid in missing else oid) + b"\t" + path + b"\0"
        for mode, _, oid, path in entries
    )
    git(dest, "update-ref", f"refs/heads/{BRANCH}", commit)
    git(dest, "update-index", "-z", "--index-info", data=index)
    git(dest, "checkout-index", "-a", "-f")
    return Tree(dest, commit, sum(1 for _, _, oid, _ in entries if oid in missing))


def commit_all(tree: Tree, message: str) -> None:
    git(tree.root, "add", "-A")
    git(tree.root, "commit", "-q", "--no-verify", "-m", message)


# memories -----------------------------------------------------------------------------

_COMMENT = re.compile(r"\s+#\s+(.*)$")


def memory_body(text: Text) -> str:
    """The fact as a memory states it: prose as written; a line of a ``` block as code (its
    trailing `# comment` kept as prose), or as prose when the line is itself a comment."""
    words = text.text
    if not text.fenced:
        return words
    if words.startswith("#"):
        return words.lstrip("#").strip()
    comment = ""
    found = _COMMENT.search(words)
    if found:
        comment = f" ({found.group(1).strip()})"
        words = words[: found.start()]
    if "`" in words:
        return words + comment
    return f"`{words}`{comment}"


def memory_name(claim: Claim, with_citations: bool) -> str:
    return ("c-" if with_citations else "n-") + claim.id


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def memory_file(
    text: Text, *, with_citations: bool, at: str, verified: tuple[str, str] | None = None
) -> str:
    """A memory file in the shape orch writes (docs/storage.md), one claim per file;
    `verified` is the record `orch memory verify --record` would have written, (commit,
    result), or None for a memory never verified."""
    claim = text.claim
    lines = [
        "---",
        f"name: {memory_name(claim, with_citations)}",
        f"description: {_q(f'{claim.repo} {claim.path} line {claim.line}')}",
        "type: project",
        f"subject: {_q(text.heading or claim.path)}",
        f"reason: {_q(f'From {claim.path}, the agent instruction file of {claim.repo}')}",
    ]
    if with_citations and claim.citations:
        lines.append("citations:")
        for c in claim.citations:
            lines.append(f"- path: {_q(c.path)}")
            if c.line is not None:
                lines.append(f"  line: {c.line}")
            if c.symbol is not None:
                lines.append(f"  symbol: {_q(c.symbol)}")
    lines += [
        "status: active",
        f"created: {_q(at)}",
        f"updated: {_q(at)}",
    ]
    if verified is not None:
        commit, result = verified
        lines += ["verified:", f"  commit: {commit}", f"  at: {_q(at)}", f"  result: {result}"]
    lines += [
        "---",
        memory_body(text),
        "",
    ]
    return "\n".join(lines)


def write_memories(
    tree: Tree,
    texts: Iterable[Text],
    *,
    at: str,
    records: Mapping[str, tuple[str, str]] | None = None,
) -> int:
    """Each claim twice: with its citations (`c-<id>`) and without any (`n-<id>`), each
    with its record from `records` (by memory name; none when absent)."""
    folder = tree.root / "memories" / "repo"
    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    for text in texts:
        for with_citations in (True, False):
            name = memory_name(text.claim, with_citations)
            verified = (records or {}).get(name)
            body = memory_file(text, with_citations=with_citations, at=at, verified=verified)
            (folder / f"{name}.md").write_text(body, encoding="utf-8")
            count += 1
    return count


def commit_date(mirror: Path, commit: str) -> str:
    out = subprocess.run(
        ["git", "--git-dir", str(mirror), "show", "-s", "--format=%ct", commit],
        capture_output=True,
        text=True,
        env=environment(),
    )
    if out.returncode != 0:
        raise TreeError(f"no commit {commit[:12]} in {mirror}")
    return datetime.fromtimestamp(int(out.stdout.strip()), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
