"""The engine's side of the event log: record an event, fold it into the state, tell listeners.

Every decision goes through `Journal.record` before the engine acts on it. The journal
also hosts the fault-injection hooks for the event log (`event@N`, `torn@N`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from orchestrator.engine import faults
from orchestrator.engine.state import TaskState
from orchestrator.events.log import Event, EventLog

Listener = Callable[[Event, TaskState], None]

GATE_SCHEMA_VERSION = "1.1.0"


class Journal:
    def __init__(self, log: EventLog, state: TaskState, events: list[Event] | None = None):
        self.log = log
        self.state = state
        self.events: list[Event] = list(events or [])
        self.listeners: list[Listener] = []

    def record(
        self,
        event_type: str,
        payload: dict[str, Any],
        *,
        agent: str = "Orchestrator",
        phase: int | None = None,
    ) -> Event:
        if faults.FAULTS.torn_write_due(len(self.events)):
            self._write_torn(event_type, payload, agent, phase)
        event = self.log.append(event_type, payload, agent=agent, phase=phase)
        self.events.append(event)
        self.state.apply(event)
        for listener in self.listeners:
            listener(event, self.state)
        faults.FAULTS.after_event(len(self.events))
        return event

    def gate(
        self,
        gate: str,
        *,
        workflow_state: str,
        decision: str,
        reason: str,
        next_action: str,
        phase: int | None = None,
        confidence: float = 1.0,
        requires_human_approval: bool = False,
        iteration_index: int = 0,
        max_iterations: int = 1,
        **extra: Any,
    ) -> Event:
        """A gate_event with every field of the gate-event schema 1.1.0."""
        payload: dict[str, Any] = {
            "schema_version": GATE_SCHEMA_VERSION,
            "agent": "Orchestrator",
            "event_type": gate,
            "workflow_state": workflow_state,
            "phase_id": phase,
            "decision": decision,
            "confidence": round(max(0.0, min(1.0, confidence)), 3),
            "requires_human_approval": requires_human_approval,
            "reason": reason,
            "next_action": next_action,
            "iteration_index": iteration_index,
            "max_iterations": max(1, min(5, max_iterations)),
            "trace_id": self.log.trace_id,
            **{k: v for k, v in extra.items() if v is not None},
        }
        return self.record("gate_event", payload, phase=phase)

    def change(
        self, to: str, step: str, reason: str, *, phase: int | None = None, **extra: Any
    ) -> Event:
        """A state_change from the current state."""
        payload: dict[str, Any] = {
            "from": self.state.state,
            "to": to,
            "step": step,
            "reason": reason,
            **({"phase": phase} if phase is not None else {}),
            **{k: v for k, v in extra.items() if v is not None},
        }
        return self.record("state_change", payload, phase=phase)

    def as_log(self) -> EventLog:
        """The task's log as the other parts see it: their appends go through this journal."""
        return JournalLog(self)

    def _write_torn(
        self, event_type: str, payload: dict[str, Any], agent: str, phase: int | None
    ) -> None:
        """Fault injection only: half an event line on disk, then die (a power cut)."""
        line = (
            Event(
                "2000-01-01T00:00:00.000Z",
                self.log.trace_id,
                self.log.task,
                agent,
                phase,
                event_type,
                payload,
            )
            .to_line()
            .encode("utf-8")
        )
        fd = os.open(self.log.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line[: len(line) // 2])
            os.fsync(fd)
        finally:
            os.close(fd)
        faults.kill()


class JournalLog(EventLog):
    """An `EventLog` whose appends are recorded by a `Journal` (state, listeners, faults)."""

    def __init__(self, journal: Journal) -> None:
        log = journal.log
        super().__init__(log.path, log.task, log.trace_id, validate=log.validate)
        self.journal = journal

    def append(
        self,
        event_type: str,
        payload: dict[str, Any],
        *,
        agent: str = "Orchestrator",
        phase: int | None = None,
    ) -> Event:
        return self.journal.record(event_type, payload, agent=agent, phase=phase)
