"""The verifier, line by line: every rule on logs built by the real writer, then changed.

The attacks on a whole task, through the CLI, are in test_eventlog_attacks.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.config import PolicyConfig
from orchestrator.engine.exceptions import NeedsApproval
from orchestrator.engine.tools import ExecutorTools, approval_key
from orchestrator.engine.vcs import ProjectRepo
from orchestrator.errors import OrchError
from orchestrator.events.chain import GENESIS, head_path, line_hash, read_head, seal
from orchestrator.events.keys import Key, KeyUnavailable, key_path, load_key, state_dir
from orchestrator.events.log import EventLog, read_events, utc_ts
from orchestrator.events.verify import LogCheck, LogStatus, acceptance, verify_log
from orchestrator.messages import ToolCall
from orchestrator.store.layout import Layout

TRACE = "7d0c8c9e-2f4a-4b1e-9c3d-5e6f7a8b9c0d"


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "t" / "observability" / "t.ndjson"


def write(path: Path, n: int = 5, **kw: Any) -> EventLog:
    log = EventLog(path, "t", **kw)
    for i in range(n):
        log.append("tool_call", {"tool": "read_file", "ok": True, "n": i}, phase=1)
    return log


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def rewrite(path: Path, new: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in new))


def envelope(**changes: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "v": 1,
        "ts": "2026-11-21T10:00:00.000Z",
        "trace_id": TRACE,
        "task": "t",
        "agent": "Orchestrator",
        "phase": 1,
        "event_type": "tool_call",
        "payload": {"tool": "read_file", "ok": True},
    }
    out.update(changes)
    return out


def signed(key: Key, envelopes: list[dict[str, Any]], prev: str = GENESIS) -> list[bytes]:
    """Lines signed properly with `key`, as a writer holding it would (or a forger who had it)."""
    out = []
    for env in envelopes:
        line, _ = seal(env, prev, key)
        out.append(line[:-1])
        prev = line_hash(line[:-1])
    return out


def check(path: Path, **kw: Any) -> LogCheck:
    return verify_log(path, now=1_800_000_000.0, **kw)  # 2027-01-15, after every test stamp


# the writer's own output ---------------------------------------------------------------------


def test_a_log_written_here_verifies_and_names_its_key(log_path: Path) -> None:
    write(log_path)
    result = verify_log(log_path)
    assert result.status is LogStatus.VERIFIED and result.ok
    assert result.lines == 5 and result.line is None and result.notes == ()
    assert result.kid == load_key(create=False).kid  # type: ignore[union-attr]
    assert result.summary() == "verified (5 lines)"


def test_every_line_chains_to_the_one_before(log_path: Path) -> None:
    write(log_path, 3)
    raw = [json.loads(line) for line in lines(log_path)]
    assert raw[0]["prev"] == GENESIS
    assert raw[1]["prev"] == line_hash(lines(log_path)[0])
    assert raw[2]["prev"] == line_hash(lines(log_path)[1])
    assert list(raw[0])[-3:] == ["prev", "kid", "mac"]


def test_a_missing_log_is_empty_and_ok(log_path: Path) -> None:
    assert verify_log(log_path).status is LogStatus.EMPTY and verify_log(log_path).ok


# what each rule catches, even in lines signed with the key -----------------------------------


def test_a_timestamp_from_2001_is_caught_even_when_signed(log_path: Path) -> None:
    key = load_key()
    assert key is not None
    log_path.parent.mkdir(parents=True)
    rewrite(
        log_path,
        signed(key, [envelope(), envelope(ts="2001-01-01T00:00:00.000Z"), envelope()]),
    )
    result = check(log_path)
    assert (result.status, result.line) == (LogStatus.TAMPERED, 2)
    assert result.reason == "timestamp 2001-01-01T00:00:00.000Z goes back in time"


def test_small_steps_back_in_time_are_tolerated_and_the_future_is_not(log_path: Path) -> None:
    key = load_key()
    assert key is not None
    log_path.parent.mkdir(parents=True)
    back = envelope(ts="2026-11-21T09:58:00.000Z")  # two minutes back: two writers racing
    rewrite(log_path, signed(key, [envelope(), back]))
    assert check(log_path).status is LogStatus.VERIFIED
    rewrite(log_path, signed(key, [envelope(), envelope(ts="2099-01-01T00:00:00.000Z")]))
    result = check(log_path)
    assert (result.line, result.reason) == (
        2,
        "timestamp 2099-01-01T00:00:00.000Z is in the future",
    )


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"trace_id": "0b0e7a52-7d4c-4b8e-9a3f-2f0e6b7c9d10"}, "differs from line 1's"),
        ({"task": "another-task"}, "task 'another-task' is not this folder's ('t')"),
        ({"ts": "yesterday"}, "timestamp 'yesterday' is not a time"),
    ],
)
def test_trace_task_and_time_are_checked_on_signed_lines(
    log_path: Path, changes: dict[str, Any], reason: str
) -> None:
    key = load_key()
    assert key is not None
    log_path.parent.mkdir(parents=True)
    rewrite(log_path, signed(key, [envelope(), envelope(**changes), envelope()]))
    result = check(log_path)
    assert (result.status, result.line) == (LogStatus.TAMPERED, 2)
    assert reason in result.reason


def test_a_zeroed_trace_id_on_every_line_is_caught(log_path: Path) -> None:
    key = load_key()
    assert key is not None
    zero = "00000000-0000-0000-0000-000000000000"
    log_path.parent.mkdir(parents=True)
    rewrite(log_path, signed(key, [envelope(trace_id=zero)] * 3))
    result = check(log_path)
    assert (result.line, result.reason) == (1, "trace_id is zeroed")


def test_the_first_bad_line_is_named_with_all_its_reasons(log_path: Path) -> None:
    write(log_path)
    all_lines = lines(log_path)
    raw = json.loads(all_lines[3])
    raw["task"] = "x"
    raw["payload"]["ok"] = False
    all_lines[3] = json.dumps(raw, separators=(",", ":")).encode()
    rewrite(log_path, all_lines)
    result = verify_log(log_path)
    assert (result.status, result.line) == (LogStatus.TAMPERED, 4)
    assert result.reason == (
        "MAC does not match (the line was changed); task 'x' is not this folder's ('t')"
    )
    assert result.bad_lines == (4, 5)  # line 5's prev named line 4 as it was
    assert "line 4: MAC does not match" in result.summary()


def test_an_edit_that_keeps_the_bytes_length_still_breaks_the_mac_and_the_chain(
    log_path: Path,
) -> None:
    write(log_path)
    data = log_path.read_bytes()
    log_path.write_bytes(data.replace(b'"n":2', b'"n":7'))
    result = verify_log(log_path)
    assert (result.line, result.reason) == (3, "MAC does not match (the line was changed)")
    # the next line's prev named the old line 3: it breaks too, but only the first is named
    assert result.bad_lines == (3, 4)


def test_blank_and_foreign_lines_are_tampering(log_path: Path) -> None:
    write(log_path, 2)
    with log_path.open("ab") as fh:
        fh.write(b"\n")
    assert (verify_log(log_path).line, verify_log(log_path).reason) == (
        3,
        "a blank line (orch never writes one)",
    )
    write(log_path, 2)
    rewrite(log_path, [*lines(log_path)[:2], b"not json", *lines(log_path)[2:]])
    assert verify_log(log_path).line == 3


def test_a_seal_moved_or_mangled_is_not_accepted(log_path: Path) -> None:
    write(log_path, 2)
    raw = json.loads(lines(log_path)[1])
    mac = raw.pop("mac")
    moved = {"mac": mac, **raw}  # the same keys and values, the MAC first
    rewrite(log_path, [lines(log_path)[0], json.dumps(moved, separators=(",", ":")).encode()])
    result = verify_log(log_path)
    assert (result.line, result.reason) == (2, "its seal (prev, kid, mac) is not as orch writes it")


# keys: this machine's, another, none ----------------------------------------------------------


def test_a_log_signed_elsewhere_is_unverified_not_tampered(log_path: Path) -> None:
    theirs = Key.of(secrets.token_bytes(32))
    write(log_path, key=theirs)
    ours = load_key()
    assert ours is not None and ours.kid != theirs.kid
    result = verify_log(log_path)
    assert result.status is LogStatus.OTHER_KEY and not result.ok
    assert (result.line, result.kid) == (1, theirs.kid)
    assert result.reason.startswith(f"signed with another key ({theirs.kid}), not this machine's")
    nobody = verify_log(log_path, key=None)
    assert nobody.status is LogStatus.OTHER_KEY and "this machine has none" in nobody.reason


def test_a_log_signed_elsewhere_is_still_checked_for_what_needs_no_key(log_path: Path) -> None:
    theirs = Key.of(secrets.token_bytes(32))
    write(log_path, key=theirs)
    all_lines = lines(log_path)
    rewrite(log_path, [all_lines[0], all_lines[2], all_lines[1], *all_lines[3:]])
    result = verify_log(log_path)
    assert (result.status, result.line) == (LogStatus.TAMPERED, 2)
    assert result.reason.startswith("prev is not the hash of line 1")


def test_within_a_log_signed_elsewhere_the_key_changes_only_at_an_acceptance(
    log_path: Path,
) -> None:
    a, b = Key.of(secrets.token_bytes(32)), Key.of(secrets.token_bytes(32))
    write(log_path, 2, key=a)
    write(log_path, 1, key=b)
    result = verify_log(log_path)
    assert (result.status, result.line) == (LogStatus.TAMPERED, 3)
    assert result.reason.startswith(f"signed with key {b.kid}, the lines before with {a.kid}")


def test_a_line_signed_elsewhere_after_lines_signed_here_is_tampering(log_path: Path) -> None:
    write(log_path, 3)
    write(log_path, 1, key=Key.of(secrets.token_bytes(32)))
    result = verify_log(log_path)
    assert (result.status, result.line) == (LogStatus.TAMPERED, 4)
    assert "after lines signed with this machine's key" in result.reason


def test_lines_signed_here_after_a_log_signed_elsewhere_are_verified(log_path: Path) -> None:
    write(log_path, 2, key=Key.of(secrets.token_bytes(32)))
    write(log_path, 2)  # e.g. orch compact on a clone, before anyone accepted the log
    result = verify_log(log_path)
    assert (result.status, result.line) == (LogStatus.OTHER_KEY, 1)


def test_an_old_log_without_macs_reads_and_is_marked(log_path: Path) -> None:
    log_path.parent.mkdir(parents=True)
    rewrite(log_path, [json.dumps(envelope()).encode()] * 3)
    assert len(read_events(log_path).events) == 3 and read_events(log_path).problems == []
    result = check(log_path)
    assert result.status is LogStatus.NO_MACS and result.line == 1
    assert result.summary() == (
        "unverified (no MACs): line 1: no MAC (written before orch signed its logs)"
    )
    EventLog(log_path, "t").append("error", {"detail": "written after the upgrade"})
    after = check(log_path)
    assert (after.status, after.line) == (LogStatus.NO_MACS, 1)  # the old lines stay unverified
    assert json.loads(lines(log_path)[3])["prev"] == line_hash(lines(log_path)[2])


def test_an_unsigned_line_after_signed_ones_is_tampering(log_path: Path) -> None:
    write(log_path, 2)
    with log_path.open("ab") as fh:
        line = envelope(trace_id=EventLog(log_path, "t").trace_id, ts=utc_ts())
        fh.write(json.dumps(line).encode() + b"\n")
    result = verify_log(log_path)
    assert (result.line, result.reason) == (3, "no MAC after signed lines (a line added by hand?)")


# the head record -----------------------------------------------------------------------------


def test_the_head_record_lives_in_the_state_folder_and_tracks_each_append(log_path: Path) -> None:
    write(log_path, 3)
    where = head_path(log_path)
    assert where.parent == state_dir() / "heads" and where.is_file()
    head = read_head(log_path)
    assert head is not None
    assert (head.lines, head.end, head.hash) == (
        3,
        log_path.stat().st_size,
        line_hash(lines(log_path)[-1]),
    )
    assert head.trace_id == json.loads(lines(log_path)[0])["trace_id"]


def test_lines_cut_from_the_end_are_found_by_the_head_record(log_path: Path) -> None:
    write(log_path, 6)
    rewrite(log_path, lines(log_path)[:4])
    result = verify_log(log_path)
    assert (result.status, result.line) == (LogStatus.TAMPERED, 5)
    assert result.reason == (
        "missing: this machine wrote 6 lines here, the log has 4 (lines cut from the end)"
    )


def test_a_log_replaced_by_another_signed_here_is_found(log_path: Path, tmp_path: Path) -> None:
    write(log_path, 4)
    other = tmp_path / "other" / "t.ndjson"
    write(other, 6)  # a longer log of a task of the same name, signed with the same key
    log_path.write_bytes(other.read_bytes())
    result = verify_log(log_path)
    assert (result.status, result.line) == (LogStatus.TAMPERED, 1)
    assert "the log was replaced by another" in result.reason


def test_a_head_behind_the_log_is_a_crash_not_a_cut(log_path: Path) -> None:
    write(log_path, 3)
    saved = head_path(log_path).read_bytes()
    write(log_path, 2)
    head_path(log_path).write_bytes(saved)  # as if killed between the fsync and the head
    assert verify_log(log_path).status is LogStatus.VERIFIED
    EventLog(log_path, "t").append("error", {"detail": "next"})  # rechains from the file
    assert verify_log(log_path).status is LogStatus.VERIFIED
    assert read_head(log_path).lines == 6  # type: ignore[union-attr]


def test_without_a_head_record_a_cut_cannot_be_told_and_says_so(log_path: Path) -> None:
    write(log_path, 4)
    head_path(log_path).unlink()
    rewrite(log_path, lines(log_path)[:3])
    result = verify_log(log_path)
    assert result.status is LogStatus.VERIFIED
    assert result.notes == (
        "no head record on this machine: lines cut from the end cannot be told",
    )


def test_the_writer_takes_the_previous_hash_from_the_head_not_the_file(log_path: Path) -> None:
    write(log_path, 3)

    def no_full_read(fd: int, size: int) -> bytes:
        raise AssertionError(f"the writer read the whole log ({size} bytes)")

    with pytest.MonkeyPatch.context() as spy:
        spy.setattr("orchestrator.events.log._read_all", no_full_read)
        write(log_path, 3)  # a new writer: the head record gives it the tip
        log = EventLog(log_path, "t")
        for i in range(3):
            log.append("error", {"detail": f"{i}"})  # its own tip from then on
    assert verify_log(log_path).status is LogStatus.VERIFIED
    assert verify_log(log_path).lines == 9


# torn lines ----------------------------------------------------------------------------------


def test_a_torn_last_line_is_a_note_and_the_next_append_rechains(log_path: Path) -> None:
    write(log_path, 3)
    with log_path.open("ab") as fh:
        fh.write(b'{"v":1,"ts":"2026-11-21T10:0')
    result = verify_log(log_path)
    assert result.status is LogStatus.VERIFIED and result.lines == 3
    assert result.notes == ("line 4: torn last line (a write was cut; the next append repairs it)",)
    EventLog(log_path, "t").append("error", {"detail": "after the crash"})
    after = verify_log(log_path)
    assert after.status is LogStatus.VERIFIED and after.lines == 5 and after.notes == ()
    kinds = [e.payload.get("kind") for e in read_events(log_path).events]
    assert kinds == [None, None, None, "torn_line", None]


def test_a_whole_forged_line_without_its_newline_is_cut_not_adopted(log_path: Path) -> None:
    log = write(log_path, 2)
    forged = json.dumps(
        envelope(
            trace_id=log.trace_id,
            event_type="state_change",
            payload={
                "from": "WAITING_APPROVAL",
                "to": "COMPLETE",
                "step": "complete",
                "reason": "done",
            },
        )
    )
    with log_path.open("ab") as fh:
        fh.write(forged.encode())
    log.append("error", {"detail": "next"})
    events = read_events(log_path).events
    assert [e.event_type for e in events] == ["tool_call", "tool_call", "error", "error"]
    assert events[2].payload["kind"] == "torn_line" and "COMPLETE" in events[2].payload["bytes"]
    assert verify_log(log_path).status is LogStatus.VERIFIED


# a person's acceptance -----------------------------------------------------------------------


def test_an_acceptance_pins_the_lines_it_accepts(log_path: Path) -> None:
    write(log_path, 4)
    all_lines = lines(log_path)
    rewrite(log_path, [all_lines[0], all_lines[2], all_lines[1], all_lines[3]])
    bad = verify_log(log_path)
    assert (bad.status, bad.line) == (LogStatus.TAMPERED, 2)
    EventLog(log_path, "t").append("error", acceptance(bad, by="test"))
    write(log_path, 1)
    good = verify_log(log_path)
    assert good.status is LogStatus.VERIFIED and good.accepted == 5
    assert good.summary() == "verified (6 lines; accepted by a person at line 5)"
    assert good.notes[0].startswith("line 5: a person accepted lines 1-4 as they were")
    # an accepted line changed afterwards: the pin breaks, and the changed line is named
    again = lines(log_path)
    raw = json.loads(again[0])
    raw["payload"]["ok"] = False
    again[0] = json.dumps(raw, separators=(",", ":")).encode()
    rewrite(log_path, again)
    broken = verify_log(log_path)
    assert (broken.status, broken.line) == (LogStatus.TAMPERED, 1)
    assert broken.reason.endswith("(changed after a person accepted the log at line 5)")


def test_an_acceptance_signed_elsewhere_accepts_nothing_here(log_path: Path) -> None:
    write(log_path, 3)
    rewrite(log_path, [*lines(log_path)[:2], lines(log_path)[1]])  # a repeated line
    bad = verify_log(log_path)
    theirs = Key.of(secrets.token_bytes(32))
    EventLog(log_path, "t", key=theirs).append("error", acceptance(bad, by="someone else"))
    result = verify_log(log_path)
    assert (result.status, result.line) == (LogStatus.TAMPERED, 3)


# the key -------------------------------------------------------------------------------------


def test_the_key_is_private_and_lives_outside_any_repository(tmp_path: Path) -> None:
    assert os.environ["ORCH_STATE_DIR"].startswith(os.environ["HOME"])  # the test's home
    key = load_key()
    assert key is not None and len(key.secret) == 32 and len(key.kid) == 16
    assert stat.S_IMODE(key_path().stat().st_mode) == 0o600
    assert stat.S_IMODE(state_dir().stat().st_mode) == 0o700
    assert load_key() == key and load_key(create=False) == key
    assert repr(key).count(key.secret.hex()) == 0  # never shown


def test_the_state_folder_follows_xdg_when_orch_state_dir_is_unset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ORCH_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == tmp_path / "xdg" / "orch"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/ignored")
    assert state_dir() == Path.home() / ".local" / "state" / "orch"


def test_racing_processes_create_one_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCH_STATE_DIR", str(tmp_path / "fresh-state"))
    code = (
        "import sys, time\n"
        "from orchestrator.events.keys import load_key\n"
        "time.sleep(max(0.0, float(sys.argv[1]) - time.time()))\n"
        "print(load_key().kid)\n"
    )
    start = f"{time.time() + 1.5}"
    procs = [
        subprocess.Popen([sys.executable, "-c", code, start], stdout=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    kids = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert kids == {load_key().kid}  # type: ignore[union-attr]
    assert [p.name for p in (tmp_path / "fresh-state").iterdir()] == ["event-key"]


def test_a_key_others_can_read_or_a_damaged_key_is_refused_in_one_line() -> None:
    load_key()
    key_path().chmod(0o644)
    with pytest.raises(KeyUnavailable, match=r"can be read by others \(mode 644\); run: chmod 600"):
        load_key()
    key_path().chmod(0o600)
    key_path().write_text("not hex\n")
    with pytest.raises(KeyUnavailable, match="is damaged"):
        load_key()


def test_an_unwritable_state_folder_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("ORCH_STATE_DIR", str(blocker / "orch"))
    with pytest.raises(OrchError, match=r"cannot create the event-log key in .*set ORCH_STATE_DIR"):
        EventLog(tmp_path / "t.ndjson", "t").append("error", {"detail": "x"})
    assert not (tmp_path / "t.ndjson").exists()  # nothing written


# approvals -----------------------------------------------------------------------------------


def test_approval_keys_are_bound_to_task_phase_command_and_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    one = approval_key(TRACE, 1, "rm -rf build")
    assert one == approval_key(TRACE, 1, "rm -rf build")  # stable: the fold finds it again
    assert one.startswith("p1-") and len(one) == 3 + 32
    others = {
        approval_key("0b0e7a52-7d4c-4b8e-9a3f-2f0e6b7c9d10", 1, "rm -rf build"),
        approval_key(TRACE, 2, "rm -rf build"),
        approval_key(TRACE, 1, "rm -rf build "),
    }
    assert one not in others and len(others) == 3
    old_style = "p1-" + hashlib.sha256(b"rm -rf build").hexdigest()[:16]
    assert one != old_style
    monkeypatch.setenv("ORCH_STATE_DIR", str(tmp_path / "another-machine"))
    assert approval_key(TRACE, 1, "rm -rf build") != one  # without the key, not computable


def test_an_approval_under_any_other_key_does_not_let_a_command_run(git_repo: Path) -> None:
    (git_repo / "victim.txt").write_text("keep me\n")
    command = "rm victim.txt"
    forged = {
        "p1-" + hashlib.sha256(command.encode()).hexdigest()[:16]: True,  # the old key
        approval_key("0b0e7a52-7d4c-4b8e-9a3f-2f0e6b7c9d10", 1, command): True,  # another task
        approval_key(TRACE, 2, command): True,  # another phase
    }
    tools = ExecutorTools(
        ProjectRepo(Layout(git_repo)),
        phase=1,
        trace_id=TRACE,
        policy=PolicyConfig(),
        approvals=forged,
        tasklist_path=git_repo / "tasks.json",
    )
    with pytest.raises(NeedsApproval) as stop:
        tools.run(ToolCall("c1", "run_shell", {"command": command}))
    assert stop.value.key == approval_key(TRACE, 1, command) and stop.value.key not in forged
    assert (git_repo / "victim.txt").exists()
    tools.approvals[approval_key(TRACE, 1, command)] = True
    assert tools.run(ToolCall("c2", "run_shell", {"command": command})).is_error is False
    assert not (git_repo / "victim.txt").exists()


def test_a_torn_head_record_reads_as_absent_and_is_rewritten(log_path: Path) -> None:
    write(log_path, 3)
    where = head_path(log_path)
    record = where.read_bytes()
    where.write_bytes(record[: len(record) // 2])  # a power cut in the middle of its write
    assert read_head(log_path) is None
    rewrite(log_path, lines(log_path)[:2])
    result = verify_log(log_path)  # a cut it can no longer tell: said, not hidden
    assert result.status is LogStatus.VERIFIED and "no head record" in result.notes[0]
    write(log_path, 1)
    head = read_head(log_path)
    assert head is not None and head.lines == 3
    assert where.read_bytes().count(b"\n") == 2  # the record and its checksum, nothing left over
