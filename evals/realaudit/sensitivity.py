"""`python -m evals.realaudit.sensitivity`: how near-duplicates move when the save
exclusions change, on repositories whose labels may be read.

    python -m evals.realaudit.sensitivity [--mirrors DIR] [--data DIR] [--repo OWNER/NAME]...
                                          [--share 0.4] [--back 0.3] [--seeds 5] [--orch PATH]

The audit compares a pair of memories by where its save exclusions put them (docs/memory.md:
ephemeral task state pairs with task state by its rare words, and with a durable fact only
as a copy). So a rule that finds more task state also changes which near-duplicates are
found. This replays that on the development split (or a `--data` folder of labelled
pools): each repository is built as `python -m evals.realaudit` builds it, its memories
are read in this process with the audit's own exclusions, and the near-duplicate groups
(`orchestrator.memory.audit.near_duplicate_groups`) are worked out three ways:

- `audit`: with the exclusions the audit reads;
- `missed`: with the task-state verdicts of a `--share` of the headings that hold any
  taken back, as a set of rules that misses those headings would read the memory (rules
  read task state heading by heading, so what they miss is missed by heading);
- `caught`: `missed` with a `--back` share of those headings found again, as a new rule
  would find them.

For `missed` -> `caught` it prints the near-duplicate figures and every pair that changed,
counted by whether the labels hold it and by its side before and after (`score.SIDES`:
how many of its two memories are taken as excluded). Only counts are printed. The held-out
split is refused: its labels are not read pair by pair.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evals.realaudit import build as building
from evals.realaudit import dataset, score
from evals.realaudit.__main__ import DEFAULT_MIRRORS, _orch_default
from evals.realaudit.dataset import DataError, RepoData, Split
from orchestrator.memory import compare
from orchestrator.memory.audit import near_duplicate_groups
from orchestrator.memory.exclusions import Exclusion, excluded
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory
from orchestrator.store.repo import RepoMemoryStore

Pairs = set[score.Unit]


@dataclass(frozen=True)
class Repository:
    """One built repository as the audit reads it."""

    data: RepoData
    memories: list[Memory]
    exclusions: dict[str, Exclusion]  # active memory -> the save exclusion it falls under

    @property
    def subjects(self) -> dict[str, str]:
        return {m.name: m.subject or "" for m in self.memories}


def read(data: RepoData, root: Path) -> Repository:
    memories = RepoMemoryStore(Layout(root)).load_all().memories
    found = {m.name: excluded(m.fact, m.subject or "") for m in memories if m.active}
    return Repository(data, memories, {n: e for n, e in found.items() if e is not None})


def without_headings(
    passing: Iterable[str], subjects: Mapping[str, str], share: float, rng: random.Random
) -> tuple[frozenset[str], list[str]]:
    """`passing` less the memories under a `share` of the headings that hold any (picked by
    `rng`), and the headings so taken back, in the order picked."""
    held = sorted({subjects[n] for n in passing})
    dropped = [s for s in held if rng.random() < share]
    gone = set(dropped)
    return frozenset(n for n in passing if subjects[n] not in gone), dropped


def raised_pairs(repo: Repository, passing: frozenset[str]) -> Pairs:
    """The pairs the audit raises (keeper, decay candidate) with `passing` as its task state."""
    stages = {n: e.cls for n, e in repo.exclusions.items() if n in passing and e.cls}
    groups = near_duplicate_groups(repo.memories, compare.Readings(), passing, stages)
    return {score.pair(repo.data.repo, k.name, m.name) for k, decay in groups for m in decay}


def sides(
    pairs: Iterable[score.Unit], passing: Mapping[str, frozenset[str]]
) -> dict[score.Unit, str]:
    reported: set[score.Unit] = {(repo, n) for repo, names in passing.items() for n in names}
    return {u: score.side(u, reported) for u in pairs}


def moves(
    before: Pairs,
    after: Pairs,
    labelled: Pairs,
    passing_before: Mapping[str, frozenset[str]],
    passing_after: Mapping[str, frozenset[str]],
) -> Counter[tuple[str, str, str]]:
    """Each pair raised on one side of a change and not the other, counted as (lost or
    gained, right or wrong by the labels, its side before > its side after)."""
    changed = (before - after) | (after - before)
    was, now = sides(changed, passing_before), sides(changed, passing_after)
    out: Counter[tuple[str, str, str]] = Counter()
    for unit in changed:
        what = "lost" if unit in before else "gained"
        out[(what, "right" if unit in labelled else "wrong", f"{was[unit]}>{now[unit]}")] += 1
    return out


def figures(repos: Sequence[Repository], raised: Pairs) -> tuple[int, int, int]:
    """(raised, right, links given) of the near-duplicate score."""
    results = []
    for repo in repos:
        mine = {u for u in raised if u[0] == repo.data.repo}
        report = {"findings": [], "groups": [{"keeper": b, "decay": [a]} for _, a, b in mine]}
        results.append((score.expected(repo.data), score.raised(repo.data.repo, report)))
    s = score.score(results).kinds[score.Kind.NEAR_DUPLICATE]
    return s.raised, s.correct, s.recalled


def labelled_pairs(repos: Sequence[Repository]) -> Pairs:
    out: Pairs = set()
    for repo in repos:
        for group in score.expected(repo.data).duplicate_groups:
            out |= score.group_pairs(group)
    return out


def replay(repos: Sequence[Repository], share: float, back: float, seed: int) -> dict:
    """One seed: the figures for `audit`, `missed` and `caught`, and the moves between the
    last two."""
    rng = random.Random(seed)
    audit, missed, caught = {}, {}, {}
    for repo in repos:
        name = repo.data.repo
        audit[name] = frozenset(repo.exclusions)
        missed[name], dropped = without_headings(audit[name], repo.subjects, share, rng)
        found = {s for s in dropped if rng.random() < back}
        caught[name] = missed[name] | {n for n in audit[name] if repo.subjects[n] in found}
    runs = {}
    for label, passing in (("audit", audit), ("missed", missed), ("caught", caught)):
        runs[label] = set().union(*(raised_pairs(r, passing[r.data.repo]) for r in repos))
    return {
        "figures": {label: figures(repos, pairs) for label, pairs in runs.items()},
        "moves": moves(runs["missed"], runs["caught"], labelled_pairs(repos), missed, caught),
    }


def run(args: argparse.Namespace) -> int:
    sets = dataset.load_all(Path(args.data))
    if args.repo:
        sets = [d for d in sets if d.repo in args.repo]
    if any(d.split is Split.HELD_OUT for d in sets):
        sets = [d for d in sets if d.split is not Split.HELD_OUT]
        print("sensitivity: held-out repositories left out", file=sys.stderr)
    mirrors = Path(args.mirrors)
    missing = dataset.missing_mirrors(mirrors, sets)
    if missing:
        print(f"sensitivity: no mirror for: {', '.join(missing)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="realaudit-sens-") as work:
        repos = []
        for data in sets:
            rebuilt = dataset.rebuild(mirrors, data)
            built = building.build(mirrors, data, rebuilt, Path(work) / data.slug, args.orch)
            repos.append(read(data, built.root))
    print(f"{len(repos)} repositories; share {args.share}, back {args.back}")
    total: Counter[tuple[str, str, str]] = Counter()
    for seed in range(args.seeds):
        out = replay(repos, args.share, args.back, seed)
        f = out["figures"]
        print(
            f"seed {seed}: audit {f['audit']}, missed {f['missed']} -> caught {f['caught']}"
            "  (raised, right, links)"
        )
        total.update(out["moves"])
    print("pairs changed from missed to caught, all seeds (change, labels, side before>after):")
    for key, n in sorted(total.items()):
        print(f"  {' '.join(key)}: {n}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.realaudit.sensitivity", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--mirrors", default=str(DEFAULT_MIRRORS))
    parser.add_argument("--data", default=str(dataset.DATA_DIR))
    parser.add_argument("--repo", action="append")
    parser.add_argument("--share", type=float, default=0.4, help="headings taken back")
    parser.add_argument("--back", type=float, default=0.3, help="of those, found again")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--orch", default=_orch_default())
    args = parser.parse_args(argv)
    try:
        return run(args)
    except DataError as exc:
        print(f"sensitivity: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
