"""The engine's side of the event log: record an event, fold it into the state, tell listeners.

Every decision goes through `Journal.record` before the engine acts on it. The journal
also hosts the fault-injection hooks for the event log (`event@N`, `torn@N`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from orchestrator.engine import faults
from orchestrator.engine.activity import Activity, NoActivity
from orchestrator.engine.payloads import GateEvent, StateChange
from orchestrator.engine.state import TaskState
from orchestrator.events.log import Event, EventLog

Listener = Callable[[Event, TaskState], None]


class Journal:
    def __init__(self, log: EventLog, state: TaskState, events: list[Event] | None = None):
        self.log = log
        self.state = state
        self.events: list[Event] = list(events or [])
        self.listeners: list[Listener] = []
        self.activity: Activity = NoActivity()  # what runs now, for a live display (not logged)

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

    def gate(self, gate: GateEvent) -> Event:
        """A gate_event with every field of the gate-event schema 1.1.0."""
        return self.record("gate_event", gate.payload(self.log.trace_id), phase=gate.phase)

    def change(self, change: StateChange) -> Event:
        """A state_change from the current state."""
        payload = replace(change, source=self.state.state).payload()
        return self.record("state_change", payload, phase=change.phase)

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
