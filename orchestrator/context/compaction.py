"""Tier 2: where to cut a conversation, the compacted head message, and summary checks.

Pure functions; the I/O (transcripts, the model call, the event) is in `manager.py`.

After a compaction the conversation is one user message followed by the kept tail:

    user:  <context-summary compaction="2" turns="0-119" transcript="transcripts/2.jsonl">
           ...the compactor's summary...
           </context-summary>
           <repository-rules>...verbatim...</repository-rules>
           <phase-card>...verbatim...</phase-card>
           <last-instruction>...verbatim...</last-instruction>
    assistant: ... (the kept tail starts with an assistant message)

`turns` is the range of raw turns (message positions in the phase's conversation) the
summary stands for, so a later compaction knows where the tail's numbering starts.

The request that asks for the summary is the executor's own request of that turn (its
system parts, tools and messages as the previous executor request sent them) with one more
user turn, `summary_turn`, when the compactor is the executor's model: the conversation is
then read from the prompt cache. With another compactor model (`compactor_model`), or
without the executor's request (`orch compact`), the turns go to the compactor as text
under its own system prompt (`COMPACT_HEADER`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator.context.render import prompt
from orchestrator.messages import Block, Message, Reply, SystemPart, TextBlock, ToolSpec
from orchestrator.tokens import estimate_message

COMPACT_HEADER = "Conversation to summarise"

SECTIONS = (
    "Task overview",
    "Current state",
    "Important discoveries",
    "Next steps",
    "Context to preserve",
)
_HEAD = re.compile(
    r'<context-summary compaction="(?P<n>\d+)" turns="(?P<first>\d+)-(?P<last>\d+)"'
    r' transcript="(?P<file>[^"]*)">\n(?P<summary>.*?)\n</context-summary>',
    re.DOTALL,
)


@dataclass(frozen=True)
class Head:
    """What a compacted conversation's first message says about the compactions so far."""

    compactions: int
    first_turn: int
    last_turn: int
    transcript: str
    summary: str


@dataclass(frozen=True)
class ExecutorRequest:
    """The executor's request of this turn but its messages: the model it goes to, its
    system parts, its tools and `Request.volatile`. A compaction on that same model sends
    it again with `summary_turn` after the messages, so all but that turn is a cache read."""

    model: str
    system: tuple[SystemPart, ...]
    tools: tuple[ToolSpec, ...]
    volatile: str = ""


def summary_turn(
    messages: Sequence[Message], cut: int, *, first_turn: int, last_turn: int, volatile: str = ""
) -> list[Message]:
    """`messages` followed by the turn that asks for a summary of those before `cut`.

    The turn holds what the executor's request adds after its cache breakpoints
    (`volatile`: the task list, the notes), then the ask and the compactor's instructions;
    it joins the newest user turn (after its tool results) or starts a new one.
    """
    kept = sum(1 for m in messages[cut:] if m.role == "assistant")
    ask = (
        f"{COMPACT_HEADER}: {before_last(kept)} (raw turns {first_turn}-{last_turn}); "
        f"the turns after them and their tool results stay word for word after the "
        f"summary.\n\n"
        f"{prompt('compaction_turn').strip()}\n\n<compactor-instructions>\n{prompt('compactor').strip()}"
        f"\n</compactor-instructions>"
    )
    return ask_turn(messages, ask, volatile)


def before_last(kept: int) -> str:
    """Which turns of the conversation an ask is about: all but the last `kept`."""
    return "every turn of this conversation" + (f" before your last {kept}" if kept else "")


def previous_request(messages: Sequence[Message]) -> list[Message]:
    """The conversation as the executor's previous request held it: `messages` without
    its newest exchange (the reply to that request and the tool results after it).

    A summary or a fold of this turn asks about older turns only, so it sends that
    conversation, whose cached prefix the previous request wrote, and not the newest
    exchange, which no request has written yet: it goes first to the executor's request
    that follows, after the summary. Without such an exchange, `messages` as they are.
    """
    if len(messages) > 2 and messages[-2].role == "assistant" and messages[-1].role == "user":
        return list(messages[:-2])
    return list(messages)


