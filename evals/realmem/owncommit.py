"""`python -m evals.realmem.owncommit`: what `orch memory verify --file` reports on agent
instruction files at the commit that last wrote each of them.

    python -m evals.realmem.owncommit [--json] [--mirrors DIR] [--repo OWNER/NAME ...]
                                      [--orch PATH] [--details]

No labels: a file's claims are taken to hold where its author last committed it, so every
claim reported stale or moved there is a presumed false alarm (an upper bound: a file can
be wrong the day it is written, a path mistyped, a doc promised and never made).
`owncommit.json` lists each file by reference only (repository, path, commit); the trees
are rebuilt from the mirrors `fetch` makes. The files are the instruction files of
repositories fetched as candidates for the labelled set and not labelled: the lint's
rules of 2026-11-27 were read from what it reported here, so this is a dev measure.
`--details` prints each finding's line and reason on the terminal (never stored).
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
from evals.realmem.trees import TreeError, materialise

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.realmem.owncommit", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--repo", action="append", default=[], help="only this repository")
    parser.add_argument("--orch", type=Path, default=Path(sys.executable).with_name("orch"))
    parser.add_argument("--details", action="store_true", help="print each finding")
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
        report = lint_at_own_commit(file, args.mirrors, orch)
        flagged = [c for c in report.get("claims", []) if c.get("status") != "ok"]
        rows.append({"repo": file.repo, "path": file.path, "counts": report["counts"]})
        if args.details and not args.json:
            for claim in flagged:
                print(
                    f"{file.repo} {file.path}:{claim['line']} {claim['status']}: {claim['reason']}"
                )
    totals = {k: sum(r["counts"][k] for r in rows) for k in ("ok", "moved", "stale")}
    claims = sum(totals.values())
    flagged_files = sum(1 for r in rows if r["counts"]["stale"] or r["counts"]["moved"])
    summary = {
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
        print(
            f"{summary['files']} instruction files of {summary['repositories']} repositories, "
            f"linted at the commit that last wrote each: {claims} claims name code; "
            f"{totals['stale']} stale, {totals['moved']} moved "
            f"({100 * summary['flagged_share']:.1f}%, presumed false alarms), "
            f"in {flagged_files} files"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
