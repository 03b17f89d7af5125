"""Scores: what orch said against the hand labels.

At the newer commit, per mode (with citations, without, `--file`):

- `stale`: precision and recall of reporting `stale`, over the claims labelled `holds` or
  `stale` (a claim labelled stale and reported stale is a true positive);
- `stale or changed`: the same with `changed` counted as a report, to show what `changed`
  adds (it should flag stale facts, not every edit of a cited file);
- `moved` claims are left out of both (the fact holds, so calling one stale is wrong, and
  not calling it stale is not a miss): they are scored apart, as how each was reported
  and as precision/recall of reporting `moved`;
- `drift`: precision and recall of the `stale` reports that are new since the older
  commit (reported stale at the newer commit, not at the older), over the claims that held
  at the older commit: a report that fires at both commits says nothing of what changed,
  however right it may be at the newer one;
- per claim kind, the `stale` figures again.

At the older commit (the memory's own commit) every `stale` or `moved` report on a claim
that held there is a false alarm; claims that were already wrong when written are left
out and counted apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evals.realmem.dataset import Claim, Kind, Label
from evals.realmem.run import At, Mode, Prediction, Status


@dataclass(frozen=True)
class PR:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "precision": _round(self.precision),
            "recall": _round(self.recall),
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def pr(pairs: Iterable[tuple[bool, bool]]) -> PR:
    """From (truly positive, reported positive) pairs."""
    tp = fp = fn = 0
    for truth, said in pairs:
        tp += truth and said
        fp += said and not truth
        fn += truth and not said
    return PR(tp, fp, fn)


@dataclass(frozen=True)
class NewScore:
    """One mode at the newer commit."""

    claims: int
    stale: PR
    drift: PR  # stale reports that were not there at the older commit
    stale_or_changed: PR
    moved: PR
    moved_reported: dict[str, int]  # how the claims labelled moved were reported
    per_kind: dict[str, PR]
    reported: dict[str, int]  # every status, over all claims

    def to_dict(self) -> dict[str, Any]:
        return {
            "claims": self.claims,
            "stale": self.stale.to_dict(),
            "drift": self.drift.to_dict(),
            "stale_or_changed": self.stale_or_changed.to_dict(),
            "moved": {**self.moved.to_dict(), "reported": self.moved_reported},
            "per_kind": {k: v.to_dict() for k, v in self.per_kind.items()},
            "reported": self.reported,
        }


@dataclass(frozen=True)
class OldScore:
    """One mode at the older commit: false alarms where nothing had changed."""

    claims: int  # claims that held at the older commit
    false_alarms: int  # of those, reported stale or moved
    changed: int  # of those, reported changed
    per_kind: dict[str, tuple[int, int]]  # kind -> (false alarms, claims)
    wrong_when_written: int  # claims already wrong at the older commit
    wrong_reported: int  # of those, reported stale

    @property
    def rate(self) -> float | None:
        return self.false_alarms / self.claims if self.claims else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "claims": self.claims,
            "false_alarms": self.false_alarms,
            "rate": _round(self.rate),
            "changed": self.changed,
            "per_kind": {
                k: {"false_alarms": a, "claims": n} for k, (a, n) in self.per_kind.items()
            },
            "wrong_when_written": self.wrong_when_written,
            "wrong_when_written_reported_stale": self.wrong_reported,
        }


def score_new(
    claims: list[Claim], said: dict[str, Status], before: dict[str, Status] | None = None
) -> NewScore:
    """`before`: what was said of the same claims at the older commit, for `drift`."""
    judged = [c for c in claims if c.id in said]
    decided = [c for c in judged if c.label is not Label.MOVED]
    stale = pr((c.label is Label.STALE, said[c.id] is Status.STALE) for c in decided)
    before = before or {}
    drift = pr(
        (c.label is Label.STALE, said[c.id] is Status.STALE and before[c.id] is not Status.STALE)
        for c in decided
        if c.id in before and c.holds_at_old
    )
    flagged = pr(
        (c.label is Label.STALE, said[c.id] in (Status.STALE, Status.CHANGED)) for c in decided
    )
    moved = pr((c.label is Label.MOVED, said[c.id] is Status.MOVED) for c in judged)
    moved_reported = Counter(said[c.id].value for c in judged if c.label is Label.MOVED)
    per_kind = {
        kind.value: pr(
            (c.label is Label.STALE, said[c.id] is Status.STALE) for c in decided if c.kind is kind
        )
        for kind in Kind
        if any(c.kind is kind for c in decided)
    }
    return NewScore(
        len(judged),
        stale,
        drift,
        flagged,
        moved,
        dict(sorted(moved_reported.items())),
        per_kind,
        dict(sorted(Counter(said[c.id].value for c in judged).items())),
    )


def score_old(claims: list[Claim], said: dict[str, Status]) -> OldScore:
    judged = [c for c in claims if c.id in said]
    held = [c for c in judged if c.holds_at_old]
    wrong = [c for c in judged if not c.holds_at_old]

    def alarm(c: Claim) -> bool:
        return said[c.id] in (Status.STALE, Status.MOVED)

    per_kind = {
        kind.value: (
            sum(alarm(c) for c in held if c.kind is kind),
            sum(c.kind is kind for c in held),
        )
        for kind in Kind
        if any(c.kind is kind for c in held)
    }
    return OldScore(
        len(held),
        sum(alarm(c) for c in held),
        sum(said[c.id] is Status.CHANGED for c in held),
        per_kind,
        len(wrong),
        sum(said[c.id] is Status.STALE for c in wrong),
    )


@dataclass(frozen=True)
class SplitScore:
    claims: int
    labels: dict[str, int]
    new: dict[Mode, NewScore]
    old: dict[Mode, OldScore]

    def to_dict(self) -> dict[str, Any]:
        return {
            "claims": self.claims,
            "labels": self.labels,
            "new": {m.value: s.to_dict() for m, s in self.new.items()},
            "old": {m.value: s.to_dict() for m, s in self.old.items()},
        }


def score(claims: list[Claim], predictions: Iterable[Prediction]) -> SplitScore:
    said: dict[tuple[At, Mode], dict[str, Status]] = {}
    for p in predictions:
        said.setdefault((p.at, p.mode), {})[p.claim] = p.status
    modes = [m for m in Mode if (At.NEW, m) in said or (At.OLD, m) in said]
    return SplitScore(
        len(claims),
        dict(sorted(Counter(c.label.value for c in claims).items())),
        {m: score_new(claims, said.get((At.NEW, m), {}), said.get((At.OLD, m))) for m in modes},
        {m: score_old(claims, said.get((At.OLD, m), {})) for m in modes},
    )
