"""`python -m evals.realmem`: orch's memory verification on real agent instruction files.

    python -m evals.realmem [--json] [--mirrors DIR] [--split dev|held-out|all]
                            [--repo OWNER/NAME ...] [--orch PATH] [--details]
                            [--data FILE]

Needs the mirrors of the repositories in data.json (`fetch` makes them); when one is
missing it says which to fetch, one line each, and exits 2. See README.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from evals.realmem.dataset import (
    DATA,
    DEFAULT_MIRRORS,
    Claim,
    DataError,
    Dataset,
    Label,
    Split,
    load,
    missing_mirrors,
)
from evals.realmem.run import At, Orch, OrchError, Prediction, RepoRun, Status, run_repo
from evals.realmem.score import PR, SplitScore, score
from evals.realmem.trees import TreeError

FILE_MODE_SKIPPED = (
    "--file mode: skipped: this orch has no `orch memory verify --file`; "
    "it is scored as soon as it has"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.realmem", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--mirrors", type=Path, default=DEFAULT_MIRRORS, help="where fetch put the mirrors"
    )
    parser.add_argument("--split", choices=["dev", "held-out", "all"], default="all")
    parser.add_argument(
        "--repo", action="append", default=[], help="only this repository (repeatable)"
    )
    parser.add_argument("--orch", type=Path, default=Path(sys.executable).with_name("orch"))
    parser.add_argument(
        "--data",
        type=Path,
        default=DATA,
        help="the labelled claims (default data.json; a pool's own file, as author --data writes)",
    )
    parser.add_argument("--details", action="store_true", help="list every misjudged claim")
    args = parser.parse_args(argv)
    try:
        return _main(args)
    except (DataError, OrchError, TreeError) as exc:
        print(f"realmem: {exc}", file=sys.stderr)
        return 2


def _main(args: argparse.Namespace) -> int:
    dataset = load(args.data)
    repos = [r for r in dataset.repos if args.split == "all" or r.split.value == args.split]
    if args.repo:
        unknown = sorted(set(args.repo) - {r.name for r in dataset.repos})
        if unknown:
            raise DataError(f"no repository {unknown[0]} in {args.data.name}")
        repos = [r for r in repos if r.name in args.repo]
    if not repos:
        raise DataError(f"no repository of the {args.split} split matches --repo")
    chosen = Dataset(
        tuple(repos), tuple(c for c in dataset.claims if c.repo in {r.name for r in repos})
    )
    missing = missing_mirrors(chosen, args.mirrors)
    if missing:
        print(
            f"realmem: {len(missing)} mirrors missing under {args.mirrors}; fetch these:",
            file=sys.stderr,
        )
        for repo in missing:
            print(f"  github:{repo.name}", file=sys.stderr)
        return 2
    if not args.orch.exists():
        raise OrchError(f"no orch at {args.orch} (pass --orch PATH)")
    orch = Orch(args.orch)
    file_mode = orch.has_file_mode()

    def progress(message: str) -> None:
        if not args.json:
            print(f"  ... {message}", file=sys.stderr, flush=True)

    runs = [
        run_repo(chosen, r, args.mirrors, orch, file_mode=file_mode, progress=progress)
        for r in repos
    ]
    report = _report(chosen, runs, args, file_mode)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        _print(chosen, runs, report, args.details)
    return 0


def _splits(dataset: Dataset) -> list[tuple[str, list[Claim]]]:
    out = []
    for split in Split:
        names = {r.name for r in dataset.repos if r.split is split}
        claims = [c for c in dataset.claims if c.repo in names]
        if claims:
            out.append((split.value, claims))
    if len(out) > 1:
        out.append(("all", list(dataset.claims)))
    return out


def _report(
    dataset: Dataset, runs: list[RepoRun], args: argparse.Namespace, file_mode: bool
) -> dict[str, Any]:
    predictions = [p for run in runs for p in run.predictions]
    scores = {name: score(claims, predictions) for name, claims in _splits(dataset)}
    by_claim: dict[str, dict[str, Any]] = {}
    for p in predictions:
        entry = by_claim.setdefault(p.claim, {})
        entry.setdefault(p.at.value, {})[p.mode.value] = {
            "status": p.status.value,
            "reason": p.reason,
        }
    split_of = {r.name: r.split.value for r in dataset.repos}
    return {
        "v": 1,
        "orch": str(args.orch),
        "file_mode": file_mode,
        "file_mode_note": None if file_mode else FILE_MODE_SKIPPED,
        "repositories": [
            {
                "repo": run.repo.name,
                "split": run.repo.split.value,
                "language": run.repo.language,
                "old": run.repo.old,
                "new": run.repo.new,
                "claims": sum(c.repo == run.repo.name for c in dataset.claims),
                "placeholders": run.placeholders,
            }
            for run in runs
        ],
        "splits": {name: s.to_dict() for name, s in scores.items()},
        # per claim: the held-out split's only with --details, so its figures can be read
        # without what it got wrong (nobody designing a rule reads those)
        "claims": [
            {
                "id": c.id,
                "repo": c.repo,
                "split": split_of[c.repo],
                "kind": c.kind.value,
                "label": c.label.value,
                "holds_at_old": c.holds_at_old,
                **by_claim.get(c.id, {}),
            }
            for c in dataset.claims
            if args.details or split_of[c.repo] != Split.HELD_OUT.value
        ],
    }


def _f(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:5.2f}"


def _pr(x: PR) -> str:
    return f"P {_f(x.precision)}  R {_f(x.recall)}  ({x.tp} tp, {x.fp} fp, {x.fn} fn)"


def _print(dataset: Dataset, runs: list[RepoRun], report: dict[str, Any], details: bool) -> None:
    labels = Counter(c.label.value for c in dataset.claims)
    print(
        f"realmem: {len(runs)} repositories, {len(dataset.claims)} claims "
        f"({labels['holds']} hold, {labels['stale']} stale, {labels['moved']} moved); "
        f"orch {report['orch']}"
    )
    if not report["file_mode"]:
        print(FILE_MODE_SKIPPED)
    placeholders = sum(run.placeholders for run in runs)
    if placeholders:
        print(f"({placeholders} files absent from the mirrors were checked out as placeholders)")
    predictions = [p for run in runs for p in run.predictions]
    for name, claims in _splits(dataset):
        _print_split(name, claims, score(claims, predictions))
    if details:
        _print_details(dataset, predictions)


def _print_split(name: str, claims: list[Claim], s: SplitScore) -> None:
    repos = len({c.repo for c in claims})
    wrong = sum(not c.holds_at_old for c in claims)
    print(
        f"\n{name}: {repos} repositories, {len(claims)} claims ({s.labels.get('holds', 0)} hold, "
        f"{s.labels.get('stale', 0)} stale, {s.labels.get('moved', 0)} moved; "
        f"{wrong} already wrong when written)"
    )
    print("  at the newer commit")
    for mode, n in s.new.items():
        moved = ", ".join(f"{k} {v}" for k, v in n.moved_reported.items()) or "none"
        print(f"    {mode.value:<18} stale            {_pr(n.stale)}")
        print(f"    {'':<18} drift            {_pr(n.drift)}")
        print(f"    {'':<18} stale or changed {_pr(n.stale_or_changed)}")
        print(
            f"    {'':<18} moved            {_pr(n.moved)}; the moved claims were reported: {moved}"
        )
    modes = list(s.new)
    print(
        "  per kind at the newer commit, stale P/R (n stale of n judged): "
        + " | ".join(m.value for m in modes)
    )
    kinds = sorted({k for m in modes for k in s.new[m].per_kind})
    for kind in kinds:
        cells = []
        for m in modes:
            x = s.new[m].per_kind.get(kind, PR())
            cells.append(f"{_f(x.precision)}/{_f(x.recall)}")
        n_stale = sum(1 for c in claims if c.kind.value == kind and c.label is Label.STALE)
        n_all = sum(1 for c in claims if c.kind.value == kind and c.label is not Label.MOVED)
        print(f"    {kind:<15} ({n_stale:>2} of {n_all:>3})  " + " | ".join(cells))
    print("  at the older commit (false alarms: stale or moved on claims that held when written)")
    for mode, o in s.old.items():
        kinds_hit = ", ".join(f"{k} {a}/{n}" for k, (a, n) in o.per_kind.items() if a)
        print(
            f"    {mode.value:<18} {o.false_alarms} of {o.claims} ({_f(o.rate).strip()}); "
            f"changed {o.changed}" + (f"; by kind: {kinds_hit}" if kinds_hit else "")
        )


def _print_details(dataset: Dataset, predictions: list[Prediction]) -> None:
    claims = {c.id: c for c in dataset.claims}
    print("\nmisjudged claims (id, label, kind: mode -> status: orch's reason)")
    for p in sorted(predictions, key=lambda p: (p.claim, p.at.value, p.mode.value)):
        c = claims[p.claim]
        if p.at is At.NEW:
            wrong = (
                (c.label is Label.STALE and p.status is not Status.STALE)
                or (c.label is Label.HOLDS and p.status is not Status.OK)
                or (c.label is Label.MOVED and p.status is not Status.MOVED)
            )
        else:
            wrong = c.holds_at_old and p.status in (Status.STALE, Status.MOVED)
        if wrong:
            print(
                f"  {c.id} [{c.label.value}, {c.kind.value}] {p.at.value} {p.mode.value} -> {p.status.value}: {p.reason}"
            )


if __name__ == "__main__":
    sys.exit(main())
