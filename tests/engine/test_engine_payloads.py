"""What the engine logs is declared once: the records write the payloads the fold reads."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from engine_support import Script, only_task, orch, task_events

from orchestrator.engine.api import Options, start
from orchestrator.engine.demo import TASK
from orchestrator.engine.enums import (
    CheckStatus,
    Decision,
    Gate,
    PhaseStatus,
    SafetyCheck,
    Scope,
    WorkflowState,
)
from orchestrator.engine.parts import Parts, default_parts
from orchestrator.engine.payloads import Diagnosis, GateEvent, StateChange
from orchestrator.engine.status import load
from orchestrator.errors import FailureClass
from orchestrator.messages import Reply, Request
from orchestrator.protocols import Model
from orchestrator.schemas import errors
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder


def test_every_logged_change_and_gate_reads_back_into_the_record_that_wrote_it(
    sample: tuple[Path, Path],
) -> None:
    repo, script = sample
    result = orch("run", TASK, "--yes", "--model", f"scripted:{script}")
    assert result.exit_code == 0, result.output
    events = task_events(repo)  # read from disk: plain strings, not enum members
    changes = [e.payload for e in events if e.event_type == "state_change"]
    gate_events = [e.payload for e in events if e.event_type == "gate_event"]
    assert len(changes) >= 10 and len(gate_events) >= 6
    for payload in changes:
        change = StateChange.from_payload(payload)
        assert change is not None and change.payload() == payload
    for payload in gate_events:
        assert GateEvent.from_payload(payload).payload(payload["trace_id"]) == payload
    # the state folded from the file is typed: enum members, not strings
    state = load(TaskFolder(Layout(repo), only_task(repo))).state
    assert state.state is WorkflowState.COMPLETE
    assert {ph.status for ph in state.phases.values()} == {PhaseStatus.CLOSED}
    assert state.phases[1].failures == [FailureClass.FIXABLE]


def test_a_gate_event_fits_its_schema_and_leaves_out_what_is_not_set() -> None:
    gate = GateEvent(
        Gate.PHASE_REVIEW_GATE,
        WorkflowState.REVIEWING,
        Decision.BLOCKED,
        "phase 1: `pytest -q` failed with exit code 1",
        "decide the retry for this failure class",
        phase=1,
        confidence=1.7,  # clamped to the schema's 0..1
        max_iterations=9,  # and the budget to 1..5
        safety_checks=(SafetyCheck.SCOPE,),
        dryrun_status=CheckStatus.FAIL,
        failure_class=FailureClass.FIXABLE,
        diagnosis=Diagnosis(hint="fix it", scope=Scope.EXECUTOR, blocked=False, regressed=()),
    )
    payload = gate.payload("0b7e3a52-8d6e-4a59-9a55-7f1f6c0a1d2e")
    assert errors("payloads/gate_event", payload) == []
    assert payload["confidence"] == 1.0 and payload["max_iterations"] == 5
    assert "skeptic_status" not in payload
    # False and empty lists are written; only None is left out
    assert payload["diagnosis_packet"] == {
        "hint": "fix it",
        "scope": "executor",
        "blocked": False,
        "regressed": [],
    }
    assert GateEvent.from_payload(payload) == msgspec.structs.replace(
        gate, confidence=1.0, max_iterations=5
    )


def test_a_state_change_from_another_tool_is_not_the_engines() -> None:
    assert StateChange.from_payload({"from": None, "to": "ACTING", "reason": "a note"}) is None
    with pytest.raises(ValueError):
        StateChange.from_payload({"from": None, "to": "DANCING", "step": "resumed", "reason": "r"})


class Recorder:
    def __init__(self, inner: Model, seen: list[Request]) -> None:
        self.inner = inner
        self.name = inner.name
        self.seen = seen

    def complete(self, request: Request) -> Reply:
        self.seen.append(request)
        return self.inner.complete(request)

    def count_tokens(self, request: Request) -> int:
        return self.inner.count_tokens(request)


def executor_tools(mini: Path, tmp_path: Path, parts: Parts) -> set[str]:
    seen: list[Request] = []
    wrap = parts.wrap_model
    parts.wrap_model = lambda model, log, agent, phase: wrap(
        Recorder(model, seen), log, agent, phase
    )
    env = start(
        Layout(mini),
        "Add a subtract function",
        auto_approve=True,
        model=Script().write(tmp_path / "script.json"),
        options=Options(parts=parts),
    )
    assert env.state.done
    return {t.name for r in seen if r.purpose == "executor" for t in r.tools}


def test_the_engine_alone_has_no_memory_or_compact_tool_and_the_real_parts_add_them(
    mini: Path, tmp_path: Path
) -> None:
    alone = executor_tools(mini, tmp_path, Parts())
    assert "memory" not in alone and "compact" not in alone and "run_shell" in alone
    events = task_events(mini)
    assert not [e for e in events if e.event_type in ("model_call", "memory_verification")]


def test_the_default_parts_plug_in_the_memory_tool_compaction_and_model_logging(
    mini: Path, tmp_path: Path
) -> None:
    real = executor_tools(mini, tmp_path, default_parts())
    assert {"memory", "compact", "run_shell"} <= real
    kinds = {e.event_type for e in task_events(mini)}
    assert {"model_call", "memory_verification"} <= kinds
    promoted = [e for e in task_events(mini) if e.payload.get("kind") == "promotion"]
    assert promoted and all(p.payload["summary"] for p in promoted)
    assert promoted[-1].payload["outcome"] == "done"
