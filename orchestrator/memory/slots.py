"""What cannot give one slot two values, whatever the words say.

`compare.conflict` calls two facts contradictory when they give one slot different
values. Two shapes of fact fill no slot that way:

- `prohibitions`: two negated clauses ("don't use class components", "don't use CSS-in-JS
  libraries") list what is ruled out; prohibitions add up, they do not compete
  (limits, which rule out by a number, still do).
- `flow`: a fact written as a chain of arrows ("4 terms → 36 weeks → 180 lessons", "order
  edited → recount the invoice → update the ledger") names the steps of a hierarchy or a
  cascade; another fact naming other steps describes another part of it.

A fact that opens with a prohibition ("Don't use class components (no
componentDidMount)") is one however many negations it holds (`forbids`).

A denial that only says "without X" or "instead of X" (`contrast_only`: "Without a unique
key, the upsert inserted duplicates"; "jobs now update the row instead of adding one")
sets a condition or names what was turned down: it denies no statement of another fact.

Nor does a fact that states no value of its own (`unstated`): a lead-in ending on a colon
("Read `docs/setup.md` to understand:") introduces the list or block that follows; an
option weighed ("Cons: no built-in validation", "Pros: ships with a router") says what
one choice of several would bring, not what the project is; and an example, filed under
a heading of examples ("Examples", "Usage examples"), is one instance of many.

Across subjects one slot is read (`count`): the same count of the same thing, "a
138-column export layout" against "export column map (139 columns)": one unit given two
numbers, no number agreeing, in clauses that share a word besides the unit (what is
counted: "export"; a number before "passed" counts tests, `unit`). A 6-column database
schema is another slot, and so is a bound (`bounds`: "at most 200 orders a page") against
a plain value ("50 orders per page by default"); `compare.count_conflict` adds the rules
on subjects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from orchestrator.checks.secrets import Patterns
from orchestrator.memory.text import ANTONYMS, NEGATIONS, Clause, Reading, stem

MIN_ARROWS = 2  # a chain: three steps at least
_UNITS = {"pass": "test"}  # a stem written after a count -> the unit it counts
_RX = Patterns(  # compiled on first use: only a pair of facts compared needs them
    arrow=r"→|⇒|->|=>",
    bound=(
        r"\b(?:at (?:most|least)|up to|no (?:more|fewer|less) than|max(?:imum)?|min(?:imum)?|"
        r"limit(?:s|ed)?|caps?|capped)\b",
        re.IGNORECASE,
    ),
    count=r"(?<![\w.])(\d+(?:\.\d+)?)[\s-]+([a-z]+)",
    # what stands before a number that is no count: a word naming which one of a series
    # ("Stage 1.5 provides", "Phase 2 tables") or the start of a range ("1-5 models")
    not_counted=(
        r"(?:\b(?:stage|phase|step|part|tier|level|version|v|release|sprint|week|day|round|"
        r"iteration|milestone|chapter|section|issue|ticket|item|option|setting|scenario)\s*#?"
        r"|\d\s*(?:[-–]|to)\s*)$"
    ),
    thousands=r"(?<=\d),(?=\d{3}\b)",
    forbids=(r"^\W*(?:don'?t|do not|never|avoid|no)\b", re.IGNORECASE),
    lead_in=r":[\s*_]*$",
    option=(
        r"^\W{0,4}(?:pros?|cons?|(?:dis)?advantages?|drawbacks?|trade-?offs?|alternatives?)\W*:",
        re.IGNORECASE,
    ),
    examples=(r"\bexamples?\b", re.IGNORECASE),
    contrast=(r"\b(?:without|instead of|rather than)\b", re.IGNORECASE),
    word=r"[a-z]+(?:n't)?",
)
_DENYING = (NEGATIONS - {"without"}) | frozenset(ANTONYMS)


@dataclass(frozen=True)
class Count:
    """One count given two values: `slot` names what is counted."""

    slot: str
    left: frozenset[str]
    right: frozenset[str]

    def detail(self) -> str:
        return (
            f"the number of {self.slot}: one says {', '.join(sorted(self.left))}, "
            f"the other {', '.join(sorted(self.right))}"
        )


def prohibitions(a: Clause, b: Clause, *, forbidding: bool = False) -> bool:
    """Both clauses rule things out (or both facts open with a prohibition: `forbidding`),
    and neither by a number (two limits, "uploads over 10 MB are rejected" and "over 25
    MB", do compete)."""
    ruled_out = forbidding or (a.negated and b.negated)
    return ruled_out and not a.numbers and not b.numbers


def forbids(fact: str) -> bool:
    """The fact opens with a prohibition: don't, do not, never, avoid, no."""
    return _RX.forbids.match(fact) is not None


def unstated(fact: str, subject: str) -> bool:
    """The fact states no value of a slot: a lead-in to what follows, an option weighed,
    an example (see the module)."""
    return (
        _RX.lead_in.search(fact) is not None
        or _RX.option.match(fact) is not None
        or _RX.examples.search(subject) is not None
    )


def contrast_only(fact: str) -> bool:
    """The fact's negations are all "without", "instead of" or "rather than" (no "not",
    "never", "n't" or antonym): a condition or an alternative turned down (see the
    module)."""
    if _RX.contrast.search(fact) is None:
        return False
    words = _RX.word.findall(fact.lower())
    return not any(w in _DENYING or w.endswith("n't") for w in words)


def bounds(fact: str) -> bool:
    """The fact states a bound (at most, up to, a maximum, a limit), not a value."""
    return _RX.bound.search(fact) is not None


def counts(fact: str) -> frozenset[tuple[str, str]]:
    """(number, unit) for each number written right before its unit: "138-column",
    "139 columns", "20,000 rows"; not "Setting 8" or "part 1", where the number names
    which one, nor "Stage 1.5 provides" (the same, before a verb), nor the end of a range
    ("1-5 models", "1 to 5 models": a bound, which a value inside it does not contradict)."""
    plain = _RX.thousands.sub("", fact.lower())
    return frozenset(
        (found.group(1), stem(found.group(2)))
        for found in _RX.count.finditer(plain)
        if _RX.not_counted.search(plain, max(0, found.start() - 16), found.start()) is None
    )


def unit(word: str) -> str:
    """The unit a counted word (a stem) names: a number of tests is written "318 tests"
    or "322 passed"."""
    return _UNITS.get(word, word)


def _units(numbers: frozenset[tuple[str, str]]) -> frozenset[tuple[str, str]]:
    return frozenset((n, unit(u)) for n, u in numbers)


def count(a: Reading, b: Reading, fact_a: str, fact_b: str) -> Count | None:
    """The facts give one count two values (see the module), or None."""
    written_a, written_b = counts(fact_a), counts(fact_b)
    for ca in a.clauses:
        for cb in b.clauses:
            ka, kb = _units(ca.numbers & written_a), _units(cb.numbers & written_b)
            for what in {u for _, u in ka} & {u for _, u in kb}:
                na = frozenset(n for n, u in ka if u == what)
                nb = frozenset(n for n, u in kb if u == what)
                counted = sorted((ca.frame & cb.frame) - {what})
                if counted and not na & nb:
                    return Count(f"{what} ({', '.join(counted)})", na, nb)
    return None


@lru_cache(maxsize=65536)
def flow(fact: str) -> bool:
    """The fact is a chain of arrows: steps, not one value."""
    return len(_RX.arrow.findall(fact)) >= MIN_ARROWS
