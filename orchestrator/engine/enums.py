"""The words of the workflow: states, steps, statuses, gates and decisions, as enums.

The event log spells each as the enum's value; the engine dispatches on the members.
"""

from __future__ import annotations

from enum import StrEnum


class WorkflowState(StrEnum):
    PLANNING = "PLANNING"
    WAITING_APPROVAL = "WAITING_APPROVAL"
    PLAN_REVIEW = "PLAN_REVIEW"
    ACTING = "ACTING"
    REVIEWING = "REVIEWING"
    COMPLETE = "COMPLETE"
    BLOCKED = "BLOCKED"
    ABANDONED = "ABANDONED"  # a person gave the task up (`orch abandon`): nothing runs it again


# The states the engine stops in: no orch process works on the task again until a person
# acts (`orch approve`, `orch resume`), or ever (COMPLETE). `Workflow.run` returns there,
# and `orch log --follow` ends there. A new terminal state belongs here too.
STOPPED_STATES = frozenset(
    {
        WorkflowState.COMPLETE,
        WorkflowState.BLOCKED,
        WorkflowState.WAITING_APPROVAL,
        WorkflowState.ABANDONED,
    }
)


class PhaseStatus(StrEnum):
    """A phase's progress: pending -> acting -> reviewing -> passed -> committed -> closed."""

    PENDING = "pending"
    ACTING = "acting"
    REVIEWING = "reviewing"
    PASSED = "passed"
    COMMITTED = "committed"
    CLOSED = "closed"


class Step(StrEnum):
    """What a `state_change` event says the engine did (the fold dispatches on it)."""

    TASK_CREATED = "task_created"
    BRANCH_CREATED = "branch_created"
    PLAN_APPROVED = "plan_approved"
    PLAN_READY = "plan_ready"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_GIVEN = "approval_given"
    APPROVAL_DENIED = "approval_denied"
    BLOCKED = "blocked"
    RESUMED = "resumed"
    PHASE_STARTED = "phase_started"
    PHASE_RETRY = "phase_retry"
    PHASE_RESTARTED = "phase_restarted"
    GATES_STARTED = "gates_started"
    PHASE_COMMITTED = "phase_committed"
    PHASE_CLOSED = "phase_closed"
    COMPLETE = "complete"
    ABANDONED = "abandoned"
    MODEL_CHANGED = "model_changed"  # `orch resume --model`: the task's model from here on


class ApprovalKind(StrEnum):
    PLAN = "plan"
    HIGH_RISK = "high_risk"
    ESCALATION = "escalation"
    PREFLECT = "preflect"
    BUDGET = "budget"  # the task's spending reached `[budget] max_cost_usd`


class Scope(StrEnum):
    """What a retry (or a plan) covers: the whole plan, a targeted replan, the executor
    from its checkpoint, or the gates alone."""

    PLAN = "plan"
    REPLAN = "replan"
    EXECUTOR = "executor"
    GATES = "gates"


class Tier(StrEnum):
    TRIVIAL = "TRIVIAL"
    SMALL = "SMALL"
    MEDIUM = "MEDIUM"
    LARGE = "LARGE"


class AuditVerdict(StrEnum):
    APPROVED = "APPROVED"
    NEEDS_REVISION = "NEEDS_REVISION"
    REJECTED = "REJECTED"
    ABSTAIN = "ABSTAIN"


class ReplanStage(StrEnum):
    PLAN = "plan"
    AUDIT = "audit"
    GATE = "gate"
    APPROVE = "approve"
    RESTART = "restart"


class CompletionStep(StrEnum):
    FINAL_REVIEW = "final_review"
    GATE = "gate"
    PROMOTED = "promoted"


class Gate(StrEnum):
    PLAN_GATE = "PLAN_GATE"
    PREFLECT_GATE = "PREFLECT_GATE"
    PHASE_REVIEW_GATE = "PHASE_REVIEW_GATE"
    HIGH_RISK_APPROVAL_GATE = "HIGH_RISK_APPROVAL_GATE"
    COMPLETION_GATE = "COMPLETION_GATE"


class Decision(StrEnum):
    GO = "GO"
    REPLAN = "REPLAN"
    ABSTAIN = "ABSTAIN"
    BLOCKED = "BLOCKED"


class SafetyCheck(StrEnum):
    DESTRUCTIVE_ACTION = "destructive_action_checked"
    SCOPE = "scope_checked"
    POLICY = "policy_checked"
    TODO = "todo_verified"


class CheckStatus(StrEnum):
    """A gate's `skeptic_status` (the reviewer) and `dryrun_status` (the quality gates)."""

    COMPLETE = "COMPLETE"
    ABSTAIN = "ABSTAIN"
    PASS = "PASS"
    FAIL = "FAIL"
    NOT_RUN = "NOT_RUN"


class Role(StrEnum):
    """The model roles: each is a prompt file, a request purpose and an agent in the log."""

    PLANNER = "planner"
    AUDITOR = "auditor"
    EXECUTOR = "executor"
    REVIEWER = "reviewer"
    COMPACTOR = "compactor"  # summarises a phase's older turns, folds them at its end

    @property
    def agent(self) -> str:
        return AGENTS[self]


AGENTS = {
    Role.PLANNER: "Planner",
    Role.AUDITOR: "PlanAuditor",
    Role.EXECUTOR: "Executor",
    Role.REVIEWER: "CodeReviewer",
    Role.COMPACTOR: "Compactor",
}
