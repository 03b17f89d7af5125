"""The Anthropic adapter against the local Messages API server, through the real SDK:
tool use over several turns, streaming and not, caching, server-side context features,
token counting, the memory tool, usage in the event log."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError

from orchestrator.context.compaction import summary_turn
from orchestrator.events.log import EventLog
from orchestrator.messages import (
    Message,
    Request,
    SystemPart,
    TextBlock,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from orchestrator.models import get_model
from orchestrator.models.anthropic_adapter import AnthropicModel
from orchestrator.models.logging import LoggedModel
from orchestrator.models.memory_tool import MemoryToolHandler
from orchestrator.models.messages_server import (
    COUNT_TOKENS,
    Count,
    Error,
    MessagesServer,
    Reply,
    compaction,
    message,
    text,
    tool_use,
)
from orchestrator.store.layout import Layout
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.tokens import estimate_request

MakeModel = Callable[..., AnthropicModel]
TOOL_ROUND = [
    Message("assistant", [ToolCall("toolu_1", "read_file", {"path": "app.py"})]),
    Message("user", [ToolResult("toolu_1", "def handler():\n    return 1\n")]),
]
TOOL_ROUND_2 = [
    Message("assistant", [ToolCall("toolu_2", "read_file", {"path": "b.py"})]),
    Message("user", [ToolResult("toolu_2", "x = 1\n")]),
]

READ_FILE = ToolSpec(
    "read_file",
    "Read a file of the repository.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
MEMORY_FILE = """---
description: How to run the test suite
type: reference
subject: test command
reason: Every phase gate runs it
citations:
  - path: pyproject.toml
