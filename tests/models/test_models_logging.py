"""LoggedModel: one schema-valid `model_call` event per call, with usage, cost and attempts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.errors import ModelError
from orchestrator.events.log import EventLog
from orchestrator.messages import Message, Request, SystemPart, Usage
from orchestrator.models.logging import LoggedModel, cost_usd, price_of
from orchestrator.models.resilient import ResilientModel
from orchestrator.models.scripted import ScriptedModel


def request(purpose: str = "executor", phase: int | None = 2) -> Request:
    return Request([SystemPart("base")], [Message.user("go")], purpose=purpose, phase=phase)


def ticking(step: float) -> Iterator[float]:
    now = 100.0
    while True:
        yield now
        now += step


def clock(step: float = 0.25) -> Any:
    ticks = ticking(step)
    return lambda: next(ticks)


@pytest.fixture
def log(tmp_path: Path) -> EventLog:
    return EventLog(tmp_path / "observability" / "demo-task.ndjson", "demo-task")


USAGE = {
    "input_tokens": 1000,
    "output_tokens": 500,
    "cache_read_tokens": 2000,
    "cache_write_tokens": 400,
}


def test_a_successful_call_logs_usage_cost_latency_and_stop_reason(log: EventLog) -> None:
    inner = ScriptedModel(
        {"replies": [{"text": "done", "usage": USAGE}]}, name="anthropic:claude-sonnet-4-5"
    )
    model = LoggedModel(inner, log, agent="Executor", phase=1, clock=clock(0.25))
    reply = model.complete(request(phase=3))
    assert reply.text == "done"
    result = log.read(check=True)
    assert result.problems == []
    [event] = result.events
    assert event.event_type == "model_call"
    assert event.agent == "Executor"
    assert event.phase == 3  # the request's phase wins over the wrapper's default
    assert event.payload == {
        "purpose": "executor",
        "model": "anthropic:claude-sonnet-4-5",
        "turn": 0,
        "latency_ms": 250,
        "attempts": 1,
        "stop_reason": "end_turn",
        "usage": USAGE,
        # 1000*3 + 400*3*1.25 + 2000*3*0.1 + 500*15, per million
        "cost_usd": 0.0126,
        "estimated_cost_usd": 0.0126,  # a priced model: the same
        "tool_calls": [],
    }


def test_a_failed_call_logs_its_class_and_message_and_is_reraised(log: EventLog) -> None:
    inner = ScriptedModel.from_replies(
        {"error": {"class": "escalate", "message": "bad request: tools.0 invalid", "status": 400}}
    )
    model = LoggedModel(inner, log, agent="Planner", clock=clock())
    with pytest.raises(ModelError, match=r"tools\.0 invalid"):
        model.complete(request(purpose="planner", phase=None))
    [event] = log.read(check=True).events
    assert event.phase is None
    assert event.payload["failure_class"] == "escalate"
    assert event.payload["message"] == "bad request: tools.0 invalid"
    assert event.payload["status"] == 400
    assert event.payload["attempts"] == 1
    assert "usage" not in event.payload and "stop_reason" not in event.payload


def test_retries_and_fallback_show_in_the_event(log: EventLog) -> None:
    primary = ScriptedModel(
        {"replies": [{"error": {"class": "model_unavailable", "message": "retired"}}]},
        name="anthropic:claude-3-opus-20240229",
    )
    fallback = ScriptedModel(
        {
            "replies": [
                {"error": {"class": "transient", "message": "overloaded", "retry_after": 0}},
                {"tool_calls": [{"name": "read_file", "input": {"path": "a.py"}}]},
            ]
        },
        name="anthropic:claude-haiku-4-5",
    )
    resilient = ResilientModel(primary, fallback, max_retries=3, sleep=lambda s: None)
    model = LoggedModel(resilient, log, agent="Executor")
    reply = model.complete(request())
    assert reply.tool_calls[0].name == "read_file"
    [event] = log.read(check=True).events
    assert event.payload["attempts"] == 3
    assert event.payload["model"] == "anthropic:claude-haiku-4-5"
    assert event.payload["fallback_from"] == "anthropic:claude-3-opus-20240229"
    assert event.payload["stop_reason"] == "tool_use"
    assert event.payload["tool_calls"] == ["read_file"]


def test_a_failure_after_retries_logs_the_attempts(log: EventLog) -> None:
    inner = ScriptedModel.from_replies(
        {"error": {"class": "transient", "message": "overloaded", "status": 529, "times": 9}}
    )
    model = LoggedModel(ResilientModel(inner, max_retries=2, sleep=lambda s: None), log)
    with pytest.raises(ModelError):
        model.complete(request())
    [event] = log.read(check=True).events
    assert event.payload["attempts"] == 3
    assert event.payload["failure_class"] == "transient"
    assert event.payload["status"] == 529


def test_every_call_is_one_event(log: EventLog) -> None:
    inner = ScriptedModel.from_replies({"text": "a"}, {"text": "b"}, {"text": "c"})
    model = LoggedModel(inner, log)
    for _ in range(3):
        model.complete(request())
    assert [e.event_type for e in log.read(check=True).events] == ["model_call"] * 3


def test_prices_pick_the_longest_matching_family() -> None:
    assert price_of("anthropic:claude-opus-4-5-20251101") == (5.0, 25.0)
    assert price_of("claude-opus-4-1-20250805") == (15.0, 75.0)
    assert price_of("claude-haiku-4-5") == (1.0, 5.0)
    assert price_of("claude-opus-4-20250514") == (15.0, 75.0)
    assert price_of("claude-sonnet-4-6") == (3.0, 15.0)
    assert price_of("gpt-4o") is None
    assert price_of("claude-opus-5") is None


def test_costs_of_unknown_and_scripted_models() -> None:
    usage = Usage(10, 10, 0, 0)
    assert cost_usd("anthropic:some-future-model", usage) is None
    assert cost_usd("scripted:demo.yaml", usage) == 0.0


def test_the_payload_schema_rejects_a_mixed_payload(log: EventLog) -> None:
    with pytest.raises(ValueError, match="model_call"):
        log.append(
            "model_call",
            {
                "purpose": "executor",
                "model": "m",
                "turn": 0,
                "latency_ms": 1,
                "attempts": 1,
                "stop_reason": "end_turn",
                "usage": USAGE,
                "cost_usd": 0.1,
                "failure_class": "transient",
                "message": "both at once",
            },
        )
