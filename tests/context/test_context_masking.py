"""Tier 1: old tool results become placeholders; tool_use/tool_result pairs stay intact."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.context.compaction import choose_cut, head_message, read_head
from orchestrator.context.masking import (
    MASK_PREFIX,
    is_masked,
    mask_messages,
    masked_turn,
    rounds_to_mask,
)
from orchestrator.messages import Block, Message, TextBlock, ToolCall, ToolResult


def pairs_problems(messages: Sequence[Message]) -> list[str]:
    """Every way `messages` breaks the Messages API's pairing rule (empty: none)."""
    problems = []
    for pos, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls and pos + 1 < len(messages):
            answered = {r.tool_use_id for r in messages[pos + 1].tool_results}
            for call in message.tool_calls:
                if call.id not in answered:
                    problems.append(f"tool_use {call.id} at {pos} has no result right after it")
        if message.role == "user" and message.tool_results:
            before = messages[pos - 1] if pos > 0 else None
            called = (
                {c.id for c in before.tool_calls}
                if before and before.role == "assistant"
                else set()
            )
            for result in message.tool_results:
                if result.tool_use_id not in called:
                    problems.append(
                        f"tool_result {result.tool_use_id} at {pos} has no call right before it"
                    )
    return problems


# -- random conversations -------------------------------------------------------------
@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """Valid conversations: user first, alternating roles, every call answered next."""
    messages: list[Message] = [Message.user(draw(st.text(min_size=1, max_size=20)))]
    rounds = draw(st.integers(0, 14))
    counter = 0
    for _ in range(rounds):
        n_calls = draw(st.integers(0, 3))
        calls = []
        for _ in range(n_calls):
            counter += 1
            calls.append(
                ToolCall(
                    f"toolu_{counter}",
                    draw(st.sampled_from(["read_file", "grep", "run_shell"])),
                    {"path": draw(st.text(min_size=0, max_size=80))},
                )
            )
        texts: list[Block] = [TextBlock("thinking")] if draw(st.booleans()) or not calls else []
        messages.append(Message("assistant", [*texts, *calls]))
        results: list[Block] = [
            ToolResult(
                call.id,
                draw(st.sampled_from(["ok", "x" * 50, "y" * 400, "z" * 3000])),
                draw(st.booleans()),
            )
            for call in draw(st.permutations(calls))
        ]
        if draw(st.booleans()) or not results:
            results.append(TextBlock("go on"))
        messages.append(Message("user", results))
    return messages


def _structure(messages: Sequence[Message]) -> list[tuple[str, list[tuple[str, str]]]]:
    out = []
    for m in messages:
        blocks = []
        for b in m.content:
            if isinstance(b, ToolResult):
                blocks.append(("tool_result", b.tool_use_id + str(b.is_error)))
            elif isinstance(b, ToolCall):
                blocks.append(("tool_use", b.id))
            else:
                blocks.append(("text", b.text))
        out.append((m.role, blocks))
    return out


def _mask(messages: Sequence[Message], keep: int) -> list[Message]:
    return mask_messages(
        messages, keep, turn_of=lambda pos: pos, where=lambda pos: "transcripts/1.jsonl"
    )


@settings(max_examples=150, deadline=None)
@given(conversations(), st.integers(0, 5))
def test_masking_keeps_every_pair_and_every_block_in_place(
    messages: list[Message], keep: int
) -> None:
    assert pairs_problems(messages) == []  # the generator makes valid conversations
    masked = _mask(messages, keep)
    assert pairs_problems(masked) == []
    assert _structure(masked) == _structure(messages)  # same blocks, ids, order, error flags
    assert _mask(masked, keep) == masked  # idempotent


@settings(max_examples=150, deadline=None)
@given(conversations(), st.integers(1, 5))
def test_masking_touches_only_results_older_than_the_last_k_rounds(
    messages: list[Message], keep: int
) -> None:
    masked = _mask(messages, keep)
    rounds = [pos for pos, m in enumerate(messages) if m.role == "assistant" and m.tool_calls]
    recent = set(rounds[-keep:])
    for pos, (old, new) in enumerate(zip(messages, masked, strict=True)):
        for a, b in zip(old.content, new.content, strict=True):
            if not isinstance(a, ToolResult):
                assert a == b
                continue
            assert isinstance(b, ToolResult)
            if pos - 1 in recent or len(a.content) <= 160:
                assert b == a, "a recent or short result was masked"
            else:
                assert is_masked(b) and masked_turn(b) == pos


@settings(max_examples=150, deadline=None)
@given(conversations(), st.integers(1, 12), st.integers(0, 4000))
def test_a_compaction_cut_never_parts_a_pair(messages: list[Message], keep: int, cap: int) -> None:
    cut = choose_cut(messages, keep_turns=keep, max_tail_tokens=cap)
    if cut is None:
        return
    assert messages[cut].role == "assistant"
    head = head_message(
        "summary",
        compactions=1,
        first_turn=0,
        last_turn=cut - 1,
        transcript="transcripts/1.jsonl",
        rules="r",
        phase_card="p",
        last_instruction="i",
    )
    compacted = [head, *messages[cut:]]
    assert pairs_problems(compacted) == []
    assert [m.role for m in compacted[:2]] == ["user", "assistant"]
    dropped_calls = {c.id for m in messages[:cut] for c in m.tool_calls}
    kept_results = {r.tool_use_id for m in compacted for r in m.tool_results}
    assert not dropped_calls & kept_results


