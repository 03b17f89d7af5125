"""Turns rendered as plain text for the compactor and folding calls, and prompt loading."""

from __future__ import annotations

import json
from collections.abc import Iterable

from orchestrator.messages import Message, TextBlock, ToolCall, ToolResult
from orchestrator.prompts import prompt_text

RESULT_CHARS = 1500  # how much of one tool result the summariser sees
TEXT_CHARS = 4000  # how much of one text block


def prompt(name: str) -> str:
    """The text of `orchestrator/prompts/<name>.md`, its shared rules included."""
    return prompt_text(name)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters in the transcript]"


def render_turns(turns: Iterable[tuple[int, Message]]) -> str:
    """`[turn 12 · assistant]` headed blocks: text, tool calls with their input, results."""
    names: dict[str, str] = {}
    out: list[str] = []
    for turn, message in turns:
        for block in message.content:
            if isinstance(block, TextBlock):
                if block.text.strip():
                    out.append(f"[turn {turn} · {message.role}]\n{_cut(block.text, TEXT_CHARS)}")
            elif isinstance(block, ToolCall):
                names[block.id] = block.name
                args = json.dumps(block.input, ensure_ascii=False)
                out.append(
                    f"[turn {turn} · assistant calls {block.name}]\n{_cut(args, TEXT_CHARS)}"
                )
            elif isinstance(block, ToolResult):
                tool = names.get(block.tool_use_id, "tool")
                status = " (error)" if block.is_error else ""
                out.append(
                    f"[turn {turn} · {tool} result{status}]\n{_cut(block.content, RESULT_CHARS)}"
                )
    return "\n\n".join(out)
