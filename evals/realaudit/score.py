"""Scoring `orch memory audit --json` against the hand labels, per finding kind.

Units, all tagged with the repository:

- per-memory kinds (`excluded_content`, `stale_citation`, `secret`, `missing_field`,
  `invalid_file`): a (kind, memory). Precision is the share of raised units that are
  labelled, recall the share of labelled units raised.
- `contradiction`: an unordered pair of memories (a finding's memory and the first of its
  `related`). A pair counts whatever slot the audit names; both slots are shown.
- `near_duplicate`: labelled as groups of facts that say one thing (a fact may sit in two
  groups when it covers two facts that differ). The audit raises one pair per decay
  candidate: the finding's memory and its keeper (the first of `related`). A raised pair
  is correct when both memories sit in one labelled group: precision = correct raised
  pairs / raised pairs. Recall counts links: a group of n facts needs n - 1 links to be
  whole (the audit's n - 1 findings of one keeper and its decay candidates); the correct
  raised pairs give a group n - c of them, c being how many parts they leave its members
  in. Recall = links given / links needed, summed over the groups, so a group of five
  weighs four links, not ten pairs. Also counted: the groups found whole and in part.
- `index_drift`, `index_oversize`: the repository; `notes_style`: a NOTES.md line. The
  evaluation writes MEMORY.md with `orch memory index` and leaves the NOTES.md of
  `orch init`, so any of these is a false alarm.

Near-duplicate pairs are also counted by where the audit's own `excluded_content` findings
put their two memories (`SIDES`): both saveable ("durable"), one reported and one not
("straddle"), both reported ("excluded"). The audit compares a pair differently on each
side (docs/memory.md: ephemeral task state pairs with task state only, by its rare words,
and with a durable fact only as a copy), so these counts show, in aggregate, where a change to the save exclusions moves the near-duplicates: the labelled
pairs on each side, those raised, the raised pairs and the right ones among them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from evals.realaudit.dataset import PER_MEMORY, Excluded, Kind, RepoData

Unit = tuple[str, ...]  # (repo, memory), (repo, a, b) with a < b, (repo, *group), (repo, what)


SIDES = ("durable", "straddle", "excluded")  # a pair's memories reported as excluded: 0, 1, 2


def pair(repo: str, a: str, b: str) -> Unit:
    return (repo, *sorted((a, b)))


def side(unit: Unit, reported: set[Unit]) -> str:
    """Where a pair sits against the memories reported as excluded content (`SIDES`)."""
    repo, a, b = unit
    return SIDES[((repo, a) in reported) + ((repo, b) in reported)]


@dataclass(frozen=True)
class SideCounts:
    """Near-duplicate pairs of one side (`SIDES`): labelled, labelled and raised, raised,
    raised and labelled."""

    labelled: int = 0
    found: int = 0
    raised: int = 0
    right: int = 0

    def to_dict(self) -> dict[str, int]:
        return {
            "labelled": self.labelled,
            "found": self.found,
            "raised": self.raised,
            "right": self.right,
        }


def by_side(
    expected_pairs: set[Unit], raised_pairs: set[Unit], reported: set[Unit]
) -> dict[str, SideCounts]:
    """The near-duplicate pairs, labelled and raised, counted by `side`."""
    out = {}
    for name in SIDES:
        labelled = {u for u in expected_pairs if side(u, reported) == name}
        raised = {u for u in raised_pairs if side(u, reported) == name}
        out[name] = SideCounts(
            len(labelled), len(labelled & raised), len(raised), len(raised & expected_pairs)
        )
    return out


@dataclass(frozen=True)
class KindScore:
    kind: Kind
    expected: int
    raised: int
    correct: int  # raised units that are labelled
    recalled: int  # labelled units that were raised (near_duplicate: links given)
    missed: tuple[Unit, ...]
    false: tuple[Unit, ...]

    @property
    def precision(self) -> float | None:
        return self.correct / self.raised if self.raised else None

    @property
    def recall(self) -> float | None:
        return self.recalled / self.expected if self.expected else None

    def to_dict(self, *, errors: bool = True) -> dict[str, Any]:
        """The counts and figures; with `errors`, also which units were missed and which
        raised falsely (what `--show-errors` asks for)."""
        out: dict[str, Any] = {
            "expected": self.expected,
            "raised": self.raised,
            "correct": self.correct,
            "recalled": self.recalled,
            "precision": _round(self.precision),
            "recall": _round(self.recall),
        }
        if errors:
            out["missed"] = [":".join(u) for u in self.missed]
            out["false"] = [":".join(u) for u in self.false]
        return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


@dataclass(frozen=True)
class Expected:
    """What the labels say one repository's audit should raise."""

    per_memory: dict[Kind, set[Unit]]
    duplicate_groups: list[Unit]  # (repo, *members)
    contradictions: set[Unit]
    excluded_classes: dict[Excluded, set[Unit]]


