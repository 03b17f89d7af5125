"""One labelled repository, rebuilt from its mirror as orch would find it, and audited.

`build` writes the tree of the labelled commit into a new folder (files the mirror lacks,
Git LFS objects and files of 4 MiB or more, are written empty and counted), moves the
memory files the facts come from to `memories/sources/<their path>` (they are the facts'
provenance, and agent memory is prose, not code) and leaves out the other agent-rule files
the data names under `drop`. It commits that as the repository's history, runs
`orch init`, writes each fact as one memory in `memories/repo/<id>.md` with frontmatter in
the shape orch writes (docs/storage.md): the fact's first sentence as description, the
heading it sat under as subject, our type, a citation of its source line, the commit's
date), runs `orch memory index` and commits. `audit` runs `orch memory audit --json` there.
orch is only ever driven through its command line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from evals.realaudit.dataset import DataError, Fact, Rebuilt, RepoData, mirror_dir

SOURCES_DIR = "memories/sources"
DESCRIPTION_LIMIT = 120
AUDIT_TIMEOUT = 900
GIT_ENV = {
    "GIT_AUTHOR_NAME": "realaudit",
    "GIT_AUTHOR_EMAIL": "realaudit@orch.invalid",
    "GIT_COMMITTER_NAME": "realaudit",
    "GIT_COMMITTER_EMAIL": "realaudit@orch.invalid",
}


@dataclass(frozen=True)
class Built:
    root: Path
    empty_files: tuple[str, ...]  # paths the mirror had no content for (written empty)


@dataclass(frozen=True)
class Audit:
    report: dict[str, Any]
    seconds: float


def _env() -> dict[str, str]:
    return {**os.environ, **GIT_ENV}


def _run(args: list[str], cwd: Path, what: str, timeout: float = 300) -> bytes:
    done = subprocess.run(
        args, cwd=cwd, env=_env(), capture_output=True, check=False, timeout=timeout
    )
    if done.returncode:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DataError(f"{what} failed: {reason[-1] if reason else done.returncode}")
    return done.stdout


def _tree_entries(git_dir: Path, commit: str) -> list[tuple[str, str, str, str]]:
    """(mode, type, object id, path) of every entry of the commit's tree."""
    out = _run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", "--full-tree", commit],
        git_dir,
        f"listing {commit[:12]}",
    )
    entries = []
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        if not record:
            continue
        meta, path = record.split("\t", 1)
        mode, kind, oid = meta.split(" ")
        entries.append((mode, kind, oid, path))
    return entries


def _blobs(git_dir: Path, oids: list[str]) -> dict[str, bytes | None]:
    """The content of each blob (None when the mirror does not hold it)."""
    done = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
        input="".join(f"{oid}\n" for oid in oids).encode(),
        capture_output=True,
        check=False,
    )
    if done.returncode:
        raise DataError(f"reading blobs from {git_dir} failed")
    out: dict[str, bytes | None] = {}
    data, at = done.stdout, 0
    for oid in oids:
        header_end = data.index(b"\n", at)
        header = data[at:header_end].decode().split(" ")
        at = header_end + 1
        if header[-1] == "missing":
            out[oid] = None
            continue
        size = int(header[2])
        out[oid] = data[at : at + size]
        at += size + 1
    return out


def write_tree(git_dir: Path, commit: str, dest: Path, leave_out: set[str]) -> list[str]:
    """Write the commit's files under `dest`, except `leave_out`; the paths written empty."""
    entries = [
        e for e in _tree_entries(git_dir, commit) if e[1] == "blob" and e[3] not in leave_out
    ]
    contents = _blobs(git_dir, sorted({oid for _, _, oid, _ in entries}))
    empty: list[str] = []
    for mode, _, oid, path in entries:
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        content = contents[oid]
        if content is None:
            empty.append(path)
            content = b""
        if mode == "120000" and content:
            os.symlink(content.decode("utf-8", "surrogateescape"), target)
            continue
        target.write_bytes(content)
        if mode == "100755":
            target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return empty


def description(fact: str) -> str:
    """The fact's first sentence, cut at a word to fit one index line (as `orch memory add`)."""
    first = re.split(r"(?<=[.!?])\s", fact.strip(), maxsplit=1)[0]
    if len(first) <= DESCRIPTION_LIMIT:
        return first
    return first[:DESCRIPTION_LIMIT].rsplit(" ", 1)[0].rstrip(",;:") + "..."


def memory_file(fact: Fact, date: str) -> str:
    """One memory file: frontmatter keys in orch's order, then the fact."""
    front: dict[str, Any] = {
        "name": fact.ref.id,
        "description": description(fact.text),
        "type": fact.ref.type,
        "subject": fact.subject,
        "reason": f"Recorded by the project's coding agent in {fact.ref.path}; kept for later tasks",
        "citations": [{"path": f"{SOURCES_DIR}/{fact.ref.path}", "line": fact.ref.line}],
        "status": "active",
        "created": date,
        "updated": date,
    }
    head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10_000)
    return f"---\n{head}---\n{fact.text}\n"


def commit_date(git_dir: Path, commit: str) -> str:
    out = _run(
        ["git", f"--git-dir={git_dir}", "log", "-1", "--format=%ct", commit], git_dir, "date"
    )
    return datetime.fromtimestamp(int(out.strip()), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build(mirrors: Path, data: RepoData, rebuilt: Rebuilt, dest: Path, orch: str) -> Built:
    """The repository at `dest` (created), ready for `orch memory audit`."""
    git_dir = mirror_dir(mirrors, data.repo)
    dest.mkdir(parents=True)
    empty = write_tree(git_dir, data.commit, dest, set(data.sources) | set(data.drop))
    for path, text in rebuilt.sources.items():
        target = dest / SOURCES_DIR / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    _run(["git", "init", "-q", "-b", "main"], dest, "git init")
    _run(["git", "add", "-A", "-f"], dest, "git add")  # the tree as committed, ignored files too
    _run(
        [
            "git",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "-m",
            f"{data.repo} at {data.commit}",
        ],
        dest,
        "git commit",
    )
    _run([orch, "init"], dest, "orch init")
    date = commit_date(git_dir, data.commit)
    folder = dest / "memories" / "repo"
    for fact in rebuilt.facts:
        (folder / f"{fact.ref.id}.md").write_text(memory_file(fact, date), encoding="utf-8")
    _run([orch, "memory", "index"], dest, "orch memory index")
    _run(["git", "add", "-A"], dest, "git add")
    _run(
        ["git", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "orch memories"],
        dest,
        "git commit",
    )
    return Built(dest, tuple(empty))


def audit(root: Path, orch: str) -> Audit:
    """`orch memory audit --json` in `root` (exit 0: no finding, 1: findings)."""
    start = time.perf_counter()
    done = subprocess.run(
        [orch, "memory", "audit", "--json"],
        cwd=root,
        env=_env(),
        capture_output=True,
        check=False,
        timeout=AUDIT_TIMEOUT,
    )
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DataError(
            f"orch memory audit failed in {root}: {reason[-1] if reason else done.returncode}"
        )
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise DataError(f"orch memory audit printed no JSON in {root}") from None
    return Audit(report, seconds)


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