def ask_turn(messages: Sequence[Message], ask: str, volatile: str = "") -> list[Message]:
    """`messages` with one more user turn after them: `volatile` (what the executor's
    request adds after its cache breakpoints), then `ask`. It joins the newest user turn
    (after its tool results) or starts a new one, so all of `messages` stays the prefix
    the executor's request wrote to the cache."""
    blocks: list[Block] = [TextBlock(volatile)] if volatile else []
    blocks.append(TextBlock(ask))
    if messages and messages[-1].role == "user":
        return [*messages[:-1], Message("user", [*messages[-1].content, *blocks])]
    return [*messages, Message("user", blocks)]


def read_head(messages: Sequence[Message]) -> Head | None:
    """The compaction head at the start of `messages` (None: never compacted)."""
    if not messages or messages[0].role != "user":
        return None
    for block in messages[0].content:
        if isinstance(block, TextBlock):
            found = _HEAD.search(block.text)
            if found:
                return Head(
                    int(found["n"]),
                    int(found["first"]),
                    int(found["last"]),
                    found["file"],
                    found["summary"],
                )
    return None


def first_raw(messages: Sequence[Message]) -> tuple[int, int]:
    """(position of the first raw message, its turn number)."""
    head = read_head(messages)
    return (1, head.last_turn + 1) if head else (0, 0)


def choose_cut(
    messages: Sequence[Message], *, keep_turns: int, max_tail_tokens: int, min_head: int = 1
) -> int | None:
    """Position of the first kept message, or None when there is nothing to compact.

    The kept tail starts with an assistant message, so it follows the user message holding
    the summary and no tool_use is parted from its tool_result (a result sits in the user
    message right after its call, and the cut is never between those two). The tail keeps at
    least `keep_turns` messages, unless they hold more than `max_tail_tokens`: then it gives
    up its oldest exchanges until it fits (or only the last assistant turn is left). At
    least `min_head` raw messages must go.
    """
    start, _ = first_raw(messages)
    candidates = [
        pos for pos in range(start + min_head, len(messages)) if messages[pos].role == "assistant"
    ]
    if not candidates:
        return None
    fitting = [pos for pos in candidates if len(messages) - pos >= keep_turns]
    cut = fitting[-1] if fitting else candidates[0]
    tail_tokens = sum(estimate_message(m) for m in messages[cut:])
    if not fitting and tail_tokens <= max_tail_tokens:
        return None  # the conversation is no longer than the turns kept verbatim
    for later in candidates:
        if later <= cut:
            continue
        if tail_tokens <= max_tail_tokens:
            break
        tail_tokens -= sum(estimate_message(m) for m in messages[cut:later])
        cut = later
    return cut


def head_message(
    summary: str,
    *,
    compactions: int,
    first_turn: int,
    last_turn: int,
    transcript: str,
    rules: str,
    phase_card: str,
    last_instruction: str,
) -> Message:
    """The user message that replaces the compacted turns; the three parts verbatim."""
    blocks: list[Block] = [
        TextBlock(
            f"Earlier turns of this phase were compacted; the summary below stands for them "
            f"(raw turns {first_turn}-{last_turn} are saved in the task's transcripts).\n\n"
            f'<context-summary compaction="{compactions}" turns="{first_turn}-{last_turn}"'
            f' transcript="{transcript}">\n{summary.strip()}\n</context-summary>'
        )
    ]
    for tag, text in (
        ("repository-rules", rules),
        ("phase-card", phase_card),
        ("last-instruction", last_instruction),
    ):
        if text:
            blocks.append(TextBlock(f"<{tag}>\n{text}\n</{tag}>"))
    return Message("user", blocks)


def reinjected(messages: Sequence[Message]) -> dict[str, str]:
    """The verbatim parts a compaction head carries: {"repository-rules": ..., ...}."""
    found: dict[str, str] = {}
    if not read_head(messages):
        return found
    for block in messages[0].content:
        if not isinstance(block, TextBlock):
            continue
        for tag in ("repository-rules", "phase-card", "last-instruction"):
            opening, closing = f"<{tag}>\n", f"\n</{tag}>"
            if block.text.startswith(opening) and block.text.endswith(closing):
                found[tag] = block.text[len(opening) : -len(closing)]
    return found


def summary_problem(reply: Reply) -> str | None:
    """Why a compactor reply cannot replace the turns (None: it can)."""
    text = reply.text.strip()
    if not text:
        return "the compactor returned an empty summary"
    if reply.stop_reason == "max_tokens":
        return "the summary was cut off at max_tokens"
    lower = text.lower()
    missing = [s for s in SECTIONS if s.lower() not in lower]
    if missing:
        return f"the summary lacks the sections {', '.join(missing)}"
    return None
