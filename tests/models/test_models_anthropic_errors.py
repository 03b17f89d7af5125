"""Every failure of a real SDK call against the local server: its class, how many attempts
it took (the server counts them: the SDK itself never retries), and its one-line message."""

from __future__ import annotations

import json
from typing import Any

import pytest

from orchestrator.config import Config
from orchestrator.errors import ModelError, UsageError
from orchestrator.messages import Message, Request, SystemPart, ToolSpec
from orchestrator.models import get_model
from orchestrator.models.anthropic_adapter import AnthropicModel
from orchestrator.models.messages_server import (
    CutStream,
    EndEarly,
    Error,
    Events,
    MessagesServer,
    Raw,
    Reply,
    Slow,
    StreamError,
    message,
    sse_events,
    text,
    tool_use,
)
from orchestrator.models.resilient import ResilientModel

READ_FILE = ToolSpec(
    "read_file",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
OK = Reply(message(text("fine")))


def request() -> Request:
    return Request(
        [SystemPart("rules", cache=True)],
        [Message.user("go")],
        tools=[READ_FILE],
        max_tokens=256,
    )


def resilient(
    streaming: bool = True,
    *,
    fallback: str | None = None,
    max_retries: int = 3,
    api_timeout: float = 5.0,
) -> tuple[ResilientModel, list[float]]:
    config = Config(
        streaming=streaming,
        fallback_model=fallback,
        max_retries=max_retries,
        api_timeout=api_timeout,
    )
    model = get_model("anthropic:claude-sonnet-4-6", config)
    waits: list[float] = []
    model.sleep = waits.append
    return model, waits


def failure(model: ResilientModel) -> ModelError:
    with pytest.raises(ModelError) as caught:
        model.complete(request())
    line = caught.value.line()
    assert "\n" not in line and "Traceback" not in line
    return caught.value


BOTH = pytest.mark.parametrize("streaming", [True, False], ids=["stream", "json"])


# transient: retried, retry-after honoured ---------------------------------------------


@BOTH
def test_429_is_retried_honouring_retry_after(api_env: MessagesServer, streaming: bool) -> None:
    api_env.on_messages(
        Error(429, "rate_limit_error", "slow down", {"retry-after": "2"}),
        Error(429, "rate_limit_error", "slow down", {"retry-after-ms": "1500"}),
        OK,
    )
    model, waits = resilient(streaming)
    assert model.complete(request()).text == "fine"
    assert waits == [2.0, 1.5]
    assert model.last_call.attempts == 3
    assert len(api_env.message_requests) == 3


@BOTH
def test_529_is_retried_up_to_the_limit_then_raised_with_attempts(
    api_env: MessagesServer, streaming: bool
) -> None:
    api_env.on_messages(*[Error(529, "overloaded_error", "Overloaded")] * 4)
    model, waits = resilient(streaming)
    err = failure(model)
    assert (err.failure_class, err.status, err.attempts) == ("transient", 529, 4)
    assert "529 overloaded_error: Overloaded" in err.message
    assert waits == [1.0, 2.0, 4.0]
    assert len(api_env.message_requests) == 4


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_is_transient(api_env: MessagesServer, status: int) -> None:
    api_env.on_messages(Error(status, "api_error", "Internal server error"), OK)
    model, waits = resilient()
    assert model.complete(request()).text == "fine"
    assert model.last_call.attempts == 2 and waits == [1.0]


@BOTH
def test_a_timeout_is_transient(api_env: MessagesServer, streaming: bool) -> None:
    api_env.on_messages(Slow(2.0, OK), Slow(2.0, OK))
    model, waits = resilient(streaming, max_retries=1, api_timeout=0.3)
    err = failure(model)
    assert err.failure_class == "transient" and err.attempts == 2
    assert "no answer within 0.3s (api_timeout)" in err.message
    assert waits == [1.0]


def test_a_timeout_then_an_answer(api_env: MessagesServer) -> None:
    api_env.on_messages(Slow(2.0, OK), OK)
    model, _ = resilient(api_timeout=0.3)
    assert model.complete(request()).text == "fine"
    assert model.last_call.attempts == 2


def test_a_stream_cut_mid_event_is_transient(api_env: MessagesServer) -> None:
    msg = message(text("a long answer that never arrives"))
    api_env.on_messages(CutStream(msg, after_events=4), OK)
    model, _ = resilient()
    assert model.complete(request()).text == "fine"
    api_env.on_messages(*[CutStream(msg, after_events=4)] * 2)
    model, _ = resilient(max_retries=1)
    err = failure(model)
    assert err.failure_class == "transient" and err.attempts == 2
    assert "stream was cut" in err.message


def test_a_stream_that_ends_before_message_stop_is_transient(api_env: MessagesServer) -> None:
    msg = message(tool_use("read_file", {"path": "a.py"}))
    api_env.on_messages(EndEarly(msg, after_events=5))
    model, _ = resilient(max_retries=0)
    err = failure(model)
    assert err.failure_class == "transient"
    assert "ended before message_stop" in err.message


def test_an_error_event_inside_the_stream_is_classified_by_its_type(
    api_env: MessagesServer,
) -> None:
    api_env.on_messages(StreamError(message(text("x")), after_events=3), OK)
    model, _ = resilient()
    assert model.complete(request()).text == "fine"
    assert model.last_call.attempts == 2
    api_env.on_messages(StreamError(message(text("x")), 3, type="invalid_request_error"))
    err = failure(resilient()[0])
    assert err.failure_class == "escalate" and err.attempts == 1


@BOTH
def test_an_empty_reply_is_a_transient_failure(api_env: MessagesServer, streaming: bool) -> None:
    api_env.on_messages(Reply(message()), Reply(message(text("  "))), OK)
    model, _ = resilient(streaming)
    assert model.complete(request()).text == "fine"
    assert model.last_call.attempts == 3


# model_unavailable: the fallback ------------------------------------------------------


@BOTH
def test_an_unknown_model_falls_back(api_env: MessagesServer, streaming: bool) -> None:
    api_env.on_messages(
        Error(404, "not_found_error", "model: claude-sonnet-4-6"),
        Reply(message(text("from haiku"), model="claude-haiku-4-5-20251001")),
    )
    model, waits = resilient(streaming, fallback="anthropic:claude-haiku-4-5")
    reply = model.complete(request())
    assert reply.text == "from haiku"
    assert [r.body["model"] for r in api_env.message_requests] == [
        "claude-sonnet-4-6",
        "claude-haiku-4-5",
    ]
    assert model.last_call.attempts == 2
    assert model.last_call.fallback_from == "anthropic:claude-sonnet-4-6"
    assert waits == []


def test_an_unknown_model_without_a_fallback(api_env: MessagesServer) -> None:
    api_env.on_messages(Error(404, "not_found_error", "model: claude-sonnet-4-6"))
    err = failure(resilient()[0])
    assert (err.failure_class, err.status, err.attempts) == ("model_unavailable", 404, 1)
    assert "model 'claude-sonnet-4-6' is not available" in err.message
    assert "fallback_model" in err.message


# escalate: stop at once ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"), [(401, "authentication_error"), (403, "permission_error")]
)
def test_authentication_errors_stop_at_once_naming_the_variable(
    api_env: MessagesServer, status: int, kind: str
) -> None:
    api_env.on_messages(Error(status, kind, "invalid x-api-key"))
    model, waits = resilient(fallback="anthropic:claude-haiku-4-5")
    err = failure(model)
    assert (err.failure_class, err.status, err.attempts) == ("escalate", status, 1)
    assert err.message == (
        f"the Anthropic API refused the credentials ({status} {kind}): "
        "set ANTHROPIC_API_KEY to a valid key"
    )
    assert len(api_env.message_requests) == 1 and waits == []


