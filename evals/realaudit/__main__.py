"""`python -m evals.realaudit`: the memory audit on agent memory real projects committed.

    python -m evals.realaudit [--json] [--mirrors DIR] [--split dev|held-out|all]
                              [--repo OWNER/NAME]... [--show-errors] [--keep DIR]
                              [--orch PATH] [--data DIR]

For each labelled repository (`evals/realaudit/data/*.yaml`) it rebuilds the facts and the
tree from the local mirror (default /work/.mirror, as the `fetch` tool leaves them),
writes the facts as orch memories, runs `orch memory audit --json` (the `orch` next to
this Python unless `--orch` says otherwise) and prints precision and recall per finding
kind, the development and held-out repositories apart. A missing mirror is named, with
the repositories to fetch, and the exit code is 2; nothing is built.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals.realaudit import build as building
from evals.realaudit import dataset, score
from evals.realaudit.dataset import DataError, RepoData, Split

DEFAULT_MIRRORS = Path("/work/.mirror")


def _orch_default() -> str:
    beside = Path(sys.executable).parent / "orch"
    return str(beside) if beside.exists() else "orch"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def table(title: str, scores: score.Scores) -> str:
    lines = [
        title,
        f"  {'kind':<18} {'expected':>8} {'raised':>7} {'correct':>8} {'precision':>9} {'recall':>7}",
    ]
    for kind, s in scores.kinds.items():
        lines.append(
            f"  {kind.value:<18} {s.expected:>8} {s.raised:>7} {s.correct:>8} "
            f"{_fmt(s.precision):>9} {_fmt(s.recall):>7}"
        )
    total, whole, part = scores.duplicate_groups
    if total:
        lines.append(
            f"  near_duplicate groups: {total} labelled, {whole} found whole, {part} in part"
        )
    sides = [(name, c) for name, c in scores.duplicate_sides.items() if c.labelled or c.raised]
    if sides:
        lines.append(
            "  near_duplicate pairs by excluded members (labelled, found; raised, right): "
            + ", ".join(
                f"{name} {c.labelled}, {c.found}; {c.raised}, {c.right}" for name, c in sides
            )
        )
    classes = [(cls, n, got) for cls, (n, got) in scores.excluded_classes.items() if n]
    if classes:
        lines.append(
            "  excluded_content recall by class: "
            + ", ".join(f"{cls.value} {got}/{n}" for cls, n, got in classes)
        )
    return "\n".join(lines)


def _errors(
    scores: score.Scores, texts: dict[tuple[str, str], str], details: dict[score.Unit, str]
) -> str:
    def show(unit: score.Unit) -> str:
        repo, *ids = unit
        parts = [f"{i}: {texts.get((repo, i), '?')[:110]}" for i in ids]
        extra = f"  [audit: {details[unit][:120]}]" if unit in details else ""
        return f"    {repo} " + " | ".join(parts) + extra

    out: list[str] = []
    for kind, s in scores.kinds.items():
        if s.missed:
            out.append(f"  {kind.value}: missed {len(s.missed)}")
            out.extend(show(u) for u in s.missed)
        if s.false:
            out.append(f"  {kind.value}: raised wrongly {len(s.false)}")
            out.extend(show(u) for u in s.false)
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    sets = dataset.load_all(Path(args.data))
    if args.repo:
        unknown = sorted(set(args.repo) - {d.repo for d in sets})
        if unknown:
            raise DataError(f"no data for {', '.join(unknown)}")
        sets = [d for d in sets if d.repo in args.repo]
    if args.split != "all":
        sets = [d for d in sets if d.split is Split(args.split)]
    mirrors = Path(args.mirrors)
    missing = dataset.missing_mirrors(mirrors, sets)
    if missing:
        print(
            f"realaudit: no mirror (or not the labelled commit) under {mirrors} for: "
            f"{', '.join(missing)}; fetch them (github:<owner>/<name>) and run again",
            file=sys.stderr,
        )
        return 2
    rebuilt = {d.repo: dataset.rebuild(mirrors, d) for d in sets}

    keep = Path(args.keep) if args.keep else None
    work = keep or Path(tempfile.mkdtemp(prefix="realaudit-"))
    results: dict[str, tuple[score.Expected, score.Raised]] = {}
    repos: list[dict[str, Any]] = []
    try:
        for data in sets:
            dest = work / data.slug
            if dest.exists():
                building.remove(dest)
            built = building.build(mirrors, data, rebuilt[data.repo], dest, args.orch)
            audited = building.audit(built.root, args.orch)
            results[data.repo] = (score.expected(data), score.raised(data.repo, audited.report))
            repos.append(
                {
                    "repo": data.repo,
                    "split": data.split.value,
                    "commit": data.commit,
                    "facts": len(data.facts),
                    "findings": len(audited.report.get("findings", ())),
                    "audit_seconds": round(audited.seconds, 2),
                    "empty_files": len(built.empty_files),
                }
            )
            if not args.json:
                print(
                    f"{data.repo} ({data.split.value}): {len(data.facts)} facts, "
                    f"{repos[-1]['findings']} findings, audit {audited.seconds:.1f} s",
                    file=sys.stderr,
                )
    finally:
        if keep is None:
            building.remove(work)

    splits: list[tuple[str, list[RepoData]]] = [
        (split.value, [d for d in sets if d.split is split]) for split in Split
    ]
    splits = [(name, group) for name, group in splits if group]
    if len(splits) > 1:
        splits.append(("all", sets))
    scored = {name: score.score([results[d.repo] for d in group]) for name, group in splits}

    if args.json:
        print(
            json.dumps(
                {
                    "v": 1,
                    "date": datetime.now(UTC).strftime("%Y-%m-%d"),
                    "orch": args.orch,
                    "repositories": repos,
                    # which units were missed only when asked: the held-out split's
                    # figures are read without its errors
                    "scores": {
                        name: s.to_dict(errors=args.show_errors) for name, s in scored.items()
                    },
                },
                indent=2,
            )
        )
        return 0
    texts = {(d.repo, f.ref.id): f.text for d in sets for f in rebuilt[d.repo].facts}
    details = {u: t for _, got in results.values() for u, t in got.details.items()}
    for name, group in splits:
        n_facts = sum(len(d.facts) for d in group)
        print(table(f"{name}: {len(group)} repositories, {n_facts} facts", scored[name]))
        if args.show_errors and name != "all":
            print(_errors(scored[name], texts, details))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.realaudit", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument(
        "--mirrors", default=str(DEFAULT_MIRRORS), help="where the fetched mirrors are"
    )
    parser.add_argument("--split", choices=["dev", "held-out", "all"], default="all")
    parser.add_argument("--repo", action="append", help="only this repository (repeatable)")
    parser.add_argument("--show-errors", action="store_true", help="list misses and false alarms")
    parser.add_argument("--keep", help="build the repositories in this folder and keep them")
    parser.add_argument("--orch", default=_orch_default(), help="the orch executable")
    parser.add_argument(
        "--data", default=str(dataset.DATA_DIR), help="the folder of labelled data files"
    )
    args = parser.parse_args(argv)
    try:
        return run(args)
    except DataError as exc:
        print(f"realaudit: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