def test_placeholder_names_the_tool_what_it_was_called_on_and_where_the_raw_turn_is() -> None:
    messages = [Message.user("go")]
    for i in range(4):
        messages.append(
            Message(
                "assistant",
                [ToolCall(f"t{i}", "run_shell", {"command": f"pytest -q tests/test_{i}.py"})],
            )
        )
        messages.append(Message("user", [ToolResult(f"t{i}", "F" * 500, is_error=i == 0)]))
    masked = mask_messages(
        messages, 3, turn_of=lambda pos: pos + 100, where=lambda pos: "transcripts/7.jsonl"
    )
    first = masked[2].tool_results[0]
    assert first.content == (
        f'{MASK_PREFIX} run_shell(command="pytest -q tests/test_0.py"): error, 500 chars; '
        "raw turn 102 in transcripts/7.jsonl"
    )
    assert first.is_error and first.tool_use_id == "t0"
    assert masked_turn(first) == 102
    assert [m.tool_results[0].content for m in masked[4::2]] == ["F" * 500] * 3


def test_long_arguments_are_cut_and_extra_ones_elided() -> None:
    call = ToolCall("a", "write_file", {"path": "p" * 200, "content": "c", "mode": "w"})
    messages = [
        Message.user("go"),
        Message("assistant", [call]),
        Message("user", [ToolResult("a", "ok" * 200)]),
        *[
            m
            for i in range(3)
            for m in (
                Message("assistant", [ToolCall(f"b{i}", "grep", {"pattern": "x"})]),
                Message("user", [ToolResult(f"b{i}", "hit")]),
            )
        ],
    ]
    text = mask_messages(messages, 3, turn_of=lambda p: p)[2].tool_results[0].content
    assert text.startswith(
        f'{MASK_PREFIX} write_file(path="{"p" * 57}...", content="c", ...): 400 chars'
    )


@settings(max_examples=25, deadline=None)
@given(conversations(), st.integers(1, 4), st.integers(2, 10))
def test_prepare_and_compact_keep_pairs_on_random_conversations(
    messages: list[Message], keep_rounds: int, keep_turns: int
) -> None:
    import tempfile
    from pathlib import Path

    from orchestrator.config import ContextConfig
    from orchestrator.context import ContextManager
    from orchestrator.context.transcripts import read_transcript, transcript_numbers
    from orchestrator.models.scripted import ScriptedModel
    from orchestrator.store.layout import Layout
    from orchestrator.store.scaffold import scaffold
    from orchestrator.store.tasks import TaskFolder

    summary = "\n".join(
        f"## {s}\nx"
        for s in (
            "Task overview",
            "Current state",
            "Important discoveries",
            "Next steps",
            "Context to preserve",
        )
    )
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp))
        scaffold(layout)
        task = TaskFolder.create(layout, "random")
        config = ContextConfig(
            mask_keep_rounds=keep_rounds,
            keep_recent_turns=keep_turns,
            compact_threshold_tokens=300,
            fold_every_turns=10_000,
        )
        model = ScriptedModel({"replies": [{"text": summary}] * 100})
        manager = ContextManager(task, model, config, task.events(), rules="R", phase_card="C")
        kept: list[Message] = []
        for message in messages:  # grow the conversation one message at a time, as the engine does
            kept = manager.prepare([*kept, message], phase=1, last_instruction="I")
            assert pairs_problems(kept) == []
        compacted = manager.compact(kept, phase=1, last_instruction="I", reason="test")
        assert pairs_problems(compacted) == []
        saved = {
            line.turn: line.message
            for n in transcript_numbers(task)
            for line in read_transcript(task, n)
        }
        assert all(saved[t] == messages[t] for t in saved)  # whatever was saved is the raw turn
        head = read_head(compacted)
        if head is not None:  # every turn the summary stands for is on disk
            assert set(range(head.last_turn + 1)) <= set(saved)


def _rounds(n: int) -> list[Message]:
    messages = [Message.user("go")]
    for i in range(n):
        messages.append(Message("assistant", [ToolCall(f"t{i}", "read_file", {"path": f"{i}.py"})]))
        messages.append(Message("user", [ToolResult(f"t{i}", f"line {i}\n" * 40)]))
    return messages


def test_masking_in_batches_keeps_the_prefix_byte_stable_between_batches() -> None:
    sent: list[list[Message]] = []
    messages: list[Message] = _rounds(0)
    for n in range(1, 12):
        messages = [*messages, *_rounds(n)[-2:]]  # the conversation as kept, one round more
        messages = mask_messages(messages, 2, turn_of=lambda pos: pos, batch=3)
        sent.append(messages)
    # nothing is masked until 3 rounds wait past the 2 kept, then 3 at once
    counts = [sum(is_masked(r) for m in s for r in m.tool_results) for s in sent]
    assert counts == [0, 0, 0, 0, 3, 3, 3, 6, 6, 6, 9]
    # between two batches, each request starts with the whole previous one
    for before, after in itertools.pairwise(sent):
        if counts[sent.index(before)] == counts[sent.index(after)]:
            assert after[: len(before)] == before
    assert rounds_to_mask(_rounds(4), 2, batch=3) == []
    assert len(rounds_to_mask(_rounds(5), 2, batch=3)) == 3
