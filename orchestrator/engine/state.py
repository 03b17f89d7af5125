"""The workflow state of one task, as a fold over its event log.

`TaskState.apply(event)` is the only way the state changes: the engine applies each event
as it records it, and replay applies the whole log after a crash. Both paths run the same
code, so a resumed run sees exactly the state the crashed one had recorded.

States (DESIGN.md section 4): PLANNING -> WAITING_APPROVAL -> PLAN_REVIEW -> ACTING ->
REVIEWING -> (ACTING for the next phase | COMPLETE). WAITING_APPROVAL whenever a person
must decide (`orch approve`); BLOCKED when a step cannot go on until something outside
orch is fixed (`orch resume` retries it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from orchestrator.events.log import Event

STATES = (
    "PLANNING",
    "WAITING_APPROVAL",
    "PLAN_REVIEW",
    "ACTING",
    "REVIEWING",
    "COMPLETE",
    "BLOCKED",
)
# A phase's progress: pending -> acting -> reviewing -> passed -> committed -> closed.
PHASE_STATUSES = ("pending", "acting", "reviewing", "passed", "committed", "closed")
COMPLETION_STEPS = ("final_review", "gate", "promoted")


@dataclass
class PhaseState:
    phase_id: int
    status: str = "pending"
    attempt: int = 0
    failures: list[str] = field(default_factory=list)  # failure classes counted this phase
    hint: str | None = None  # feedback the current attempt starts with
    failure_class: str | None = None  # the class that sent the current attempt back
    submitted: bool = False  # the executor finished the current attempt
    pending_failure: dict[str, Any] | None = None  # a failure whose retry is not decided
    passed_tree: str | None = None  # the project tree that passed the gate
    commit: str | None = None
    generation: int = 0  # bumped when a targeted replan restarts the phase
    approvals: dict[str, bool] = field(default_factory=dict)  # high-risk key -> granted
    preflect_override: bool = False  # a person approved a PREFLECT_GATE that stopped
    last_failure: dict[str, Any] | None = None  # the failure that stopped the phase


@dataclass
class Waiting:
    kind: str  # plan | high_risk | escalation | preflect
    reason: str
    phase: int | None = None
    key: str | None = None
    command: str | None = None
    back_to: str = "ACTING"  # the state the task returns to when answered


@dataclass
class Replan:
    """A targeted replan under way: plan -> audit -> gate -> restart."""

    phase: int
    stage: str = "plan"  # plan | audit | gate | approve | restart
    diagnosis: str = ""


@dataclass
class TaskState:
    slug: str
    trace_id: str = ""
    state: str | None = None
    task: dict[str, Any] = field(default_factory=dict)
    branch_ready: bool = False
    plan_iteration: int = 0  # the newest plan iteration recorded
    plan_sha: str | None = None
    plan_status: str | None = None  # the newest plan's own status
    tier: str | None = None
    audits: list[dict[str, Any]] = field(default_factory=list)
    gated_iteration: int = 0  # the newest iteration that went through PLAN_GATE
    plan_gate: str | None = None  # that gate's decision
    human_revisions: list[str] = field(default_factory=list)  # notes of rejected plans
    planning_failures: list[str] = field(default_factory=list)  # model failure classes
    replan: Replan | None = None
    plan_approved: bool = False
    plan_ready: bool = False
    order: list[int] = field(default_factory=list)
    phases: dict[int, PhaseState] = field(default_factory=dict)
    current_phase: int | None = None
    waiting: Waiting | None = None
    blocked: dict[str, Any] | None = None
    completion: list[str] = field(default_factory=list)
    completion_override: bool = False
    events: int = 0
    last_ts: str = ""
    last_reason: str = ""
    user_turn: str = ""  # the newest thing a person said: the task, or an approval's note

    # queries -----------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.state == "COMPLETE"

    def phase(self, phase_id: int) -> PhaseState:
        if phase_id not in self.phases:
            self.phases[phase_id] = PhaseState(phase_id)
        return self.phases[phase_id]

    def committed(self) -> list[int]:
        return [p for p, s in sorted(self.phases.items()) if s.commit]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["phases"] = {str(k): v for k, v in out["phases"].items()}
        return out

    # the fold ----------------------------------------------------------------------------
    def apply(self, event: Event) -> None:
        self.events += 1
        self.last_ts = event.ts
        self.trace_id = self.trace_id or event.trace_id
        handler = getattr(self, f"_on_{event.event_type}", None)
        if handler is not None:
            handler(event.payload, event.phase)

    def _on_state_change(self, p: dict[str, Any], _phase: int | None) -> None:
        step = p.get("step")
        if step is None:
            return  # not the engine's: a note from another tool
        self.state = p["to"]
        self.last_reason = p["reason"]
        phase_id = p.get("phase")
        ph = self.phase(phase_id) if phase_id else None
        approval = p.get("approval") or {}
        if step == "task_created":
            self.task = dict(p["task"])
            self.tier = self.task.get("tier")
            self.user_turn = str(self.task.get("text", ""))
        elif step == "branch_created":
            self.branch_ready = True
        elif step == "plan_approved":
            self.plan_approved = True
        elif step == "plan_ready":
            self.plan_ready = True
            self.order = list(p.get("order") or [])
            self.plan_sha = p.get("plan_sha256", self.plan_sha)
        elif step == "approval_requested":
            self.waiting = Waiting(
                kind=approval["kind"],
                reason=p["reason"],
                phase=phase_id,
                key=approval.get("key"),
                command=approval.get("command"),
                back_to=p["from"] or "ACTING",
            )
            self._count_failure(ph, p)
            if approval["kind"] == "plan" and self.replan is not None:
                self.replan.stage = "approve"
        elif step in ("approval_given", "approval_denied"):
            self.user_turn = str(approval.get("note") or "")
            self._answer(approval.get("kind", ""), step == "approval_given", ph, p)
        elif step == "blocked":
            self.blocked = {"reason": p["reason"], "from": p["from"], "phase": phase_id}
            self._count_failure(ph, p)
        elif step == "resumed":
            # A person fixed the cause and resumed: the blocked scope gets a fresh budget.
            self.blocked = None
            if ph is None:
                self.planning_failures = []
            else:
                ph.failures = []
        elif step == "complete":
            self.completion = list(COMPLETION_STEPS)
        elif ph is not None:
            self._phase_step(step, p, ph)
        if self.state == "BLOCKED" and self.blocked is None:
            self.blocked = {"reason": p["reason"], "from": p["from"], "phase": phase_id}

    def _count_failure(self, ph: PhaseState | None, p: dict[str, Any]) -> None:
        if ph is not None and ph.pending_failure is not None:
            ph.last_failure = ph.pending_failure
        if ph is not None and p.get("failure_class"):
            ph.failures.append(p["failure_class"])
            ph.pending_failure = None

    def _answer(self, kind: str, granted: bool, ph: PhaseState | None, p: dict[str, Any]) -> None:
        self.waiting = None
        approval = p.get("approval") or {}
        if kind == "plan":
            if granted:
                self.plan_approved = True
                if self.replan is not None:
                    self.replan.stage = "restart"
            else:
                self.human_revisions.append(approval.get("note") or "a person rejected the plan")
                self.plan_gate = "REPLAN"
                self.plan_approved = False
                if self.replan is not None:
                    self.replan.stage = "plan"
        elif kind == "high_risk" and ph is not None:
            ph.approvals[approval.get("key", "")] = granted
        elif kind == "escalation":
            if ph is not None and granted:
                ph.failures = []  # a person chose to go on: a fresh retry budget
            elif ph is None and granted:
                self.completion_override = True
        elif kind == "preflect" and ph is not None and granted:
            ph.preflect_override = True

    def _phase_step(self, step: str, p: dict[str, Any], ph: PhaseState) -> None:
        if step in ("phase_started", "phase_retry", "phase_restarted"):
            self.current_phase = ph.phase_id
            ph.attempt = int(p.get("attempt", ph.attempt + 1))
            ph.hint = p.get("hint")
            ph.failure_class = p.get("failure_class")
            ph.pending_failure = None
            ph.passed_tree = None
            scope = p.get("scope", "executor")
            ph.status = "reviewing" if scope == "gates" else "acting"
            ph.submitted = scope == "gates"
            if step == "phase_retry" and p.get("failure_class"):
                ph.failures.append(p["failure_class"])
            if step == "phase_retry" and scope == "replan":
                self.replan = Replan(ph.phase_id, "plan", p.get("hint") or p["reason"])
            if step == "phase_restarted":
                ph.generation += 1
                self.replan = None
                if p.get("order"):
                    self.order = list(p["order"])
                self.plan_sha = p.get("plan_sha256", self.plan_sha)
        elif step == "gates_started":
            ph.status = "reviewing"
        elif step == "phase_committed":
            ph.status = "committed"
            ph.commit = p.get("commit")
        elif step == "phase_closed":
            ph.status = "closed"

    def _on_execution_report(self, p: dict[str, Any], phase: int | None) -> None:
        kind = p["kind"]
        if kind == "plan":
            self.plan_iteration = int(p.get("iteration", self.plan_iteration + 1))
            self.plan_sha = p.get("plan_sha256")
            self.plan_status = (p.get("plan") or {}).get("status", "READY_FOR_EXECUTION")
            self.tier = self.task.get("tier") or p.get("tier")
            self.planning_failures = []
            if p.get("scope") == "replan" and self.replan is not None:
                self.replan.stage = "audit"
        elif kind == "phase" and phase is not None:
            self.phase(phase).submitted = True
        elif kind == "final_review" and "final_review" not in self.completion:
            self.completion.append("final_review")
        elif kind == "promotion" and phase is None and "promoted" not in self.completion:
            self.completion.append("promoted")

    def _on_plan_audit(self, p: dict[str, Any], _phase: int | None) -> None:
        self.audits.append(
            {
                "iteration": p["iteration"],
                "verdict": p["verdict"],
                "effective_verdict": p["effective_verdict"],
                "score": p["score"],
                "scope": p.get("scope", "plan"),
                "stagnated": bool(p.get("stagnated")),
                "max_iterations": p["max_iterations"],
                "summary": p.get("summary", ""),
                "regressed": list(p.get("regressed") or []),
            }
        )
        self.planning_failures = []
        if p.get("scope") == "replan" and self.replan is not None:
            self.replan.stage = "gate"

    def _on_gate_event(self, p: dict[str, Any], _phase: int | None) -> None:
        gate = p["event_type"]
        packet = p.get("diagnosis_packet") or {}
        if gate == "PLAN_GATE":
            self.gated_iteration = int(p["iteration_index"])
            self.plan_gate = p["decision"]
            if packet.get("scope") == "replan" and self.replan is not None:
                self.replan.stage = "restart" if p["decision"] == "GO" else "approve"
        elif gate == "PHASE_REVIEW_GATE" and p.get("phase_id"):
            ph = self.phase(int(p["phase_id"]))
            if p["decision"] == "GO":
                ph.status = "passed"
                ph.pending_failure = None
                ph.passed_tree = packet.get("tree")
            else:
                ph.pending_failure = {
                    "failure_class": p.get("failure_class", "escalate"),
                    "reason": p["reason"],
                    "hint": packet.get("hint", p["reason"]),
                    "scope": packet.get("scope", "executor"),
                    "blocked": bool(packet.get("blocked")),
                }
        elif gate == "COMPLETION_GATE" and p["decision"] == "GO" and "gate" not in self.completion:
            self.completion.append("gate")

    def _on_error(self, p: dict[str, Any], phase: int | None) -> None:
        kind = p.get("kind")
        if kind == "executor_failed" and phase is not None:
            # An executor failure recorded with its class waits for its retry decision.
            self.phase(phase).pending_failure = {
                "failure_class": p.get("failure_class", "escalate"),
                "reason": p["detail"],
                "hint": p.get("hint") or p["detail"],
                "scope": "executor",
                "blocked": bool(p.get("blocked")),
            }
        elif kind in ("planner_failed", "auditor_failed") and p.get("failure_class"):
            self.planning_failures.append(p["failure_class"])
