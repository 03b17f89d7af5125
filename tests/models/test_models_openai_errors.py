"""Every failure of a real `openai` SDK call against the local Chat Completions server: its
class, how many attempts it took (the server counts them: the SDK itself never retries),
and its one-line message."""

from __future__ import annotations

import json

import pytest
from chat_server import (
    ChatServer,
    Chunks,
    CutStream,
    EndEarly,
    Error,
    Raw,
    Reply,
    Slow,
    Stall,
    StreamError,
    completion,
    tool_call,
)
from conftest import openai_config

from orchestrator.errors import ModelError
from orchestrator.messages import Message, Request, SystemPart, ToolSpec
from orchestrator.models import get_model
from orchestrator.models.resilient import ResilientModel

READ_FILE = ToolSpec(
    "read_file",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
OK = Reply(completion("fine"))
BOTH = pytest.mark.parametrize("streaming", [True, False], ids=["stream", "json"])


def request() -> Request:
    return Request([SystemPart("rules")], [Message.user("go")], tools=[READ_FILE], max_tokens=256)


def resilient(
    chat: ChatServer,
    streaming: bool = True,
    *,
    fallback: str | None = None,
    max_retries: int = 3,
    api_timeout: float = 5.0,
    key_env: str = "OPENAI_API_KEY",
) -> tuple[ResilientModel, list[float]]:
    config = openai_config(
        chat,
        streaming=streaming,
        fallback_model=fallback,
        max_retries=max_retries,
        api_timeout=api_timeout,
        openai={"api_key_env": key_env},
    )
    model = get_model("openai:gpt-test-1", config)
    waits: list[float] = []
    model.sleep = waits.append
    return model, waits


def failure(model: ResilientModel) -> ModelError:
    with pytest.raises(ModelError) as caught:
        model.complete(request())
    line = caught.value.line()
    assert "\n" not in line and "Traceback" not in line
    return caught.value


# transient: retried, retry-after honoured ---------------------------------------------


@BOTH
def test_429_is_retried_honouring_retry_after(openai_env: ChatServer, streaming: bool) -> None:
    openai_env.on_chat(
        Error(429, "Rate limit reached", "requests", "rate_limit_exceeded", {"retry-after": "2"}),
        Error(
            429, "Rate limit reached", "requests", "rate_limit_exceeded", {"retry-after-ms": "1500"}
        ),
        OK,
    )
    model, waits = resilient(openai_env, streaming)
    assert model.complete(request()).text == "fine"
    assert waits == [2.0, 1.5]
    assert model.last_call.attempts == 3
    assert len(openai_env.chat_requests) == 3


@BOTH
def test_503_is_retried_up_to_the_limit_then_raised_with_attempts(
    openai_env: ChatServer, streaming: bool
) -> None:
    openai_env.on_chat(*[Error(503, "The server is overloaded", "server_error")] * 4)
    model, waits = resilient(openai_env, streaming)
    err = failure(model)
    assert (err.failure_class, err.status, err.attempts) == ("transient", 503, 4)
    assert "503 server_error: The server is overloaded" in err.message
    assert waits == [1.0, 2.0, 4.0]
    assert len(openai_env.chat_requests) == 4


@pytest.mark.parametrize("status", [500, 502, 408, 409])
def test_5xx_408_and_409_are_transient(openai_env: ChatServer, status: int) -> None:
    openai_env.on_chat(Error(status, "try again", "server_error"), OK)
    model, waits = resilient(openai_env)
    assert model.complete(request()).text == "fine"
    assert model.last_call.attempts == 2 and waits == [1.0]


def test_429_for_an_exhausted_quota_is_not_retried(openai_env: ChatServer) -> None:
    openai_env.on_chat(
        Error(429, "You exceeded your current quota", "insufficient_quota", "insufficient_quota")
    )
    model, waits = resilient(openai_env)
    err = failure(model)
    assert (err.failure_class, err.attempts, waits) == ("escalate", 1, [])
    assert "no quota left" in err.message


@BOTH
def test_a_timeout_is_transient(openai_env: ChatServer, streaming: bool) -> None:
    openai_env.on_chat(Slow(2.0, OK), Slow(2.0, OK))
    model, waits = resilient(openai_env, streaming, max_retries=1, api_timeout=0.3)
    err = failure(model)
    assert err.failure_class == "transient" and err.attempts == 2
    assert "no answer within 0.3s (api_timeout)" in err.message
    assert waits == [1.0]


def test_a_timeout_then_an_answer(openai_env: ChatServer) -> None:
    openai_env.on_chat(Slow(2.0, OK), OK)
    model, _ = resilient(openai_env, api_timeout=0.3)
    assert model.complete(request()).text == "fine"
    assert model.last_call.attempts == 2


def test_a_stream_that_stalls_midway_is_transient(openai_env: ChatServer) -> None:
    openai_env.on_chat(Stall(completion("a slow answer"), after_chunks=2, seconds=2.0), OK)
    model, _ = resilient(openai_env, api_timeout=0.3)
    assert model.complete(request()).text == "fine"
    openai_env.on_chat(Stall(completion("a slow answer"), after_chunks=2, seconds=2.0))
    model, _ = resilient(openai_env, max_retries=0, api_timeout=0.3)
    err = failure(model)
    assert err.failure_class == "transient"
    assert "the reply stalled for more than 0.3s (api_timeout)" in err.message


def test_a_stream_cut_mid_event_is_transient(openai_env: ChatServer) -> None:
    done = completion("a long answer that never arrives", tool_call("read_file", {"path": "x"}))
    openai_env.on_chat(CutStream(done, after_chunks=5), OK)
    model, _ = resilient(openai_env)
    assert model.complete(request()).text == "fine"
    openai_env.on_chat(*[CutStream(done, after_chunks=5)] * 2)
    model, _ = resilient(openai_env, max_retries=1)
    err = failure(model)
    assert (err.failure_class, err.attempts) == ("transient", 2)
    assert "the reply stream was cut" in err.message


def test_a_stream_that_ends_before_its_finish_reason_is_transient(
    openai_env: ChatServer,
) -> None:
    openai_env.on_chat(EndEarly(completion("half of an answer"), after_chunks=3), OK)
    model, waits = resilient(openai_env)
    assert model.complete(request()).text == "fine"
    assert waits == [1.0]
    openai_env.on_chat(EndEarly(completion("half of an answer"), after_chunks=3))
    model, _ = resilient(openai_env, max_retries=0)
    err = failure(model)
    assert err.failure_class == "transient"
    assert "ended before its finish_reason" in err.message


def test_a_server_error_inside_a_stream_is_transient(openai_env: ChatServer) -> None:
    openai_env.on_chat(StreamError(completion("partial"), after_chunks=2), OK)
    model, _ = resilient(openai_env)
    assert model.complete(request()).text == "fine"
    assert model.last_call.attempts == 2


def test_a_request_error_inside_a_stream_escalates(openai_env: ChatServer) -> None:
    error = {"message": "tools are not supported", "type": "invalid_request_error"}
    openai_env.on_chat(StreamError(completion("partial"), after_chunks=1, error=error))
    model, _ = resilient(openai_env)
    err = failure(model)
    assert (err.failure_class, err.attempts) == ("escalate", 1)
    assert "the stream reported an error: tools are not supported" in err.message


@BOTH
def test_an_empty_reply_is_transient(openai_env: ChatServer, streaming: bool) -> None:
    openai_env.on_chat(Reply(completion("  ")), OK)
    model, _ = resilient(openai_env, streaming)
    assert model.complete(request()).text == "fine"
    openai_env.on_chat(Reply(completion(None)))
    model, _ = resilient(openai_env, streaming, max_retries=0)
    err = failure(model)
    assert err.failure_class == "transient" and "empty reply" in err.message


def test_a_server_that_is_gone_is_transient(
    chat: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    model, _ = resilient(chat, max_retries=1)
    chat.stop()
    err = failure(model)
    assert (err.failure_class, err.attempts) == ("transient", 2)
    assert f"cannot reach {chat.base_url}" in err.message


# credentials, models, bad requests ----------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
def test_refused_credentials_name_the_key_variable(
    openai_env: ChatServer, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    monkeypatch.setenv("VLLM_KEY", "wrong")
    openai_env.on_chat(Error(status, "Incorrect API key provided", code="invalid_api_key"))
    model, waits = resilient(openai_env, key_env="VLLM_KEY")
    err = failure(model)
    assert (err.failure_class, err.status, err.attempts, waits) == ("escalate", status, 1, [])
    assert err.message == (
        f"{openai_env.base_url} refused the credentials ({status} invalid_api_key: Incorrect "
        "API key provided): set VLLM_KEY to a valid key"
    )


@BOTH
def test_an_unknown_model_is_model_unavailable(openai_env: ChatServer, streaming: bool) -> None:
    openai_env.on_chat(
        Error(
            404,
            "The model `gpt-test-1` does not exist or you do not have access to it.",
            code="model_not_found",
        )
    )
    model, _ = resilient(openai_env, streaming)
    err = failure(model)
    assert (err.failure_class, err.status, err.attempts) == ("model_unavailable", 404, 1)
    assert "model 'gpt-test-1' is not available at" in err.message
    assert "set fallback_model" in err.message


def test_an_ollama_style_missing_model_falls_back(openai_env: ChatServer) -> None:
    # Ollama: 404, type api_error, no code, the message names the model
    openai_env.on_chat(
        Error(404, 'model "gpt-test-1" not found, try pulling it first', "api_error"),
        Reply(completion("from the fallback")),
    )
    model, _ = resilient(openai_env, fallback="openai:qwen3:8b")
    assert model.complete(request()).text == "from the fallback"
    assert model.last_call.fallback_from == "openai:gpt-test-1"
    assert [r.body["model"] for r in openai_env.chat_requests] == ["gpt-test-1", "qwen3:8b"]


def test_a_404_that_is_not_about_the_model_names_the_base_url(openai_env: ChatServer) -> None:
    openai_env.on_chat(Raw(404, json.dumps({"detail": "Not Found"}).encode(), "application/json"))
    model, _ = resilient(openai_env, fallback="openai:other")
    err = failure(model)
    assert (err.failure_class, err.attempts) == ("escalate", 1)
    assert (
        f"{openai_env.base_url} answered with something that is not a Chat Completions"
        in err.message
    )
    assert "check base_url under [models.openai]" in err.message


@BOTH
def test_400_escalates_with_the_servers_message(openai_env: ChatServer, streaming: bool) -> None:
    openai_env.on_chat(
        Error(
            400,
            "This model's maximum context length is 8192 tokens",
            code="context_length_exceeded",
        )
    )
    model, waits = resilient(openai_env, streaming)
    err = failure(model)
    assert (err.failure_class, err.status, err.attempts, waits) == ("escalate", 400, 1, [])
    assert err.message == (
        "openai:gpt-test-1: the server rejected the request (400 context_length_exceeded): "
        "This model's maximum context length is 8192 tokens"
    )


@BOTH
def test_a_content_filter_escalates(openai_env: ChatServer, streaming: bool) -> None:
    openai_env.on_chat(Reply(completion("I can", finish_reason="content_filter")))
    model, _ = resilient(openai_env, streaming)
    err = failure(model)
    assert err.failure_class == "escalate" and "declined to answer" in err.message


@BOTH
def test_a_refusal_escalates(openai_env: ChatServer, streaming: bool) -> None:
    openai_env.on_chat(Reply(completion(None, refusal="I can't help with that.")))
    model, _ = resilient(openai_env, streaming)
    assert failure(model).failure_class == "escalate"


# fixable: the model's tool calls ------------------------------------------------------


@BOTH
def test_malformed_tool_call_json_is_fixable(openai_env: ChatServer, streaming: bool) -> None:
    openai_env.on_chat(Reply(completion(None, tool_call("read_file", '{"path": "a.py"'))))
    model, _ = resilient(openai_env, streaming)
    err = failure(model)
    assert (err.failure_class, err.attempts) == ("fixable", 1)
    assert "malformed JSON arguments for 'read_file'" in err.message


@BOTH
def test_arguments_that_are_not_an_object_are_fixable(
    openai_env: ChatServer, streaming: bool
) -> None:
    openai_env.on_chat(Reply(completion(None, tool_call("read_file", '["a.py"]'))))
    model, _ = resilient(openai_env, streaming)
    err = failure(model)
    assert err.failure_class == "fixable" and "not a JSON object" in err.message


@BOTH
def test_a_call_cut_at_length_is_fixable(openai_env: ChatServer, streaming: bool) -> None:
    cut = tool_call("read_file", '{"path": "a very long pa')
    openai_env.on_chat(Reply(completion(None, cut, finish_reason="length")))
    model, _ = resilient(openai_env, streaming)
    err = failure(model)
    assert err.failure_class == "fixable"
    assert "cut at max_tokens in the middle of a call to 'read_file'" in err.message


def test_a_call_to_a_tool_not_offered_is_fixable(openai_env: ChatServer) -> None:
    openai_env.on_chat(Reply(completion(None, tool_call("rm_rf", {"path": "/"}))))
    model, _ = resilient(openai_env)
    err = failure(model)
    assert err.failure_class == "fixable" and "'rm_rf', which was not offered" in err.message


def test_input_that_does_not_fit_the_schema_is_fixable(openai_env: ChatServer) -> None:
    openai_env.on_chat(Reply(completion(None, tool_call("read_file", {"file": "a.py"}))))
    model, _ = resilient(openai_env)
    err = failure(model)
    assert err.failure_class == "fixable" and "does not fit its schema" in err.message


# servers that do not speak the protocol -----------------------------------------------


@BOTH
def test_a_server_answering_html_names_the_base_url(
    openai_env: ChatServer, streaming: bool
) -> None:
    openai_env.on_chat(Raw(200, b"<html><body>Welcome to nginx</body></html>"))
    model, waits = resilient(openai_env, streaming)
    err = failure(model)
    assert (err.failure_class, err.attempts, waits) == ("escalate", 1, [])
    assert (
        f"{openai_env.base_url} answered with something that is not a Chat Completions"
        in err.message
    )


def test_a_stream_of_events_that_are_not_chunks_is_not_a_reply(openai_env: ChatServer) -> None:
    openai_env.on_chat(Chunks([{"hello": "world"}, {"still": "no choices"}]))
    model, _ = resilient(openai_env)
    err = failure(model)
    assert (err.failure_class, err.attempts) == ("escalate", 1)
    assert "2 events, none of them a chat.completion.chunk" in err.message


def test_the_default_anthropic_fallback_without_its_key_says_so(openai_env: ChatServer) -> None:
    openai_env.on_chat(Error(404, "The model `gpt-test-1` does not exist", code="model_not_found"))
    model, _ = resilient(openai_env, fallback="anthropic:claude-haiku-4-5")
    err = failure(model)
    assert err.failure_class == "escalate"
    assert "the fallback model cannot be used either: ANTHROPIC_API_KEY is not set" in err.message
