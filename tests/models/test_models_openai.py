"""The OpenAI adapter on the real `openai` SDK against a local Chat Completions server:
what it sends, what it makes of JSON and streamed replies, what degrades, its settings."""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from chat_server import ChatServer, Chunks, Reply, completion, stream_chunks, tool_call
from conftest import openai_config

from orchestrator.config import load_config
from orchestrator.errors import ModelError, UsageError
from orchestrator.messages import (
    Message,
    Request,
    SystemPart,
    TextBlock,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from orchestrator.models import build_model, get_model
from orchestrator.models.memory_tool import INPUT_SCHEMA, MemoryToolHandler
from orchestrator.models.openai_adapter import OpenAIModel
from orchestrator.store.layout import Layout
from orchestrator.tokens import estimate_request

READ_FILE = ToolSpec(
    "read_file",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
WRITE_FILE = ToolSpec(
    "write_file",
    "Write a file.",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
)
BOTH = pytest.mark.parametrize("streaming", [True, False], ids=["stream", "json"])
ADAPTER_LOG = "orchestrator.models.openai_adapter"


def request(**changes: object) -> Request:
    base = Request(
        [SystemPart("You are a test.", cache=True), SystemPart("Memory index: none.")],
        [Message.user("read app.py")],
        tools=[READ_FILE, WRITE_FILE],
        max_tokens=300,
    )
    for key, value in changes.items():
        setattr(base, key, value)
    return base


# requests -----------------------------------------------------------------------------


@BOTH
def test_the_request_carries_system_tools_limits_and_the_key(
    make_openai: Callable[..., OpenAIModel], openai_env: ChatServer, streaming: bool
) -> None:
    openai_env.on_chat(Reply(completion("ok")))
    make_openai(streaming=streaming).complete(request(temperature=0.2))
    (sent,) = openai_env.chat_requests
    body = sent.body
    assert sent.headers["authorization"] == "Bearer sk-local-test-key"
    assert body["model"] == "gpt-test-1"
    assert body["messages"] == [
        {"role": "system", "content": "You are a test.\n\nMemory index: none."},
        {"role": "user", "content": "read app.py"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file.",
                "parameters": READ_FILE.input_schema,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "write_file",
                "description": "Write a file.",
                "parameters": WRITE_FILE.input_schema,
            },
        },
    ]
    assert body["max_completion_tokens"] == 300 and "max_tokens" not in body
    assert body["temperature"] == 0.2
    if streaming:
        assert body["stream"] is True
        assert body["stream_options"] == {"include_usage": True}
    else:
        assert "stream" not in body and "stream_options" not in body


def test_tool_calls_and_results_keep_their_ids_in_the_conversation(
    make_openai: Callable[..., OpenAIModel], openai_env: ChatServer
) -> None:
    conversation = [
        Message.user("fix app.py"),
        Message(
            "assistant",
            [
                TextBlock("Reading two files."),
                ToolCall("call_A1", "read_file", {"path": "app.py"}),
                ToolCall("call_B2", "read_file", {"path": "missing.py"}),
            ],
        ),
        Message(
            "user",
            [
                ToolResult("call_A1", "def handler(): ..."),
                ToolResult("call_B2", "no such file", is_error=True),
                TextBlock("Also keep it short."),
            ],
        ),
        Message("assistant", [ToolCall("call_C3", "write_file", {"path": "a.py", "content": "é"})]),
        Message("user", [ToolResult("call_C3", "written")]),
    ]
    openai_env.on_chat(Reply(completion("done")))
    make_openai().complete(request(messages=conversation))
    messages = openai_env.chat_requests[0].body["messages"][1:]
    assert messages == [
        {"role": "user", "content": "fix app.py"},
        {
            "role": "assistant",
            "content": "Reading two files.",
            "tool_calls": [
                {
                    "id": "call_A1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "app.py"}'},
                },
                {
                    "id": "call_B2",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "missing.py"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_A1", "content": "def handler(): ..."},
        {"role": "tool", "tool_call_id": "call_B2", "content": "Error: no such file"},
        {"role": "user", "content": "Also keep it short."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_C3",
                    "type": "function",
                    "function": {
                        "name": "write_file",
                        "arguments": '{"path": "a.py", "content": "é"}',
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_C3", "content": "written"},
    ]


def test_max_tokens_field_and_api_key_env_come_from_the_openai_table(
    openai_env: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("LOCAL_LLM_KEY", "unused")
    config = openai_config(
        openai_env, openai={"api_key_env": "LOCAL_LLM_KEY", "max_tokens_field": "max_tokens"}
    )
    openai_env.on_chat(Reply(completion("ok")))
    OpenAIModel("llama3.1:8b", config).complete(request())
    (sent,) = openai_env.chat_requests
    assert sent.headers["authorization"] == "Bearer unused"
    assert sent.body["model"] == "llama3.1:8b"
    assert sent.body["max_tokens"] == 300 and "max_completion_tokens" not in sent.body


def test_base_url_falls_back_to_openai_base_url_and_the_table_wins(
    openai_env: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_env.base_url)
    from_env = OpenAIModel("m", openai_config(openai_env, openai={"base_url": None}))
    assert from_env.base_url == openai_env.base_url
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    from_table = OpenAIModel("m", openai_config(openai_env))
    assert from_table.base_url == openai_env.base_url
    openai_env.on_chat(Reply(completion("ok")))
    assert from_table.complete(request()).text == "ok"


# replies ------------------------------------------------------------------------------


@BOTH
def test_a_text_reply_with_usage_and_cached_tokens(
    make_openai: Callable[..., OpenAIModel], openai_env: ChatServer, streaming: bool
) -> None:
    openai_env.on_chat(
        Reply(
            completion(
                "Here is the answer, in several pieces.",
                model="gpt-test-1-2026",
                prompt_tokens=1200,
                completion_tokens=31,
                cached_tokens=1024,
            )
        )
    )
    reply = make_openai(streaming=streaming).complete(request())
    assert reply.text == "Here is the answer, in several pieces."
    assert reply.stop_reason == "end_turn"
    assert reply.model == "openai:gpt-test-1-2026"
    usage = reply.usage
    assert (usage.input_tokens, usage.output_tokens) == (176, 31)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (1024, 0)


@BOTH
def test_tool_calls_come_back_with_their_ids_and_parsed_arguments(
    make_openai: Callable[..., OpenAIModel], openai_env: ChatServer, streaming: bool
) -> None:
    long_content = "def subtract(a, b):\n    return a - b\n" * 4
    done = completion(
        "Writing it.",
        tool_call("read_file", {"path": "calc.py"}, id="call_read"),
        tool_call("write_file", {"path": "calc.py", "content": long_content}, id="call_write"),
    )
    # the stream really splits each call's arguments over many chunks
    pieces = [
        c
        for c in stream_chunks(done)
        for d in [c["choices"][0]["delta"] if c["choices"] else {}]
        if "tool_calls" in d and "id" not in d["tool_calls"][0]
    ]
    assert len(pieces) > 10
    openai_env.on_chat(Reply(done))
    reply = make_openai(streaming=streaming).complete(request())
    assert reply.text == "Writing it."
    assert reply.stop_reason == "tool_use"
    assert reply.tool_calls == [
        ToolCall("call_read", "read_file", {"path": "calc.py"}),
        ToolCall("call_write", "write_file", {"path": "calc.py", "content": long_content}),
    ]


def _chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {
        "id": "chatcmpl-x",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "local",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def test_calls_numbered_alike_with_distinct_ids_stay_apart(
    make_openai: Callable[..., OpenAIModel], openai_env: ChatServer
) -> None:
    """Some servers give every call index 0; a new id starts a new call."""

    def opening(call_id: str, args: str) -> dict[str, object]:
        function = {"name": "read_file", "arguments": args}
        return {
            "tool_calls": [{"index": 0, "id": call_id, "type": "function", "function": function}]
        }

    again = {"name": "read_file", "arguments": '"a.py"}'}  # and repeat the name

    openai_env.on_chat(
        Chunks(
            [
                _chunk({"role": "assistant"}),
                _chunk(opening("call_1", '{"path": ')),
                _chunk({"tool_calls": [{"index": 0, "function": again}]}),
                _chunk(opening("call_2", '{"path": "b.py"}')),
                _chunk({}, "stop"),  # and they finish tool calls with "stop"
            ]
        )
    )
    reply = make_openai().complete(request())
    assert reply.stop_reason == "tool_use"
    assert [(c.id, c.name, c.input) for c in reply.tool_calls] == [
        ("call_1", "read_file", {"path": "a.py"}),
        ("call_2", "read_file", {"path": "b.py"}),
    ]


def test_a_call_without_an_id_or_arguments_gets_an_id_and_an_empty_input(
    make_openai: Callable[..., OpenAIModel], openai_env: ChatServer
) -> None:
    no_args = ToolSpec("list_files", "List files.", {"type": "object", "properties": {}})
    call = {"index": 0, "type": "function", "function": {"name": "list_files"}}
    openai_env.on_chat(Chunks([_chunk({"tool_calls": [call]}), _chunk({}, "tool_calls")]))
    reply = make_openai().complete(request(tools=[no_args]))
    (made,) = reply.tool_calls
    assert made.name == "list_files" and made.input == {}
    assert made.id.startswith("call_") and len(made.id) > 10


@BOTH
def test_a_reply_cut_at_length_keeps_its_text_and_says_max_tokens(
    make_openai: Callable[..., OpenAIModel], openai_env: ChatServer, streaming: bool
) -> None:
    openai_env.on_chat(Reply(completion("The first half of", finish_reason="length")))
    reply = make_openai(streaming=streaming).complete(request())
    assert (reply.text, reply.stop_reason) == ("The first half of", "max_tokens")


@BOTH
def test_usage_is_zero_when_the_server_reports_none(
    make_openai: Callable[..., OpenAIModel], openai_env: ChatServer, streaming: bool
) -> None:
    done = completion("ok")
    del done["usage"]
    chunks = stream_chunks({**done, "usage": None}, include_usage=False)
    openai_env.on_chat(Chunks(chunks) if streaming else Reply(done))
    reply = make_openai(streaming=streaming).complete(request())
    assert reply.text == "ok" and reply.usage.input_tokens == reply.usage.output_tokens == 0


def test_count_tokens_is_the_local_estimate_without_a_request(
    make_openai: Callable[..., OpenAIModel], openai_env: ChatServer
) -> None:
    asked = request()
    assert make_openai().count_tokens(asked) == estimate_request(asked) > 0
    assert openai_env.requests == []


# what degrades ------------------------------------------------------------------------


def test_prompt_caching_and_server_context_features_are_said_once_per_process(
    make_openai: Callable[..., OpenAIModel],
    openai_env: ChatServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=ADAPTER_LOG)
    context = {"server_context_editing": True, "server_compaction": True}
    first, second = make_openai(), make_openai("gpt-test-2")
    from dataclasses import replace

    for model in (first, second):
        model.config = replace(model.config, context=replace(model.config.context, **context))
    openai_env.on_chat(*[Reply(completion("ok"))] * 3)
    first.complete(request())
    first.complete(request())
    second.complete(request())
    said = [r.getMessage() for r in caplog.records if r.name == ADAPTER_LOG]
    assert len(said) == 3, said
    assert "no prompt-cache breakpoints" in said[0]
    assert "no server-side context editing" in said[1]
    assert "no server-side compaction" in said[2]
    # nothing Anthropic-only reaches the server
    for sent in openai_env.chat_requests:
        raw = json.dumps(sent.body)
        assert "cache_control" not in raw and "context_management" not in raw


def test_no_caching_warning_when_prompt_caching_is_off(
    make_openai: Callable[..., OpenAIModel],
    openai_env: ChatServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=ADAPTER_LOG)
    openai_env.on_chat(Reply(completion("ok")))
    make_openai(prompt_caching=False).complete(request())
    assert [r for r in caplog.records if r.name == ADAPTER_LOG] == []


def test_the_memory_tool_is_a_plain_function_tool_said_once(
    make_openai: Callable[..., OpenAIModel],
    openai_env: ChatServer,
    layout: Layout,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=ADAPTER_LOG)
    view = tool_call("memory", {"command": "view", "path": "/memories"}, id="call_mem")
    openai_env.on_chat(Reply(completion(None, view)), Reply(completion("ok")))
    model = make_openai(prompt_caching=False)
    reply = model.complete(request(memory_tool=True))
    model.complete(request(memory_tool=True))
    tools = openai_env.chat_requests[0].body["tools"]
    assert [t["function"]["name"] for t in tools] == ["read_file", "write_file", "memory"]
    spec = MemoryToolHandler.spec()
    assert tools[-1]["function"] == {
        "name": "memory",
        "description": spec.description,
        "parameters": INPUT_SCHEMA,
    }
    said = [r.getMessage() for r in caplog.records if r.name == ADAPTER_LOG]
    assert len(said) == 1 and "no API memory tool" in said[0]
    # the call is run by the same handler as the native tool's
    (call,) = reply.tool_calls
    listing = MemoryToolHandler(layout).execute(call.input)
    assert "/memories" in listing and "MEMORY.md" in listing


def test_a_bad_memory_command_is_fixable(
    make_openai: Callable[..., OpenAIModel], openai_env: ChatServer
) -> None:
    bad = tool_call("memory", {"command": "explode", "path": "/memories"})
    openai_env.on_chat(Reply(completion(None, bad)))
    with pytest.raises(ModelError) as caught:
        make_openai().complete(request(memory_tool=True))
    assert caught.value.failure_class == "fixable"
    assert "'memory'" in caught.value.message and "command" in caught.value.message


# settings and building ----------------------------------------------------------------


def test_the_openai_table_is_read_from_orch_toml_and_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.orch.models.openai]\nbase_url = "http://localhost:11434/v1"\n'
        'api_key_env = "OLLAMA_KEY"\n',
        encoding="utf-8",
    )
    config = load_config(tmp_path)
    assert config.models.openai.base_url == "http://localhost:11434/v1"
    assert config.models.openai.api_key_env == "OLLAMA_KEY"
    assert config.models.openai.max_tokens_field == "max_completion_tokens"
    (tmp_path / "orch.toml").write_text(
        'model = "openai:qwen3"\n[models.openai]\nmax_tokens_field = "max_tokens"\n',
        encoding="utf-8",
    )
    config = load_config(tmp_path)
    assert config.model == "openai:qwen3"
    assert config.models.openai.max_tokens_field == "max_tokens"
    assert config.models.openai.api_key_env == "OLLAMA_KEY"
    (tmp_path / "orch.toml").write_text('[models.openai]\nbase_ur = "x"\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"orch.toml.models.openai: unknown setting 'base_ur'"):
        load_config(tmp_path)


@pytest.mark.parametrize(
    ("table", "env", "expected"),
    [
        ({}, {}, "OPENAI_API_KEY is not set: export OPENAI_API_KEY=<your key> to use openai:m"),
        (
            {"api_key_env": "LMSTUDIO_KEY"},
            {"OPENAI_API_KEY": "sk-x"},
            "LMSTUDIO_KEY is not set: export LMSTUDIO_KEY=<your key>",
        ),
        ({"api_key_env": "not a name"}, {}, "api_key_env 'not a name' is not the name of"),
        (
            {"max_tokens_field": "max_output"},
            {"OPENAI_API_KEY": "k"},
            "max_tokens_field 'max_output'",
        ),
        ({"base_url": "localhost:11434"}, {"OPENAI_API_KEY": "k"}, "is not an http:// or https://"),
    ],
)
def test_bad_settings_are_one_line_usage_errors(
    chat: ChatServer,
    monkeypatch: pytest.MonkeyPatch,
    table: dict[str, str],
    env: dict[str, str],
    expected: str,
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(UsageError) as caught:
        build_model("openai:m", openai_config(chat, openai=table))
    assert expected in caught.value.message and "\n" not in caught.value.message
    assert chat.requests == []


def test_a_bad_model_name_is_a_usage_error(openai_env: ChatServer) -> None:
    with pytest.raises(UsageError, match="is not a model name"):
        build_model("openai:two words", openai_config(openai_env))
    with pytest.raises(UsageError, match="openai:<model>"):
        get_model("openai:", openai_config(openai_env))


def test_without_the_openai_package_the_error_says_what_to_install(
    openai_env: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # `import openai` fails as if absent
    monkeypatch.delitem(sys.modules, "orchestrator.models.openai_adapter")
    with pytest.raises(UsageError) as caught:
        build_model("openai:gpt-test-1", openai_config(openai_env))
    assert caught.value.message == (
        "openai:gpt-test-1 needs the openai package: pip install 'orch[openai]'"
    )


def test_get_model_wraps_it_and_falls_back_to_another_openai_model(
    openai_env: ChatServer,
) -> None:
    from chat_server import Error

    openai_env.on_chat(
        Error(404, "The model `gpt-gone` does not exist", code="model_not_found"),
        Reply(completion("from the fallback", model="gpt-test-small")),
    )
    config = openai_config(openai_env, fallback_model="openai:gpt-test-small")
    model = get_model("openai:gpt-gone", config)
    reply = model.complete(request())
    assert reply.text == "from the fallback"
    assert model.last_call.fallback_from == "openai:gpt-gone"
    assert model.name == "openai:gpt-test-small"
    assert [r.body["model"] for r in openai_env.chat_requests] == ["gpt-gone", "gpt-test-small"]


def _server_examples() -> list[str]:
    text = (Path(__file__).parents[2] / "docs" / "models.md").read_text(encoding="utf-8")
    section = text.split("## OpenAI-compatible servers", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```toml\n(.*?)```", section, re.DOTALL)


def test_every_server_example_in_the_docs_builds_its_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = _server_examples()
    assert len(examples) == 5  # OpenAI, Ollama, vLLM, LM Studio, llama.cpp
    urls = []
    for n, example in enumerate(examples):
        root = tmp_path / f"example{n}"
        root.mkdir()
        (root / "orch.toml").write_text(example, encoding="utf-8")
        config = load_config(root)
        monkeypatch.setenv(config.models.openai.api_key_env, "unused")
        model = build_model(config.model, config)
        assert isinstance(model, OpenAIModel)
        urls.append(model.base_url)
    assert urls == [
        "https://api.openai.com/v1",
        "http://localhost:11434/v1",
        "http://localhost:8000/v1",
        "http://localhost:1234/v1",
        "http://localhost:8080/v1",
    ]


def test_requests_are_recorded_as_sent_with_the_volatile_part_last(
    make_openai: Callable[..., OpenAIModel],
    openai_env: ChatServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ORCH_RECORD_REQUESTS", str(tmp_path / "requests"))
    openai_env.on_chat(Reply(completion("ok")))
    make_openai(streaming=False).complete(request(volatile="Your task list: [ ] 1. Add it"))
    (sent,) = openai_env.chat_requests
    (path,) = (tmp_path / "requests").iterdir()
    data = json.loads(path.read_text())
    assert path.name == "0001-executor.json" and data["provider"] == "openai"
    assert data["params"]["messages"] == sent.body["messages"]
    assert sent.body["messages"][-1]["content"].endswith("Your task list: [ ] 1. Add it")
