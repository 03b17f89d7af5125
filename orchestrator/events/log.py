"""Append-only NDJSON event log (DESIGN.md section 3).

Writer: each append is one `os.write` of a whole line on an O_APPEND descriptor, then
fsync. The write happens under an exclusive `flock` on the log, during which the writer
also checks the file's last byte: if a crash (a power cut, a full disk) left a torn last
line, the writer cuts it off and first appends an `error` event holding the cut bytes, so
the file stays valid NDJSON and nothing is silently lost. fsync runs after the lock is
released, so concurrent writers do not queue behind each other's disk flushes.

Reader: `read_events` returns every valid event and one problem line per line it skipped
(a torn last line, a line that is not JSON, an envelope that is not an event; with
`check=True`, one that fails its JSON Schema or its payload's). It never raises on content.
Readers take no lock.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
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


def envelope_shape_error(raw: Any) -> str | None:
    """Why `raw` cannot be read as an event (None: it can), without the JSON Schema.

    Checks only what readers rely on (keys and their types), so that a reader never fails
    on a line that parses as JSON but is not an event. `check=True` applies the schema.
    """
    if not isinstance(raw, dict):
        return "not an event envelope (not a JSON object)"
    missing = [k for k in ENVELOPE_KEYS if k not in raw]
    if missing:
        return f"not an event envelope (no {', '.join(missing)})"
    for key in ("ts", "trace_id", "task", "agent", "event_type"):
        if not isinstance(raw[key], str):
            return f"{key}: not a string"
    phase = raw["phase"]
    if phase is not None and (type(phase) is not int):
        return "phase: not an integer or null"
    if not isinstance(raw["payload"], dict):
        return "payload: not an object"
    if type(raw["v"]) is not int:
        return "v: not an integer"
    return None


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
    end: int = 0  # byte offset just past the last complete line (where `follow` goes on)
    lines: int = 0  # complete lines up to `end`


def _decode(text: str | bytes, number: int, check: bool) -> tuple[Event | None, str | None]:
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, huge ints, deep nesting
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        return None, f"line {number}: not JSON ({reason})"
    if check:
        errs = envelope_errors(raw)
        if errs:
            return None, f"line {number}: {_short(errs[0])}"
    shape = envelope_shape_error(raw)
    if shape:
        return None, f"line {number}: {shape}"
    return Event.from_dict(raw, number), None


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_events(path: Path, *, check: bool = False, where: str | None = None) -> ReadResult:
    """Every valid event of the log at `path` (missing file: no events).

    Problems name the file as `where` (default: the path as given).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ReadResult([], [])
    except OSError as exc:
        return ReadResult([], [f"{where or path}: unreadable: {exc.strerror or exc}"])
    return parse_events(data, where=where or str(path), check=check)


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
        try:
            text: str | bytes = chunk.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{prefix}line {number}: not UTF-8 text")
            continue
        event, problem = _decode(text, number, check)
        if event is not None:
            events.append(event)
        else:
            problems.append(prefix + (problem or ""))
    if tail.strip():
        torn = True
        problems.append(
            f"{prefix}line {len(lines) + 1}: torn last line (no newline; a write was cut), skipped"
        )
    return ReadResult(events, problems, torn, len(data) - len(tail), len(lines))


if sys.platform != "win32":
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

else:  # pragma: no cover - orch runs on POSIX; without flock appends are still O_APPEND

    def _lock(fd: int) -> None:
        return None

    def _unlock(fd: int) -> None:
        return None


def _write_all(fd: int, data: bytes) -> None:
    written = os.write(fd, data)
    while written < len(data):  # a short write: only on a full disk or a signal
        written += os.write(fd, data[written:])


TORN_KEEP = 2000  # bytes of a cut line kept in the `error` event that records it


