"""Append-only NDJSON event log, signed and chained.

Writer: each append is one `os.write` of a whole line on an O_APPEND descriptor, then
fsync. The write happens under an exclusive `flock` on the log, during which the writer
also checks the file's last byte: if a crash (a power cut, a full disk) left a torn last
line, the writer cuts it off and first appends an `error` event holding the cut bytes, so
the file stays valid NDJSON and nothing is silently lost. Every line is signed and chained
to the one before (`orchestrator.events.chain`): the writer takes the previous line's
hash from the head record it keeps in orch's state folder, and updates that record, still
under the lock, once the line is fsynced.

Reader: `read_events` returns every valid event and one problem line per line it skipped
(a torn last line, a line that is not JSON, an envelope that is not an event; with
`check=True`, one that fails its JSON Schema or its payload's). It never raises on content.
Readers take no lock. Whether a log is intact is `orchestrator.events.verify`'s question.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from orchestrator.checks.secrets import redact_data
from orchestrator.events.chain import (
    GENESIS,
    Head,
    head_path,
    line_hash,
    read_head,
    seal,
    signed_part,
    write_head,
)
from orchestrator.events.keys import Key, load_key
from orchestrator.schemas import errors, has_schema

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
SEAL_KEYS = ("prev", "kid", "mac")  # last on a signed line (orchestrator.events.chain)


def utc_ts() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class Event(Struct, frozen=True):
    """One line of a task's event log: the envelope, its payload and its seal.

    Two events are equal when their envelopes are: where a line was read (`line`) and
    its seal are left out."""

    ts: str
    trace_id: str
    task: str
    agent: str
    phase: int | None
    event_type: str
    payload: dict[str, Any]
    v: int = 1
    line: int = 0  # 1-based line number when read from a file
    # The seal (None on a line written before logs were signed): see orchestrator.events.chain.
    prev: str | None = None
    kid: str | None = None
    mac: str | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Event) and self.envelope() == other.envelope()

    def envelope(self) -> dict[str, Any]:
        """The event without its seal: what the seal signs."""
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

    def to_dict(self) -> dict[str, Any]:
        out = self.envelope()
        if self.mac is not None:
            out.update(prev=self.prev, kid=self.kid, mac=self.mac)
        return out

    def to_line(self) -> str:
        """The line without a seal (a signed line is written by `EventLog.append` only)."""
        return json.dumps(self.envelope(), ensure_ascii=False, separators=(",", ":")) + "\n"

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
            prev=raw.get("prev"),
            kid=raw.get("kid"),
            mac=raw.get("mac"),
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
    for key in SEAL_KEYS:
        if key in raw and not isinstance(raw[key], str):
            return f"{key}: not a string"
    return None


def envelope_errors(raw: Any, *, payload: bool = True) -> list[str]:
    """Schema errors for one decoded line: the envelope, then its payload's own schema."""
    found = errors("event", raw)
    if found or not payload:
        return found
    name = f"payloads/{raw['event_type']}"
    if has_schema(name):
        found += [f"payload/{e}" for e in errors(name, raw["payload"])]
    return found


class ReadResult(Struct):
    """What `read_events` read: the valid events, one problem line per line skipped."""

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


class _Tip(Struct, frozen=True):
    """Where a log ends: complete lines, size in bytes, the last line's hash, the inode."""

    lines: int
    end: int
    hash: str
    inode: int

    def after(self, line: bytes) -> _Tip:
        """The tip once `line` (with its newline) is appended."""
        return _Tip(self.lines + 1, self.end + len(line), line_hash(line[:-1]), self.inode)


def _tip_of(data: bytes, inode: int) -> _Tip:
    """The tip of a log whose complete lines are `data` (empty, or ending with a newline)."""
    if not data:
        return _Tip(0, 0, GENESIS, inode)
    start = data.rfind(b"\n", 0, len(data) - 1) + 1
    return _Tip(data.count(b"\n"), len(data), line_hash(data[start:-1]), inode)


def _read_all(fd: int, size: int) -> bytes:
    chunks = []
    done = 0
    while done < size:
        chunk = os.pread(fd, min(size - done, 1 << 24), done)
        if not chunk:
            break
        chunks.append(chunk)
        done += len(chunk)
    return b"".join(chunks)


