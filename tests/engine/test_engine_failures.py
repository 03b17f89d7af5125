"""Each failure class and its retry rule, with real gates and a scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_support import (
    ADD,
    PY,
    Script,
    done,
    fenced,
    gates,
    git,
    only_task,
    orch,
    phase,
    plan,
    review,
    steps,
    task_events,
    verdict,
    write_calc,
)

from orchestrator.engine.policy import decide_retry
from orchestrator.store.notes import blocker_task, parse_notes

BROKEN = {
    "tool_calls": [
        {
            "name": "write_file",
            "input": {"path": "calc.py", "content": "def add(a, b):\n    return a - b\n"},
        }
    ]
}


def run(tmp_path: Path, script: Script, *extra: str) -> tuple[int, str]:
    result = orch(
        "run",
        "Add a subtract function",
        "--yes",
        "--model",
        script.write(tmp_path / "script.json"),
        *extra,
    )
    # orch's own lines never hold a traceback (a failing test's, in a gate's tail, may)
    assert not [line for line in result.output.splitlines() if line.startswith("Traceback")]
    return result.exit_code, result.output


def retries(repo: Path) -> list[tuple[str, str]]:
    return [
        (e.payload["failure_class"], e.payload["scope"])
        for e in task_events(repo)
        if e.payload.get("step") == "phase_retry" and e.payload.get("failure_class")
    ]


@pytest.mark.parametrize("failure", ["transient", "model_unavailable"])
def test_a_model_failure_is_retried_from_the_checkpoint(
    mini: Path, tmp_path: Path, failure: str
) -> None:
    script = Script()
    script.executor[1] = [
        write_calc(),
        {"error": {"class": failure, "message": "the model is overloaded", "status": 529}},
        done(),
    ]
    code, output = run(tmp_path, script)
    assert code == 0, output
    assert retries(mini) == [(failure, "executor")]
    events = task_events(mini)
    failed = [e.payload for e in events if e.payload.get("kind") == "executor_failed"]
    assert failed[0]["failure_class"] == failure
    # the retry continued the conversation: the file written before the failure was kept
    assert "def subtract" in git(mini, "show", "HEAD:calc.py")
    assert steps(events)[-1] == "complete"


def test_an_empty_reply_is_a_failure_never_a_success(mini: Path, tmp_path: Path) -> None:
    script = Script()
    script.executor[1] = [write_calc(), {"stop_reason": "end_turn"}]  # then nothing, ever
    code, output = run(tmp_path, script)
    assert code == 1
    assert "empty reply" in output and "BLOCKED" in output
    assert retries(mini) == [("transient", "executor")] * 2
    events = task_events(mini)
    assert not any(
        e.event_type == "execution_report" and e.payload["kind"] == "phase" for e in events
    )
    assert git(mini, "log", "--format=%s").splitlines() == ["Initial commit"]


def test_a_model_that_keeps_failing_ends_blocked_with_its_reason(
    mini: Path, tmp_path: Path
) -> None:
    script = Script()
    script.executor[1] = [
        {"error": {"class": "transient", "message": "overloaded", "status": 529, "times": 50}},
        done(),
    ]
    code, output = run(tmp_path, script)
    assert code == 1
    assert "BLOCKED: phase 1 stopped" in output and "transient failed 3 times" in output
    events = task_events(mini)
    assert retries(mini) == [("transient", "executor")] * 2
    blocked = [e.payload for e in events if e.payload.get("step") == "blocked"]
    assert blocked and "overloaded" in blocked[-1]["reason"]
    status = orch("status", only_task(mini), "--json")
    info = json.loads(status.output)
    assert info["state"] == "BLOCKED" and "overloaded" in info["reason"]


def test_a_failing_test_gate_is_fixable_once_then_escalates_to_a_person(
    mini: Path, tmp_path: Path
) -> None:
    script = Script()
    script.executor[1] = [BROKEN, done("v1"), BROKEN, done("v2"), write_calc(), done("v3")]
    code, output = run(tmp_path, script)
    assert code == 0
    assert "WAITING_APPROVAL: phase 1 stopped" in output
    assert "fixable retries used up (1)" in output
    assert retries(mini) == [("fixable", "executor")]
    slug = only_task(mini)
    # a person decides to go on: a fresh attempt with the gate's output as its hint
    result = orch("approve", slug)
    assert result.exit_code == 0, result.output
    assert "COMPLETE" in result.output
    events = task_events(mini)
    assert [g["decision"] for g in gates(events, "PHASE_REVIEW_GATE")] == [
        "BLOCKED",
        "BLOCKED",
        "GO",
    ]
    conversation = json.loads(
        (mini / f"plans/artifacts/{slug}/conversations/phase-1.json").read_text()
    )
    last_user = [m for m in conversation["messages"] if m["role"] == "user"][-2]
    assert "AssertionError" in json.dumps(last_user)  # the real test output reached the model
    assert git(mini, "log", "--format=%s").splitlines()[0] == "Phase 1: Add subtract"


def test_a_validated_review_issue_is_fixable_with_the_issue_as_hint(
    mini: Path, tmp_path: Path
) -> None:
    issue = {
        "id": "B1",
        "description": "subtract is missing a docstring",
        "file": "calc.py",
        "line": 5,
        "evidence": "def subtract(a, b): has no docstring",
    }
    script = Script()
    script.reviews[1] = [fenced(review(False, validated=[issue]))]
    script.extra = [
        {
            "when": {"purpose": "reviewer", "phase": 1, "contains": "(attempt 2)"},
            "replies": [fenced(review())],
        }
    ]
    script.executor[1] = [
        write_calc(),
        done(),
        write_calc('def subtract(a, b):\n    """a - b"""\n    return a - b\n'),
        done(),
    ]
    code, output = run(tmp_path, script)
    assert code == 0, output
    assert retries(mini) == [("fixable", "executor")]
    events = task_events(mini)
    hint = next(e.payload["hint"] for e in events if e.payload.get("step") == "phase_retry")
    assert "B1 calc.py:5: subtract is missing a docstring" in hint
    assert '"""a - b"""' in git(mini, "show", "HEAD:calc.py")


def test_needs_replan_replans_the_phase_and_restarts_it_from_head(
    mini: Path, tmp_path: Path
) -> None:
    script = Script(plan(phase(1, "Add subtract")))
    script.executor[1] = [
        {
            "tool_calls": [
                {"name": "write_file", "input": {"path": "junk.py", "content": "x = 1\n"}}
            ]
        },
        done("went the wrong way"),
    ]
    script.reviews[1] = [
        fenced(review(False, needs_replan=True, reason="subtract belongs in calc.py"))
    ]
    revised = plan(phase(1, "Add subtract to calc.py"))
    script.audits.append(fenced(verdict()))  # the replanned plan is audited as iteration 2
    script.extra = [
        {
            "when": {"purpose": "planner", "contains": "Replan from phase 1"},
            "replies": [fenced(revised)],
        },
        {
            "when": {"purpose": "reviewer", "phase": 1, "contains": "(attempt 2)"},
            "replies": [fenced(review())],
        },
        {
            "when": {"purpose": "executor", "phase": 1, "contains": "Add subtract to calc.py"},
            "replies": [write_calc(), done("done right")],
        },
    ]
    code, output = run(tmp_path, script)
    assert code == 0, output
    events = task_events(mini)
    assert retries(mini) == [("needs_replan", "replan")]
    assert [g["decision"] for g in gates(events, "PHASE_REVIEW_GATE")] == ["REPLAN", "GO"]
    assert [g["decision"] for g in gates(events, "PLAN_GATE")] == ["GO", "GO"]
    assert "phase_restarted" in steps(events)
    assert git(mini, "log", "-1", "--format=%s").strip() == "Phase 1: Add subtract to calc.py"
    assert git(mini, "ls-tree", "--name-only", "HEAD").split().count("junk.py") == 0
    assert (
        "Targeted replan from phase 1"
        in next(mini.glob("plans/artifacts/*/revisions.md")).read_text()
    )


def test_a_test_command_that_does_not_exist_blocks_before_the_phase(
    mini: Path, tmp_path: Path
) -> None:
    # the command existed when the task started; it is gone when the phase is to begin
    code = orch("run", "Add a subtract function", "--model", Script().write(tmp_path / "s.json"))
    assert code.exit_code == 0, code.output
    (mini / "orch.toml").write_text('test_command = "no-such-test-runner -q"\n')
    git(mini, "commit", "-qam", "Configure a missing test runner")
    result = orch("approve", only_task(mini))
    code, output = result.exit_code, result.output
    assert code == 1
    assert "BLOCKED" in output and "`no-such-test-runner -q` cannot run" in output
    events = task_events(mini)
    assert [g["decision"] for g in gates(events, "PREFLECT_GATE")] == ["BLOCKED"]
    assert not any(e.event_type == "delegation" and e.payload["to"] == "Executor" for e in events)


def test_a_test_command_not_found_at_run_time_escalates_then_resumes_once_fixed(
    mini: Path, tmp_path: Path
) -> None:
    (mini / "orch.toml").write_text('test_command = "sh -c no-such-test-runner-xyz"\n')
    git(mini, "commit", "-qam", "Configure a missing test runner")
    code, output = run(tmp_path, Script())
    assert code == 1
    assert "cannot run (command not found)" in output and "BLOCKED" in output
    review_gate = gates(task_events(mini), "PHASE_REVIEW_GATE")[-1]
    assert review_gate["failure_class"] == "escalate"
    (mini / "orch.toml").write_text(f'test_command = "{PY} -m unittest discover -s tests -t ."\n')
    git(mini, "commit", "-qam", "Fix the test runner")
    result = orch("resume")
    assert result.exit_code == 0, result.output
    assert "COMPLETE" in result.output


def test_a_turn_budget_that_runs_out_waits_for_a_person(mini: Path, tmp_path: Path) -> None:
    with (mini / "orch.toml").open("a") as fh:
        fh.write("max_turns_per_phase = 2\n")
    git(mini, "commit", "-qam", "A short turn budget")
    look = {"tool_calls": [{"name": "read_file", "input": {"path": "calc.py"}}]}
    script = Script()
    script.executor[1] = [look, look, write_calc(), done()]
    code, output = run(tmp_path, script)
    assert code == 0
    assert "WAITING_APPROVAL" in output and "turn budget (2 turns) ran out" in output
    result = orch("approve", only_task(mini))
    assert result.exit_code == 0 and "COMPLETE" in result.output, result.output


@pytest.mark.parametrize(
    ("history", "failure", "retry"),
    [
        ([], "transient", True),
        (["transient"], "transient", True),
        (["transient", "transient"], "transient", False),  # the same class 3 times
        ([], "fixable", True),
        (["fixable"], "fixable", False),
        ([], "needs_replan", True),
        (["needs_replan"], "needs_replan", False),
        ([], "escalate", False),
        ([], "model_unavailable", True),
        (["model_unavailable"], "model_unavailable", True),
        (["model_unavailable"] * 2, "model_unavailable", False),
        (
            ["transient", "model_unavailable", "transient", "model_unavailable", "fixable"],
            "needs_replan",
            False,
        ),  # at most 5 retries a phase
    ],
)
def test_retry_rules(history: list[str], failure: str, retry: bool) -> None:
    assert decide_retry(history, failure).retry is retry


def test_the_gate_runs_only_the_phase_gates_and_not_run_does_not_block(
    mini: Path, tmp_path: Path
) -> None:
    (mini / "orch.toml").write_text('fallback_model = ""\n')  # no test command configured
    git(mini, "commit", "-qam", "No test command")
    script = Script(plan(phase(1, "Add subtract", gates=("tests_pass", "schema_valid"))))
    script.executor[1] = [
        write_calc(),
        {
            "tool_calls": [
                {"name": "write_file", "input": {"path": "data.json", "content": '{"a": 1'}}
            ]
        },
        done(),
        {
            "tool_calls": [
                {"name": "write_file", "input": {"path": "data.json", "content": '{"a": 1}'}}
            ]
        },
        done(),
    ]
    code, output = run(tmp_path, script)
    assert code == 0, output
    verdicts = [
        e.payload
        for e in task_events(mini)
        if e.event_type == "verdict" and e.payload["kind"] == "quality_gate"
    ]
    assert [(v["gate"], v["status"]) for v in verdicts] == [
        ("tests_pass", "NOT_RUN"),
        ("schema_valid", "FAIL"),
        ("tests_pass", "NOT_RUN"),
        ("schema_valid", "PASS"),
    ]
    assert "data.json" in verdicts[1]["output_tail"]
    assert ADD in git(mini, "show", "HEAD:calc.py")


def test_without_yes_a_replanned_plan_waits_for_a_person(mini: Path, tmp_path: Path) -> None:
    script = Script(plan(phase(1, "Add subtract")))
    script.reviews[1] = [fenced(review(False, needs_replan=True, reason="a different approach"))]
    script.audits.append(fenced(verdict()))
    script.extra = [
        {
            "when": {"purpose": "planner", "contains": "Replan from phase 1"},
            "replies": [fenced(plan(phase(1, "Add subtract, differently")))],
        },
        {
            "when": {"purpose": "reviewer", "phase": 1, "contains": "(attempt 2)"},
            "replies": [fenced(review())],
        },
    ]
    result = orch("run", "Add a subtract function", "--model", script.write(tmp_path / "s.json"))
    assert result.exit_code == 0 and "WAITING_APPROVAL" in result.output  # the first plan
    result = orch("approve", only_task(mini))
    assert result.exit_code == 0, result.output
    assert "the replanned plan (iteration 2) passed its audit" in result.output
    result = orch("approve", only_task(mini))
    assert result.exit_code == 0 and "COMPLETE" in result.output, result.output
    assert git(mini, "log", "-1", "--format=%s").strip() == "Phase 1: Add subtract, differently"


def test_one_task_completing_leaves_another_tasks_blocker_in_notes(
    mini: Path, tmp_path: Path
) -> None:
    script = Script()
    script.executor[1] = [write_calc(), {"stop_reason": "end_turn"}]  # then nothing: BLOCKED
    code, _ = run(tmp_path, script)
    assert code == 1
    blocked = only_task(mini)
    notes = parse_notes((mini / "NOTES.md").read_text())
    assert len(notes.blockers) == 1 and blocker_task(notes.blockers[0]) == blocked
    git(mini, "checkout", "--", "calc.py")  # a person sets the blocked task aside
    result = orch("run", "Add a subtract function, again", "--yes",
                  "--model", Script().write(tmp_path / "again.json"))  # fmt: skip
    assert result.exit_code == 0, result.output
    notes = parse_notes((mini / "NOTES.md").read_text())
    assert notes.objective == [] and notes.pending == []  # the completed task's are gone
    assert [blocker_task(b) for b in notes.blockers] == [blocked]  # the other task's stays
