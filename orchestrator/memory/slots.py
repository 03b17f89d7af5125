"""What cannot give one slot two values, whatever the words say.

`compare.conflict` calls two facts contradictory when they give one slot different
values. Two shapes of fact fill no slot that way:

- `prohibitions`: two negated clauses ("don't use the Pages Router", "don't use external
  UI libraries") list what is ruled out; prohibitions add up, they do not compete
  (limits, which rule out by a number, still do).
- `flow`: a fact written as a chain of arrows ("3 phases → 52 weeks → 312 days", "task
  changes → recount the day → update the week") names the steps of a hierarchy or a
  cascade; another fact naming other steps describes another part of it.
"""

from __future__ import annotations

import re

from orchestrator.memory.text import Clause

_ARROW = re.compile(r"→|⇒|->|=>")
MIN_ARROWS = 2  # a chain: three steps at least


def prohibitions(a: Clause, b: Clause) -> bool:
    """Both clauses rule things out, and neither by a number (two limits, "uploads over
    10 MB are rejected" and "over 25 MB", do compete)."""
    return a.negated and b.negated and not a.numbers and not b.numbers


def flow(fact: str) -> bool:
    """The fact is a chain of arrows: steps, not one value."""
    return len(_ARROW.findall(fact)) >= MIN_ARROWS
