"""The quality gates that the other tests do not reach, and a COMPLETION_GATE that stops."""

from __future__ import annotations

from pathlib import Path

from engine_support import (
    ADD,
    Script,
    done,
    gates,
    git,
    only_task,
    orch,
    phase,
    plan,
    task_events,
    write_calc,
)

TASK = "Add a subtract function"
KEY = "AKIA" + "ABCDEFGHIJKLMNOP"  # the shape of an AWS access key id


def write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "input": {"path": path, "content": content}}]}


def quality(repo: Path) -> list[tuple[str, str]]:
    return [
        (e.payload["gate"], e.payload["status"])
        for e in task_events(repo)
        if e.event_type == "verdict" and e.payload["kind"] == "quality_gate" and e.phase
    ]


def test_safety_clear_fails_on_a_secret_in_the_change(mini: Path, tmp_path: Path) -> None:
    script = Script(plan(phase(1, "Add subtract", gates=("tests_pass", "safety_clear"))))
    script.executor[1] = [
        write_calc(f"AWS_KEY = '{KEY}'\n\n\ndef subtract(a, b):\n    return a - b\n"),
        done(),
        write_calc(),
        done(),
    ]
    result = orch("run", TASK, "--yes", "--model", script.write(tmp_path / "s.json"))
    assert result.exit_code == 0, result.output
    assert quality(mini) == [
        ("tests_pass", "PASS"),
        ("safety_clear", "FAIL"),
        ("tests_pass", "PASS"),
        ("safety_clear", "PASS"),
    ]
    failed = [g for g in gates(task_events(mini), "PHASE_REVIEW_GATE") if g["decision"] != "GO"]
    assert failed[0]["failure_class"] == "fixable"
    assert "an AWS access key id" in failed[0]["reason"]
    assert KEY not in git(mini, "show", "HEAD:calc.py")


def test_human_approved_if_required_counts_the_answers(mini: Path, tmp_path: Path) -> None:
    (mini / "old.txt").write_text("x\n")
    git(mini, "add", "old.txt")
    git(mini, "commit", "-qm", "Add a file")
    script = Script(
        plan(phase(1, "Add subtract", gates=("tests_pass", "human_approved_if_required")))
    )
    script.executor[1] = [
        write_calc(),
        {"tool_calls": [{"name": "run_shell", "input": {"command": "rm old.txt"}}]},
        done(),
    ]
    assert orch("run", TASK, "--yes", "--model", script.write(tmp_path / "s.json")).exit_code == 0
    assert orch("approve", only_task(mini)).exit_code == 0
    verdict = next(
        e.payload
        for e in task_events(mini)
        if e.event_type == "verdict" and e.payload.get("gate") == "human_approved_if_required"
    )
    assert verdict["status"] == "PASS"
    assert verdict["summary"] == "1 high-risk command(s) answered by a person (1 approved)"


def test_a_completion_gate_that_fails_waits_for_a_person(mini: Path, tmp_path: Path) -> None:
    # the phase only lints (no tests_pass gate), so it commits a change that breaks the tests;
    # the completion gate runs the whole suite and stops
    script = Script(plan(phase(1, "Add subtract", gates=("schema_valid",))))
    script.executor[1] = [write("calc.py", "def add(a, b):\n    return a * b\n"), done()]
    result = orch("run", TASK, "--yes", "--model", script.write(tmp_path / "s.json"))
    assert result.exit_code == 0
    assert "WAITING_APPROVAL: completion checks failed: final tests_pass failed" in result.output
    completion = gates(task_events(mini), "COMPLETION_GATE")
    assert [g["decision"] for g in completion] == ["BLOCKED"]
    assert completion[0]["requires_human_approval"] is True
    final = next(mini.glob("plans/artifacts/*/final_review.md")).read_text()
    assert "final tests_pass: FAIL" in final
    result = orch("approve", only_task(mini), "--note", "known: fixed in the next task")
    assert result.exit_code == 0 and "COMPLETE" in result.output, result.output
    completion = gates(task_events(mini), "COMPLETION_GATE")
    assert completion[-1]["decision"] == "GO"
    assert completion[-1]["reason"].startswith("a person approved completion despite")
    assert ADD not in git(mini, "show", "HEAD:calc.py")
