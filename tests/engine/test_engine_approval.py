"""The approval flow: the plan, high-risk commands, escalations and PREFLECT_GATE."""

from __future__ import annotations

import json
from pathlib import Path

from engine_support import (
    Script,
    done,
    fenced,
    gates,
    git,
    only_task,
    orch,
    plan,
    steps,
    task_events,
    write_calc,
)

TASK = "Add a subtract function"


def start(tmp_path: Path, script: Script, *extra: str) -> str:
    result = orch("run", TASK, "--model", script.write(tmp_path / "script.json"), *extra)
    assert result.exit_code == 0, result.output
    return result.output


def status(repo: Path) -> dict:
    return json.loads(orch("status", only_task(repo), "--json").output)


def test_without_yes_the_plan_waits_for_approval_then_runs(mini: Path, tmp_path: Path) -> None:
    output = start(tmp_path, Script())
    assert "WAITING_APPROVAL" in output and f"orch approve {only_task(mini)}" in output
    info = status(mini)
    assert info["state"] == "WAITING_APPROVAL" and info["waiting_for"] == "plan"
    assert git(mini, "log", "--format=%s").splitlines() == ["Initial commit"]
    notes = (mini / "NOTES.md").read_text()
    assert "A task (task add-a-subtract-function)" in notes and "phase 1: Add subtract" in notes
    result = orch("approve", only_task(mini))
    assert result.exit_code == 0, result.output
    assert status(mini)["state"] == "COMPLETE"
    events = task_events(mini)
    assert gates(events, "PLAN_GATE")[0]["requires_human_approval"] is True
    assert "approval_given" in steps(events)


def test_approve_records_only_with_no_run_and_refuses_when_nothing_waits(
    mini: Path, tmp_path: Path
) -> None:
    start(tmp_path, Script())
    slug = only_task(mini)
    result = orch("approve", slug, "--no-run")
    assert result.exit_code == 0 and status(mini)["state"] == "PLAN_REVIEW"
    again = orch("approve", slug)
    assert again.exit_code == 2
    assert f"task {slug!r} is not waiting for approval (it is PLAN_REVIEW)" in again.output
    assert "Traceback" not in again.output
    assert orch("resume", slug).exit_code == 0
    assert status(mini)["state"] == "COMPLETE"


def test_denying_the_plan_sends_the_note_to_the_planner(mini: Path, tmp_path: Path) -> None:
    script = Script()
    revised = plan(task_title="A task, with a docstring")
    # the second planning iteration only answers when the person's note reached it
    script.extra = [
        {
            "when": {"purpose": "planner", "contains": "A person asked: add a docstring"},
            "replies": [fenced(revised)],
        }
    ]
    script.audits.append(fenced(json.loads(script.audits[0]["text"][8:-4])))
    start(tmp_path, script)
    result = orch("approve", only_task(mini), "--deny", "--note", "add a docstring")
    assert result.exit_code == 0, result.output
    assert "WAITING_APPROVAL" in result.output
    assert (
        json.loads((mini / f"plans/artifacts/{only_task(mini)}/plan.json").read_text())[
            "task_title"
        ]
        == "A task, with a docstring"
    )
    assert status(mini)["plan_iteration"] == 2
    assert orch("approve", only_task(mini)).exit_code == 0
    assert status(mini)["state"] == "COMPLETE"


def _rm_script() -> Script:
    script = Script()
    script.executor[1] = [
        write_calc(),
        {"tool_calls": [{"name": "run_shell", "input": {"command": "rm -f victim.txt"}}]},
        done(),
    ]
    return script


def _with_victim(repo: Path) -> None:
    (repo / "victim.txt").write_text("delete me only if a person agrees\n")
    git(repo, "add", "victim.txt")
    git(repo, "commit", "-qm", "Add a file to delete")


def test_a_high_risk_command_waits_for_approval_and_runs_once_approved(
    mini: Path, tmp_path: Path
) -> None:
    _with_victim(mini)
    output = start(tmp_path, _rm_script(), "--yes")
    assert "WAITING_APPROVAL: high-risk command needs approval (`rm` deletes files)" in output
    info = status(mini)
    assert info["waiting_for"] == "high_risk" and info["command"] == "rm -f victim.txt"
    assert (mini / "victim.txt").exists()
    gate = gates(task_events(mini), "HIGH_RISK_APPROVAL_GATE")
    assert gate and gate[0]["requires_human_approval"] is True and gate[0]["decision"] == "BLOCKED"
    result = orch("approve", only_task(mini))
    assert result.exit_code == 0, result.output
    assert status(mini)["state"] == "COMPLETE"
    decisions = [g["decision"] for g in gates(task_events(mini), "HIGH_RISK_APPROVAL_GATE")]
    assert decisions == ["BLOCKED", "GO"]
    assert "victim.txt" not in git(mini, "ls-tree", "--name-only", "HEAD").split()
    assert "def subtract" in git(mini, "show", "HEAD:calc.py")


def test_a_denied_high_risk_command_is_not_run(mini: Path, tmp_path: Path) -> None:
    _with_victim(mini)
    start(tmp_path, _rm_script(), "--yes")
    result = orch("approve", only_task(mini), "--deny", "--note", "keep that file")
    assert result.exit_code == 0, result.output
    assert status(mini)["state"] == "COMPLETE"
    assert (mini / "victim.txt").exists()
    calls = [
        e.payload
        for e in task_events(mini)
        if e.event_type == "tool_call" and e.payload["tool"] == "run_shell"
    ]
    assert calls[-1]["ok"] is False and "denied" in calls[-1]["summary"]


def test_configuration_can_allow_a_high_risk_command(mini: Path, tmp_path: Path) -> None:
    _with_victim(mini)
    with (mini / "orch.toml").open("a") as fh:
        fh.write('[policy]\nallow_high_risk = ["rm -f victim\\\\.txt"]\n')
    git(mini, "commit", "-qam", "Allow removing the victim")
    output = start(tmp_path, _rm_script(), "--yes")
    assert "COMPLETE" in output
    gate = gates(task_events(mini), "HIGH_RISK_APPROVAL_GATE")
    assert [g["decision"] for g in gate] == ["GO"]
    assert gate[0]["reason"].startswith("allowed by configuration")
    assert not (mini / "victim.txt").exists()


def test_preflect_stops_a_phase_on_a_tree_orch_did_not_leave(mini: Path, tmp_path: Path) -> None:
    start(tmp_path, Script())
    (mini / "stray.py").write_text("print('not from orch')\n")  # a person edits meanwhile
    result = orch("approve", only_task(mini))
    assert result.exit_code == 0
    assert "WAITING_APPROVAL: phase 1 cannot start" in result.output and "stray.py" in result.output
    preflect = gates(task_events(mini), "PREFLECT_GATE")
    assert preflect[-1]["decision"] == "BLOCKED"
    result = orch("approve", only_task(mini))  # keep the change: it joins phase 1
    assert result.exit_code == 0, result.output
    assert status(mini)["state"] == "COMPLETE"
    assert "stray.py" in git(mini, "show", "--name-only", "--format=", "HEAD").split()
