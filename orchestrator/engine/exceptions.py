"""How control leaves a loop: typed exceptions that carry what to record.

The agent loop ends with `Submitted` (the model finished), `LimitsExceeded` (the turn
budget ran out) or lets a `ModelError` through. The workflow stops with `NeedsApproval`
(a person must decide: the task goes WAITING_APPROVAL) or `Blocked` (something outside
orch must change: the task goes BLOCKED). Each carries the gate event to log, if any, and
the reason a person will read.
"""

from __future__ import annotations

from orchestrator.engine.enums import ApprovalKind
from orchestrator.engine.payloads import Approval, Budget, GateEvent
from orchestrator.errors import FailureClass


class LoopExit(Exception):
    """Leaves an agent loop."""


class Submitted(LoopExit):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class LimitsExceeded(LoopExit):
    def __init__(self, turns: int) -> None:
        super().__init__(f"the turn budget ({turns} turns) ran out before the work was done")
        self.turns = turns


class StepAgain(Exception):
    """A failure was recorded and will be retried: end this step; the state picks the next."""


class WorkflowExit(Exception):
    """Stops the workflow; the driver records `gate` (if any), then the state change."""

    def __init__(
        self,
        reason: str,
        *,
        phase: int | None = None,
        failure_class: FailureClass | None = None,
        gate: GateEvent | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.phase = phase
        self.failure_class = failure_class
        self.gate = gate


class NeedsApproval(WorkflowExit):
    def __init__(
        self,
        kind: ApprovalKind,
        reason: str,
        *,
        key: str | None = None,
        command: str | None = None,
        rule: str | None = None,
        phase: int | None = None,
        failure_class: FailureClass | None = None,
        gate: GateEvent | None = None,
        budget: Budget | None = None,
    ) -> None:
        super().__init__(reason, phase=phase, failure_class=failure_class, gate=gate)
        self.budget = budget  # a BUDGET request: what was spent, and the cap
        self.kind = kind
        self.key = key  # a high-risk command's approval key
        self.command = command
        self.rule = rule  # the shell policy rule that flagged it

    @property
    def request(self) -> Approval:
        """What the person is asked, as the `approval_requested` change records it."""
        return Approval(self.kind, key=self.key, command=self.command, rule=self.rule)


class Blocked(WorkflowExit):
    pass
