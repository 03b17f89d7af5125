"""A failing gate's command, exit code, duration and output tail are kept and shown: in its
events, in the phase report, in `orch status` and on the terminal as it happens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_support import (
    MINI_FILES,
    PY,
    Script,
    done,
    gates,
    make_repo,
    only_task,
    orch,
    phase,
    plan,
    task_events,
    write_calc,
)

from orchestrator.checks.secrets import redact
from orchestrator.schemas import errors

KEY = "AKIA" + "Z7Q3W9E1R5T2Y8U4"  # the shape of an AWS access key id
# a gate command that prints 200 lines, a secret, then fails unless add() adds
CHECK = (
    "import sys\n"
    "from calc import add\n"
    "for n in range(200):\n"
    "    print(f'noise line {n}')\n"
    f"print('the key is {KEY}')\n"
    "print('add(2, 3) ->', add(2, 3))\n"
    "sys.exit(0 if add(2, 3) == 5 else 3)\n"
)
CHECK_CMD = f"{PY} check.py"
BROKEN = {
    "tool_calls": [
        {
            "name": "write_file",
            "input": {"path": "calc.py", "content": "def add(a, b):\n    return a - b\n"},
        }
    ]
}


def repo_with_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = make_repo(
        tmp_path / "proj",
        {**MINI_FILES, "check.py": CHECK},
        f'test_command = "{CHECK_CMD}"\nfallback_model = ""\n',
    )
    monkeypatch.chdir(repo)
    return repo


def test_a_failing_gate_is_kept_shown_at_once_and_in_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_with_check(tmp_path, monkeypatch)
    assert redact(KEY) != KEY  # the secret is one orch knows
    script = Script()
    script.executor[1] = [BROKEN, done("v1"), BROKEN, done("v2"), write_calc(), done("v3")]
    result = orch(
        "run", "Add a subtract function", "--yes", "--model", script.write(tmp_path / "s.json")
    )
    assert result.exit_code == 0, result.output
    out = result.output
    # the terminal: gate, command, exit code and the tail, before the gate's decision
    assert "tests_pass: FAIL in " in out and f"`{CHECK_CMD}` exited with code 3" in out
    assert "    | add(2, 3) -> -1" in out
    assert out.index("    | add(2, 3) -> -1") < out.index("PHASE_REVIEW_GATE phase 1: BLOCKED")
    assert "noise line 199" in out and "noise line 10\n" not in out
    assert KEY not in out

    # the events: the verdict and the PHASE_REVIEW_GATE both keep the run
    events = task_events(repo)
    blocked = [g for g in gates(events, "PHASE_REVIEW_GATE") if g["decision"] == "BLOCKED"]
    assert len(blocked) == 2
    for gate in blocked:
        assert errors("payloads/gate_event", gate) == []
        (run,) = gate["diagnosis_packet"]["runs"]
        assert run["gate"] == "tests_pass" and run["status"] == "FAIL"
        assert run["command"] == CHECK_CMD and run["exit_code"] == 3
        assert run["duration_ms"] > 0
        tail = run["output_tail"].splitlines()
        assert len(tail) == 40 and tail[-1] == "add(2, 3) -> -1"
        assert KEY not in run["output_tail"] and "the key is " in run["output_tail"]

    # orch status, as JSON and as text
    slug = only_task(repo)
    info = json.loads(orch("status", slug, "--json").output)
    assert info["state"] == "WAITING_APPROVAL"
    gate = info["blocking_gate"]
    assert set(gate) == {"name", "command", "exit_code", "output_tail"}
    assert (gate["name"], gate["command"], gate["exit_code"]) == ("tests_pass", CHECK_CMD, 3)
    assert gate["output_tail"].endswith("add(2, 3) -> -1")
    text = orch("status", slug).output
    assert f"blocking gate: tests_pass: `{CHECK_CMD}` exited with code 3" in text
    assert "    | add(2, 3) -> -1" in text and KEY not in text

    # once a person lets it go on and the phase passes, nothing blocks; the report keeps it
    result = orch("approve", slug)
    assert result.exit_code == 0, result.output
    assert json.loads(orch("status", slug, "--json").output)["blocking_gate"] is None
    report = (repo / f"plans/artifacts/{slug}/phase-1-report.md").read_text()
    assert "Failed gate runs" in report
    assert report.count(f"tests_pass FAIL: `{CHECK_CMD}` exited with code 3") == 2
    assert "  add(2, 3) -> -1" in report and KEY not in report


def test_a_gate_that_passes_records_its_run_without_a_tail(mini: Path, tmp_path: Path) -> None:
    result = orch(
        "run", "Add a subtract function", "--yes", "--model", Script().write(tmp_path / "s.json")
    )
    assert result.exit_code == 0, result.output
    (go,) = gates(task_events(mini), "PHASE_REVIEW_GATE")
    (run,) = go["diagnosis_packet"]["runs"]
    assert run["gate"] == "tests_pass" and run["status"] == "PASS"
    assert run["exit_code"] == 0 and run["output_tail"] == ""
    (done_gate,) = gates(task_events(mini), "COMPLETION_GATE")
    assert [r["gate"] for r in done_gate["diagnosis_packet"]["runs"]] == ["tests_pass"]
    assert json.loads(orch("status", only_task(mini), "--json").output)["blocking_gate"] is None


def test_a_completion_gate_that_fails_shows_its_tests_output(mini: Path, tmp_path: Path) -> None:
    # the phase passes its own gates (it runs none), then the final test run fails
    script = Script(plan(phase(1, "Add subtract", gates=())))
    script.executor[1] = [BROKEN, done()]
    result = orch(
        "run", "Add a subtract function", "--yes", "--model", script.write(tmp_path / "s.json")
    )
    assert result.exit_code == 0, result.output
    assert "COMPLETION_GATE: BLOCKED" in result.output
    assert "AssertionError" in result.output  # the final test run's tail, on the terminal
    info = json.loads(orch("status", only_task(mini), "--json").output)
    gate = info["blocking_gate"]
    assert gate["name"] == "tests_pass" and gate["exit_code"] == 1
    assert "AssertionError" in gate["output_tail"]
