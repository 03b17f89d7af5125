"""Steering a task: `orch abandon`, `orch resume --model`, `orch plan show` (and the plan
summary at WAITING_APPROVAL), and the spending cap `[budget] max_cost_usd`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_support import (
    ADD,
    MINI_FILES,
    TEST_CMD,
    Script,
    done,
    make_repo,
    only_task,
    orch,
    steps,
    task_events,
)

from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder

TASK = "Add a subtract function"
# 100,000 input tokens at claude-sonnet-4's list price ($3 a million): $0.30 a call
PRICED = {"model": "claude-sonnet-4-6", "usage": {"input_tokens": 100_000, "output_tokens": 0}}


def test_plan_show_the_summary_at_approval_and_abandon(mini: Path, tmp_path: Path) -> None:
    script = Script()
    result = orch("plan", TASK, "--model", script.write(tmp_path / "s.json"))
    assert result.exit_code == 0, result.output
    slug = only_task(mini)
    out = result.output
    # the plan in short, before the hint to approve it
    assert "  plan: A task (1 phase(s))\n    1. Add subtract\n" in out
    assert out.index("1. Add subtract") < out.index(f"answer with: orch approve {slug}")
    assert f"the whole plan: orch plan show {slug}" in out

    shown = orch("plan", "show", slug)
    assert shown.exit_code == 0, shown.output
    assert "Phase 1: Add subtract" in shown.output
    assert "    modify    calc.py: the change" in shown.output
    assert "  acceptance criteria:\n    - Add subtract works" in shown.output
    as_json = orch("plan", "show", slug, "--json")
    stored = json.loads((mini / "plans/artifacts" / slug / "plan.json").read_text())
    assert json.loads(as_json.output) == stored
    missing = orch("plan", "show", "no-such-task")
    assert missing.exit_code == 2 and len(missing.output.strip().splitlines()) == 1

    # a task another orch process runs is locked
    with TaskFolder.open(Layout(mini), slug).lock():
        locked = orch("abandon", slug)
    assert locked.exit_code == 3 and "locked" in locked.output

    gave_up = orch("abandon", slug, "--reason", "done by hand instead")
    assert gave_up.exit_code == 0, gave_up.output
    assert f"Task {slug} is ABANDONED: done by hand instead" in gave_up.output
    assert steps(task_events(mini))[-1] == "abandoned"  # signed, and valid by its schema

    status = orch("status")
    assert "ABANDONED" in status.output and "  done by hand instead" in status.output
    info = json.loads(orch("status", slug, "--json").output)
    assert (info["state"], info["reason"], info["waiting_for"]) == (
        "ABANDONED",
        "done by hand instead",
        None,
    )
    # a bare resume skips it; naming it says it was abandoned; nothing is approved or redone
    bare = orch("resume")
    assert bare.exit_code == 2 and "no unfinished task" in bare.output
    named = orch("resume", slug)
    assert named.exit_code == 2 and "was abandoned" in named.output
    assert len(named.output.strip().splitlines()) == 1
    assert orch("approve", slug).exit_code == 2
    again = orch("abandon", slug)
    assert again.exit_code == 2 and "already ABANDONED" in again.output
    assert steps(task_events(mini)).count("abandoned") == 1


def test_a_budget_stop_then_another_model_for_the_rest_of_the_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(
        tmp_path / "proj",
        MINI_FILES,
        f'test_command = "{TEST_CMD}"\nmax_retries = 0\nfallback_model = ""\n'
        "[budget]\nmax_cost_usd = 0.5\n",
    )
    monkeypatch.chdir(repo)
    first = Script()
    first.planner[0].update(PRICED)
    first.audits[0].update(PRICED)
    result = orch("run", TASK, "--yes", "--model", first.write(tmp_path / "first.json"))
    assert result.exit_code == 0, result.output
    slug = only_task(repo)
    # planner and auditor spent $0.60: the executor's call is not made
    assert "the task spent $0.60 of its $0.50 cap" in result.output
    info = json.loads(orch("status", slug, "--json").output)
    assert info["waiting_for"] == "budget" and info["state"] == "WAITING_APPROVAL"
    assert info["budget"] == {"spent_usd": 0.6, "cap_usd": 0.5}
    assert info["cost_usd"] == pytest.approx(0.6)
    assert "spent $0.60 of the $0.50 cap" in orch("status", slug).output
    calls = [e for e in task_events(repo) if e.event_type == "model_call"]
    assert [c.payload["purpose"] for c in calls] == ["planner", "auditor"]

    # another model, from here on: a bad name changes nothing
    bad = orch("resume", slug, "--model", "nosuch:model")
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1
    second = Script()
    second.executor[1] = [
        {"tool_calls": [{"name": "write_file", "input": {"path": "calc.py", "content": B}}]},
        done(),
    ]
    other = second.write(tmp_path / "second.json")
    switched = orch("resume", slug, "--model", other)
    assert switched.exit_code == 0, switched.output  # still waits for the budget answer
    # the answer only, then a plain resume in a new fold: the recorded model is honoured
    assert orch("approve", slug, "--no-run").exit_code == 0
    finished = orch("resume")
    assert finished.exit_code == 0, finished.output
    assert f"Task {slug} is COMPLETE" in finished.output
    assert (repo / "calc.py").read_text() == B
    events = task_events(repo)
    assert steps(events).count("model_changed") == 1
    later = [e for e in events if e.event_type == "model_call"][2:]
    assert later and all(e.payload["model"] == other for e in later)
    assert json.loads(orch("status", slug, "--json").output)["model"] == other

    # a command that calls a model outside a run uses the task's model, not the default
    # (an Anthropic model, which would ask for an API key here)
    compacted = orch("compact", slug, "--json")
    assert compacted.exit_code == 0, compacted.output
    # a finished task cannot be abandoned
    late = orch("abandon", slug)
    assert late.exit_code == 2 and "already COMPLETE" in late.output


B = ADD + "\n\ndef subtract(a, b):\n    # from the second model\n    return a - b\n"
