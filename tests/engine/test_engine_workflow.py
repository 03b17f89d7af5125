"""The whole workflow on the demo's sample, in one process: plan, audit, phases, completion."""

from __future__ import annotations

import json
from pathlib import Path

from engine_support import gates, git, only_task, orch, steps, task_events

from orchestrator.engine.demo import TASK
from orchestrator.engine.status import load, replay
from orchestrator.schemas import has_schema
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder

ENGINE_EVENTS = (
    "state_change",
    "delegation",
    "execution_report",
    "plan_audit",
    "verdict",
    "tool_call",
    "error",
    "gate_event",
)


def run_sample(repo: Path, script: Path) -> TaskFolder:
    result = orch("run", TASK, "--yes", "--model", f"scripted:{script}")
    assert result.exit_code == 0, result.output
    assert "COMPLETE" in result.output
    return TaskFolder(Layout(repo), only_task(repo))


def test_the_sample_task_runs_to_completion_with_one_commit_per_phase(
    sample: tuple[Path, Path],
) -> None:
    repo, script = sample
    task = run_sample(repo, script)
    subjects = git(repo, "log", "--format=%s").splitlines()
    assert subjects == [
        "Phase 2: Report the most frequent words",
        "Phase 1: Keep contractions and hyphenated words whole",
        "Initial commit: the wordstats sample",
    ]
    body = git(repo, "log", "-1", "--format=%B", "HEAD~1")
    assert f"Orch-Task: {task.slug}" in body and "Orch-Phase: 1" in body
    # the phase commits hold the project only: orch's records stay out of them
    changed = git(repo, "diff", "--name-only", "HEAD~2", "HEAD").split()
    assert sorted(changed) == ["tests/test_top.py", "wordstats/cli.py", "wordstats/core.py"]
    project = ["--", ".", ":(exclude)plans", ":(exclude)memories", ":(exclude)NOTES.md"]
    assert git(repo, "status", "--porcelain", *project).strip() == ""
    # the sample's own tests pass on the result
    out = git(repo, "show", "HEAD:wordstats/core.py")
    assert "['-]" in out and "def top_words" in out


def test_every_gate_is_recorded_with_every_field(sample: tuple[Path, Path]) -> None:
    repo, script = sample
    run_sample(repo, script)
    events = task_events(repo)  # every line valid against the envelope and payload schemas
    assert {e.event_type for e in events} >= set(ENGINE_EVENTS) - {"error"}
    assert all(has_schema(f"payloads/{t}") for t in ENGINE_EVENTS)
    plan_gates = gates(events, "PLAN_GATE")
    assert [g["decision"] for g in plan_gates] == ["REPLAN", "GO"]
    assert [g["iteration_index"] for g in plan_gates] == [1, 2]
    assert [g["decision"] for g in gates(events, "PREFLECT_GATE")] == ["GO", "GO"]
    review = gates(events, "PHASE_REVIEW_GATE")
    assert [(g["phase_id"], g["decision"], g.get("failure_class")) for g in review] == [
        (1, "BLOCKED", "fixable"),
        (1, "GO", None),
        (2, "GO", None),
    ]
    assert [g["decision"] for g in gates(events, "COMPLETION_GATE")] == ["GO"]
    for gate in plan_gates + review:
        assert gate["schema_version"] == "1.1.0" and gate["trace_id"] == events[0].trace_id
    assert steps(events)[-1] == "complete"


def test_the_failing_gate_is_real_and_its_output_is_the_retry_hint(
    sample: tuple[Path, Path],
) -> None:
    repo, script = sample
    task = run_sample(repo, script)
    events = task_events(repo)
    first = next(
        e.payload
        for e in events
        if e.event_type == "verdict" and e.payload.get("gate") == "tests_pass"
    )
    assert first["passed"] is False and first["exit_code"] == 1
    assert "test_contractions_and_hyphenated_words_are_one_word" in first["output_tail"]
    retry = next(e.payload for e in events if e.payload.get("step") == "phase_retry")
    assert retry["failure_class"] == "fixable" and retry["attempt"] == 2
    conversation = json.loads(task.conversation(1).read_text(encoding="utf-8"))
    texts = [
        b.get("text", "")
        for m in conversation["messages"]
        if m["role"] == "user"
        for b in m["content"]
    ]
    assert any("The phase gate failed" in t and "well-known" in t for t in texts)


def test_an_unvalidated_blocking_issue_does_not_block(sample: tuple[Path, Path]) -> None:
    repo, script = sample
    run_sample(repo, script)
    events = task_events(repo)
    phase2 = next(
        e.payload
        for e in events
        if e.event_type == "verdict" and e.payload["kind"] == "review" and e.phase == 2
    )
    assert phase2["validated_blocking_issues"] == []
    assert phase2["demoted"][0]["id"] == "B1" and phase2["passed"] is True


def test_records_plan_revisions_verified_items_reports_and_memory(
    sample: tuple[Path, Path],
) -> None:
    repo, script = sample
    task = run_sample(repo, script)
    assert task.plan_md.is_file() and json.loads(task.plan_json.read_text())["slug"] == task.slug
    revisions = task.revisions.read_text()
    assert "## Iteration 2" in revisions and "F1" in revisions
    items = {i.item_id: i.status for i in task.load_verified()}
    assert items["PLAN-tests-per-phase"] == "VERIFIED"
    assert items["P1-tests_pass"] == items["P2-lint_clean"] == "VERIFIED"
    for n in (1, 2):
        report = task.phase_report(n).read_text()
        assert "## Gates" in report and "tests_pass: PASS" in report
    assert "Retries:" in task.phase_report(1).read_text()
    final = task.final_review.read_text()
    assert "one commit per phase: 2 commit(s) for 2 phase(s)" in final
    tasks = json.loads(task.tasklist.read_text())
    assert [i["status"] for i in tasks["items"]] == ["completed"] * 4
    assert tasks["items"][1]["blockedBy"] == ["1"] and tasks["items"][0]["blocks"] == ["2"]
    memory = repo / "memories" / "repo" / "test-and-lint-commands.md"
    assert memory.is_file() and "type: reference" in memory.read_text()
    notes = (repo / "NOTES.md").read_text()
    assert "## Active objective\n- none" in notes  # cleared at completion
    assert not (repo / "memories" / "session" / f"{task.slug}-notes.md").exists()


def test_replaying_the_log_gives_the_state_the_run_had(sample: tuple[Path, Path]) -> None:
    repo, script = sample
    from orchestrator.engine.api import start

    env = start(Layout(repo), TASK, auto_approve=True, model=f"scripted:{script}")
    assert env.state.done
    loaded = load(env.task)
    assert loaded.problems == []
    assert replay(env.slug, loaded.events).to_dict() == env.state.to_dict()
    assert loaded.state.events == len(loaded.events)
