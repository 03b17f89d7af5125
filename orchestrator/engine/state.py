"""The workflow state of one task, as a fold over its event log.

`TaskState.apply(event)` is the only way the state changes: the engine applies each event
as it records it, and replay applies the whole log after a crash. Both paths run the same
code, so a resumed run sees exactly the state the crashed one had recorded.

States: PLANNING -> WAITING_APPROVAL -> PLAN_REVIEW -> ACTING -> REVIEWING -> (ACTING for
the next phase | COMPLETE). WAITING_APPROVAL whenever a person must decide (`orch
approve`); BLOCKED when a step cannot go on until something outside orch is fixed (`orch
resume` retries it). The words of the log are the enums of `enums.py`; the fold reads
the records of `payloads.py` (`StateChange`, `GateEvent`) that the engine wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from msgspec import Struct, field, to_builtins

from orchestrator.engine.enums import (
    ApprovalKind,
    AuditVerdict,
    CompletionStep,
    Decision,
    Gate,
    PhaseStatus,
    ReplanStage,
    Scope,
    Step,
    Tier,
    WorkflowState,
)
from orchestrator.engine.payloads import (
    Approval,
    Budget,
    Diagnosis,
    GateEvent,
    Payload,
    StateChange,
    TaskSpec,
    enum_or_none,
)
from orchestrator.errors import FailureClass
from orchestrator.events.log import Event

# the state ----------------------------------------------------------------------------------


class Failure(Struct, frozen=True):
    """A failure whose retry is not decided yet (or the one that stopped a phase)."""

    failure_class: FailureClass
    reason: str
    hint: str
    scope: Scope = Scope.EXECUTOR
    blocked: bool = False  # the cause is outside the code: BLOCKED rather than a person


class Blocker(Struct, frozen=True):
    """What keeps a task BLOCKED: why, and where it was when it stopped."""

    reason: str
    source: WorkflowState | None  # the state the task was in when it was blocked
    phase: int | None


class Waiting(Struct, frozen=True):
    """What a task in WAITING_APPROVAL asks a person, and the state an answer returns it to."""

    kind: ApprovalKind
    reason: str
    phase: int | None = None
    key: str | None = None
    command: str | None = None
    back_to: WorkflowState = WorkflowState.ACTING  # the state the task returns to when answered


class AuditRecord(Struct, frozen=True):
    """One `plan_audit`, as the planning steps need it."""

    iteration: int
    verdict: AuditVerdict
    effective_verdict: AuditVerdict
    score: float
    scope: Scope
    stagnated: bool
    max_iterations: int
    summary: str
    regressed: tuple[str, ...]

    @classmethod
    def from_payload(cls, p: Mapping[str, Any]) -> AuditRecord:
        return cls(
            iteration=int(p["iteration"]),
            verdict=AuditVerdict(p["verdict"]),
            effective_verdict=AuditVerdict(p["effective_verdict"]),
            score=float(p["score"]),
            scope=Scope(p.get("scope", "plan")),
            stagnated=bool(p.get("stagnated")),
            max_iterations=int(p["max_iterations"]),
            summary=str(p.get("summary", "")),
            regressed=tuple(p.get("regressed") or ()),
        )


class Replan(Struct):
    """A targeted replan under way: plan -> audit -> gate -> (approve) -> restart."""

    phase: int
    stage: ReplanStage = ReplanStage.PLAN
    diagnosis: str = ""


class PhaseState(Struct):
    """One phase as the log tells it: its status, attempts, failures and commit."""

    phase_id: int
    status: PhaseStatus = PhaseStatus.PENDING
    attempt: int = 0
    failures: list[FailureClass] = field(default_factory=list)  # classes counted this phase
    hint: str | None = None  # feedback the current attempt starts with
    failure_class: FailureClass | None = None  # the class that sent the current attempt back
    submitted: bool = False  # the executor finished the current attempt
    pending_failure: Failure | None = None  # a failure whose retry is not decided
    passed_tree: str | None = None  # the project tree that passed the gate
    commit: str | None = None
    generation: int = 0  # bumped when a targeted replan restarts the phase
    approvals: dict[str, bool] = field(default_factory=dict)  # high-risk key -> granted
    preflect_override: bool = False  # a person approved a PREFLECT_GATE that stopped
    last_failure: Failure | None = None  # the failure that stopped the phase


class TaskState(Struct):
    """Where one task stands: the fold of its event log (`apply` is the only way it changes)."""

    slug: str
    trace_id: str = ""
    state: WorkflowState | None = None
    task: TaskSpec | None = None
    branch_ready: bool = False
    plan_iteration: int = 0  # the newest plan iteration recorded
    plan_sha: str | None = None
    tier: Tier | None = None
    audits: list[AuditRecord] = field(default_factory=list)
    gated_iteration: int = 0  # the newest iteration that went through PLAN_GATE
    plan_gate: Decision | None = None  # that gate's decision
    human_revisions: list[str] = field(default_factory=list)  # notes of rejected plans
    planning_failures: list[FailureClass] = field(default_factory=list)  # model failures
    replan: Replan | None = None
    plan_approved: bool = False
    plan_ready: bool = False
    order: list[int] = field(default_factory=list)
    phases: dict[int, PhaseState] = field(default_factory=dict)
    waiting: Waiting | None = None
    blocked: Blocker | None = None
    completion: list[CompletionStep] = field(default_factory=list)
    completion_override: bool = False
    events: int = 0
    last_ts: str = ""
    last_reason: str = ""
    user_turn: str = ""  # the newest thing a person said: the task, or an approval's note
    model_override: str | None = None  # `orch resume --model`: the task's model from then on
    cost_usd: float = 0.0  # the summed cost of the task's priced model calls
    unpriced_calls: int = 0  # model calls without a price (cost_usd null): not in cost_usd
    budget_from: float = 0.0  # cost_usd when a person last approved more spending

    # queries -----------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.state is WorkflowState.COMPLETE

    @property
    def abandoned(self) -> bool:
        return self.state is WorkflowState.ABANDONED

    @property
    def finished(self) -> bool:
        """Nothing runs the task again: it is COMPLETE or ABANDONED."""
        return self.done or self.abandoned

    @property
    def model(self) -> str:
        """The task's model: the one `orch run` chose, unless `orch resume --model` changed it."""
        return self.model_override or self.spec.model

    def budget_reached(self, cap: float | None) -> Budget | None:
        """The figures when the spending since the last approval reached `cap`, else None.
        A cap that is unset or not positive never stops the task."""
        if cap is None or cap <= 0 or self.cost_usd - self.budget_from < cap:
            return None
        return Budget(self.cost_usd, self.budget_from + cap)

    @property
    def spec(self) -> TaskSpec:
        """The task (every step after `task_created` may rely on it)."""
        if self.task is None:
            raise LookupError(f"task {self.slug!r} has no task_created event")
        return self.task

    def phase(self, phase_id: int) -> PhaseState:
        if phase_id not in self.phases:
            self.phases[phase_id] = PhaseState(phase_id)
        return self.phases[phase_id]

    def to_dict(self) -> Payload:
        out: Payload = to_builtins(self)
        out["phases"] = {str(k): v for k, v in out["phases"].items()}
        return out

    # the fold ----------------------------------------------------------------------------
    def apply(self, event: Event) -> None:
        self.events += 1
        self.last_ts = event.ts
        self.trace_id = self.trace_id or event.trace_id
        handler = _EVENT_HANDLERS.get(event.event_type)
        if handler is not None:
            handler(self, event.payload, event.phase)

    def _on_state_change(self, p: Payload, _phase: int | None) -> None:
        change = StateChange.from_payload(p)
        if change is None:
            return  # not the engine's: a note from another tool
        self.state = change.to
        self.last_reason = change.reason
        ph = self.phase(change.phase) if change.phase else None
        handler = _STEP_HANDLERS.get(change.step)
        phase_handler = _PHASE_STEPS.get(change.step)
        if handler is not None:
            handler(self, change, ph)
        elif ph is not None and phase_handler is not None:
            phase_handler(ph, change)
            if change.step in (Step.PHASE_STARTED, Step.PHASE_RETRY, Step.PHASE_RESTARTED):
                self._phase_begun(change, ph)
        if self.state is WorkflowState.BLOCKED and self.blocked is None:
            self.blocked = Blocker(change.reason, change.source, change.phase)

    # steps of the task -------------------------------------------------------------------
    def _task_created(self, c: StateChange, _ph: PhaseState | None) -> None:
        self.task = c.task
        self.tier = c.task.tier if c.task else None
        self.user_turn = c.task.text if c.task else ""

    def _branch_created(self, _c: StateChange, _ph: PhaseState | None) -> None:
        self.branch_ready = True

    def _plan_approved(self, _c: StateChange, _ph: PhaseState | None) -> None:
        self.plan_approved = True

    def _plan_ready(self, c: StateChange, _ph: PhaseState | None) -> None:
        self.plan_ready = True
        self.order = list(c.order or ())
        self.plan_sha = c.plan_sha256 or self.plan_sha

    def _approval_requested(self, c: StateChange, ph: PhaseState | None) -> None:
        approval = c.approval or Approval(ApprovalKind.ESCALATION)
        self.waiting = Waiting(
            kind=approval.kind,
            reason=c.reason,
            phase=c.phase,
            key=approval.key,
            command=approval.command,
            back_to=c.source or WorkflowState.ACTING,
        )
        self._count_failure(ph, c)
        if approval.kind is ApprovalKind.PLAN and self.replan is not None:
            self.replan.stage = ReplanStage.APPROVE

    def _approval_answered(self, c: StateChange, ph: PhaseState | None) -> None:
        self.waiting = None
        approval = c.approval
        if approval is None:
            self.user_turn = ""
            return
        self.user_turn = approval.note or ""
        granted = c.step is Step.APPROVAL_GIVEN
        if approval.kind is ApprovalKind.PLAN:
            self._plan_answered(granted, approval.note)
        elif approval.kind is ApprovalKind.HIGH_RISK and ph is not None:
            ph.approvals[approval.key or ""] = granted
        elif approval.kind is ApprovalKind.ESCALATION and granted:
            if ph is not None:
                ph.failures = []  # a person chose to go on: a fresh retry budget
            else:
                self.completion_override = True
        elif approval.kind is ApprovalKind.PREFLECT and ph is not None and granted:
            ph.preflect_override = True
        elif approval.kind is ApprovalKind.BUDGET and granted:
            self.budget_from = self.cost_usd  # another full cap from what is spent now

    def _plan_answered(self, granted: bool, note: str | None) -> None:
        if granted:
            self.plan_approved = True
            if self.replan is not None:
                self.replan.stage = ReplanStage.RESTART
            return
        self.human_revisions.append(note or "a person rejected the plan")
        self.plan_gate = Decision.REPLAN
        self.plan_approved = False
        if self.replan is not None:
            self.replan.stage = ReplanStage.PLAN

    def _blocked(self, c: StateChange, ph: PhaseState | None) -> None:
        self.blocked = Blocker(c.reason, c.source, c.phase)
        self._count_failure(ph, c)

    def _resumed(self, _c: StateChange, ph: PhaseState | None) -> None:
        # A person fixed the cause and resumed: the blocked scope gets a fresh budget.
        self.blocked = None
        if ph is None:
            self.planning_failures = []
        else:
            ph.failures = []

    def _complete(self, _c: StateChange, _ph: PhaseState | None) -> None:
        self.completion = list(CompletionStep)

    def _abandoned(self, _c: StateChange, _ph: PhaseState | None) -> None:
        self.waiting = None  # nothing is asked any more, nothing blocks: the task is over
        self.blocked = None

    def _model_changed(self, c: StateChange, _ph: PhaseState | None) -> None:
        self.model_override = c.model or self.model_override

    def _count_failure(self, ph: PhaseState | None, c: StateChange) -> None:
        if ph is None:
            return
        if ph.pending_failure is not None:
            ph.last_failure = ph.pending_failure
        if c.failure_class:
            ph.failures.append(c.failure_class)
            ph.pending_failure = None

    # steps of a phase --------------------------------------------------------------------
    def _phase_begun(self, c: StateChange, ph: PhaseState) -> None:
        if c.step is Step.PHASE_RETRY and c.scope is Scope.REPLAN:
            self.replan = Replan(ph.phase_id, ReplanStage.PLAN, c.hint or c.reason)
        if c.step is Step.PHASE_RESTARTED:
            self.replan = None
            if c.order:
                self.order = list(c.order)
            self.plan_sha = c.plan_sha256 or self.plan_sha

    # other events ------------------------------------------------------------------------
    def _on_execution_report(self, p: Payload, phase: int | None) -> None:
        kind = p["kind"]
        if kind == "plan":
            self.plan_iteration = int(p.get("iteration", self.plan_iteration + 1))
            self.plan_sha = p.get("plan_sha256")
            self.tier = (self.task.tier if self.task else None) or enum_or_none(Tier, p.get("tier"))
            self.planning_failures = []
            if p.get("scope") == Scope.REPLAN and self.replan is not None:
                self.replan.stage = ReplanStage.AUDIT
        elif kind == "phase" and phase is not None:
            self.phase(phase).submitted = True
        elif kind == "final_review":
            self._completed(CompletionStep.FINAL_REVIEW)
        elif kind == "promotion" and phase is None:
            self._completed(CompletionStep.PROMOTED)

    def _completed(self, step: CompletionStep) -> None:
        if step not in self.completion:
            self.completion.append(step)

    def _on_plan_audit(self, p: Payload, _phase: int | None) -> None:
        audit = AuditRecord.from_payload(p)
        self.audits.append(audit)
        self.planning_failures = []
        if audit.scope is Scope.REPLAN and self.replan is not None:
            self.replan.stage = ReplanStage.GATE

    def _on_gate_event(self, p: Payload, _phase: int | None) -> None:
        gate = GateEvent.from_payload(p)
        packet = gate.diagnosis or Diagnosis()
        if gate.gate is Gate.PLAN_GATE:
            self.gated_iteration = gate.iteration_index
            self.plan_gate = gate.decision
            if packet.scope is Scope.REPLAN and self.replan is not None:
                go = gate.decision is Decision.GO
                self.replan.stage = ReplanStage.RESTART if go else ReplanStage.APPROVE
        elif gate.gate is Gate.PHASE_REVIEW_GATE and gate.phase:
            ph = self.phase(gate.phase)
            if gate.decision is Decision.GO:
                ph.status = PhaseStatus.PASSED
                ph.pending_failure = None
                ph.passed_tree = packet.tree
            else:
                ph.pending_failure = Failure(
                    gate.failure_class or FailureClass.ESCALATE,
                    gate.reason,
                    packet.hint if packet.hint is not None else gate.reason,
                    packet.scope or Scope.EXECUTOR,
                    bool(packet.blocked),
                )
        elif gate.gate is Gate.COMPLETION_GATE and gate.decision is Decision.GO:
            self._completed(CompletionStep.GATE)

    def _on_model_call(self, p: Payload, _phase: int | None) -> None:
        if "failure_class" in p:
            return  # a failed call: no usage, no cost
        cost = p.get("cost_usd")
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost_usd += float(cost)

    def _on_error(self, p: Payload, phase: int | None) -> None:
        kind = p.get("kind")
        failure_class = enum_or_none(FailureClass, p.get("failure_class"))
        if kind == "executor_failed" and phase is not None:
            # An executor failure recorded with its class waits for its retry decision.
            self.phase(phase).pending_failure = Failure(
                failure_class or FailureClass.ESCALATE,
                p["detail"],
                p.get("hint") or p["detail"],
                Scope.EXECUTOR,
                bool(p.get("blocked")),
            )
        elif kind in ("planner_failed", "auditor_failed") and failure_class:
            self.planning_failures.append(failure_class)


