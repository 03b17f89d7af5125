"""The event log: one write per line with fsync, torn tails reported and repaired, schemas."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from foundation_helpers import ORCH, hears_ctrl_c, one_error_line
from jsonschema import Draft202012Validator

from orchestrator.events.chain import read_head
from orchestrator.events.log import EVENT_TYPES, EventLog, follow, read_events
from orchestrator.events.verify import LogStatus, verify_log
from orchestrator.schemas import errors, load_schema, shipped_schemas
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder

GATE = {
    "schema_version": "1.1.0",
    "agent": "Orchestrator",
    "event_type": "PHASE_REVIEW_GATE",
    "workflow_state": "REVIEWING",
    "phase_id": 2,
    "decision": "GO",
    "confidence": 0.9,
    "requires_human_approval": False,
    "reason": "tests pass and the review found nothing blocking",
    "next_action": "commit phase 2",
    "iteration_index": 1,
    "max_iterations": 3,
}


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "observability" / "t.ndjson"


def test_append_is_one_write_of_a_full_line_then_fsync(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = EventLog(log_path, "t")
    log.append("state_change", {"from": "PLANNING", "to": "ACTING"})  # file exists now
    calls: list[tuple[str, int, bytes]] = []
    real_write, real_fsync = os.write, os.fsync

    def spy_write(fd: int, data: bytes) -> int:
        calls.append(("write", fd, bytes(data)))
        return real_write(fd, data)

    def spy_fsync(fd: int) -> None:
        calls.append(("fsync", fd, b""))
        real_fsync(fd)

    monkeypatch.setattr(os, "write", spy_write)
    monkeypatch.setattr(os, "fsync", spy_fsync)
    event = log.append("gate_event", GATE, phase=2)
    monkeypatch.undo()
    assert [c[0] for c in calls] == ["write", "fsync"]
    (_, fd_w, data), (_, fd_s, _) = calls
    assert fd_w == fd_s
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert json.loads(data) == event.to_dict()
    assert log_path.read_bytes().endswith(data)


def test_envelope_fields_and_trace_id_kept_across_writers(log_path: Path) -> None:
    first = EventLog(log_path, "t")
    e1 = first.append("state_change", {"from": "A", "to": "B"}, agent="Planner", phase=1)
    second = EventLog(log_path, "t")
    e2 = second.append("error", {"detail": "x"})
    assert second.trace_id == first.trace_id == e2.trace_id
    raw = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert list(raw[0]) == [
        "v",
        "ts",
        "trace_id",
        "task",
        "agent",
        "phase",
        "event_type",
        "payload",
        "prev",
        "kid",
        "mac",
    ]
    assert raw[0]["prev"] == "0" * 64 and raw[1]["prev"] != raw[0]["prev"]
    assert raw[0]["v"] == 1 and raw[0]["agent"] == "Planner" and raw[0]["phase"] == 1
    assert not errors("event", raw[0]) and not errors("event", raw[1])
    assert [e.event_type for e in read_events(log_path).events] == [e1.event_type, e2.event_type]


def test_torn_last_line_is_reported_and_skipped(log_path: Path) -> None:
    log = EventLog(log_path, "t")
    log.append("state_change", {"from": "A", "to": "B"})
    log.append("state_change", {"from": "B", "to": "C"})
    with log_path.open("ab") as fh:
        fh.write(b'{"v": 1, "ts": "2026-11-21T10:0')
    result = read_events(log_path, where="obs/t.ndjson")
    assert [e.payload["to"] for e in result.events] == ["B", "C"]
    assert result.torn_tail
    assert result.problems == [
        "obs/t.ndjson: line 3: torn last line (no newline; a write was cut), skipped"
    ]


def test_next_writer_repairs_a_torn_tail_and_records_what_it_cut(log_path: Path) -> None:
    EventLog(log_path, "t").append("state_change", {"from": "A", "to": "B"})
    with log_path.open("ab") as fh:
        fh.write(b'{"v": 1, "ts": "torn')
    EventLog(log_path, "t").append("state_change", {"from": "B", "to": "C"})
    result = read_events(log_path, check=True)
    assert result.problems == [] and not result.torn_tail
    kinds = [(e.event_type, e.payload.get("kind")) for e in result.events]
    assert kinds == [("state_change", None), ("error", "torn_line"), ("state_change", None)]
    assert result.events[1].payload["bytes"] == '{"v": 1, "ts": "torn'
    assert all(line for line in log_path.read_bytes().split(b"\n")[:-1])


def test_repair_of_a_torn_line_longer_than_any_buffer(log_path: Path) -> None:
    log_path.parent.mkdir(parents=True)
    log_path.write_bytes(b"x" * 200_000)  # one torn line, no newline anywhere
    EventLog(log_path, "t").append("state_change", {"from": "A", "to": "B"})
    result = read_events(log_path, check=True)
    assert result.problems == []
    assert [e.event_type for e in result.events] == ["error", "state_change"]
    assert "200000 bytes" in result.events[0].payload["detail"]
    assert len(result.events[0].payload["bytes"]) == 2000


def test_a_complete_event_missing_only_its_newline_is_kept(log_path: Path) -> None:
    log = EventLog(log_path, "t")
    event = log.append("state_change", {"from": "A", "to": "B"})
    log_path.write_bytes(log_path.read_bytes().rstrip(b"\n"))
    log.append("state_change", {"from": "B", "to": "C"})
    result = read_events(log_path)
    assert result.problems == []
    assert result.events[0].to_dict() == event.to_dict()
    assert len(result.events) == 2


def test_non_json_and_non_event_lines_are_reported_and_skipped(log_path: Path) -> None:
    log = EventLog(log_path, "t")
    log.append("state_change", {"from": "A", "to": "B"})
    with log_path.open("ab") as fh:
        fh.write(b"not json\n[1, 2]\n\n" + b'{"v": 1}\n' + b"\xff\xfe\n")
    log.append("state_change", {"from": "B", "to": "C"})
    result = read_events(log_path, where="t.ndjson")
    assert [e.payload["to"] for e in result.events] == ["B", "C"]
    assert [e.line for e in result.events] == [1, 7]
    assert result.problems == [
        "t.ndjson: line 2: not JSON (Expecting value)",
        "t.ndjson: line 3: not an event envelope (not a JSON object)",
        "t.ndjson: line 5: not an event envelope (no ts, trace_id, task, agent, phase, event_type, payload)",
        "t.ndjson: line 6: not UTF-8 text",
    ]


def test_schema_check_of_envelope_and_gate_payload(log_path: Path) -> None:
    log = EventLog(log_path, "t", validate=False)
    log.append("gate_event", GATE, phase=2)
    log.append("gate_event", {**GATE, "decision": "MAYBE"}, phase=2)
    log.append("gate_event", {k: v for k, v in GATE.items() if k != "reason"}, phase=2)
    log.append("state_change", {"to": "X"}, agent="")
    assert len(read_events(log_path).events) == 4  # the plain reader does not judge payloads
    result = read_events(log_path, check=True, where="t.ndjson")
    assert len(result.events) == 1
    assert result.problems == [
        "t.ndjson: line 2: payload/decision: 'MAYBE' is not one of ['GO', 'REPLAN', 'ABSTAIN', 'BLOCKED']",
        "t.ndjson: line 3: payload/(root): 'reason' is a required property",
        "t.ndjson: line 4: agent: '' should be non-empty",
    ]


def test_writer_refuses_an_event_that_fails_its_schema(log_path: Path) -> None:
    log = EventLog(log_path, "t")
    with pytest.raises(ValueError, match="payload/max_iterations"):
        log.append("gate_event", {**GATE, "max_iterations": 9})
    with pytest.raises(ValueError, match="event_type"):
        log.append("made_up", {})
    assert not log_path.exists()


def test_shipped_schemas_are_valid_and_cover_the_event_types() -> None:
    names = shipped_schemas()
    assert {"event", "memory", "plan", "payloads/gate_event"} <= set(names)
    for name in names:  # processes build validators without checking the schema again
        Draft202012Validator.check_schema(load_schema(name))
    assert load_schema("event")["properties"]["event_type"]["enum"] == list(EVENT_TYPES)


def test_follow_yields_appends_from_a_writer_process_until_stopped(log_path: Path) -> None:
    log = EventLog(log_path, "t")
    log.append("state_change", {"from": "A", "to": "B"})
    before = read_events(log_path)
    code = (
        "import sys; from pathlib import Path; from orchestrator.events.log import EventLog\n"
        "log = EventLog(Path(sys.argv[1]), 't')\n"
        "for i in range(50): log.append('tool_call', {'n': i})\n"
    )
    writer = subprocess.Popen([sys.executable, "-c", code, str(log_path)])
    seen = [
        e.payload["n"]
        for e in follow(
            log_path, poll=0.01, stop=lambda: writer.poll() is not None, offset=before.end, lines=1
        )
    ]
    assert writer.returncode == 0
    assert seen == list(range(50))  # every event once, in order, none from before the offset


def make_task(layout: Layout, events: int = 3) -> TaskFolder:
    task = TaskFolder.create(layout, "demo task")
    log = task.events()
    log.append("state_change", {"from": "PLANNING", "to": "ACTING", "reason": "plan approved"})
    log.append("gate_event", GATE, phase=2)
    for i in range(events - 2):
        log.append("tool_call", {"summary": f"ran tool {i}"}, agent="Executor", phase=2)
    return task


def test_log_cli_prints_filters_and_emits_ndjson(layout: Layout, orch: Any) -> None:
    make_task(layout, events=4)
    run = orch("log", "demo-task")
    assert run.code == 0 and run.err == ""
    lines = run.out.splitlines()
    assert len(lines) == 4
    assert "state_change" in lines[0] and "PLANNING -> ACTING: plan approved" in lines[0]
    assert "PHASE_REVIEW_GATE GO [REVIEWING]" in lines[1]
    data = [json.loads(line) for line in orch("log", "demo-task", "--json").out.splitlines()]
    assert [d["event_type"] for d in data] == [
        "state_change",
        "gate_event",
        "tool_call",
        "tool_call",
    ]
    only = orch("log", "demo-task", "--json", "--type", "gate_event").out.splitlines()
    assert [json.loads(line)["payload"]["decision"] for line in only] == ["GO"]
    assert orch("log", "demo-task", "--type", "error").out == ""


def test_log_cli_reports_bad_lines_with_the_file_and_exit_1(layout: Layout, orch: Any) -> None:
    task = make_task(layout)
    with task.event_log_path.open("ab") as fh:
        fh.write(b'oops\n{"torn')
    before = task.event_log_path.read_bytes()
    run = orch("log", "demo-task")
    assert run.code == 1
    assert len(run.out.splitlines()) == 3
    rel = "plans/artifacts/demo-task/observability/demo-task.ndjson"
    assert run.err.splitlines() == [
        f"warning: {rel}: line 4: not JSON (Expecting value)",
        f"warning: {rel}: line 5: torn last line (no newline; a write was cut), skipped",
    ]
    assert "Traceback" not in run.err
    assert task.event_log_path.read_bytes() == before  # reading never repairs


def test_log_cli_unknown_task_and_bad_type(layout: Layout, orch: Any) -> None:
    one_error_line(orch("log", "nope"), 2, "no task 'nope'")
    make_task(layout)
    bad = orch("log", "demo-task", "--type", "nonsense")
    assert bad.code == 2 and "Traceback" not in bad.err


def test_log_follow_with_a_real_writer_thread_and_ctrl_c(layout: Layout) -> None:
    task = make_task(layout, events=2)
    reader = subprocess.Popen(
        [str(ORCH), "log", "demo-task", "--follow", "--json", "--type", "tool_call"],
        cwd=layout.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=hears_ctrl_c,
    )
    got: list[int] = []

    def write() -> None:
        log = task.events()
        for i in range(20):
            log.append("tool_call", {"n": i}, phase=2)
            log.append("state_change", {"to": "X"})  # filtered out by --type
            time.sleep(0.01)

    writer = threading.Thread(target=write)
    writer.start()
    deadline = time.monotonic() + 60
    assert reader.stdout is not None
    while len(got) < 20 and time.monotonic() < deadline:
        line = reader.stdout.readline()
        if not line:
            break
        got.append(json.loads(line)["payload"]["n"])
    writer.join()
    reader.send_signal(signal.SIGINT)
    _, err = reader.communicate(timeout=30)
    assert got == list(range(20))
    assert reader.returncode == 0, err
    assert "Traceback" not in err


def test_log_follow_ends_by_itself_when_the_task_completes(layout: Layout) -> None:
    task = make_task(layout, events=2)  # ACTING: a task under way
    reader = subprocess.Popen(
        [str(ORCH), "log", "demo-task", "-f", "--json"],
        cwd=layout.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert reader.stdout is not None
    first = [json.loads(reader.stdout.readline()) for _ in range(2)]  # following has begun
    assert [e["event_type"] for e in first] == ["state_change", "gate_event"]

    def write() -> None:
        log = task.events()
        for i in range(5):
            log.append("tool_call", {"n": i}, phase=2)
        log.append("state_change", {"from": "ACTING", "to": "REVIEWING", "step": "gates_started",
                                    "reason": "phase 2: gates"})  # fmt: skip
        log.append("state_change", {"from": "REVIEWING", "to": "COMPLETE", "step": "complete",
                                    "reason": "every phase committed"})  # fmt: skip

    writer = threading.Thread(target=write)
    writer.start()
    try:
        out, err = reader.communicate(timeout=60)  # no Ctrl-C: it must end by itself
    finally:
        reader.kill()
        writer.join()
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["payload"].get("n") for e in events[:5]] == list(range(5))
    assert events[-1]["payload"]["to"] == "COMPLETE" and len(events) == 7
    assert reader.returncode == 0 and "Traceback" not in err
    again = subprocess.run(  # a task that has stopped: printed whole, then it ends at once
        [str(ORCH), "log", "demo-task", "--follow"],
        cwd=layout.root, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert again.returncode == 0 and len(again.stdout.splitlines()) == 9


def test_concurrent_writers_keep_one_unbroken_chain(log_path: Path) -> None:
    EventLog(log_path, "t").append("state_change", {"from": "A", "to": "B"})
    code = (
        "import sys; from pathlib import Path; from orchestrator.events.log import EventLog\n"
        "log = EventLog(Path(sys.argv[1]), 't')\n"
        "for i in range(100): log.append('tool_call', {'w': sys.argv[2], 'n': i})\n"
    )
    writers = [
        subprocess.Popen([sys.executable, "-c", code, str(log_path), str(w)]) for w in range(3)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0]
    check = verify_log(log_path)
    assert check.status is LogStatus.VERIFIED and check.lines == 301, check
    head = read_head(log_path)
    assert head is not None and (head.lines, head.end) == (301, log_path.stat().st_size)


def test_log_check_names_the_first_bad_line_and_exits_1(layout: Layout, orch: Any) -> None:
    task = make_task(layout, events=4)
    rel = "plans/artifacts/demo-task/observability/demo-task.ndjson"
    good = orch("log", "demo-task", "--check")
    assert good.code == 0 and good.err == f"{rel}: verified (4 lines)\n"
    data = task.event_log_path.read_bytes()
    task.event_log_path.write_bytes(data.replace(b"ran tool 1", b"ran tool 9"))
    bad = orch("log", "demo-task", "--check")
    assert bad.code == 1 and len(bad.out.splitlines()) == 4  # the events still print
    assert bad.err == f"error: {rel}: tampered: line 4: MAC does not match (the line was changed)\n"
    status = orch("status")
    assert "log tampered: line 4: MAC does not match" in status.out
    detail = orch("status", "demo-task", "--json")
    assert json.loads(detail.out)["log_check"]["line"] == 4
