"""Honest gates: a phase that changed nothing fails; a test or lint command that does not
exist stops the run before the planner; no test command is said at the start of a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_support import (
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

from orchestrator.config import load_config
from orchestrator.engine.api import NO_TEST_COMMAND, check_gate_commands
from orchestrator.errors import UsageError
from orchestrator.store.layout import Layout

TASK = "Add a subtract function"
# the executor's only tool call fails, as in a real run where nothing was written
FAILED_CALL = {"tool_calls": [{"name": "read_file", "input": {"path": "no/such/file.py"}}]}


def run(tmp_path: Path, script: Script, *extra: str) -> tuple[int, str]:
    result = orch("run", TASK, "--yes", "--model", script.write(tmp_path / "s.json"), *extra)
    return result.exit_code, result.output


def commits(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


def test_a_phase_that_changed_nothing_fails_and_is_never_committed(
    mini: Path, tmp_path: Path
) -> None:
    script = Script()
    script.executor[1] = [FAILED_CALL, done("Done."), FAILED_CALL, done("Done again.")]
    code, output = run(tmp_path, script)
    assert code == 0, output
    assert "PHASE_REVIEW_GATE phase 1: BLOCKED: phase 1 changed nothing" in output
    assert "WAITING_APPROVAL: phase 1 stopped" in output
    events = task_events(mini)
    review = gates(events, "PHASE_REVIEW_GATE")
    assert [g["decision"] for g in review] == ["BLOCKED", "BLOCKED"]
    assert {g["failure_class"] for g in review} == {"fixable"}
    assert "calc.py to create or modify" in review[0]["reason"]
    # no test run was spent on an empty change, and nothing was committed
    assert not [e for e in events if e.event_type == "verdict"]
    assert commits(mini) == ["Initial commit"]
    info = json.loads(orch("status", only_task(mini), "--json").output)
    assert info["blocking_gate"]["name"] == "PHASE_REVIEW_GATE"
    assert "changed nothing" in info["blocking_gate"]["output_tail"]


def test_the_retry_after_an_empty_phase_is_told_why_and_can_pass(
    mini: Path, tmp_path: Path
) -> None:
    script = Script()
    script.executor[1] = [FAILED_CALL, done(), write_calc(), done()]
    code, output = run(tmp_path, script)
    assert code == 0, output
    assert "COMPLETE" in output
    slug = only_task(mini)
    conversation = (mini / f"plans/artifacts/{slug}/conversations/phase-1.json").read_text()
    assert "changed nothing" in conversation  # the fix hint the retry started with
    assert commits(mini) == ["Phase 1: Add subtract", "Initial commit"]
    assert "def subtract" in git(mini, "show", "HEAD:calc.py")


@pytest.mark.parametrize("action", ["reference", "review"])
def test_a_phase_that_only_reads_may_change_nothing(
    mini: Path, tmp_path: Path, action: str
) -> None:
    look = phase(1, "Look over calc.py")
    look["files"] = [{"path": "calc.py", "action": action, "reason": "read it"}]
    script = Script(plan(look))
    script.executor[1] = [FAILED_CALL, done("Nothing to change.")]
    code, output = run(tmp_path, script)
    assert code == 0, output
    assert "COMPLETE" in output
    (go,) = gates(task_events(mini), "PHASE_REVIEW_GATE")
    assert go["decision"] == "GO"


@pytest.mark.parametrize("setting", ["test_command", "lint_command"])
def test_a_command_that_does_not_exist_stops_the_run_before_the_planner(
    mini: Path, tmp_path: Path, setting: str
) -> None:
    (mini / "orch.toml").write_text(f'{setting} = "no-such-runner-xyz -q"\n')
    git(mini, "commit", "-qam", "Configure a missing program")
    code, output = run(tmp_path, Script())
    assert code != 0
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert f"{setting} `no-such-runner-xyz -q` cannot run" in lines[0]
    assert "Traceback" not in output
    # no task was created, so no model was asked anything
    assert not [p for p in (mini / "plans/artifacts").iterdir() if p.is_dir()]


def test_a_command_is_found_on_path_or_as_a_file_in_the_repository(mini: Path) -> None:
    (mini / "run-checks").write_text("#!/bin/sh\nexit 0\n")
    layout = Layout(mini)
    for command in ("git status", "./run-checks", "run-checks --all", "FOO=1 git status"):
        config = load_config(mini, {"test_command": command, "lint_command": None})
        check_gate_commands(layout, config)
    config = load_config(mini, {"test_command": "./no-such-script", "lint_command": None})
    with pytest.raises(UsageError, match="no-such-script"):
        check_gate_commands(layout, config)


def test_no_test_command_is_one_warning_at_the_start_of_every_run(
    mini: Path, tmp_path: Path
) -> None:
    (mini / "orch.toml").write_text('fallback_model = ""\n')
    git(mini, "commit", "-qam", "No test command")
    first = orch("run", TASK, "--model", Script().write(tmp_path / "s.json"))
    assert first.exit_code == 0, first.output
    assert first.output.count(NO_TEST_COMMAND) == 1
    assert first.output.index(NO_TEST_COMMAND) < first.output.index("-> Planner")
    second = orch("approve", only_task(mini))
    assert second.exit_code == 0, second.output
    assert second.output.count(NO_TEST_COMMAND) == 1
    assert "COMPLETE" in second.output
