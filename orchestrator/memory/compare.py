"""Comparing two memories: do they say the same thing, or opposite things?

- `conflict(a, b)`: two facts on the same normalised subject disagree when some clause of
  one and some clause of the other are about the same thing (equal frames: the same content
  words once subject words and values are set aside) and either both assert values and
  each asserts one the other does not (`pytest -q` vs `make test`, 30 vs 60 seconds), or
  one negates what the other affirms ("enabled" vs "disabled", "is" vs "is not"). Two
  facts about different aspects of one subject ("the database is PostgreSQL 15" and
  "database migrations live in `migrations/`") have different frames and do not conflict;
  a fact that adds a value to another (`ruff` vs `ruff` and `mypy`) does not conflict.
- `duplicate(a, b)`: the subjects are compatible (the more specific subject's words all
  appear in the other memory), the facts have the same polarity and assert compatible values (equal, or
  one a subset of the other sharing at least half of the union), and either the Checklist
  A test holds (token Jaccard of `subject | fact` >= 0.85) or, for facts worded
  differently, the stemmed-content Jaccard reaches `REWORDED` (`ANCHORED` when both name
  the same code spans, paths or URLs). A conflicting pair is never a duplicate.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from orchestrator.memory.dedup import THRESHOLD, dedup_key, jaccard, normalise_subject
from orchestrator.memory.text import Clause, Reading, read_fact, subject_stems
from orchestrator.store.memfile import Memory, first_paragraph

REWORDED = 0.6
ANCHORED = 0.4  # the same code spans, paths or URLs: rewording may go further
FRAME_EQUAL = 0.75
MAX_CLAUSES = 4


@dataclass(frozen=True)
class Conflict:
    clause_a: Clause
    clause_b: Clause
    how: str  # values | polarity

    def detail(self) -> str:
        if self.how == "values":
            left = ", ".join(sorted(self.clause_a.values - self.clause_b.values))
            right = ", ".join(sorted(self.clause_b.values - self.clause_a.values))
            return f"one says {left}, the other {right}"
        return "one negates what the other states"


@lru_cache(maxsize=65536)
def fact_of(body: str) -> str:
    """`Memory.fact`, cached by body (the property recomputes it on every use)."""
    return first_paragraph(body)


_PRIMED: dict[tuple[str, str], Reading] = {}


def prime(memory: Memory, known: Reading) -> None:
    """Hand over a reading computed earlier (the audit's cache), so it is not redone."""
    if len(_PRIMED) > 200_000:  # a long-lived process: start over rather than grow
        _PRIMED.clear()
    _PRIMED[(fact_of(memory.body), memory.subject or "")] = known


def reading(memory: Memory) -> Reading:
    key = (fact_of(memory.body), memory.subject or "")
    known = _PRIMED.get(key)
    return known if known is not None else read_fact(*key)


def _frames_equal(a: Clause, b: Clause) -> bool:
    if a.frame == b.frame:
        return True
    if not a.frame or not b.frame:
        return False
    return jaccard(a.frame, b.frame) >= FRAME_EQUAL


def clause_conflict(a: Clause, b: Clause) -> str | None:
    if not _frames_equal(a, b):
        return None
    if a.values and b.values and (a.values - b.values) and (b.values - a.values):
        return "values"
    if a.negated != b.negated and (a.frame or a.values) and a.values == b.values:
        return "polarity"
    return None


def conflict(a: Memory, b: Memory) -> Conflict | None:
    """How `a` and `b` disagree, or None (callers check that the subjects match)."""
    ra, rb = reading(a), reading(b)
    for ca in ra.clauses[:MAX_CLAUSES]:
        for cb in rb.clauses[:MAX_CLAUSES]:
            how = clause_conflict(ca, cb)
            if how is not None:
                return Conflict(ca, cb, how)
    return None


def same_subject(a: Memory, b: Memory) -> bool:
    sa, sb = normalise_subject(a.subject), normalise_subject(b.subject)
    return bool(sa) and sa == sb


def content_stems(memory: Memory) -> frozenset[str]:
    """Stems of subject and fact, values included: what the memory is about and says."""
    return subject_stems(memory.subject or "") | reading(memory).stems


def _subjects_compatible(a: Memory, b: Memory) -> bool:
    """The more specific subject's words all appear in the other memory ("scheduler cache
    sharing" is not "cache sharing" unless the other memory speaks of the scheduler);
    subjects of one size: either way round ("running tests" meets "test command")."""
    sa, sb = subject_stems(a.subject or ""), subject_stems(b.subject or "")
    if not sa or not sb:
        return True
    if len(sa) > len(sb):
        return sa <= content_stems(b)
    if len(sb) > len(sa):
        return sb <= content_stems(a)
    return sa <= content_stems(b) or sb <= content_stems(a)


def _values_compatible(a: frozenset[str], b: frozenset[str]) -> bool:
    """Equal, or one adds a code span or name to the other (`ruff` vs `ruff` and `mypy`)."""
    extra = a ^ b
    if any(v[:1].isdigit() for v in extra):
        return False  # another number is another assertion
    return (a <= b or b <= a) and jaccard(a, b) >= 0.5


def anchored(values: frozenset[str]) -> bool:
    return any(v.startswith(("`", "http")) or "/" in v for v in values)


def duplicate(a: Memory, b: Memory) -> float | None:
    """The similarity score when `a` and `b` near-duplicate each other, else None."""
    if same_subject(a, b) and conflict(a, b) is not None:
        return None
    if not _subjects_compatible(a, b):
        return None
    ra, rb = reading(a), reading(b)
    if ra.negated != rb.negated:
        return None
    if ra.values and rb.values and not _values_compatible(ra.values, rb.values):
        return None
    raw = jaccard(dedup_key(a), dedup_key(b))
    if raw >= THRESHOLD:
        return raw
    if bool(ra.values) != bool(rb.values) and not same_subject(a, b):
        return None
    score = jaccard(content_stems(a), content_stems(b))
    needed = ANCHORED if ra.values == rb.values and anchored(ra.values) else REWORDED
    return score if score >= needed else None


def specificity(memory: Memory) -> tuple[int, int]:
    """How concrete a memory is: anchors (citations, lines, symbols) and asserted values."""
    anchors = sum(1 + (c.line is not None) + bool(c.symbol) for c in memory.citations)
    return anchors, len(reading(memory).values)


def keeper(memories: list[Memory]) -> Memory:
    """The memory a near-duplicate group keeps: most specific, else most recent."""
    return max(
        memories,
        key=lambda m: (
            specificity(m),
            m.updated or m.created or "",
            len(fact_of(m.body)),
            m.name,
        ),
    )
