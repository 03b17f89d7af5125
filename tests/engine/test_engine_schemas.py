"""The payload schemas the engine ships: strict for the engine's events, open to others'."""

from __future__ import annotations

import pytest

from orchestrator.engine.status import replay
from orchestrator.events.log import Event
from orchestrator.schemas import errors, validator

SCHEMAS = (
    "payloads/state_change",
    "payloads/delegation",
    "payloads/execution_report",
    "payloads/plan_audit",
    "payloads/verdict",
    "payloads/tool_call",
    "payloads/error",
    "audit_verdict",
    "review_verdict",
    "tasklist",
)


@pytest.mark.parametrize("name", SCHEMAS)
def test_each_schema_is_a_valid_json_schema(name: str) -> None:
    validator(name)  # raises SchemaError if the schema itself is wrong


def test_an_engine_state_change_is_checked_strictly() -> None:
    good = {
        "from": None,
        "to": "PLANNING",
        "step": "task_created",
        "reason": "created",
        "task": {
            "text": "t",
            "tier": None,
            "auto_approve": False,
            "model": "m",
            "base_commit": None,
            "branch": None,
        },
    }
    assert errors("payloads/state_change", good) == []
    assert errors("payloads/state_change", {**good, "reason": None})
    assert errors("payloads/state_change", {**good, "to": "SOMEWHERE"})
    assert errors("payloads/state_change", {**good, "surprise": 1})
    assert errors("payloads/state_change", {"to": "ACTING", "step": "phase_started"})


def test_a_state_change_without_a_step_is_another_tools_note() -> None:
    note = {"from": "A", "to": "B", "n": 1}
    assert errors("payloads/state_change", note) == []
    assert errors("payloads/state_change", {"to": 3})
    event = Event("2026-01-01T00:00:00.000Z", "t", "t", "a", None, "state_change", note)
    assert replay("t", [event]).state is None


def test_verdicts_and_audits_are_checked() -> None:
    assert errors(
        "audit_verdict", {"verdict": "OK", "score": 2, "summary": "", "findings": [], "checks": []}
    )
    assert (
        errors(
            "review_verdict",
            {
                "verdict": "PASS",
                "summary": "fine",
                "blocking_issues": [],
                "validated_blocking_issues": [],
                "non_blocking": [],
                "criteria": [],
            },
        )
        == []
    )
    assert errors("payloads/error", {"kind": "torn_line", "detail": "cut", "bytes": "{"}) == []
    assert errors("payloads/tool_call", {"tool": "read_file", "ok": "yes"})
