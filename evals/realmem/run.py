"""Run orch on the trees: what it says of each claim, at the newer and the older commit.

For each repository and each of its two commits, the older first: a tree (see `trees`),
`orch init`, every claim written twice as a memory (with the citations promotion would
write, and without any), one commit, then `orch memory verify --json`. At the older
commit the memories have no `verified` record (just written); at the newer, each has the
record `orch memory verify --record` would have written at the older (its result there). When this orch has `orch memory
verify --file`, each instruction file as it was at the older commit is also linted in
the tree (written at its own path) with `--file PATH --json`, and each claim gets the
status of the finding on its line.
"""

from __future__ import annotations

import enum
import json
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.realmem.dataset import Dataset, Repo, Text, rebuild, show
from evals.realmem.trees import (
    Tree,
    TreeError,
    commit_all,
    commit_date,
    environment,
    materialise,
    memory_name,
    write_memories,
)


class Mode(enum.Enum):
    CITED = "with citations"
    BARE = "without citations"
    FILE = "--file"


class At(enum.Enum):
    NEW = "new"
    OLD = "old"


class Status(enum.Enum):
    OK = "ok"
    CHANGED = "changed"
    STALE = "stale"
    MOVED = "moved"
    ABSENT = "absent"  # orch said nothing of this memory (it did not load, or no result)


@dataclass(frozen=True)
class Prediction:
    claim: str  # claim id
    mode: Mode
    at: At
    status: Status
    reason: str = ""


class OrchError(Exception):
    """orch failed in a way that is not a finding (one line)."""


@dataclass(frozen=True)
class Orch:
    program: Path

    def run(self, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [str(self.program), *args],
                cwd=root,
                capture_output=True,
                text=True,
                env=environment(),
                timeout=1800,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise OrchError(f"{self.program} {' '.join(args)}: {exc}") from exc

    def json(self, root: Path, *args: str) -> Any:
        done = self.run(root, *args)
        if done.returncode not in (0, 1):
            lines = (done.stderr or done.stdout).strip().splitlines()
            why = lines[-1] if lines else f"exit code {done.returncode}"
            raise OrchError(f"orch {' '.join(args)} in {root.name}: {why}")
        try:
            return json.loads(done.stdout)
        except ValueError as exc:
            raise OrchError(f"orch {' '.join(args)}: output is not JSON ({exc})") from exc

    def has_file_mode(self) -> bool:
        done = self.run(Path.cwd(), "memory", "verify", "--help")
        return done.returncode == 0 and "--file" in done.stdout


def _status(value: str) -> Status:
    try:
        return Status(value)
    except ValueError as exc:
        raise OrchError(f"orch reported an unknown result {value!r}") from exc


def verify_memories(orch: Orch, tree: Tree, texts: list[Text], at: At) -> list[Prediction]:
    report = orch.json(tree.root, "memory", "verify", "--json")
    by_name = {r["name"]: r for r in report.get("results", [])}
    out = []
    for text in texts:
        for mode in (Mode.CITED, Mode.BARE):
            result = by_name.get(memory_name(text.claim, mode is Mode.CITED))
            if result is None:
                out.append(Prediction(text.claim.id, mode, at, Status.ABSENT))
                continue
            reasons = [f["reason"] for f in result.get("failures", [])]
            if result.get("changed"):
                reasons.append("changed: " + ", ".join(result["changed"]))
            if result.get("moved"):
                reasons.append(f"moved: {result['moved']}")
            status = _status(result["result"])
            out.append(Prediction(text.claim.id, mode, at, status, "; ".join(reasons)))
    return out


def lint_files(
    orch: Orch, tree: Tree, repo: Repo, texts: list[Text], mirror: Path, at: At
) -> list[Prediction]:
    """`orch memory verify --file` on each instruction file as it was at the older commit."""
    out = []
    for path in repo.files:
        source = show(mirror, repo.old, path)
        target = tree.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source, encoding="utf-8")
        report = orch.json(tree.root, "memory", "verify", "--file", path, "--json")
        findings = report.get("claims", [])
        for text in (t for t in texts if t.claim.path == path):
            status, reason = _finding_for(text, source, findings)
            out.append(Prediction(text.claim.id, Mode.FILE, at, status, reason))
    return out


