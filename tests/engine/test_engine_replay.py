"""Resume from the log: reconciling git, the task list and the files; torn lines; the seam."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from engine_support import Script, done, git, only_task, orch, steps, task_events, write_calc

from orchestrator.engine.demo import orch_command
from orchestrator.engine.status import load, replay
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder

TASK = "Add a subtract function"


def crash(repo: Path, script: str, fault: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORCH_")}
    env["ORCH_FAULT"] = fault
    proc = subprocess.run(
        orch_command("run", TASK, "--yes", "--model", script, "--json"),
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr  # SIGKILL, as a crash


def test_a_commit_whose_event_was_lost_is_found_by_its_trailers(mini: Path, tmp_path: Path) -> None:
    crash(mini, Script().write(tmp_path / "s.json"), "commit.after#1")
    assert git(mini, "log", "-1", "--format=%s").strip() == "Phase 1: Add subtract"
    assert "phase_committed" not in steps(task_events(mini))
    result = orch("resume")
    assert result.exit_code == 0, result.output
    assert "commit" in result.output and "reconciled" in result.output
    committed = [e.payload for e in task_events(mini) if e.payload.get("step") == "phase_committed"]
    assert len(committed) == 1 and committed[0]["reconciled"] is True
    assert git(mini, "log", "--format=%s").splitlines() == [
        "Phase 1: Add subtract",
        "Initial commit",
    ]


def test_a_phase_restarts_from_its_checkpoint_with_files_and_task_list(
    mini: Path, tmp_path: Path
) -> None:
    script = Script()
    add = {"tool_calls": [{"name": "tasks", "input": {"op": "add", "title": "subtract"}}]}
    start = {
        "tool_calls": [
            {"name": "tasks", "input": {"op": "update", "id": "1", "status": "in_progress"}},
            {"name": "write_file", "input": {"path": "half.py", "content": "x\n"}},
        ]
    }
    script.executor[1] = [add, start, write_calc(), done()]
    # killed after the second step's file write, before that step was checkpointed
    crash(mini, script.write(tmp_path / "s.json"), "tool.after@3#1")
    slug = only_task(mini)
    task = TaskFolder(Layout(mini), slug)
    assert (mini / "half.py").exists()
    assert json.loads(task.tasklist.read_text())["items"][0]["status"] == "in_progress"
    checkpoint = json.loads(task.conversation(1).read_text())
    assert {"v", "phase", "turn", "messages", "last_instruction"} <= set(checkpoint)
    assert checkpoint["turn"] == 1
    from orchestrator.engine.api import Options, resume

    notes: list[str] = []
    env = resume(Layout(mini), slug, options=Options(notices=notes.append))
    assert env.state.done
    assert notes and "task list and 1 file(s) restored from the checkpoint at turn 1" in notes[0]
    assert "half.py" in git(mini, "ls-tree", "--name-only", "HEAD").split()  # redone once
    delegations = [
        e.payload
        for e in task_events(mini)
        if e.event_type == "delegation" and e.payload["to"] == "Executor"
    ]
    assert delegations[-1]["resumed_from_turn"] == 1


def test_a_torn_last_line_is_cut_and_recorded(mini: Path, tmp_path: Path) -> None:
    crash(mini, Script().write(tmp_path / "s.json"), "torn@12")
    slug = only_task(mini)
    task = TaskFolder(Layout(mini), slug)
    loaded = load(task)
    assert any("torn last line" in p for p in loaded.problems)
    status = json.loads(orch("status", slug, "--json").output)
    assert status["log_problems"]
    result = orch("resume", slug)
    assert result.exit_code == 0, result.output
    events = task_events(mini)  # every line valid now
    torn = [e for e in events if e.event_type == "error" and e.payload["kind"] == "torn_line"]
    assert len(torn) == 1 and steps(events)[-1] == "complete"


def test_replay_rebuilds_the_state_of_a_paused_and_resumed_task(mini: Path, tmp_path: Path) -> None:
    script = Script()
    script.executor[1] = [
        write_calc(),
        {"tool_calls": [{"name": "run_shell", "input": {"command": "rm -f calc.py.bak"}}]},
        done(),
    ]
    from orchestrator.engine.api import approve, start

    layout = Layout(mini)
    env = start(layout, TASK, auto_approve=True, model=script.write(tmp_path / "s.json"))
    assert env.state.waiting is not None and env.state.waiting.kind == "high_risk"
    assert replay(env.slug, load(env.task).events).to_dict() == env.state.to_dict()
    env = approve(layout, env.slug)
    assert env.state.done
    assert replay(env.slug, load(env.task).events).to_dict() == env.state.to_dict()