def group_pairs(group: Unit) -> set[Unit]:
    repo, *members = group
    return {pair(repo, a, b) for i, a in enumerate(members) for b in members[i + 1 :]}


def expected(data: RepoData) -> Expected:
    repo = data.repo
    per_memory: dict[Kind, set[Unit]] = {kind: set() for kind in PER_MEMORY}
    classes: dict[Excluded, set[Unit]] = {cls: set() for cls in Excluded}
    for ref in data.facts:
        for label in ref.labels:
            per_memory[label.kind].add((repo, ref.id))
            if label.excluded is not None:
                classes[label.excluded].add((repo, ref.id))
    groups = [(repo, *group.members) for group in data.near_duplicates]
    contradictions = {pair(repo, *c.pair) for c in data.contradictions}
    return Expected(per_memory, groups, contradictions, classes)


@dataclass(frozen=True)
class Raised:
    """What one repository's audit raised, as units."""

    per_memory: dict[Kind, set[Unit]]
    duplicate_pairs: set[Unit]
    contradictions: set[Unit]
    other: dict[Kind, set[Unit]]  # index and NOTES.md kinds
    details: dict[Unit, str]  # a pair's detail (the slot the audit names)


def raised(repo: str, report: dict[str, Any]) -> Raised:
    per_memory: dict[Kind, set[Unit]] = {kind: set() for kind in PER_MEMORY}
    duplicates: set[Unit] = set()
    contradictions: set[Unit] = set()
    other: dict[Kind, set[Unit]] = {}
    details: dict[Unit, str] = {}
    for finding in report.get("findings", ()):
        kind = Kind(finding["kind"])
        memory = finding.get("memory")
        related = finding.get("related") or []
        if kind in (Kind.NEAR_DUPLICATE, Kind.CONTRADICTION) and memory and related:
            unit = pair(repo, memory, related[0])
            (duplicates if kind is Kind.NEAR_DUPLICATE else contradictions).add(unit)
            details[unit] = str(finding.get("detail", ""))
        elif kind in PER_MEMORY and memory:
            per_memory[kind].add((repo, memory))
        else:
            where = memory or str(finding.get("detail", ""))[:60] or "repository"
            other.setdefault(kind, set()).add((repo, where))
    for group in report.get("groups", ()):
        for decay in group.get("decay", ()):
            duplicates.add(pair(repo, decay, group["keeper"]))
    return Raised(per_memory, duplicates, contradictions, other, details)


