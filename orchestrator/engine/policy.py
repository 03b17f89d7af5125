"""Retry and revision rules (docs/design.md, States), as pure functions.

Failure classes and their retries within one phase: transient 3 (retry the same scope),
fixable 1 (retry with a fix hint), needs_replan 1 (targeted replan), escalate 0 (stop),
model_unavailable 2 (retry; the model layer switches to the fallback model). At most 5
retries a phase, and a class seen for the third time in a phase escalates whatever its
own budget says.

Plan revision: the auditor loop has an iteration budget by complexity tier; it stagnates
at iteration >= 3 when the score gained less than 0.05 (on its 0..1 scale) over the last
two iterations. Either way the plan goes to a person (WAITING_APPROVAL).
"""

from __future__ import annotations

from dataclasses import dataclass

RETRY_LIMITS = {
    "transient": 3,
    "fixable": 1,
    "needs_replan": 1,
    "escalate": 0,
    "model_unavailable": 2,
}
MAX_RETRIES_PER_PHASE = 5
SAME_CLASS_ESCALATES = 3

AUDIT_BUDGET = {"TRIVIAL": 2, "SMALL": 3, "MEDIUM": 4, "LARGE": 5}
STAGNATION_MIN_ITERATION = 3
STAGNATION_MIN_GAIN = 0.05
PLAN_SCHEMA_ATTEMPTS = 3  # a plan failing its schema goes back to the planner this often
ANSWER_SCHEMA_ATTEMPTS = 2  # the same for an auditor or reviewer verdict


@dataclass(frozen=True)
class RetryDecision:
    retry: bool
    reason: str


def decide_retry(previous: list[str], failure_class: str) -> RetryDecision:
    """Retry after a failure of `failure_class`, given the classes that failed before."""
    history = [*previous, failure_class]
    seen = history.count(failure_class)
    limit = RETRY_LIMITS[failure_class]
    if limit == 0:
        return RetryDecision(False, f"{failure_class}: no retry, a person must decide")
    if seen >= SAME_CLASS_ESCALATES:
        return RetryDecision(False, f"{failure_class} failed {seen} times in this phase")
    if seen > limit:
        return RetryDecision(False, f"{failure_class} retries used up ({limit})")
    if len(history) > MAX_RETRIES_PER_PHASE:
        return RetryDecision(False, f"{MAX_RETRIES_PER_PHASE} retries used in this phase")
    return RetryDecision(True, f"{failure_class} retry {seen} of {limit}")


def audit_budget(tier: str | None, human_revisions: int = 0) -> int:
    return min(5, AUDIT_BUDGET.get(tier or "MEDIUM", 4) + human_revisions)


def stagnated(scores: list[float]) -> bool:
    """`scores[i]` is iteration i+1's score; True when the newest iteration stagnated."""
    iteration = len(scores)
    if iteration < STAGNATION_MIN_ITERATION:
        return False
    return scores[-1] - scores[-3] < STAGNATION_MIN_GAIN