class EventLog:
    """The writer for one task's log. One trace_id per task, kept across resumes."""

    def __init__(
        self, path: Path, task: str, trace_id: str | None = None, *, validate: bool = True
    ):
        self.path = path
        self.task = task
        self.validate = validate
        self.trace_id = trace_id or self._existing_trace_id() or str(uuid.uuid4())

    def _existing_trace_id(self) -> str | None:
        """The trace_id of the first readable event (a resumed task keeps its trace)."""
        try:
            with self.path.open("rb") as fh:
                for _, line in zip(range(100), fh, strict=False):
                    try:
                        value = json.loads(line).get("trace_id")
                    except (ValueError, AttributeError, RecursionError):
                        continue
                    if isinstance(value, str):
                        return value
        except OSError:
            return None
        return None

    def _event(
        self, event_type: str, payload: dict[str, Any], agent: str, phase: int | None
    ) -> Event:
        return Event(
            ts=utc_ts(),
            trace_id=self.trace_id,
            task=self.task,
            agent=agent,
            phase=phase,
            event_type=event_type,
            payload=payload,
        )

    def _cut_torn_tail(self, fd: int) -> bytes:
        """Under the lock: repair a torn last line; the bytes to append before the event."""
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return b""
        start = 0  # where the torn line begins: just past the last newline
        pos = size
        while pos > 0:
            begin = max(0, pos - 65536)
            cut = os.pread(fd, pos - begin, begin).rfind(b"\n")
            if cut != -1:
                start = begin + cut + 1
                break
            pos = begin
        length = size - start
        if length <= 1_000_000:
            event, _ = _decode(os.pread(fd, length, start), 0, False)
            if event is not None:  # the whole event made it, only its newline did not
                return b"\n"
        head = os.pread(fd, min(length, TORN_KEEP), start)
        os.ftruncate(fd, start)
        record = self._event(
            "error",
            {
                "kind": "torn_line",
                "detail": f"a torn last line ({length} bytes) was cut from the log",
                "bytes": head.decode("utf-8", "replace"),
            },
            "Orchestrator",
            None,
        )
        return record.to_line().encode("utf-8")

    def append(
        self,
        event_type: str,
        payload: dict[str, Any],
        *,
        agent: str = "Orchestrator",
        phase: int | None = None,
    ) -> Event:
        """Append one event: one write of one full line, then fsync. Returns the event."""
        event = self._event(event_type, payload, agent, phase)
        if self.validate:
            errs = envelope_errors(event.to_dict())
            if errs:
                raise ValueError(f"event {event_type} does not fit its schema: {errs[0]}")
        data = event.to_line().encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _lock(fd)
            try:
                repair = self._cut_torn_tail(fd)
                if repair:
                    _write_all(fd, repair)
                _write_all(fd, data)
            finally:
                _unlock(fd)
            os.fsync(fd)
        finally:
            os.close(fd)
        return event

    def read(self, *, check: bool = False) -> ReadResult:
        return read_events(self.path, check=check)


def follow(
    path: Path,
    *,
    poll: float = 0.2,
    stop: Callable[[], bool] | None = None,
    offset: int = 0,
    lines: int = 0,
    check: bool = False,
    on_problem: Callable[[str], None] | None = None,
) -> Iterator[Event]:
    """Yield events as they are appended (like `tail -f`), starting at byte `offset`
    (after `lines` lines: `ReadResult.end` and `.lines` continue where a read stopped).

    Only complete lines are read; a line still being written waits for its newline (and a
    torn line that a writer cuts off never shows). The loop ends when `stop()` was true
    before a read that found no new line: a caller can stop once its writer is done, and
    still get every line that writer wrote. Lines that are not events go to `on_problem`.
    """
    done = offset
    number = lines
    while True:
        stopping = stop is not None and stop()  # asked before reading: nothing is missed
        try:
            with path.open("rb") as fh:
                fh.seek(done)
                chunk = fh.read()
        except FileNotFoundError:
            chunk = b""
        cut = chunk.rfind(b"\n")
        if cut != -1:
            done += cut + 1
            for raw in chunk[:cut].split(b"\n"):
                number += 1
                if not raw.strip():
                    continue
                problem: str | None
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    event, problem = None, f"line {number}: not UTF-8 text"
                else:
                    event, problem = _decode(text, number, check)
                if event is not None:
                    yield event
                elif on_problem is not None:
                    on_problem(f"{path}: {problem}")
            continue
        if stopping:
            return
        time.sleep(poll)
