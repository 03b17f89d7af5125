"""Does a task's event log verify? The chain, the MACs, the head record, and what each line
says about its task.

`verify_log(path)` walks the log once and returns a `LogCheck`: `verified`, `empty`,
`unverified (no MACs)` (lines written before logs were signed), `unverified (other key)`
(signed with a key this machine does not hold: a teammate's clone, CI), or `tampered`, with
the first bad line and why. What makes a line bad:

- it is not a JSON event envelope, or it is blank (orch never writes either);
- its `prev` is not the hash of the line before it (a line inserted, removed, reordered,
  duplicated or changed), or its seal is not where orch writes it;
- it is signed with this machine's key and its MAC does not match (the line was changed,
  or written without the key);
- it carries no MAC, or another key's, after lines this machine signed (a line appended
  by hand or by another program); within lines signed elsewhere the key changes only at
  an acceptance (below);
- its `trace_id` differs from the first line's or is zeroed, its `task` is not the
  folder's, or its timestamp lies more than `TS_BACK` seconds before an earlier line's or
  more than `TS_AHEAD` after now;
- this machine's head record says more lines were written than the log holds (lines cut
  from the end), that its last line was another, or that the log had another trace_id
  (it was replaced). With the chain, the head's hash of the last line written here pins
  every line before it.

A torn last line (a crash in the middle of a write) is a note, not a failure: the next
append cuts it and records it. A person can accept a log that does not verify after
reading it (`orch resume --accept-log`): an `error` event of kind `log_accepted`, signed
with this machine's key, pins the lines it accepts by their sha256; problems in those
lines are then notes, and the lines after it must verify. Changing an accepted line later
breaks the pin.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from orchestrator.errors import OrchError
from orchestrator.events.chain import GENESIS, Head, line_hash, read_head, signed_part
from orchestrator.events.keys import Key, KeyUnavailable, load_key, signing_key_for
from orchestrator.events.log import envelope_shape_error

TS_BACK = 300.0  # seconds a timestamp may lie before the newest one seen so far
TS_AHEAD = 86400.0  # seconds a timestamp may lie after the moment of the check
ACCEPTED = "log_accepted"  # the error kind of a person's acceptance
KEEP_BAD_LINES = 1000  # tampered line numbers an acceptance records


class LogStatus(StrEnum):
    EMPTY = "empty"
    VERIFIED = "verified"
    NO_MACS = "unverified (no MACs)"
    OTHER_KEY = "unverified (other key)"
    TAMPERED = "tampered"


class LogProblem(Struct, frozen=True):
    """A line of the log that does not verify, and why."""

    line: int
    status: LogStatus  # TAMPERED, NO_MACS or OTHER_KEY
    reason: str


class LogCheck(Struct, frozen=True):
    """The verdict on a whole log: its status, the first bad line and why, notes."""

    status: LogStatus
    lines: int  # complete lines read
    line: int | None = None  # the first line that does not verify
    reason: str = ""
    notes: tuple[str, ...] = ()
    accepted: int | None = None  # the line of the acceptance in force
    kid: str | None = None  # the key the newest signed line names
    sha256: str = ""  # of the complete lines: what an acceptance pins
    bad_lines: tuple[int, ...] = ()  # every tampered line, at most KEEP_BAD_LINES

    @property
    def ok(self) -> bool:
        return self.status in (LogStatus.VERIFIED, LogStatus.EMPTY)

    def summary(self) -> str:
        if self.status is LogStatus.VERIFIED:
            accepted = f"; accepted by a person at line {self.accepted}" if self.accepted else ""
            return f"verified ({self.lines} lines{accepted})"
        if self.status is LogStatus.EMPTY:
            return "empty"
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{self.status}: {where}{self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": str(self.status),
            "ok": self.ok,
            "summary": self.summary(),
            "lines": self.lines,
            "line": self.line,
            "reason": self.reason,
            "notes": list(self.notes),
            "accepted": self.accepted,
            "kid": self.kid,
        }


class LogNotVerified(OrchError):
    """orch refuses to act on a log that does not verify (a person may accept it)."""

    def __init__(self, slug: str, check: LogCheck) -> None:
        self.check = check
        super().__init__(
            f"the event log of task {slug} does not verify: {check.summary()}; read it "
            f"(orch log {slug}), then, to go on from it as it is: orch resume {slug} --accept-log"
        )


_NOT_GIVEN: Any = object()


def verify_log(
    path: Path, *, task: str | None = None, key: Key | None = _NOT_GIVEN, now: float | None = None
) -> LogCheck:
    """Check the log at `path` (of task `task`, default the file's stem) with `key` (default
    this machine's key, if it has one; a check never creates it). Never raises on content."""
    notes: list[str] = []
    if key is _NOT_GIVEN:
        try:
            key = load_key(create=False)
        except KeyUnavailable as exc:
            key = None
            notes.append(exc.line())
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LogCheck(LogStatus.EMPTY, 0, notes=tuple(notes))
    except OSError as exc:
        return LogCheck(LogStatus.TAMPERED, 0, None, f"unreadable: {exc.strerror or exc}")
    head = read_head(path) if key is not None else None
    if head is not None and key is not None and head.kid != key.kid:
        head = None  # written with a key this machine no longer has
    walk = _Walk(data, task or path.stem, key, head, time.time() if now is None else now)
    return walk.run(notes)


class _Walk(Struct):
    """One pass over a log's lines, in order, collecting what does not verify."""

    data: bytes
    task: str
    key: Key | None
    head: Head | None
    now: float
    problems: list[LogProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    offsets: list[int] = field(default_factory=lambda: [0])  # byte offset after each line
    hashes: list[str] = field(default_factory=list)
    trace: str | None = None
    newest_ts: float = -math.inf
    segment: str | None = None  # the key id of the current run of signed lines
    kid: str | None = None
    accepted: int | None = None  # the line of the acceptance in force

    @property
    def ours(self) -> str | None:
        return self.key.kid if self.key is not None else None

    def run(self, notes: list[str]) -> LogCheck:
        self.notes = notes
        pieces = self.data.split(b"\n")
        tail = pieces.pop()
        prev = GENESIS
        for number, line in enumerate(pieces, start=1):
            self.offsets.append(self.offsets[-1] + len(line) + 1)
            self._line(number, line, prev)
            prev = line_hash(line)
            self.hashes.append(prev)
        lines = len(pieces)
        if tail.strip():
            self.notes.append(
                f"line {lines + 1}: torn last line (a write was cut; the next append repairs it)"
            )
        self._check_head(lines)
        return self._result(lines)

    # one line ------------------------------------------------------------------------------
    def _line(self, number: int, line: bytes, prev: str) -> None:
        if not line.strip():
            self._bad(number, LogStatus.TAMPERED, "a blank line (orch never writes one)")
            return
        try:
            raw = json.loads(line)
        except (ValueError, RecursionError):
            self._bad(number, LogStatus.TAMPERED, "not a JSON line (orch never writes one)")
            return
        shape = envelope_shape_error(raw)
        if shape:
            self._bad(number, LogStatus.TAMPERED, shape)
            return
        reasons = self._seal(number, line, raw, prev)
        reasons += self._meaning(number, raw)
        tampered = [r for r in reasons if r[0] is LogStatus.TAMPERED]
        if tampered:
            self._bad(number, LogStatus.TAMPERED, "; ".join(r[1] for r in tampered))
        elif reasons:
            self._bad(number, reasons[0][0], reasons[0][1])

    def _bad(self, number: int, status: LogStatus, reason: str) -> None:
        self.problems.append(LogProblem(number, status, reason))

    def _seal(
        self, number: int, line: bytes, raw: dict[str, Any], prev: str
    ) -> list[tuple[LogStatus, str]]:
        if not any(k in raw for k in ("prev", "kid", "mac")):
            if self.segment is None:
                return [(LogStatus.NO_MACS, "no MAC (written before orch signed its logs)")]
            return [(LogStatus.TAMPERED, "no MAC after signed lines (a line added by hand?)")]
        out: list[tuple[LogStatus, str]] = []
        if raw.get("prev") != prev:
            out.append((LogStatus.TAMPERED, _chain_break(number)))
        part = signed_part(line)
        kid = raw.get("kid")
        if part is None or not isinstance(kid, str) or part[1] != raw.get("mac"):
            out.append((LogStatus.TAMPERED, "its seal (prev, kid, mac) is not as orch writes it"))
            return out
        self.kid = kid
        if kid == self.ours:
            assert self.key is not None
            self.segment = kid
            if not self.key.verifies(*part):
                out.append((LogStatus.TAMPERED, "MAC does not match (the line was changed)"))
            elif not out:
                self._accept(number, raw)
            return out
        if self.segment == self.ours and self.segment is not None:
            out.append(
                (
                    LogStatus.TAMPERED,
                    f"signed with another key ({kid}) after lines signed with this machine's "
                    "key (if a teammate went on with this task on their clone, read the log, "
                    "then accept it)",
                )
            )
        elif self.segment is not None and kid != self.segment and not _is_acceptance(raw):
            out.append(
                (LogStatus.TAMPERED, f"signed with key {kid}, the lines before with {self.segment}")
            )
        mine = f", not this machine's ({self.ours})" if self.ours else "; this machine has none"
        out.append((LogStatus.OTHER_KEY, f"signed with another key ({kid}){mine}"))
        self.segment = kid
        return out

    def _accept(self, number: int, raw: dict[str, Any]) -> None:
        """A line signed here: if it is an acceptance, the lines it pins become notes."""
        if not _is_acceptance(raw):
            return
        pin = raw["payload"]["accepted"]
        count = pin.get("lines")
        if type(count) is not int or not 0 <= count < number:
            self._bad(number, LogStatus.TAMPERED, "an acceptance that names no earlier lines")
            return
        digest = hashlib.sha256(self.data[: self.offsets[count]]).hexdigest()
        if digest != pin.get("sha256"):
            known = set(pin.get("tampered_lines") or ())
            new = [p for p in self.problems if p.line <= count and p.line not in known]
            first = min(new, key=lambda p: p.line) if new else None
            if first is not None and first.status is LogStatus.TAMPERED:
                self.problems = [p for p in self.problems if p.line != first.line]
                reason = (
                    f"{first.reason} (changed after a person accepted the log at line {number})"
                )
                self._bad(first.line, LogStatus.TAMPERED, reason)
            else:
                self._bad(
                    number,
                    LogStatus.TAMPERED,
                    f"the {count} lines a person accepted here have changed since",
                )
            return
        cleared = [p for p in self.problems if p.line <= count]
        self.problems = [p for p in self.problems if p.line > count]
        if cleared:
            self.notes.append(
                f"line {number}: a person accepted lines 1-{count} as they were "
                f"(first problem then: line {cleared[0].line}: {cleared[0].reason})"
            )
        self.accepted = number

    def _meaning(self, number: int, raw: dict[str, Any]) -> list[tuple[LogStatus, str]]:
        out: list[tuple[LogStatus, str]] = []
        trace = raw["trace_id"]
        if self.trace is None:
            self.trace = trace
        elif trace != self.trace:
            out.append((LogStatus.TAMPERED, f"trace_id {trace} differs from line 1's"))
        if trace and set(trace) <= {"0", "-"}:
            out.append((LogStatus.TAMPERED, "trace_id is zeroed"))
        if raw["task"] != self.task:
            out.append(
                (LogStatus.TAMPERED, f"task {raw['task']!r} is not this folder's ({self.task!r})")
            )
        try:
            ts = datetime.fromisoformat(raw["ts"]).timestamp()
        except ValueError:
            out.append((LogStatus.TAMPERED, f"timestamp {raw['ts']!r} is not a time"))
            return out
        if ts < self.newest_ts - TS_BACK:
            out.append((LogStatus.TAMPERED, f"timestamp {raw['ts']} goes back in time"))
        elif ts > self.now + TS_AHEAD:
            out.append((LogStatus.TAMPERED, f"timestamp {raw['ts']} is in the future"))
        self.newest_ts = max(self.newest_ts, ts)
        return out

    # the head record -----------------------------------------------------------------------
    def _check_head(self, lines: int) -> None:
        """Lines cut from the end, or a log replaced. The head pins the last line this
        machine wrote, and the chain pins every line before it."""
        head = self.head
        if head is None:
            if self.ours is not None and self.kid == self.ours:
                self.notes.append(
                    "no head record on this machine: lines cut from the end cannot be told"
                )
            return
        if not lines:  # an emptied log, or a task folder made again under the same name
            self.notes.append(f"this machine wrote {head.lines} lines here before")
        elif head.trace_id != self.trace and self.accepted is None:
            self._bad(
                1,
                LogStatus.TAMPERED,
                f"this machine wrote a log with trace_id {head.trace_id} here: the log was "
                "replaced by another",
            )
        elif head.lines > lines:
            self._bad(
                lines + 1,
                LogStatus.TAMPERED,
                f"missing: this machine wrote {head.lines} lines here, the log has {lines} "
                "(lines cut from the end)",
            )
        elif head.lines > 0 and self.hashes[head.lines - 1] != head.hash:
            self._bad(
                head.lines,
                LogStatus.TAMPERED,
                "not the line this machine wrote there last (head record)",
            )

    def _result(self, lines: int) -> LogCheck:
        digest = hashlib.sha256(self.data[: self.offsets[-1]]).hexdigest()
        common: dict[str, Any] = dict(
            notes=tuple(self.notes), accepted=self.accepted, kid=self.kid, sha256=digest
        )
        bad = sorted({p.line for p in self.problems if p.status is LogStatus.TAMPERED})
        if bad:
            first = min(
                (p for p in self.problems if p.status is LogStatus.TAMPERED),
                key=lambda p: p.line,
            )
            return LogCheck(
                LogStatus.TAMPERED,
                lines,
                first.line,
                first.reason,
                bad_lines=tuple(bad[:KEEP_BAD_LINES]),
                **common,
            )
        if self.problems:
            first = min(self.problems, key=lambda p: p.line)
            return LogCheck(first.status, lines, first.line, first.reason, **common)
        return LogCheck(LogStatus.VERIFIED if lines else LogStatus.EMPTY, lines, **common)


def _is_acceptance(raw: dict[str, Any]) -> bool:
    payload = raw.get("payload")
    return (
        raw.get("event_type") == "error"
        and isinstance(payload, dict)
        and payload.get("kind") == ACCEPTED
        and isinstance(payload.get("accepted"), dict)
    )


def _chain_break(number: int) -> str:
    if number == 1:
        return "prev is not the start of a log (lines were cut from the start, or moved)"
    return (
        f"prev is not the hash of line {number - 1} (a line was inserted, removed, reordered, "
        "repeated or changed)"
    )


def acceptance(check: LogCheck, *, by: str) -> dict[str, Any]:
    """The payload of the `error` event recording that a person accepted the log as it is."""
    return {
        "kind": ACCEPTED,
        "detail": f"a person read the log and accepted it as it was: {check.summary()}",
        "accepted": {
            "lines": check.lines,
            "sha256": check.sha256,
            "status": str(check.status),
            "line": check.line,
            "reason": check.reason,
            "tampered_lines": list(check.bad_lines),
        },
        "by": by,
    }


def admit(
    path: Path, slug: str, root: Path, *, accept: bool = False, by: str = "orch resume --accept-log"
) -> dict[str, Any] | None:
    """Before orch acts on a task's log. None: it verifies (or is empty). Otherwise, with
    `accept`, the payload of the acceptance event to record first; without, `LogNotVerified`.

    Also refuses a state folder inside the repository, where the agent could read the key.
    """
    check = verify_log(path, task=slug, key=signing_key_for(root))
    if check.ok:
        return None
    if not accept:
        raise LogNotVerified(slug, check)
    return acceptance(check, by=by)