def _phase_started(ph: PhaseState, c: StateChange) -> None:
    ph.attempt = c.attempt if c.attempt is not None else ph.attempt + 1
    ph.hint = c.hint
    ph.failure_class = c.failure_class
    ph.pending_failure = None
    ph.passed_tree = None
    gates_only = c.scope is Scope.GATES
    ph.status = PhaseStatus.REVIEWING if gates_only else PhaseStatus.ACTING
    ph.submitted = gates_only
    if c.step is Step.PHASE_RETRY and c.failure_class:
        ph.failures.append(c.failure_class)
    if c.step is Step.PHASE_RESTARTED:
        ph.generation += 1


def _gates_started(ph: PhaseState, _c: StateChange) -> None:
    ph.status = PhaseStatus.REVIEWING


def _phase_committed(ph: PhaseState, c: StateChange) -> None:
    ph.status = PhaseStatus.COMMITTED
    ph.commit = c.commit


def _phase_closed(ph: PhaseState, _c: StateChange) -> None:
    ph.status = PhaseStatus.CLOSED


StepHandler = Callable[[TaskState, StateChange, PhaseState | None], None]
_STEP_HANDLERS: dict[Step, StepHandler] = {
    Step.TASK_CREATED: TaskState._task_created,
    Step.BRANCH_CREATED: TaskState._branch_created,
    Step.PLAN_APPROVED: TaskState._plan_approved,
    Step.PLAN_READY: TaskState._plan_ready,
    Step.APPROVAL_REQUESTED: TaskState._approval_requested,
    Step.APPROVAL_GIVEN: TaskState._approval_answered,
    Step.APPROVAL_DENIED: TaskState._approval_answered,
    Step.BLOCKED: TaskState._blocked,
    Step.RESUMED: TaskState._resumed,
    Step.COMPLETE: TaskState._complete,
    Step.ABANDONED: TaskState._abandoned,
    Step.MODEL_CHANGED: TaskState._model_changed,
}
_PHASE_STEPS: dict[Step, Callable[[PhaseState, StateChange], None]] = {
    Step.PHASE_STARTED: _phase_started,
    Step.PHASE_RETRY: _phase_started,
    Step.PHASE_RESTARTED: _phase_started,
    Step.GATES_STARTED: _gates_started,
    Step.PHASE_COMMITTED: _phase_committed,
    Step.PHASE_CLOSED: _phase_closed,
}
_EVENT_HANDLERS: dict[str, Callable[[TaskState, Payload, int | None], None]] = {
    "state_change": TaskState._on_state_change,
    "execution_report": TaskState._on_execution_report,
    "plan_audit": TaskState._on_plan_audit,
    "gate_event": TaskState._on_gate_event,
    "error": TaskState._on_error,
    "model_call": TaskState._on_model_call,
}
