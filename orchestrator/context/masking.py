"""Tier 1: mask old tool results (pure functions, no I/O).

A tool round is an assistant message that calls at least one tool; its results are in the
user message right after it. Results of every round but the last K are replaced by a short
placeholder that names the tool, what it was called on, how long the result was and where
the raw turn is saved. The blocks themselves stay where they are (same tool_use_id, same
order, same is_error flag), so every tool_use keeps its tool_result next to it as the API
requires.

Masking goes in batches (`batch`): nothing is masked until `batch` rounds wait for it,
then all of them at once. Between two batches the conversation's older turns stay
byte-identical, so a request can read them from the prompt cache (docs/models.md).

A placeholder is recognisable (`MASK_PREFIX`) and carries the turn it replaced; masking is
idempotent, and the caller can read back how far the raw turns were saved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from orchestrator.messages import MASK_PREFIX, Block, Message, ToolCall, ToolResult

_MASKED = re.compile(
    re.escape(MASK_PREFIX)
    + r" .*; raw turn (?P<turn>\d+)(?: in (?P<file>transcripts/\d+\.jsonl))?$",
    re.DOTALL,
)
MAX_ARG_CHARS = 60


def is_masked(result: ToolResult) -> bool:
    return result.content.startswith(MASK_PREFIX)


def masked_turn(result: ToolResult) -> int | None:
    """The turn a placeholder stands for (None: not a placeholder)."""
    found = _MASKED.match(result.content)
    return int(found["turn"]) if found else None


def describe_call(call: ToolCall | None) -> str:
    """`read_file(path="src/app.py")`: the tool and what it was called on, kept short."""
    if call is None:
        return "tool(?)"
    args = []
    for key, value in list(call.input.items())[:2]:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        text = " ".join(str(text).split())
        if len(text) > MAX_ARG_CHARS:
            text = text[: MAX_ARG_CHARS - 3] + "..."
        args.append(f"{key}={json.dumps(text, ensure_ascii=False)}")
    more = ", ..." if len(call.input) > 2 else ""
    return f"{call.name}({', '.join(args)}{more})"


def placeholder(call: ToolCall | None, result: ToolResult, turn: int, where: str | None) -> str:
    status = "error, " if result.is_error else ""
    saved = f"raw turn {turn}" + (f" in {where}" if where else "")
    return f"{MASK_PREFIX} {describe_call(call)}: {status}{len(result.content)} chars; {saved}"


def tool_round_of(messages: Sequence[Message]) -> list[int]:
    """For each message, how many tool rounds (assistant messages with tool calls) precede it."""
    rounds, seen = [], 0
    for message in messages:
        rounds.append(seen)
        if message.role == "assistant" and message.tool_calls:
            seen += 1
    return rounds


def rounds_to_mask(messages: Sequence[Message], keep_rounds: int, batch: int = 1) -> list[int]:
    """Positions of user messages whose results belong to rounds older than the last K.

    Only messages that still hold a result worth masking (not yet a placeholder) are listed,
    and only once there are at least `batch` of them (none before). `keep_rounds` below 1
    counts as 1: the newest results are the ones the model has not read yet.
    """
    keep = max(1, keep_rounds)
    before = tool_round_of(messages)
    total = sum(1 for m in messages if m.role == "assistant" and m.tool_calls)
    cutoff = total - keep  # results answering rounds numbered below this are masked
    found = []
    for pos, message in enumerate(messages):
        if message.role != "user" or not message.tool_results:
            continue
        answered = before[pos] - 1  # the round this message answers
        if answered < cutoff and any(_worth_masking(r) for r in message.tool_results):
            found.append(pos)
    return found if len(found) >= max(1, batch) else []


def _worth_masking(result: ToolResult) -> bool:
    # A placeholder is about 120 characters: shorter results are left as they are.
    return not is_masked(result) and len(result.content) > 160


def mask_messages(
    messages: Sequence[Message],
    keep_rounds: int,
    turn_of: Callable[[int], int],
    where: Callable[[int], str | None] = lambda pos: None,
    batch: int = 1,
) -> list[Message]:
    """A copy of `messages` with results older than the last `keep_rounds` rounds masked.

    `turn_of(pos)` is the absolute turn number of the message at `pos`; `where(pos)` the
    transcript file that holds its raw form (None: not known).
    """
    targets = set(rounds_to_mask(messages, keep_rounds, batch))
    if not targets:
        return list(messages)
    calls: dict[str, ToolCall] = {
        c.id: c for m in messages if m.role == "assistant" for c in m.tool_calls
    }
    out = []
    for pos, message in enumerate(messages):
        if pos not in targets:
            out.append(message)
            continue
        blocks: list[Block] = []
        for block in message.content:
            if isinstance(block, ToolResult) and _worth_masking(block):
                text = placeholder(calls.get(block.tool_use_id), block, turn_of(pos), where(pos))
                blocks.append(ToolResult(block.tool_use_id, text, block.is_error))
            else:
                blocks.append(block)
        out.append(Message(message.role, blocks))
    return out


def fingerprint(message: Message) -> str:
    """What identifies a message whether or not its tool results are masked."""
    shape: list[Any] = [message.role]
    for block in message.content:
        if isinstance(block, ToolResult):
            shape.append(["tool_result", block.tool_use_id])
        else:
            shape.append(block.to_dict())
    return json.dumps(shape, sort_keys=True, ensure_ascii=False)