@BOTH
def test_a_bad_request_escalates_with_the_apis_message(
    api_env: MessagesServer, streaming: bool
) -> None:
    api_env.on_messages(
        Error(400, "invalid_request_error", "messages.0.content: Field required\n(see docs)")
    )
    err = failure(resilient(streaming)[0])
    assert (err.failure_class, err.status, err.attempts) == ("escalate", 400, 1)
    assert "messages.0.content: Field required (see docs)" in err.message


@BOTH
def test_a_refusal_escalates(api_env: MessagesServer, streaming: bool) -> None:
    api_env.on_messages(Reply(message(text("I can't help with that."), stop_reason="refusal")))
    err = failure(resilient(streaming)[0])
    assert err.failure_class == "escalate" and "declined" in err.message


# fixable: the reply cannot be used as it is -------------------------------------------


@BOTH
def test_max_tokens_in_the_middle_of_a_tool_call_is_fixable(
    api_env: MessagesServer, streaming: bool
) -> None:
    api_env.on_messages(
        Reply(
            message(text("Writing"), tool_use("read_file", {"path": "a"}), stop_reason="max_tokens")
        )
    )
    err = failure(resilient(streaming)[0])
    assert (err.failure_class, err.attempts) == ("fixable", 1)
    assert (
        "cut at max_tokens in the middle of a call to 'read_file' (max_tokens 256)" in err.message
    )


def test_a_tool_input_cut_by_max_tokens_in_a_stream_is_fixable(api_env: MessagesServer) -> None:
    events = sse_events(message(tool_use("read_file", {"path": "a-long-file-name.py"})))
    events = [e for e in events if e[1].get("delta", {}).get("type") != "input_json_delta"]
    stop = next(i for i, e in enumerate(events) if e[0] == "content_block_stop")
    events.insert(
        stop,
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"path": "a-lo'},
            },
        ),
    )
    events[-2][1]["delta"]["stop_reason"] = "max_tokens"
    api_env.on_messages(Events(events))
    err = failure(resilient()[0])
    assert err.failure_class == "fixable" and "max_tokens" in err.message


