"""The task event log: append-only NDJSON, the source of truth for workflow state."""

from orchestrator.events.log import EVENT_TYPES, Event, EventLog, ReadResult, read_events

__all__ = ["EVENT_TYPES", "Event", "EventLog", "ReadResult", "read_events"]
