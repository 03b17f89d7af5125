"""Planning: schema checks sent back to the planner, the audit loop, PLAN_GATE decisions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine_support import (
    Script,
    fenced,
    gates,
    only_task,
    orch,
    phase,
    plan,
    task_events,
    verdict,
)

from orchestrator.engine.api import Options, start
from orchestrator.engine.parts import Parts
from orchestrator.engine.policy import audit_budget, stagnated
from orchestrator.messages import Reply, Request
from orchestrator.protocols import Model
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder

TASK = "Add a subtract function"


class Recorder:
    """Wraps a model and keeps every request it was sent."""

    def __init__(self, inner: Model, seen: list[Request]) -> None:
        self.inner = inner
        self.name = inner.name
        self.seen = seen

    def complete(self, request: Request) -> Reply:
        self.seen.append(request)
        return self.inner.complete(request)

    def count_tokens(self, request: Request) -> int:
        return self.inner.count_tokens(request)


def recording(seen: list[Request]) -> Options:
    return Options(parts=Parts(wrap_model=lambda model, log, agent, phase: Recorder(model, seen)))


def plan_run(tmp_path: Path, script: Script, *extra: str) -> str:
    result = orch("plan", TASK, "--model", script.write(tmp_path / "script.json"), *extra)
    assert "Traceback" not in result.output
    return result.output


def test_a_plan_that_fails_its_schema_goes_back_with_the_errors(mini: Path, tmp_path: Path) -> None:
    cyclic = plan(phase(1, "One", deps=[2]), phase(2, "Two", deps=[1]))
    script = Script()
    script.planner = [{"text": "no JSON here"}]
    script.extra = [
        {
            "when": {"purpose": "planner"},
            "replies": [{"text": "no JSON here"}, fenced(cyclic), fenced(plan())],
        }
    ]
    seen: list[Request] = []
    env = start(
        Layout(mini), TASK, model=script.write(tmp_path / "s.json"), options=recording(seen)
    )
    planner = [r for r in seen if r.purpose == "planner"]
    assert len(planner) == 3
    assert "the reply holds no JSON object" in planner[1].messages[-1].text
    assert "dependency cycle 1 -> 2 -> 1" in planner[2].messages[-1].text
    assert env.state.state == "WAITING_APPROVAL"
    report = next(e.payload for e in task_events(mini) if e.payload.get("kind") == "plan")
    assert report["schema_attempts"] == 3


def test_a_plan_the_model_keeps_getting_wrong_ends_blocked(mini: Path, tmp_path: Path) -> None:
    script = Script()
    script.extra = [
        {"when": {"purpose": "planner"}, "replies": [fenced({"summary": "not a plan"})] * 3}
    ]
    output = plan_run(tmp_path, script)
    assert "BLOCKED: the planner's plan did not fit the plan schema after 3 tries" in output
    task = TaskFolder(Layout(mini), only_task(mini))
    assert not task.plan_json.exists() and not task.plan_md.exists()  # nothing half-written
    errors = [e.payload for e in task_events(mini) if e.event_type == "error"]
    assert errors[0]["kind"] == "plan_invalid"
    assert (
        orch(
            "run", TASK, "--model", "scripted:" + str(tmp_path / "script.json"), "--json"
        ).exit_code
        == 1
    )


def test_the_audit_budget_by_tier_sends_an_unapproved_plan_to_a_person(
    mini: Path, tmp_path: Path
) -> None:
    script = Script()
    script.planner = [fenced(plan())] * 2
    script.audits = [fenced(verdict("NEEDS_REVISION", 0.4)), fenced(verdict("NEEDS_REVISION", 0.6))]
    output = plan_run(tmp_path, script, "--tier", "TRIVIAL")
    assert "WAITING_APPROVAL" in output and "the iteration budget (2) is used up" in output
    decisions = [
        (g["decision"], g["iteration_index"], g["max_iterations"])
        for g in gates(task_events(mini), "PLAN_GATE")
    ]
    assert decisions == [("REPLAN", 1, 2), ("BLOCKED", 2, 2)]


def test_stagnation_stops_the_revision_loop(mini: Path, tmp_path: Path) -> None:
    script = Script()
    script.planner = [fenced(plan())] * 3
    script.audits = [fenced(verdict("NEEDS_REVISION", s)) for s in (0.5, 0.52, 0.53)]
    output = plan_run(tmp_path, script, "--tier", "LARGE")
    assert "stagnated" in output and "WAITING_APPROVAL" in output
    audits = [e.payload for e in task_events(mini) if e.event_type == "plan_audit"]
    assert [a["stagnated"] for a in audits] == [False, False, True]
    assert audits[-1]["max_iterations"] == 5


def test_rejected_and_abstained_plans_wait_for_a_person(mini: Path, tmp_path: Path) -> None:
    script = Script()
    script.audits = [fenced(verdict("REJECTED", 0.2))]
    output = plan_run(tmp_path, script)
    assert "the PlanAuditor rejected the plan" in output
    assert gates(task_events(mini), "PLAN_GATE")[-1]["decision"] == "BLOCKED"
    result = orch("approve", only_task(mini))  # a person accepts it as it is
    assert result.exit_code == 0 and "COMPLETE" in result.output, result.output


def test_a_planner_that_abstains_waits_for_a_person(mini: Path, tmp_path: Path) -> None:
    script = Script(plan(status="ABSTAIN", open_questions=["Which module?"]))
    output = plan_run(tmp_path, script)
    assert "the planner abstained: Which module?" in output
    assert gates(task_events(mini), "PLAN_GATE")[-1]["decision"] == "ABSTAIN"
    assert not any(e.event_type == "plan_audit" for e in task_events(mini))


def test_a_check_that_passed_and_fails_again_is_regressed_and_blocks(
    mini: Path, tmp_path: Path
) -> None:
    script = Script()
    script.planner = [fenced(plan())] * 3
    script.audits = [
        fenced(verdict("NEEDS_REVISION", 0.5, {"tests-per-phase": True, "files-exist": False})),
        fenced(verdict("APPROVED", 0.8, {"tests-per-phase": False, "files-exist": True})),
        fenced(verdict("APPROVED", 0.9, {"tests-per-phase": True, "files-exist": True})),
    ]
    seen: list[Request] = []
    env = start(
        Layout(mini),
        TASK,
        tier="SMALL",
        model=script.write(tmp_path / "s.json"),
        options=recording(seen),
    )
    audits = [e.payload for e in task_events(mini) if e.event_type == "plan_audit"]
    assert [(a["verdict"], a["effective_verdict"], a["regressed"]) for a in audits] == [
        ("NEEDS_REVISION", "NEEDS_REVISION", []),
        ("APPROVED", "NEEDS_REVISION", ["tests-per-phase"]),
        ("APPROVED", "APPROVED", []),
    ]
    assert [g["decision"] for g in gates(task_events(mini), "PLAN_GATE")] == [
        "REPLAN",
        "REPLAN",
        "GO",
    ]
    revise = [r for r in seen if r.purpose == "planner"][2].messages[0].text
    assert "Regressed checks" in revise and "tests-per-phase" in revise
    third_audit = [r for r in seen if r.purpose == "auditor"][2].messages[0].text
    assert "tests-per-phase" in third_audit and "REGRESSED" in third_audit
    items = {i.item_id: i.status for i in env.task.load_verified()}
    assert items == {"PLAN-tests-per-phase": "VERIFIED", "PLAN-files-exist": "VERIFIED"}


def test_revisions_md_says_why_each_iteration_changed(mini: Path, tmp_path: Path) -> None:
    script = Script()
    finding: dict[str, Any] = {
        "id": "F1",
        "severity": "major",
        "phase_id": 1,
        "description": "no test",
        "recommendation": "add one",
    }
    script.planner = [fenced(plan()), fenced(plan(phase(1, "Add subtract, tested")))]
    script.audits = [fenced(verdict("NEEDS_REVISION", 0.5, findings=[finding])), fenced(verdict())]
    plan_run(tmp_path, script)
    text = next(mini.glob("plans/artifacts/*/revisions.md")).read_text()
    assert "## Iteration 2" in text and "F1 (phase 1): no test" in text
    assert "phase 1: Add subtract -> Add subtract, tested" in text
    saved = json.loads(next(mini.glob("plans/artifacts/*/plan.json")).read_text())
    assert saved["phases"][0]["title"] == "Add subtract, tested"
    assert saved["slug"] == only_task(mini)  # orch names the task, not the model


def test_budget_and_stagnation_rules() -> None:
    assert [audit_budget(t) for t in ("TRIVIAL", "SMALL", "MEDIUM", "LARGE")] == [2, 3, 4, 5]
    assert audit_budget("LARGE", human_revisions=2) == 5
    assert not stagnated([0.1, 0.1])
    assert stagnated([0.5, 0.52, 0.54])
    assert not stagnated([0.5, 0.52, 0.56])
