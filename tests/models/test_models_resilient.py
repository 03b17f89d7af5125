"""ResilientModel: transient retries with backoff and retry-after, fallback, final attempts."""

from __future__ import annotations

from typing import Any

import pytest

from orchestrator.errors import ModelError, UsageError
from orchestrator.messages import Message, Request, SystemPart
from orchestrator.models.resilient import ResilientModel
from orchestrator.models.scripted import ScriptedModel


def request() -> Request:
    return Request([SystemPart("base")], [Message.user("hello")])


def err(cls: str, times: int = 1, **extra: Any) -> dict[str, Any]:
    return {"error": {"class": cls, "message": f"{cls} failure", "times": times, **extra}}


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def test_transient_failures_are_retried_with_exponential_backoff() -> None:
    sleeps = Sleeps()
    primary = ScriptedModel.from_replies(err("transient", times=2), {"text": "ok"})
    model = ResilientModel(primary, max_retries=3, sleep=sleeps)
    reply = model.complete(request())
    assert reply.text == "ok"
    assert sleeps == [1.0, 2.0]
    assert model.last_call.attempts == 3
    assert len(primary.requests) == 3


def test_retry_after_is_honoured_instead_of_the_backoff() -> None:
    sleeps = Sleeps()
    primary = ScriptedModel.from_replies(
        err("transient", status=429, retry_after=7.5), {"text": "ok"}
    )
    ResilientModel(primary, max_retries=3, sleep=sleeps).complete(request())
    assert sleeps == [7.5]


def test_backoff_is_capped() -> None:
    model = ResilientModel(ScriptedModel.from_replies({"text": "x"}), max_delay=5.0)
    assert [model.backoff(n) for n in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]


def test_retries_stop_at_the_configured_count_and_the_error_carries_attempts() -> None:
    sleeps = Sleeps()
    primary = ScriptedModel.from_replies(err("transient", times=10, status=529), {"text": "ok"})
    model = ResilientModel(primary, max_retries=3, sleep=sleeps)
    with pytest.raises(ModelError) as caught:
        model.complete(request())
    assert caught.value.failure_class == "transient"
    assert caught.value.status == 529
    assert caught.value.attempts == 4
    assert len(primary.requests) == 4
    assert sleeps == [1.0, 2.0, 4.0]


def test_no_retries_when_max_retries_is_zero() -> None:
    primary = ScriptedModel.from_replies(err("transient"), {"text": "ok"})
    with pytest.raises(ModelError) as caught:
        ResilientModel(primary, max_retries=0, sleep=Sleeps()).complete(request())
    assert caught.value.attempts == 1


@pytest.mark.parametrize("cls", ["escalate", "fixable", "needs_replan"])
def test_other_classes_are_raised_at_once(cls: str) -> None:
    sleeps = Sleeps()
    primary = ScriptedModel.from_replies(err(cls), {"text": "ok"})
    with pytest.raises(ModelError) as caught:
        ResilientModel(primary, max_retries=3, sleep=sleeps).complete(request())
    assert caught.value.failure_class == cls
    assert caught.value.attempts == 1
    assert sleeps == []


def test_model_unavailable_switches_to_the_fallback_and_stays_there() -> None:
    primary = ScriptedModel(
        {"replies": [err("model_unavailable", times=5), {"text": "never"}]}, name="retired"
    )
    fallback = ScriptedModel(
        {"replies": [{"text": "from fallback"}, {"text": "again"}]}, name="backup"
    )
    model = ResilientModel(primary, fallback, max_retries=3, sleep=Sleeps())
    first = model.complete(request())
    assert first.text == "from fallback"
    assert first.model == "backup"
    assert model.name == "backup"
    assert model.last_call.attempts == 2
    assert model.last_call.fallback_from == "retired"
    second = model.complete(request())
    assert second.text == "again"
    assert len(primary.requests) == 1  # not asked again once it was found unavailable
    assert model.last_call.attempts == 1


def test_model_unavailable_without_a_fallback_is_raised() -> None:
    primary = ScriptedModel.from_replies(err("model_unavailable", status=404), {"text": "x"})
    with pytest.raises(ModelError) as caught:
        ResilientModel(primary, None, sleep=Sleeps()).complete(request())
    assert caught.value.failure_class == "model_unavailable"
    assert caught.value.attempts == 1


def test_an_unavailable_fallback_ends_the_call() -> None:
    primary = ScriptedModel({"replies": [err("model_unavailable")]}, name="a")
    fallback = ScriptedModel({"replies": [err("model_unavailable")]}, name="b")
    with pytest.raises(ModelError) as caught:
        ResilientModel(primary, fallback, sleep=Sleeps()).complete(request())
    assert caught.value.failure_class == "model_unavailable"
    assert caught.value.attempts == 2


def test_transient_failures_on_the_fallback_are_retried_too() -> None:
    sleeps = Sleeps()
    primary = ScriptedModel({"replies": [err("model_unavailable")]}, name="a")
    fallback = ScriptedModel({"replies": [err("transient"), {"text": "ok"}]}, name="b")
    model = ResilientModel(primary, fallback, max_retries=3, sleep=sleeps)
    assert model.complete(request()).text == "ok"
    assert model.last_call.attempts == 3
    assert sleeps == [1.0]


def test_the_fallback_factory_runs_only_when_needed() -> None:
    built: list[str] = []

    def factory() -> ScriptedModel:
        built.append("fallback")
        return ScriptedModel({"replies": [{"text": "fb"}]}, name="fb")

    ok = ResilientModel(ScriptedModel.from_replies({"text": "fine"}), factory)
    assert ok.complete(request()).text == "fine"
    assert built == []
    failing = ResilientModel(
        ScriptedModel({"replies": [err("model_unavailable")]}, name="a"), factory
    )
    assert failing.complete(request()).text == "fb"
    assert built == ["fallback"]


def test_a_fallback_that_cannot_be_built_escalates_with_both_reasons() -> None:
    def factory() -> ScriptedModel:
        raise UsageError("ANTHROPIC_API_KEY is not set")

    model = ResilientModel(ScriptedModel({"replies": [err("model_unavailable")]}), factory)
    with pytest.raises(ModelError) as caught:
        model.complete(request())
    assert caught.value.failure_class == "escalate"
    assert "model_unavailable failure" in caught.value.message
    assert "ANTHROPIC_API_KEY" in caught.value.message


def test_count_tokens_goes_to_the_active_model() -> None:
    model = ResilientModel(ScriptedModel.from_replies({"text": "x"}))
    assert model.count_tokens(request()) > 0
