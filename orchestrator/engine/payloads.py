"""What the engine writes to the event log and reads back: `StateChange` and `GateEvent`.

Each record is declared once: `payload()` writes the event's payload (fields left None are
not written) and `from_payload()` reads it back, so the live run and replay fold the same
record. The payload schemas are in `orchestrator/schemas/payloads/`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, TypeVar

from msgspec import Struct, to_builtins
from msgspec.structs import asdict

from orchestrator.checks.secrets import redact
from orchestrator.engine.enums import (
    ApprovalKind,
    CheckStatus,
    Decision,
    Gate,
    SafetyCheck,
    Scope,
    Step,
    Tier,
    WorkflowState,
)
from orchestrator.errors import FailureClass

Payload = dict[str, Any]
E = TypeVar("E", bound=StrEnum)


def enum_or_none(kind: type[E], raw: object) -> E | None:
    try:
        return kind(str(raw)) if raw is not None else None
    except ValueError:
        return None


def _non_null(pairs: list[tuple[str, object]]) -> Payload:
    return {k: v for k, v in pairs if v is not None}


# what a state_change carries ----------------------------------------------------------------


class TaskSpec(Struct, frozen=True):
    """The task as `orch run` created it (the `task` of the `task_created` step)."""

    text: str
    tier: Tier | None
    auto_approve: bool
    model: str
    base_commit: str | None
    branch: str | None
    executor: str = "orch"  # who carries out the phases: orch, or claude-code

    def to_dict(self) -> Payload:
        return asdict(self)  # every key, None included: the schema requires them all

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> TaskSpec:
        return cls(
            text=str(raw["text"]),
            tier=enum_or_none(Tier, raw.get("tier")),
            auto_approve=bool(raw.get("auto_approve")),
            model=str(raw["model"]),
            base_commit=raw.get("base_commit"),
            branch=raw.get("branch"),
            executor=str(raw.get("executor") or "orch"),
        )


class Approval(Struct, frozen=True):
    """What a person is asked (`approval_requested`) or answered (`approval_given/denied`)."""

    kind: ApprovalKind
    key: str | None = None  # a high-risk command's approval key
    command: str | None = None
    rule: str | None = None  # the shell policy rule that flagged the command
    note: str | None = None  # what the person said

    def to_dict(self) -> Payload:
        return {k: v for k, v in asdict(self).items() if v}  # empty answers are not written

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Approval:
        return cls(
            ApprovalKind(raw["kind"]),
            key=raw.get("key"),
            command=raw.get("command"),
            rule=raw.get("rule"),
            note=raw.get("note"),
        )


class Budget(Struct, frozen=True):
    """The figures of a spending cap reached: what the task spent and the cap, in USD."""

    spent_usd: float
    cap_usd: float

    def to_dict(self) -> Payload:
        return {"spent_usd": round(self.spent_usd, 6), "cap_usd": round(self.cap_usd, 6)}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Budget:
        return cls(float(raw["spent_usd"]), float(raw["cap_usd"]))


class StateChange(Struct, frozen=True):
    """One `state_change` event of the engine: the record written and the record folded.

    Fields left None are not written. `source` (the payload's `from`) is the state the
    task was in; the journal fills it in when it records the change.
    """

    to: WorkflowState
    step: Step
    reason: str
    phase: int | None = None
    attempt: int | None = None
    task: TaskSpec | None = None
    branch: str | None = None
    stash: str | None = None
    approval: Approval | None = None
    by: str | None = None
    failure_class: FailureClass | None = None
    hint: str | None = None
    scope: Scope | None = None
    order: tuple[int, ...] | None = None
    plan_sha256: str | None = None
    commit: str | None = None
    reconciled: bool | None = None
    model: str | None = None  # MODEL_CHANGED: the task's model from here on
    budget: Budget | None = None  # a BUDGET approval request: the figures
    source: WorkflowState | None = None

    def payload(self) -> Payload:
        return {
            "from": self.source,
            "to": self.to,
            "step": self.step,
            "reason": self.reason,
            **_non_null(
                [
                    ("phase", self.phase),
                    ("attempt", self.attempt),
                    ("task", self.task.to_dict() if self.task else None),
                    ("branch", self.branch),
                    ("stash", self.stash),
                    ("approval", self.approval.to_dict() if self.approval else None),
                    ("by", self.by),
                    ("failure_class", self.failure_class),
                    ("hint", self.hint),
                    ("scope", self.scope),
                    ("order", list(self.order) if self.order is not None else None),
                    ("plan_sha256", self.plan_sha256),
                    ("commit", self.commit),
                    ("reconciled", self.reconciled),
                    ("model", self.model),
                    ("budget", self.budget.to_dict() if self.budget else None),
                ]
            ),
        }

    @classmethod
    def from_payload(cls, p: Mapping[str, Any]) -> StateChange | None:
        """The engine's change in `p`, or None for a note from another tool."""
        step = enum_or_none(Step, p.get("step"))
        if step is None:
            return None
        return cls(
            to=WorkflowState(p["to"]),
            step=step,
            reason=str(p["reason"]),
            phase=p.get("phase"),
            attempt=p.get("attempt"),
            task=TaskSpec.from_dict(p["task"]) if p.get("task") else None,
            branch=p.get("branch"),
            stash=p.get("stash"),
            approval=Approval.from_dict(p["approval"]) if p.get("approval") else None,
            by=p.get("by"),
            failure_class=enum_or_none(FailureClass, p.get("failure_class")),
            hint=p.get("hint"),
            scope=enum_or_none(Scope, p.get("scope")),
            order=tuple(p["order"]) if p.get("order") else None,
            plan_sha256=p.get("plan_sha256"),
            commit=p.get("commit"),
            reconciled=p.get("reconciled"),
            model=p.get("model"),
            budget=Budget.from_dict(p["budget"]) if p.get("budget") else None,
            source=enum_or_none(WorkflowState, p.get("from")),
        )


# what a gate_event carries ------------------------------------------------------------------

GATE_SCHEMA_VERSION = "1.1.0"
TAIL_LINES = 40
TAIL_CHARS = 4096


def output_tail(output: str) -> str:
    """The end of a command's output as orch keeps it: the last TAIL_LINES lines, at most
    TAIL_CHARS characters, secrets redacted (before the cut, so no secret is cut in two)."""
    lines = redact(output).rstrip().splitlines()[-TAIL_LINES:]
    return "\n".join(lines)[-TAIL_CHARS:]


class GateRun(Struct, frozen=True):
    """One quality gate as a phase gate ran it: its command, exit code, duration and the
    tail of its output (secrets redacted; empty when the gate passed)."""

    gate: str
    status: str  # PASS | FAIL | NOT_RUN
    command: str | None = None
    exit_code: int | None = None
    duration_ms: int = 0
    output_tail: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "FAIL"

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> GateRun:
        return cls(
            gate=str(raw["gate"]),
            status=str(raw["status"]),
            command=raw.get("command"),
            exit_code=raw.get("exit_code"),
            duration_ms=int(raw.get("duration_ms") or 0),
            output_tail=str(raw.get("output_tail") or ""),
        )


class Diagnosis(Struct, frozen=True):
    """A gate's `diagnosis_packet`: what the next step needs to know (fields left None are
    not written)."""

    hint: str | None = None  # the fix hint a retry starts with
    scope: Scope | None = None
    verdict: str | None = None  # PLAN_GATE: the auditor's own verdict
    blocked: bool | None = None  # the cause is outside the code
    gates: tuple[str, ...] | None = None  # the quality gates that failed
    regressed: tuple[str, ...] | None = None  # verified items that fail again
    tree: str | None = None  # the project tree that passed
    changed: tuple[str, ...] | None = None
    command: str | None = None  # HIGH_RISK_APPROVAL_GATE: the command, its rule, why
    rule: str | None = None
    detail: str | None = None
    problems: tuple[str, ...] | None = None  # COMPLETION_GATE: what failed
    runs: tuple[GateRun, ...] | None = None  # the quality gates run (PHASE_REVIEW, COMPLETION)

    def to_dict(self) -> Payload:
        out: Payload = {}
        for name, value in to_builtins(self).items():
            if value is not None:
                out[name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Diagnosis:
        def listed(key: str) -> tuple[str, ...] | None:
            value = raw.get(key)
            return tuple(value) if isinstance(value, list) else None

        return cls(
            hint=raw.get("hint"),
            scope=enum_or_none(Scope, raw.get("scope")),
            verdict=raw.get("verdict"),
            blocked=raw.get("blocked"),
            gates=listed("gates"),
            regressed=listed("regressed"),
            tree=raw.get("tree"),
            changed=listed("changed"),
            command=raw.get("command"),
            rule=raw.get("rule"),
            detail=raw.get("detail"),
            problems=listed("problems"),
            runs=tuple(GateRun.from_dict(r) for r in raw["runs"])
            if isinstance(raw.get("runs"), list)
            else None,
        )


class GateEvent(Struct, frozen=True):
    """One gate's decision, with every field of the gate-event schema 1.1.0."""

    gate: Gate
    workflow_state: WorkflowState
    decision: Decision
    reason: str
    next_action: str
    phase: int | None = None
    confidence: float = 1.0
    requires_human_approval: bool = False
    iteration_index: int = 0
    max_iterations: int = 1
    safety_checks: tuple[SafetyCheck, ...] | None = None
    dryrun_status: CheckStatus | None = None
    failure_class: FailureClass | None = None
    skeptic_status: CheckStatus | None = None
    diagnosis: Diagnosis | None = None

    def payload(self, trace_id: str) -> Payload:
        return {
            "schema_version": GATE_SCHEMA_VERSION,
            "agent": "Orchestrator",
            "event_type": self.gate,
            "workflow_state": self.workflow_state,
            "phase_id": self.phase,
            "decision": self.decision,
            "confidence": round(max(0.0, min(1.0, self.confidence)), 3),
            "requires_human_approval": self.requires_human_approval,
            "reason": self.reason,
            "next_action": self.next_action,
            "iteration_index": self.iteration_index,
            "max_iterations": max(1, min(5, self.max_iterations)),
            "trace_id": trace_id,
            **_non_null(
                [
                    ("safety_checks", list(self.safety_checks) if self.safety_checks else None),
                    ("dryrun_status", self.dryrun_status),
                    ("failure_class", self.failure_class),
                    ("skeptic_status", self.skeptic_status),
                    ("diagnosis_packet", self.diagnosis.to_dict() if self.diagnosis else None),
                ]
            ),
        }

    @classmethod
    def from_payload(cls, p: Mapping[str, Any]) -> GateEvent:
        packet = p.get("diagnosis_packet")
        return cls(
            gate=Gate(p["event_type"]),
            workflow_state=WorkflowState(p["workflow_state"]),
            decision=Decision(p["decision"]),
            reason=str(p["reason"]),
            next_action=str(p["next_action"]),
            phase=p.get("phase_id"),
            confidence=float(p.get("confidence", 1.0)),
            requires_human_approval=bool(p.get("requires_human_approval")),
            iteration_index=int(p.get("iteration_index", 0)),
            max_iterations=int(p.get("max_iterations", 1)),
            safety_checks=tuple(SafetyCheck(c) for c in p["safety_checks"])
            if p.get("safety_checks")
            else None,
            dryrun_status=enum_or_none(CheckStatus, p.get("dryrun_status")),
            failure_class=enum_or_none(FailureClass, p.get("failure_class")),
            skeptic_status=enum_or_none(CheckStatus, p.get("skeptic_status")),
            diagnosis=Diagnosis.from_dict(packet) if isinstance(packet, dict) else None,
        )