def _components(edges: Iterable[Unit]) -> dict[tuple[str, str], object]:
    """Connected components of (repo, memory) nodes joined by pair units."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(node: tuple[str, str]) -> tuple[str, str]:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for repo, a, b in edges:
        parent[find((repo, a))] = find((repo, b))
    return {node: find(node) for node in list(parent)}


def score_pairs(kind: Kind, expected_pairs: set[Unit], raised_pairs: set[Unit]) -> KindScore:
    """Contradictions: a labelled pair is found when the audit raises that pair."""
    correct = raised_pairs & expected_pairs
    return KindScore(
        kind,
        expected=len(expected_pairs),
        raised=len(raised_pairs),
        correct=len(correct),
        recalled=len(correct),
        missed=tuple(sorted(expected_pairs - correct)),
        false=tuple(sorted(raised_pairs - expected_pairs)),
    )


def score_groups(groups: list[Unit], raised_pairs: set[Unit]) -> tuple[KindScore, tuple[int, ...]]:
    """Near-duplicates: the score, and (groups, found whole, found in part)."""
    expected_pairs = set().union(*(group_pairs(g) for g in groups)) if groups else set()
    correct = raised_pairs & expected_pairs
    component = _components(correct)
    needed = given = whole = part = 0
    missed: list[Unit] = []
    for group in groups:
        repo, *members = group
        parts = {component.get((repo, m), (repo, m)) for m in members}
        needed += len(members) - 1
        given += len(members) - len(parts)
        if len(parts) == 1:
            whole += 1
        else:
            missed.append(group)
            part += len(parts) < len(members)
    return (
        KindScore(
            Kind.NEAR_DUPLICATE,
            expected=needed,
            raised=len(raised_pairs),
            correct=len(correct),
            recalled=given,
            missed=tuple(sorted(missed)),
            false=tuple(sorted(raised_pairs - expected_pairs)),
        ),
        (len(groups), whole, part),
    )


def score_units(kind: Kind, expected_units: set[Unit], raised_units: set[Unit]) -> KindScore:
    hit = expected_units & raised_units
    return KindScore(
        kind,
        expected=len(expected_units),
        raised=len(raised_units),
        correct=len(hit),
        recalled=len(hit),
        missed=tuple(sorted(expected_units - raised_units)),
        false=tuple(sorted(raised_units - expected_units)),
    )


@dataclass(frozen=True)
class Scores:
    kinds: dict[Kind, KindScore]
    excluded_classes: dict[Excluded, tuple[int, int]]  # class -> (labelled, raised as excluded)
    duplicate_groups: tuple[int, ...]  # labelled groups: all, found whole, found in part
    duplicate_sides: dict[str, SideCounts] = field(default_factory=dict)  # see `by_side`

    def to_dict(self, *, errors: bool = True) -> dict[str, Any]:
        total, whole, part = self.duplicate_groups
        return {
            "near_duplicate_sides": {k: v.to_dict() for k, v in self.duplicate_sides.items()},
            "kinds": {kind.value: s.to_dict(errors=errors) for kind, s in self.kinds.items()},
            "near_duplicate_groups": {
                "labelled": total,
                "wholly_found": whole,
                "partly_found": part,
            },
            "excluded_by_class": {
                cls.value: {"expected": n, "recalled": got}
                for cls, (n, got) in self.excluded_classes.items()
                if n
            },
        }


def score(results: list[tuple[Expected, Raised]]) -> Scores:
    """Scores over one or more repositories (units carry the repository)."""
    exp_units: dict[Kind, set[Unit]] = {kind: set() for kind in Kind}
    got_units: dict[Kind, set[Unit]] = {kind: set() for kind in Kind}
    classes: dict[Excluded, set[Unit]] = {cls: set() for cls in Excluded}
    groups: list[Unit] = []
    for exp, got in results:
        groups.extend(exp.duplicate_groups)
        for kind in PER_MEMORY:
            exp_units[kind] |= exp.per_memory[kind]
            got_units[kind] |= got.per_memory[kind]
        got_units[Kind.NEAR_DUPLICATE] |= got.duplicate_pairs
        exp_units[Kind.CONTRADICTION] |= exp.contradictions
        got_units[Kind.CONTRADICTION] |= got.contradictions
        for kind, units in got.other.items():
            got_units[kind] |= units
        for cls, units in exp.excluded_classes.items():
            classes[cls] |= units
    kinds: dict[Kind, KindScore] = {}
    found_groups: tuple[int, ...] = (0, 0, 0)
    for kind in Kind:
        if kind is Kind.NEAR_DUPLICATE:
            kinds[kind], found_groups = score_groups(groups, got_units[kind])
        elif kind is Kind.CONTRADICTION:
            kinds[kind] = score_pairs(kind, exp_units[kind], got_units[kind])
        else:
            kinds[kind] = score_units(kind, exp_units[kind], got_units[kind])
    raised_excluded = got_units[Kind.EXCLUDED_CONTENT]
    by_class = {cls: (len(units), len(units & raised_excluded)) for cls, units in classes.items()}
    labelled = set().union(*(group_pairs(g) for g in groups)) if groups else set()
    sides = by_side(labelled, got_units[Kind.NEAR_DUPLICATE], raised_excluded)
    return Scores(kinds, by_class, found_groups, sides)
