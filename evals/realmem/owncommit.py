"""`python -m evals.realmem.owncommit`: what `orch memory verify --file` reports on agent
instruction files at the commit that last wrote each of them.

    python -m evals.realmem.owncommit [--json] [--mirrors DIR] [--repo OWNER/NAME ...]
                                      [--orch PATH] [--details] [--memory]

No labels: a file's claims are taken to hold where its author last committed it, so every
claim reported stale or moved there is a presumed false alarm (an upper bound: a file can
be wrong the day it is written, a path mistyped, a doc promised and never made).
`owncommit.json` lists each file by reference only (repository, path, commit); the trees
are rebuilt from the mirrors `fetch` makes. The files are the instruction files of
repositories fetched as candidates for the labelled set and not labelled: the lint's
rules of 2026-11-27 were read from what it reported here, so this is a dev measure.
`--details` prints each finding's line and reason on the terminal (never stored).

`--memory` asks memory mode instead of the lint: each claim of a file (as the lint splits
it) is written as a repo memory with no citations and no verification record, created at
the file's commit date under its heading, as a user's imported file would be, and `orch
memory verify --json` runs in that commit's tree; every memory reported stale or moved is
a presumed false alarm.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.realmem.dataset import DEFAULT_MIRRORS, DataError
from evals.realmem.run import Orch, OrchError
from evals.realmem.trees import TreeError, commit_all, commit_date, materialise
from orchestrator.memory.lint import as_body, headings, split_claims

DATA = Path(__file__).with_name("owncommit.json")


@dataclass(frozen=True)
class File:
    repo: str
    path: str
    commit: str

    def git_dir(self, mirrors: Path) -> Path:
        return mirrors / self.repo.replace("/", "+") / "repo"


def load(path: Path = DATA) -> list[File]:
    try:
        raw = json.loads(path.read_text())
        return [File(f["repo"], f["path"], f["commit"]) for f in raw["files"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"cannot read {path.name}: {exc}") from exc


def lint_at_own_commit(file: File, mirrors: Path, orch: Orch) -> dict[str, Any]:
    """The lint's report on `file` in the tree of the commit that wrote it."""
    with tempfile.TemporaryDirectory(prefix="owncommit-") as tmp:
        tree = materialise(file.git_dir(mirrors), file.commit, Path(tmp) / "tree")
        report: dict[str, Any] = orch.json(
            tree.root, "memory", "verify", "--file", file.path, "--json"
        )
    return report


def _memory(name: str, body: str, subject: str, at: str, path: str) -> str:
    """A memory file in the shape orch writes, with no citations and no record."""
    q = json.dumps
    return "\n".join(
        [
            "---",
            f"name: {name}",
            f"description: {q(f'{path} claim {name}')}",
            "type: project",
            f"subject: {q(subject or path)}",
            f"reason: {q(f'Imported from {path}')}",
            "status: active",
            f"created: {q(at)}",
            f"updated: {q(at)}",
            "---",
            body,
            "",
        ]
    )


