"""Append-only NDJSON event log (DESIGN.md section 3).

Writer: each append is one `os.write` of a whole line on an O_APPEND descriptor, then
fsync. A process killed mid-append leaves either the whole line or nothing; a power cut can
leave a torn tail, which the next writer repairs (it truncates the partial line and logs an
`error` event holding the torn bytes) so the file stays valid NDJSON.

Reader: `read_events` returns every valid event and one problem line per line it skipped
(a torn last line, a line that is not JSON, an envelope that fails its schema when asked
to check). It never raises on content.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

EVENT_TYPES = (
    "gate_event",
    "delegation",
    "execution_report",
    "plan_audit",
    "verdict",
    "model_call",
    "tool_call",
    "compaction",
    "memory_promotion",
    "memory_verification",
    "memory_audit",
    "state_change",
    "error",
)
ENVELOPE_KEYS = ("v", "ts", "trace_id", "task", "agent", "phase", "event_type", "payload")


def utc_ts() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


@dataclass(frozen=True, slots=True)
class Event:
    ts: str
    trace_id: str
    task: str
    agent: str
    phase: int | None
    event_type: str
    payload: dict[str, Any]
    v: int = 1
    line: int = field(default=0, compare=False)  # 1-based line number when read from a file

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": self.v,
            "ts": self.ts,
            "trace_id": self.trace_id,
            "task": self.task,
            "agent": self.agent,
            "phase": self.phase,
            "event_type": self.event_type,
            "payload": self.payload,
        }

    def to_line(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"

    @classmethod
    def from_dict(cls, raw: dict[str, Any], line: int = 0) -> Event:
        return cls(
            v=raw["v"],
            ts=raw["ts"],
            trace_id=raw["trace_id"],
            task=raw["task"],
            agent=raw["agent"],
            phase=raw["phase"],
            event_type=raw["event_type"],
            payload=raw["payload"],
            line=line,
        )


def envelope_errors(raw: Any, *, payload: bool = True) -> list[str]:
    """Schema errors for one decoded line: the envelope, then its payload's own schema."""
    from orchestrator.schemas import errors, has_schema

    found = errors("event", raw)
    if found or not payload:
        return found
    name = f"payloads/{raw['event_type']}"
    if has_schema(name):
        found += [f"payload/{e}" for e in errors(name, raw["payload"])]
    return found


@dataclass
class ReadResult:
    events: list[Event]
    problems: list[str]
    torn_tail: bool = False


def _decode(text: str, number: int, check: bool) -> tuple[Event | None, str | None]:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"line {number}: not JSON ({exc.msg})"
    if check:
        errs = envelope_errors(raw)
        if errs:
            return None, f"line {number}: {errs[0]}"
    elif not isinstance(raw, dict) or any(k not in raw for k in ENVELOPE_KEYS):
        return None, f"line {number}: not an event envelope"
    return Event.from_dict(raw, number), None


def read_events(path: Path, *, check: bool = False) -> ReadResult:
    """Every valid event of the log at `path` (missing file: no events)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ReadResult([], [])
    return parse_events(data, where=str(path), check=check)


def parse_events(data: bytes, *, where: str = "", check: bool = False) -> ReadResult:
    events: list[Event] = []
    problems: list[str] = []
    torn = False
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    prefix = f"{where}: " if where else ""
    for number, chunk in enumerate(lines, start=1):
        if not chunk.strip():
            continue
        event, problem = _decode(chunk.decode("utf-8", "replace"), number, check)
        if event is not None:
            events.append(event)
        else:
            problems.append(prefix + (problem or ""))
    if tail.strip():
        torn = True
        problems.append(
            f"{prefix}line {len(lines) + 1}: torn last line (no newline; a write was cut), skipped"
        )
    return ReadResult(events, problems, torn)


class EventLog:
    """The writer for one task's log. One trace_id per task, kept across resumes."""

    def __init__(
        self, path: Path, task: str, trace_id: str | None = None, *, validate: bool = True
    ):
        self.path = path
        self.task = task
        self.validate = validate
        self.trace_id = trace_id or self._existing_trace_id() or str(uuid.uuid4())
        self._repaired = False

    def _existing_trace_id(self) -> str | None:
        try:
            with self.path.open("rb") as fh:
                first = fh.readline()
        except FileNotFoundError:
            return None
        try:
            value = json.loads(first).get("trace_id")
        except (ValueError, AttributeError):
            return None
        return value if isinstance(value, str) else None

    def _repair_tail(self) -> None:
        """Cut a torn last line (a write cut by a power loss) and record what was cut."""
        self._repaired = True
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size == 0:
            return
        with self.path.open("rb+") as fh:
            fh.seek(max(0, size - 65536))
            block = fh.read()
            if block.endswith(b"\n"):
                return
            cut = block.rfind(b"\n")
            if cut == -1 and size > len(block):
                return  # one line over 64 KiB with no newline at all: leave it to the reader
            torn = block[cut + 1 :]
            event, _ = _decode(torn.decode("utf-8", "replace"), 0, False)
            if event is not None:  # the whole event made it, only its newline did not
                fh.seek(size)
                fh.write(b"\n")
                fh.flush()
                os.fsync(fh.fileno())
                return
            fh.truncate(size - len(block) + cut + 1)
            fh.flush()
            os.fsync(fh.fileno())
        self.append(
            "error",
            {
                "kind": "torn_line",
                "detail": "a torn last line was cut from the log",
                "bytes": torn.decode("utf-8", "replace")[:2000],
            },
        )

    def append(
        self,
        event_type: str,
        payload: dict[str, Any],
        *,
        agent: str = "Orchestrator",
        phase: int | None = None,
    ) -> Event:
        if not self._repaired:
            self._repair_tail()
        event = Event(
            ts=utc_ts(),
            trace_id=self.trace_id,
            task=self.task,
            agent=agent,
            phase=phase,
            event_type=event_type,
            payload=payload,
        )
        if self.validate:
            errs = envelope_errors(event.to_dict())
            if errs:
                raise ValueError(f"event {event_type} does not fit its schema: {errs[0]}")
        data = event.to_line().encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, data)
            while written < len(
                data
            ):  # only on a full disk or a signal; never seen on a regular file
                written += os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)
        return event

    def read(self, *, check: bool = False) -> ReadResult:
        return read_events(self.path, check=check)


def follow(path: Path, *, poll: float = 0.2, stop: Any = None) -> Iterator[Event]:
    """Yield events as they are appended (like `tail -f`); `stop()` ends the loop."""
    offset = 0
    pending = b""
    number = 0
    while True:
        try:
            with path.open("rb") as fh:
                fh.seek(offset)
                chunk = fh.read()
        except FileNotFoundError:
            chunk = b""
        if chunk:
            offset += len(chunk)
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                number += 1
                if raw.strip():
                    event, _ = _decode(raw.decode("utf-8", "replace"), number, False)
                    if event is not None:
                        yield event
        elif stop is not None and stop():
            return
        else:
            time.sleep(poll)
