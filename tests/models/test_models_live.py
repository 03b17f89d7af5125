"""Opt-in: one small tool-use exchange against the real Anthropic API.

Runs only when asked for and with a key: `ANTHROPIC_API_KEY=... pytest -m live`. The model
is ORCH_LIVE_MODEL or claude-haiku-4-5; the exchange costs a fraction of a cent.
"""

from __future__ import annotations

import os

import pytest

from orchestrator.config import Config
from orchestrator.messages import Message, Request, SystemPart, ToolResult, ToolSpec
from orchestrator.models.anthropic_adapter import AnthropicModel
from orchestrator.models.resilient import ResilientModel

LIVE_MODEL = os.environ.get("ORCH_LIVE_MODEL", "claude-haiku-4-5")
ADD = ToolSpec(
    "add",
    "Add two integers and return their sum.",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


@pytest.mark.live
def test_one_tool_use_exchange_with_the_real_api(live_api_key: str) -> None:
    model = ResilientModel(
        AnthropicModel(LIVE_MODEL, Config(api_timeout=60.0), api_key=live_api_key),
        max_retries=2,
    )
    system = [
        SystemPart("Use the add tool for arithmetic. Answer with the number only.", cache=True)
    ]
    messages = [Message.user("What is 1234 + 4321?")]
    first = model.complete(Request(system, messages, tools=[ADD], max_tokens=300))
    assert first.stop_reason == "tool_use"
    [call] = first.tool_calls
    assert call.name == "add" and {call.input["a"], call.input["b"]} == {1234, 4321}
    assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0
    messages += [first.message(), Message("user", [ToolResult(call.id, "5555")])]
    final = model.complete(Request(system, messages, tools=[ADD], max_tokens=300))
    assert final.stop_reason == "end_turn"
    assert "5555" in final.text.replace(",", "")
    assert model.count_tokens(Request(system, messages, tools=[ADD])) > 0