---
The test command is `pytest -q`, run from the repository root.
"""


def base_request(**changes: Any) -> Request:
    values: dict[str, Any] = {
        "system": [
            SystemPart("You are the executor.", label="base"),
            SystemPart("# Memory index\n- test-command", cache=True, label="memory-index"),
            SystemPart("Phase 1: add a flag.", label="phase-card"),
        ],
        "messages": [Message.user("Find the test command and remember it.")],
        "tools": [READ_FILE],
        "max_tokens": 1024,
        "purpose": "executor",
        "phase": 1,
    }
    values.update(changes)
    return Request(**values)


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "json"])
def test_a_multi_turn_tool_use_exchange_with_the_memory_tool(
    make_model: MakeModel, server: MessagesServer, layout: Layout, streaming: bool
) -> None:
    server.on_messages(
        Reply(message(text("Reading it."), tool_use("read_file", {"path": "pyproject.toml"}))),
        Reply(
            message(
                tool_use(
                    "memory",
                    {
                        "command": "create",
                        "path": "/memories/test-command.md",
                        "file_text": MEMORY_FILE,
                    },
                )
            )
        ),
        Reply(message(text("Saved: the tests run with pytest -q."), output_tokens=11)),
    )
    model = make_model("claude-sonnet-4-6", streaming=streaming)
    memory = model.memory_tool(MemoryToolHandler(layout))
    request = base_request(memory_tool=True)
    messages = list(request.messages)
    seen: list[str] = []
    for _ in range(3):
        reply = model.complete(base_request(memory_tool=True, messages=messages))
        messages.append(reply.message())
        if not reply.tool_calls:
            break
        results = []
        for call in reply.tool_calls:
            seen.append(call.name)
            if call.name == "memory":
                output = memory.call(call.input)
            else:
                output = (layout.root / call.input["path"]).read_text(encoding="utf-8")
            results.append(ToolResult(call.id, str(output)))
        messages.append(Message("user", list(results)))

    assert seen == ["read_file", "memory"]
    assert reply.text == "Saved: the tests run with pytest -q."
    assert reply.stop_reason == "end_turn"
    assert reply.model == "anthropic:claude-sonnet-4-5-20250929"
    # the memory went through the store: validated, indexed
    assert RepoMemoryStore(layout).get("test-command").type == "reference"
    assert "[test-command]" in layout.memory_index.read_text(encoding="utf-8")

    bodies = [r.body for r in server.message_requests]
    assert len(bodies) == 3
    assert all(b.get("stream", False) is streaming for b in bodies)
    assert all(b["model"] == "claude-sonnet-4-6" and b["max_tokens"] == 1024 for b in bodies)
    first_call = bodies[1]["messages"][1]["content"][1]
    assert first_call["type"] == "tool_use" and first_call["name"] == "read_file"
    result = bodies[1]["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == first_call["id"]
    assert result["content"].startswith("[project]")
    memory_result = bodies[2]["messages"][4]["content"][0]
    assert "Created memory test-command" in memory_result["content"]
    for r in server.message_requests:
        assert r.headers["authorization"] == "Bearer sk-ant-test-key"
        assert "context-management-2025-06-27" in r.betas
        assert r.body["tools"][-1]["type"] == "memory_20250818"
        assert r.headers["x-stainless-retry-count"] == "0"


def test_the_memory_tool_refuses_through_the_sdk_tool_error(
    make_model: MakeModel, layout: Layout
) -> None:
    tool = make_model().memory_tool(MemoryToolHandler(layout))
    with pytest.raises(ToolError, match="refused"):
        tool.call({"command": "view", "path": "/memories/../../etc/passwd"})
    created = tool.call(
        {"command": "create", "path": "/memories/test-command.md", "file_text": MEMORY_FILE}
    )
    assert "Created memory test-command" in str(created)
    path = layout.repo_memories / "test-command.md"
    before = path.read_bytes()
    with pytest.raises(ToolError, match="superseded, not edited"):
        tool.call(
            {
                "command": "str_replace",
                "path": "/memories/test-command.md",
                "old_str": "q",
                "new_str": "x",
            }
        )
    assert path.read_bytes() == before
    assert "test-command.md" in str(tool.call({"command": "view", "path": "/memories"}))
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}


BIG = "Work in small verified steps; read before you write.\n" * 120  # ~1,800 tokens


def _marked(body: dict[str, Any]) -> list[str]:
    """Where the breakpoints are: tools[i], system[i], messages[i][j]."""
    out = [f"tools[{i}]" for i, t in enumerate(body.get("tools", [])) if "cache_control" in t]
    out += [f"system[{i}]" for i, p in enumerate(body.get("system", [])) if "cache_control" in p]
    for i, m in enumerate(body["messages"]):
        out += [f"messages[{i}][{j}]" for j, b in enumerate(m["content"]) if "cache_control" in b]
    return out


def test_prompt_caching_marks_the_conversation_the_system_prompt_and_the_tools(
    make_model: MakeModel, server: MessagesServer
) -> None:
    server.on_messages(Reply(message(text("ok"), cache_read=900, cache_write=300)))
    request = base_request(
        system=[
            SystemPart(BIG, label="base"),
            SystemPart("# Memory index\n- test-command", cache=True, label="memory-index"),
            SystemPart("Phase 1: add a flag.", label="phase-card"),
        ],
        volatile="Your task list (tasks.json):\n[ ] 1. Add the flag",
    )
    reply = make_model("claude-sonnet-4-6").complete(request)
    body = server.message_requests[0].body
    # the newest user turn (the executor's conversation goes on), the end of the system
    # prompt, its stable part, then the base prompt (the tools alone are under the minimum
    # cacheable length); the task list after them all
    assert _marked(body) == ["system[0]", "system[1]", "system[2]", "messages[0][0]"]
    assert body["messages"][0]["content"][-1] == {
        "type": "text",
        "text": "Your task list (tasks.json):\n[ ] 1. Add the flag",
    }
    assert reply.usage.to_dict() == {
        "input_tokens": 12,
        "output_tokens": 7,
        "cache_read_tokens": 900,
        "cache_write_tokens": 300,
    }
    assert server.message_requests[0].betas == []  # caching needs no beta header


def test_no_breakpoint_below_the_minimum_cacheable_length(
    make_model: MakeModel, server: MessagesServer
) -> None:
    server.on_messages(Reply(message(text("ok"))))
    make_model("claude-sonnet-4-6").complete(base_request())  # a few dozen tokens in all
    assert _marked(server.message_requests[0].body) == []


def test_caching_off_sends_no_breakpoints(make_model: MakeModel, server: MessagesServer) -> None:
    server.on_messages(Reply(message(text("ok"))))
    request = base_request(memory_tool=True, system=[SystemPart(BIG, cache=True)])
    make_model("claude-sonnet-4-6", prompt_caching=False).complete(request)
    assert _marked(server.message_requests[0].body) == []


def test_at_most_four_breakpoints_and_the_moving_one_is_read_next_turn(
    make_model: MakeModel, server: MessagesServer
) -> None:
    server.on_messages(Reply(message(text("ok"))), Reply(message(text("done"))))
    system = [SystemPart(f"part {n}\n{BIG}", cache=True) for n in range(5)]
    model = make_model("claude-sonnet-4-6")
    first = base_request(system=system, messages=[Message.user("Read app.py."), *TOOL_ROUND])
    model.complete(first)
    body = server.message_requests[0].body
    # the newest user turn, the one before it, the end of the system prompt, the part
    # before that
    assert _marked(body) == ["system[3]", "system[4]", "messages[0][0]", "messages[2][0]"]
    # the next turn: the previous moving breakpoint is marked again (read), a new one added
    second = replace(first, messages=[*first.messages, *TOOL_ROUND_2])
    model.complete(second)
    marks = _marked(server.message_requests[1].body)
    assert len(marks) == 4 and "messages[2][0]" in marks and "messages[4][0]" in marks


def test_server_context_editing_and_compaction_when_enabled(
    make_model: MakeModel, server: MessagesServer
) -> None:
    server.on_messages(Reply(message(text("ok"))))
    model = make_model(
        "claude-opus-4-6",
        context={
            "server_context_editing": True,
            "server_compaction": True,
            "mask_keep_rounds": 4,
            "compact_threshold_tokens": 80_000,
        },
    )
    model.complete(base_request())
    sent = server.message_requests[0]
    assert sent.betas == ["context-management-2025-06-27", "compact-2026-01-12"]
    assert sent.body["context_management"] == {
        "edits": [
            {
                "type": "clear_tool_uses_20250919",
                "keep": {"type": "tool_uses", "value": 4},
                "exclude_tools": ["memory"],
            },
            {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 80_000}},
        ]
    }


def test_server_features_are_left_out_for_models_without_them(
    make_model: MakeModel, server: MessagesServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.on_messages(Reply(message(text("ok"))), Reply(message(text("ok"))))
    model = make_model(
        "claude-sonnet-4-5-20250929",
        context={"server_context_editing": True, "server_compaction": True},
    )
    with pytest.warns(DeprecationWarning):
        model.complete(base_request())
        model.complete(base_request())
    sent = server.message_requests[0]
    assert sent.betas == ["context-management-2025-06-27"]
    assert [e["type"] for e in sent.body["context_management"]["edits"]] == [
        "clear_tool_uses_20250919"
    ]
    assert model.skipped == {"compaction"}
    assert sum("does not support server-side compaction" in r.message for r in caplog.records) == 1


def test_features_off_by_default(make_model: MakeModel, server: MessagesServer) -> None:
    server.on_messages(Reply(message(text("ok"))))
    make_model("claude-opus-4-6").complete(base_request())
    sent = server.message_requests[0]
    assert "context_management" not in sent.body
    assert "anthropic-beta" not in sent.headers


def test_a_compaction_block_is_sent_back_in_place(
    make_model: MakeModel, server: MessagesServer
) -> None:
    server.on_messages(
        Reply(
            message(
                compaction("Summary: the user wants the test command."),
                tool_use("read_file", {"path": "pyproject.toml"}, id="toolu_after"),
                iterations=[
                    {
                        "type": "compaction",
                        "input_tokens": 5000,
                        "output_tokens": 300,
                        "cache_read_input_tokens": 0,
                        "cache_creation_input_tokens": 0,
                    },
                    {"type": "message", "input_tokens": 12, "output_tokens": 7},
                ],
            )
        ),
        Reply(message(text("done"))),
    )
    model = make_model("claude-sonnet-4-6", context={"server_compaction": True})
    first = base_request()
    reply = model.complete(first)
    assert [b.type for b in reply.content] == ["tool_use"]  # the block stays in the adapter
    assert reply.usage.input_tokens == 5012 and reply.usage.output_tokens == 307
    follow = base_request(
        messages=[
            *first.messages,
            reply.message(),
            Message("user", [ToolResult("toolu_after", "[project]")]),
        ]
    )
    model.complete(follow)
    resent = server.message_requests[1].body["messages"][1]
    assert resent["role"] == "assistant"
    assert resent["content"][0] == {
        "type": "compaction",
        "content": "Summary: the user wants the test command.",
        "encrypted_content": "opaque-blob",
    }
    assert resent["content"][1]["id"] == "toolu_after"


def test_a_compaction_block_is_not_sent_into_another_conversation(
    make_model: MakeModel, server: MessagesServer
) -> None:
    server.on_messages(Reply(message(compaction("S"), text("a"))), Reply(message(text("b"))))
    model = make_model("claude-sonnet-4-6", context={"server_compaction": True})
    reply = model.complete(base_request())
    other = base_request(
        messages=[Message.user("a different start"), reply.message(), Message.user("go on")]
    )
    model.complete(other)
    assert all(
        block["type"] != "compaction"
        for m in server.message_requests[1].body["messages"]
        for block in m["content"]
    )


def test_temperature_is_sent_when_set(make_model: MakeModel, server: MessagesServer) -> None:
    server.on_messages(Reply(message(text("ok"))), Reply(message(text("ok"))))
    model = make_model("claude-sonnet-4-6")
    model.complete(base_request(temperature=0.2))
    model.complete(base_request())
    assert server.message_requests[0].body["temperature"] == 0.2
    assert "temperature" not in server.message_requests[1].body


def test_count_tokens_uses_the_endpoint(make_model: MakeModel, server: MessagesServer) -> None:
    server.on_count_tokens(Count(4321))
    model = make_model("claude-sonnet-4-6")
    assert model.count_tokens(base_request(memory_tool=True)) == 4321
    [sent] = [r for r in server.requests if r.path == COUNT_TOKENS]
    assert "token-counting-2024-11-01" in sent.betas
    assert "max_tokens" not in sent.body
    assert sent.body["tools"][-1]["type"] == "memory_20250818"


def test_count_tokens_falls_back_to_the_local_estimate(
    make_model: MakeModel, server: MessagesServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.on_count_tokens(Error(500, "api_error", "boom"))
    model = make_model("claude-sonnet-4-6")
    request = base_request()
    assert model.count_tokens(request) == estimate_request(request)
    # offline: nothing listens on the port any more; the estimate answers, then no more tries
    server.stop()
    assert model.count_tokens(request) == estimate_request(request)
    assert model.count_tokens(request) == estimate_request(request)
    assert len([r for r in server.requests if r.path == COUNT_TOKENS]) == 1


def test_usage_and_cost_reach_the_event_log(api_env: MessagesServer, tmp_path: Path) -> None:
    api_env.on_messages(
        Reply(
            message(
                text("ok"),
                input_tokens=2000,
                output_tokens=400,
                cache_read=10_000,
                cache_write=1000,
            )
        )
    )
    log = EventLog(tmp_path / "log.ndjson", "demo-task")
    model = LoggedModel(get_model("anthropic:claude-sonnet-4-6"), log, agent="Executor")
    model.complete(base_request())
    [event] = log.read(check=True).events
    assert event.payload["model"] == "anthropic:claude-sonnet-4-5-20250929"
    assert event.payload["usage"] == {
        "input_tokens": 2000,
        "output_tokens": 400,
        "cache_read_tokens": 10_000,
        "cache_write_tokens": 1000,
    }
    # (2000*3 + 1000*3*1.25 + 10000*3*0.1 + 400*15) / 1e6
    assert event.payload["cost_usd"] == pytest.approx(0.01875)
    assert event.payload["attempts"] == 1
    assert event.payload["stop_reason"] == "end_turn"
    assert event.phase == 1


def test_text_blocks_round_trip_in_the_next_request(
    make_model: MakeModel, server: MessagesServer
) -> None:
    server.on_messages(Reply(message(text("first"), text(" second"))), Reply(message(text("ok"))))
    model = make_model("claude-sonnet-4-6")
    reply = model.complete(base_request())
    assert reply.content == [TextBlock("first"), TextBlock(" second")]
    model.complete(base_request(messages=[Message.user("a"), reply.message(), Message.user("b")]))
    assert server.message_requests[1].body["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "first"}, {"type": "text", "text": " second"}],
    }


def _unmarked(body: dict[str, Any]) -> str:
    return json.dumps(body).replace(', "cache_control": {"type": "ephemeral"}', "")


def test_a_summary_of_the_previous_request_reads_its_moving_breakpoint_in_a_new_process(
    make_model: MakeModel, server: MessagesServer
) -> None:
    server.on_messages(*[Reply(message(text("ok"))) for _ in range(3)])
    executor = base_request(
        system=[SystemPart(BIG, cache=True, label="base")],
        messages=[Message.user("Read app.py."), *TOOL_ROUND],
        volatile="Your task list (tasks.json):\n[ ] 1. Add the flag",
    )
    model = make_model("claude-sonnet-4-6")
    model.complete(executor)
    # the next turn compacts: the executor's request again (its newest exchange left out),
    # the task list and the ask after its last tool result
    asked = summary_turn(
        executor.messages, 1, first_turn=0, last_turn=0, volatile=executor.volatile
    )
    compactor = replace(executor, messages=asked, purpose="compactor", volatile="", max_tokens=2048)
    model.complete(compactor)
    make_model("claude-sonnet-4-6").complete(compactor)  # a new process remembers no writes
    sent, *compactions = (r.body for r in server.message_requests)
    assert "messages[2][0]" in _marked(sent)  # the executor's moving breakpoint
    for body in compactions:
        assert _marked(body)[-1] == "messages[2][0]"  # read exactly there, nothing written
        assert _unmarked({k: body[k] for k in ("tools", "system")}) == _unmarked(
            {k: sent[k] for k in ("tools", "system")}
        )
        # byte-identical up to the executor's breakpoint (its task list came after it)
        assert _unmarked(body["messages"][:2]) == _unmarked(sent["messages"][:2])
        assert _unmarked(body["messages"][2]["content"][0]) == _unmarked(
            sent["messages"][2]["content"][0]
        )
        assert [b["type"] for b in body["messages"][2]["content"]] == [
            "tool_result",
            "text",
            "text",
        ]
        assert body["messages"][2]["content"][-1]["text"].startswith("Conversation to summarise")