def test_a_malformed_tool_input_in_a_stream_is_fixable(api_env: MessagesServer) -> None:
    events = sse_events(message(tool_use("read_file", {"path": "a.py"})))
    for _, data in events:
        if data.get("delta", {}).get("type") == "input_json_delta":
            data["delta"]["partial_json"] = ""
    first = next(d for _, d in events if d.get("delta", {}).get("type") == "input_json_delta")
    first["delta"]["partial_json"] = '{"path": a.py}'
    api_env.on_messages(Events(events))
    err = failure(resilient()[0])
    assert (err.failure_class, err.attempts) == ("fixable", 1)
    assert "malformed tool input" in err.message
    first["delta"]["partial_json"] = '["a.py"]'
    api_env.on_messages(Events(events))
    err = failure(resilient()[0])
    assert (err.failure_class, err.attempts) == ("fixable", 1)
    assert "input of the call to 'read_file' is not a JSON object" in err.message


@BOTH
@pytest.mark.parametrize(
    ("call", "words"),
    [
        (tool_use("rm_everything", {}), "'rm_everything', which was not offered"),
        (
            tool_use("read_file", {"file": "a.py"}),
            "does not fit its schema: input: 'path' is a required",
        ),
        (tool_use("read_file", {"path": 3}), "path: 3 is not of type 'string'"),
    ],
)
def test_tool_calls_that_cannot_run_are_fixable(
    api_env: MessagesServer, streaming: bool, call: dict[str, Any], words: str
) -> None:
    api_env.on_messages(Reply(message(call)))
    err = failure(resilient(streaming)[0])
    assert (err.failure_class, err.attempts) == ("fixable", 1)
    assert words in err.message


# garbage and bad input ----------------------------------------------------------------


@BOTH
@pytest.mark.parametrize(
    ("status", "body", "content_type"),
    [
        (200, b"<html><body>Welcome to nginx!</body></html>", "text/html"),
        (200, json.dumps({"hello": "world"}).encode(), "application/json"),
        (200, b"\x00\xff\xfe garbage", "application/octet-stream"),
        (404, b"<html>Not Found</html>", "text/html"),
    ],
    ids=["html", "json", "bytes", "404-html"],
)
def test_a_server_answering_garbage_is_one_line_naming_the_base_url(
    api_env: MessagesServer, streaming: bool, status: int, body: bytes, content_type: str
) -> None:
    api_env.on_messages(Raw(status, body, content_type))
    err = failure(resilient(streaming)[0])
    assert (err.failure_class, err.attempts) == ("escalate", 1)
    assert f"{api_env.url} answered with something that is not a Messages API reply" in err.message
    assert "check ANTHROPIC_BASE_URL" in err.message


def test_a_stream_of_events_out_of_order_is_garbage(api_env: MessagesServer) -> None:
    events = sse_events(message(text("hi")))
    bad = [
        events[0],
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 5,
                "delta": {"type": "text_delta", "text": "x"},
            },
        ),
        events[-1],
    ]
    api_env.on_messages(Events(bad))
    err = failure(resilient()[0])
    assert (err.failure_class, err.attempts) == ("escalate", 1)
    assert "not a Messages API reply (IndexError" in err.message


def test_no_api_key_is_one_line_saying_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError) as caught:
        get_model("anthropic:claude-sonnet-4-6")
    assert caught.value.line() == (
        "ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY=<your key> to use "
        "anthropic:claude-sonnet-4-6, or choose a scripted model (scripted:<path>)"
    )
    assert caught.value.exit_code == 2


def test_a_fallback_without_a_key_says_so(tmp_path: Any) -> None:
    script = tmp_path / "retired.yaml"
    script.write_text("replies:\n  - error: {class: model_unavailable, message: retired}\n")
    from orchestrator.models.scripted import ScriptedModel

    model = ResilientModel(
        ScriptedModel.from_file(script),
        lambda: AnthropicModel("claude-haiku-4-5", Config()),
    )
    with pytest.raises(ModelError) as caught:
        model.complete(request())
    assert caught.value.failure_class == "escalate"
    assert "retired; the fallback model cannot be used either: ANTHROPIC_API_KEY" in (
        caught.value.message
    )


def test_a_model_id_with_spaces_is_refused(api_env: MessagesServer) -> None:
    with pytest.raises(UsageError, match="not a model id"):
        AnthropicModel("claude sonnet")


def test_nothing_listening_is_transient(monkeypatch: pytest.MonkeyPatch) -> None:
    server = MessagesServer().start()
    url = server.url
    server.stop()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    err = failure(resilient(max_retries=1)[0])
    assert err.failure_class == "transient" and err.attempts == 2
    assert f"cannot reach {url}" in err.message


def test_the_tripwire_stops_a_call_to_the_real_api(
    network_guard: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    model = AnthropicModel("claude-sonnet-4-6", Config(api_timeout=2.0))
    assert model.base_url == "https://api.anthropic.com"
    with pytest.raises(ModelError) as caught:
        model.complete(request())
    assert caught.value.failure_class == "transient"
    assert network_guard.attempts == ["api.anthropic.com:443"]
    network_guard.attempts.clear()  # seen and checked: do not fail this test for it