def _finding_for(text: Text, source: str, findings: list[dict[str, Any]]) -> tuple[Status, str]:
    """The worst finding over the claim's line that overlaps the claim's words (a finding
    whose text is not found on the line counts for every claim of that line; one wrapped
    over several lines, for each claim of its lines whose words it holds)."""
    claim = text.claim
    line_start = source.rfind("\n", 0, claim.start) + 1
    line_end = source.find("\n", claim.start)
    line = source[line_start : len(source) if line_end < 0 else line_end]
    order = {Status.OK: 0, Status.CHANGED: 1, Status.MOVED: 2, Status.STALE: 3}
    worst, reason = Status.OK, ""
    for finding in findings:
        first = int(finding.get("line", 0))
        if not first <= claim.line <= int(finding.get("end_line", first)):
            continue
        words = str(finding.get("text", ""))
        if int(finding.get("end_line", first)) > first:  # wrapped: its words hold the claim's
            if " ".join(source[claim.start : claim.end].split()) not in " ".join(words.split()):
                continue
        elif (at := line.find(words) if words else -1) >= 0:
            a, b = line_start + at, line_start + at + len(words)
            if b <= claim.start or a >= claim.end:
                continue
        status = _status(str(finding.get("status", "ok")))
        if order.get(status, 0) > order[worst]:
            worst, reason = status, str(finding.get("reason", ""))
    return worst, reason


@dataclass(frozen=True)
class RepoRun:
    repo: Repo
    predictions: tuple[Prediction, ...]
    placeholders: int


def run_repo(
    dataset: Dataset,
    repo: Repo,
    mirrors: Path,
    orch: Orch,
    *,
    file_mode: bool,
    progress: Callable[[str], None] = lambda _: None,
) -> RepoRun:
    texts = rebuild(dataset, repo, mirrors)
    mirror = repo.git_dir(mirrors)
    written_at = commit_date(mirror, repo.old)
    predictions: list[Prediction] = []
    placeholders = 0
    records: dict[str, tuple[str, str]] = {}
    for at, commit in ((At.OLD, repo.old), (At.NEW, repo.new)):
        progress(f"{repo.name} at the {at.value}er commit {commit[:12]}")
        with tempfile.TemporaryDirectory(prefix="realmem-") as tmp:
            tree = materialise(mirror, commit, Path(tmp) / repo.slug)
            placeholders = max(placeholders, tree.placeholders)
            done = orch.run(tree.root, "init")
            if done.returncode != 0:
                raise OrchError(f"orch init in {repo.name}: {done.stderr.strip()[-200:]}")
            write_memories(tree, texts, at=written_at, records=records)
            commit_all(tree, "realmem: the claims as orch memories")
            found = verify_memories(orch, tree, texts, at)
            if at is At.OLD:
                records = recorded(found, texts, repo.old)
            predictions += found
            if file_mode:
                predictions += lint_files(orch, tree, repo, texts, mirror, at)
    return RepoRun(repo, tuple(predictions), placeholders)


def recorded(found: list[Prediction], texts: list[Text], commit: str) -> dict[str, tuple[str, str]]:
    """The record `orch memory verify --record` writes at `commit` into each memory it
    verified there, by memory name: (commit, its result), `changed` recorded as ok (as
    `record.record` does); nothing for a memory orch said nothing of."""
    said = {(p.claim, p.mode): p.status for p in found}
    out = {}
    for text in texts:
        for mode in (Mode.CITED, Mode.BARE):
            status = said.get((text.claim.id, mode), Status.ABSENT)
            if status is Status.ABSENT:
                continue
            result = status.value if status in (Status.STALE, Status.MOVED) else "ok"
            out[memory_name(text.claim, mode is Mode.CITED)] = (commit, result)
    return out


__all__ = [
    "At",
    "Mode",
    "Orch",
    "OrchError",
    "Prediction",
    "RepoRun",
    "Status",
    "TreeError",
    "run_repo",
]