class EventLog:
    """The writer for one task's log. One trace_id per task, kept across resumes.

    `key` signs the lines (default: this user's key from orch's state folder, created on
    the first append).
    """

    def __init__(
        self,
        path: Path,
        task: str,
        trace_id: str | None = None,
        *,
        validate: bool = True,
        key: Key | None = None,
    ):
        self.path = path
        self.task = task
        self.validate = validate
        self.trace_id = trace_id or self._existing_trace_id() or str(uuid.uuid4())
        self._key = key
        self._tip: _Tip | None = None  # where this writer's last append left the log
        self._head: tuple[str, Path] | None = None  # (absolute log path, head record path)

    def key(self) -> Key:
        if self._key is None:
            key = load_key(create=True)
            assert key is not None  # load_key creates it or raises
            self._key = key
        return self._key

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

    def _head_where(self) -> tuple[str, Path]:
        if self._head is None:
            self._head = (str(self.path.absolute()), head_path(self.path))
        return self._head

    def _find_tip(self, fd: int, key: Key) -> tuple[_Tip, bytes]:
        """Under the lock: the bytes that repair a torn last line, and where the log ends
        once they are written.

        The previous line's hash comes from this writer's last append or the head record
        when either still describes the file (same size and inode); otherwise (after a
        crash, or a log this machine never wrote) from the file itself.
        """
        st = os.fstat(fd)
        size, inode = st.st_size, st.st_ino
        if size == 0:
            return _Tip(0, 0, GENESIS, inode), b""
        if os.pread(fd, 1, size - 1) == b"\n":
            tip = self._tip
            if tip is None or tip.end != size or tip.inode != inode:
                tip = self._tip_from_head()
            if tip is None or tip.end != size or tip.inode != inode:
                tip = _tip_of(_read_all(fd, size), inode)
            return tip, b""
        data = _read_all(fd, size)
        start = data.rfind(b"\n") + 1
        tip = _tip_of(data[:start], inode)
        torn = data[start:]
        if self._whole_line(torn, tip.hash, key):  # the whole line made it, not its newline
            return _Tip(tip.lines + 1, size + 1, line_hash(torn), inode), b"\n"
        os.ftruncate(fd, start)
        record = self._event(
            "error",
            {
                "kind": "torn_line",
                "detail": f"a torn last line ({len(torn)} bytes) was cut from the log",
                "bytes": torn[:TORN_KEEP].decode("utf-8", "replace"),
            },
            "Orchestrator",
            None,
        )
        line, _ = seal(record.envelope(), tip.hash, key)
        return tip.after(line), line

    def _tip_from_head(self) -> _Tip | None:
        where, record = self._head_where()
        head = read_head(self.path, record)
        if head is None or head.path != where:
            return None
        return _Tip(head.lines, head.end, head.hash, head.inode)

    @staticmethod
    def _whole_line(line: bytes, prev: str, key: Key) -> bool:
        """True when `line` is a complete line this key signed, chained after `prev`."""
        part = signed_part(line)
        if part is None or len(line) > 10_000_000:
            return False
        try:
            raw = json.loads(line)
        except (ValueError, RecursionError):
            return False
        return (
            isinstance(raw, dict)
            and raw.get("prev") == prev
            and raw.get("kid") == key.kid
            and key.verifies(*part)
        )

    def _save_tip(self, tip: _Tip, key: Key) -> None:
        self._tip = tip
        where, record = self._head_where()
        head = Head(where, self.trace_id, key.kid, tip.lines, tip.end, tip.inode, tip.hash)
        with contextlib.suppress(OSError):  # without it, the next writer reads the log once
            write_head(head, record)

    def append(
        self,
        event_type: str,
        payload: dict[str, Any],
        *,
        agent: str = "Orchestrator",
        phase: int | None = None,
    ) -> Event:
        """Append one signed event: one write of one full line, then fsync. Returns it.
        Any secret in the payload is replaced by its placeholder first: no log holds one."""
        event = self._event(event_type, redact_data(payload), agent, phase)
        envelope = event.envelope()
        if self.validate:
            errs = envelope_errors(envelope)
            if errs:
                raise ValueError(f"event {event_type} does not fit its schema: {errs[0]}")
        key = self.key()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _lock(fd)
            try:
                tip, repair = self._find_tip(fd, key)
                if repair:
                    _write_all(fd, repair)
                data, mac = seal(envelope, tip.hash, key)
                _write_all(fd, data)
                os.fsync(fd)  # the line is on disk before the head record says so
                self._save_tip(tip.after(data), key)
            finally:
                _unlock(fd)
        finally:
            os.close(fd)
        return replace(event, prev=tip.hash, kid=key.kid, mac=mac)

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
