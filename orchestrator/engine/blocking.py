"""The gate that stops a task, as `orch status` shows it: its name, command, exit code and
the tail of its output.

A gate blocks when its BLOCKED decision is the last thing that happened before the task
stopped (BLOCKED, or WAITING_APPROVAL for anything but a plan). Once the task moved on
(a retry, an answer, a resume), that decision no longer blocks.
"""

from __future__ import annotations

from typing import Any

from orchestrator.engine.enums import ApprovalKind, Decision, Step
from orchestrator.engine.payloads import GateEvent, GateRun, output_tail
from orchestrator.engine.state import TaskState
from orchestrator.events.log import Event

# the steps that record the stop itself
STOP_STEPS = frozenset({Step.BLOCKED, Step.APPROVAL_REQUESTED})


def blocking_gate(state: TaskState, events: list[Event]) -> dict[str, Any] | None:
    """`{name, command, exit_code, output_tail}` of the gate that stops the task, or None."""
    stopped = state.blocked is not None or (
        state.waiting is not None and state.waiting.kind is not ApprovalKind.PLAN
    )
    if not stopped:
        return None
    gate = _last_gate(events)
    if gate is None or gate.decision is Decision.GO:
        return None
    return _shown(gate)


def _last_gate(events: list[Event]) -> GateEvent | None:
    """The gate event just before the stop, or None when something else came between."""
    for event in reversed(events):
        if event.event_type == "gate_event":
            return GateEvent.from_payload(event.payload)
        if event.event_type == "state_change" and event.payload.get("step") not in STOP_STEPS:
            return None
    return None


def _shown(gate: GateEvent) -> dict[str, Any]:
    diagnosis = gate.diagnosis
    run = _failed_run(diagnosis.runs if diagnosis else None)
    if run is not None:
        return {
            "name": run.gate,
            "command": run.command,
            "exit_code": run.exit_code,
            "output_tail": run.output_tail,
        }
    detail = (diagnosis.hint or diagnosis.detail) if diagnosis else None
    return {
        "name": str(gate.gate),
        "command": diagnosis.command if diagnosis else None,
        "exit_code": None,
        "output_tail": output_tail(detail or gate.reason),
    }


def _failed_run(runs: tuple[GateRun, ...] | None) -> GateRun | None:
    """The failed gate to show: the first that ran a command, else the first."""
    failed = [r for r in runs or () if r.failed]
    with_command = [r for r in failed if r.command]
    shown = with_command or failed
    return shown[0] if shown else None