def memories_at_own_commit(file: File, mirrors: Path, orch: Orch) -> dict[str, Any]:
    """Memory mode's report on `file`'s claims, each a memory created at the file's own
    commit, in that commit's tree: `{"counts": {result: n}, "claims": [{line, status,
    reason}]}` with only the flagged claims listed."""
    mirror = file.git_dir(mirrors)
    at = commit_date(mirror, file.commit)
    with tempfile.TemporaryDirectory(prefix="owncommit-") as tmp:
        tree = materialise(mirror, file.commit, Path(tmp) / "tree")
        source = (tree.root / file.path).read_text(encoding="utf-8", errors="replace")
        done = orch.run(tree.root, "init")
        if done.returncode != 0:
            raise OrchError(f"orch init in {file.repo}: {done.stderr.strip()[-200:]}")
        folder = tree.root / "memories" / "repo"
        folder.mkdir(parents=True, exist_ok=True)
        above = headings(source)
        lines: dict[str, int] = {}
        for number, part in enumerate(split_claims(source)):
            name = f"claim-{number:04d}"
            lines[name] = part.first
            body = as_body(part.words, part.code)
            text = _memory(name, body, above.get(part.first, ""), at, file.path)
            (folder / f"{name}.md").write_text(text, encoding="utf-8")
        commit_all(tree, "owncommit: the file's claims as orch memories")
        report = orch.json(tree.root, "memory", "verify", "--json")
    results = [r for r in report.get("results", []) if r.get("name") in lines]
    counts = {"ok": 0, "moved": 0, "stale": 0}
    for result in results:
        counts[result["result"]] = counts.get(result["result"], 0) + 1
    flagged = [
        {
            "line": lines[r["name"]],
            "status": r["result"],
            "reason": "; ".join(f["reason"] for f in r.get("failures", [])) or r.get("moved", ""),
        }
        for r in results
        if r["result"] in ("stale", "moved")
    ]
    return {"counts": counts, "claims": sorted(flagged, key=lambda c: c["line"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.realmem.owncommit", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--repo", action="append", default=[], help="only this repository")
    parser.add_argument("--orch", type=Path, default=Path(sys.executable).with_name("orch"))
    parser.add_argument("--details", action="store_true", help="print each finding")
    parser.add_argument(
        "--memory", action="store_true", help="memory mode: each claim a memory, no citations"
    )
    parser.add_argument("--data", type=Path, default=DATA, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        return _main(args)
    except (DataError, OrchError, TreeError) as exc:
        print(f"owncommit: {exc}", file=sys.stderr)
        return 2


def _main(args: argparse.Namespace) -> int:
    files = [f for f in load(args.data) if not args.repo or f.repo in args.repo]
    if not files:
        raise DataError("no file of owncommit.json matches --repo")
    missing = sorted({f.repo for f in files if not (f.git_dir(args.mirrors) / "objects").is_dir()})
    if missing:
        print(f"owncommit: {len(missing)} mirrors missing; fetch these:", file=sys.stderr)
        for repo in missing:
            print(f"  github:{repo}", file=sys.stderr)
        return 2
    if not args.orch.exists():
        raise OrchError(f"no orch at {args.orch} (pass --orch PATH)")
    orch = Orch(args.orch)
    rows = []
    for file in files:
        if args.memory:
            report = memories_at_own_commit(file, args.mirrors, orch)
        else:
            report = lint_at_own_commit(file, args.mirrors, orch)
        flagged = [c for c in report.get("claims", []) if c.get("status") != "ok"]
        rows.append({"repo": file.repo, "path": file.path, "counts": report["counts"]})
        if args.details and not args.json:
            for claim in flagged:
                print(
                    f"{file.repo} {file.path}:{claim['line']} {claim['status']}: {claim['reason']}"
                )
    kinds = sorted({k for r in rows for k in r["counts"]} | {"ok", "moved", "stale"})
    totals = {k: sum(r["counts"].get(k, 0) for r in rows) for k in kinds}
    claims = sum(totals.values())
    flagged_files = sum(1 for r in rows if r["counts"].get("stale") or r["counts"].get("moved"))
    summary = {
        "mode": "memory" if args.memory else "file",
        "files": len(rows),
        "repositories": len({r["repo"] for r in rows}),
        "claims": claims,
        "counts": totals,
        "flagged_share": round((totals["stale"] + totals["moved"]) / claims, 4) if claims else 0,
        "files_with_a_finding": flagged_files,
    }
    if args.json:
        print(json.dumps({"summary": summary, "files": rows}, indent=1))
    else:
        asked = (
            f"written as {claims} memories and verified at the commit that last wrote each"
            if args.memory
            else f"linted at the commit that last wrote each: {claims} claims name code"
        )
        print(
            f"{summary['files']} instruction files of {summary['repositories']} repositories, "
            f"{asked}; "
            f"{totals['stale']} stale, {totals['moved']} moved "
            f"({100 * summary['flagged_share']:.1f}%, presumed false alarms), "
            f"in {flagged_files} files"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
