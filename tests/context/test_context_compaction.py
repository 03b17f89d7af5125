"""Tier 2 and 3: compaction by token threshold, transcripts first, verbatim re-injection,
the circuit breaker, and the compaction event."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from orchestrator.context import CompactionStalled, ContextManager
from orchestrator.context.compaction import read_head, reinjected
from orchestrator.context.masking import is_masked
from orchestrator.context.transcripts import read_transcript, transcript_numbers
from orchestrator.events.log import read_events
from orchestrator.messages import Message, TextBlock, ToolCall
from orchestrator.models.scripted import ScriptedModel
from orchestrator.store.tasks import TaskFolder
from orchestrator.tokens import estimate_message

Make = Callable[..., ContextManager]


def compactions(task: TaskFolder, kind: str | None = None) -> list[dict[str, Any]]:
    result = read_events(task.event_log_path, check=True)
    assert result.problems == []
    return [
        e.payload
        for e in result.events
        if e.event_type == "compaction" and (kind is None or e.payload["kind"] == kind)
    ]


def run_turns(
    manager: ContextManager, kit: SimpleNamespace, rounds: int, **kw: Any
) -> list[Message]:
    """Drive `rounds` tool rounds through prepare, keeping what it returns (as the engine does)."""
    messages = [Message.user("add rate limiting to the API")]
    for turn in range(rounds):
        messages = manager.prepare(
            [*messages, *kit.exchange(turn, **kw)], phase=1, last_instruction="add rate limiting"
        )
    return messages


def raw_turns(task: TaskFolder) -> dict[int, dict[str, Any]]:
    return {
        line.turn: line.message.to_dict()
        for n in transcript_numbers(task)
        for line in read_transcript(task, n)
    }


def test_the_threshold_is_in_tokens_not_turns(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    # 120 small rounds stay under 3000 tokens: no compaction, however many turns
    small = make_manager(compact_threshold_tokens=20_000)
    run_turns(small, kit, 120, size=10)
    assert compactions(task) == []
    # a few large rounds pass it, by more than masking all but the newest round could save
    big = make_manager(compact_threshold_tokens=1000, mask_keep_rounds=8)
    messages = run_turns(big, kit, 12, size=2000)
    done = compactions(task, "auto")
    assert done and done[0]["outcome"] == "ok"
    assert done[0]["tokens_before"] > 1000 > done[0]["tokens_after"]
    assert sum(estimate_message(m) for m in messages) <= 1000 + 2 * 700


def test_every_dropped_turn_is_in_a_transcript_raw_before_the_drop(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    manager = make_manager()
    originals = [Message.user("add rate limiting to the API")]
    messages = list(originals)
    for turn in range(60):
        new = kit.exchange(turn, size=900)
        originals += new
        messages = manager.prepare([*messages, *new], phase=1, last_instruction="go")
    head = read_head(messages)
    assert head is not None and head.compactions >= 2
    saved = raw_turns(task)
    # every turn the summary stands for is on disk, unmasked, exactly as it was sent
    for turn in range(head.last_turn + 1):
        assert saved[turn] == originals[turn].to_dict()
    # the events name transcripts and contiguous turn ranges from 0
    ranges = [(e["turns"]["first"], e["turns"]["last"]) for e in compactions(task, "auto")]
    assert ranges[0][0] == 0
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ranges))
    for event in compactions(task, "auto"):
        lines = read_transcript(task, int(event["transcript"].split("/")[1].split(".")[0]))
        assert event["turns"]["last"] in {line.turn for line in lines}
    # the kept tail numbers on from the summary's range, and its masked results point to disk
    for message in messages[1:]:
        for result in message.tool_results:
            if is_masked(result):
                assert "raw turn" in result.content and "transcripts/" in result.content


def test_a_crash_between_transcript_and_drop_leaves_the_transcript(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import orchestrator.context.manager as manager_module

    manager = make_manager(mask_keep_rounds=50)  # nothing masked: only compaction saves turns
    messages = kit.conversation(8, size=12_000)
    before = [m.to_dict() for m in messages]

    def crash(*args: Any, **kw: Any) -> Message:
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(manager_module, "head_message", crash)
    with pytest.raises(KeyboardInterrupt):
        manager.prepare(messages, phase=1, last_instruction="go")
    assert [m.to_dict() for m in messages] == before  # the caller's conversation is untouched
    saved = raw_turns(task)
    assert saved, "no transcript was written before the drop"
    assert all(saved[t] == before[t] for t in saved)
    assert compactions(task) == []  # the compaction never completed, so it is not logged


def test_rules_phase_card_and_last_instruction_come_back_verbatim_every_time(
    make_manager: Make, kit: SimpleNamespace
) -> None:
    rules = "Rules:\n  - keep `  two spaces` here\n- <b>markup</b> & symbols stay\n\n"
    card = "Phase 3 card\n\twith a tab"
    manager = make_manager(rules=rules, phase_card=card)
    messages = [Message.user("start")]
    for turn in range(60):
        instruction = f"instruction number {turn}\nsecond line"
        messages = manager.prepare(
            [*messages, *kit.exchange(turn, size=900)], phase=1, last_instruction=instruction
        )
        if read_head(messages) and manager.last_result and manager.last_result.outcome == "ok":
            parts = reinjected(messages)
            assert parts == {
                "repository-rules": rules,
                "phase-card": card,
                "last-instruction": instruction,
            }
            texts = [b.text for b in messages[0].content if isinstance(b, TextBlock)]
            assert sum(rules in t for t in texts) == 1
    assert read_head(messages) is not None and read_head(messages).compactions >= 2  # type: ignore[union-attr]


def test_the_compactor_gets_its_prompt_the_turns_and_the_previous_summary(
    make_manager: Make, kit: SimpleNamespace, model: ScriptedModel
) -> None:
    manager = make_manager()
    run_turns(manager, kit, 60, size=900)
    calls = [r for r in model.requests if "Conversation to summarise" in r.last_user_text]
    assert len(calls) >= 2
    assert all(r.purpose == "compactor" and r.phase == 1 for r in calls)
    assert (
        "## Task overview" in calls[0].system_text()
        and "Context to preserve" in calls[0].system_text()
    )
    assert "<previous-summary>" not in calls[0].last_user_text
    assert "[turn 1 · assistant calls read_file]" in calls[0].last_user_text
    assert "<previous-summary>\n" + kit.SUMMARY.strip() in calls[1].last_user_text


def _failing(kit: SimpleNamespace, replies: list[dict[str, Any]]) -> ScriptedModel:
    return ScriptedModel(kit.script(summary=replies))


def test_three_failed_compactions_in_a_row_stall(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    model = _failing(
        kit,
        [
            {"error": {"class": "transient", "status": 529, "message": "overloaded"}},
            {"error": {"class": "transient", "status": 529, "message": "overloaded"}},
            {"text": "## Task overview\nonly one section"},
        ],
    )
    manager = make_manager(model_=model)
    messages = kit.conversation(8, size=12_000)
    first = manager.prepare(messages, phase=1, last_instruction="go")
    assert manager.last_result is not None and manager.last_result.outcome == "failed"
    assert read_head(first) is None and len(first) == len(messages)  # unchanged, only masked
    manager.prepare(messages, phase=1, last_instruction="go")
    with pytest.raises(CompactionStalled) as stalled:
        manager.prepare(messages, phase=1, last_instruction="go")
    exc = stalled.value
    assert exc.event_type == "error" and exc.payload["kind"] == "compaction_stalled"
    assert len(exc.payload["failures"]) == 3
    assert "overloaded" in exc.payload["failures"][0]
    assert "lacks the sections" in exc.payload["failures"][2]
    failed = compactions(task, "auto")
    assert [e["outcome"] for e in failed] == ["failed"] * 3
    assert [e["failures_in_row"] for e in failed] == [1, 2, 3]
    assert "compaction failed 3 times in a row" in exc.line()


def test_an_empty_or_cut_summary_is_a_failure_and_a_success_resets_the_count(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    model = ScriptedModel.from_replies(  # a queue: one reply per request, in order
        {"text": "", "stop_reason": "end_turn"},
        {"text": kit.SUMMARY, "stop_reason": "max_tokens"},
        {"text": kit.SUMMARY},
    )
    manager = make_manager(model_=model)
    messages = kit.conversation(8, size=12_000)
    manager.prepare(messages, phase=1, last_instruction="go")
    manager.prepare(messages, phase=1, last_instruction="go")
    out = manager.prepare(messages, phase=1, last_instruction="go")
    assert read_head(out) is not None
    events = compactions(task, "auto")
    assert [e["outcome"] for e in events] == ["failed", "failed", "ok"]
    assert "empty" in events[0]["error"] and "max_tokens" in events[1]["error"]
    assert manager._failures == []


def test_the_breaker_counts_across_processes_until_a_state_change(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    always_down = [{"error": {"class": "transient", "message": "down", "times": 99}}]
    messages = kit.conversation(8, size=12_000)
    for _ in range(2):  # two processes, one failure each
        make_manager(model_=_failing(kit, always_down)).prepare(
            messages, phase=1, last_instruction="go"
        )
    with pytest.raises(CompactionStalled):
        make_manager(model_=_failing(kit, always_down)).prepare(
            messages, phase=1, last_instruction="go"
        )
    # a human approved: the engine logs the state change, the count starts again
    task.events().append("state_change", {"from": "WAITING_APPROVAL", "to": "ACTING"})
    fresh = make_manager(model_=_failing(kit, always_down))
    fresh.prepare(messages, phase=1, last_instruction="go")
    assert fresh.last_result is not None and fresh.last_result.outcome == "failed"


def test_the_compact_tool_keeps_the_pending_call_and_logs_a_tool_compaction(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    manager = make_manager(compact_threshold_tokens=100_000, keep_recent_turns=2)
    spec = manager.compact_tool_spec()
    assert spec.name == "compact" and spec.input_schema["type"] == "object"
    messages = kit.conversation(6, size=300)
    call = ToolCall("toolu_compact", "compact", {"reason": "early turns no longer needed"})
    messages.append(Message("assistant", [call]))
    out = manager.compact(
        messages, phase=1, last_instruction="go", reason="early turns no longer needed"
    )
    assert out[-1].tool_calls == [call]  # the engine answers it with a tool_result next
    assert read_head(out) is not None
    (event,) = compactions(task, "tool")
    assert event["outcome"] == "ok" and event["reason"] == "early turns no longer needed"
    assert event["messages_before"] == len(messages) and event["messages_after"] == len(out)


def test_nothing_to_compact_is_said_and_changes_nothing(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    manager = make_manager(keep_recent_turns=20)
    messages = kit.conversation(3, size=100)
    assert manager.compact(messages, phase=1, last_instruction="go", reason="try") == messages
    assert manager.last_result is not None and manager.last_result.outcome == "nothing"
    assert [e["outcome"] for e in compactions(task)] == ["nothing"]
    assert transcript_numbers(task) == []


def test_server_side_context_editing_replaces_local_masking(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    messages = kit.conversation(8, size=500)
    local = make_manager(server_context_editing=True, compact_threshold_tokens=100_000)
    assert any(
        is_masked(r)
        for m in local.prepare(messages, phase=1, last_instruction="")
        for r in m.tool_results
    )

    anthropic = ScriptedModel(kit.script(), name="anthropic:claude-sonnet-4-5")
    server = make_manager(
        model_=anthropic, server_context_editing=True, compact_threshold_tokens=100_000
    )
    assert not server.local_masking
    out = server.prepare(messages, phase=1, last_instruction="")
    assert out == messages  # not masked twice: the model layer sends the edit

    # a model the API cannot edit for: the adapter leaves the edit out, so orch masks
    old = ScriptedModel(kit.script(), name="anthropic:claude-3-5-haiku-20241022")
    fallback = make_manager(
        model_=old, server_context_editing=True, compact_threshold_tokens=100_000
    )
    assert fallback.local_masking


def test_a_resumed_process_does_not_save_turns_twice(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    first = make_manager(compact_threshold_tokens=100_000)
    messages = kit.conversation(10, size=500)
    messages = first.prepare(messages, phase=1, last_instruction="")
    saved = [line.turn for n in transcript_numbers(task) for line in read_transcript(task, n)]
    # the engine saved `messages` and crashed; a new process loads them and goes on
    second = make_manager(compact_threshold_tokens=100_000)
    messages = second.prepare(
        [*messages, *kit.exchange(10, size=500)], phase=1, last_instruction=""
    )
    turns = [line.turn for n in transcript_numbers(task) for line in read_transcript(task, n)]
    assert turns == sorted(set(turns))  # no turn saved twice
    assert turns[: len(saved)] == saved and len(turns) > len(saved)


def test_transcript_lines_follow_their_schema(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    from orchestrator.schemas import errors

    run_turns(make_manager(), kit, 20, size=900)
    for n in transcript_numbers(task):
        for raw in (task.transcripts / f"{n}.jsonl").read_text().splitlines():
            assert errors("transcript", json.loads(raw)) == []


def test_on_the_executors_model_the_compactor_gets_the_executor_request_and_a_summary_turn(
    make_manager: Make, kit: SimpleNamespace, model: ScriptedModel, task: TaskFolder
) -> None:
    manager = make_manager(mask_keep_rounds=50)
    messages = kit.conversation(8, size=12_000)
    executor = kit.executor_request(model)
    compacted = manager.prepare(messages, phase=1, last_instruction="go", executor=executor)
    [request] = [r for r in model.requests if r.purpose == "compactor" and r.tools]
    assert request.system == list(executor.system) and request.tools == list(executor.tools)
    assert request.max_tokens == 2048 and request.phase == 1 and request.volatile == ""
    # the conversation as the executor's previous request held it (without the newest
    # exchange, which no request has written to the cache), its last user turn with two
    # blocks more
    assert request.messages[:-1] == messages[:-3]
    newest, sent = messages[-3], request.messages[-1]
    assert sent.content[: len(newest.content)] == newest.content
    volatile, ask = sent.content[len(newest.content) :]
    assert isinstance(volatile, TextBlock) and volatile.text == executor.volatile
    assert isinstance(ask, TextBlock)
    head = read_head(compacted)
    assert head is not None
    kept = sum(1 for m in compacted[1:] if m.role == "assistant") - 1  # but the newest
    before = f" before your last {kept}" if kept else ""
    assert ask.text.startswith(
        f"Conversation to summarise: every turn of this conversation{before} "
        f"(raw turns {head.first_turn}-{head.last_turn})"
    )
    assert "<compactor-instructions>" in ask.text and "Context to preserve" in ask.text
    # the summary lands as before: the head, its parts verbatim, the event
    assert head.summary == kit.SUMMARY.strip()
    assert reinjected(compacted)["phase-card"] == kit.PHASE_CARD
    assert [e["outcome"] for e in compactions(task, "auto")] == ["ok"]


def test_a_summary_turn_after_an_assistant_message_is_a_user_message_of_its_own() -> None:
    from orchestrator.context.compaction import summary_turn

    messages = [Message.user("go"), Message.assistant("read it"), Message.assistant("done")]
    out = summary_turn(messages, 2, first_turn=0, last_turn=1)
    assert out[:3] == messages and out[3].role == "user" and len(out[3].content) == 1
    assert out[3].text.startswith("Conversation to summarise: every turn of this conversation")
    assert "before your last 1 (raw turns 0-1)" in out[3].text


def test_a_compactor_of_another_model_or_no_executor_request_gets_the_turns_as_text(
    make_manager: Make, kit: SimpleNamespace, model: ScriptedModel
) -> None:
    other = ScriptedModel(kit.script(), name="scripted:another-compactor")
    base = make_manager()
    for compactor, executor in ((other, kit.executor_request(model)), (model, None)):
        manager = ContextManager(
            base.task,
            model,
            base.config,
            base.log,
            rules=kit.RULES,
            phase_card=kit.PHASE_CARD,
            compactor=compactor,
        )
        messages = kit.conversation(8, size=12_000)
        compacted = manager.prepare(messages, phase=1, last_instruction="go", executor=executor)
        request = compactor.requests[-1]
        assert request.purpose == "compactor" and request.tools == []
        assert [p.label for p in request.system] == ["compactor"]
        [message] = request.messages
        assert message.text.startswith("Conversation to summarise (task ")
        assert read_head(compacted) is not None
    assert not [r for r in model.requests if r.tools]  # nothing went to the executor's model


def test_past_the_threshold_masking_all_but_the_newest_round_comes_before_a_compaction(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    # rounds of about 600 tokens: 6 verbatim rounds pass 3500 before a batch of 4 is due
    manager = make_manager(compact_threshold_tokens=3500, mask_keep_rounds=3, mask_batch_rounds=4)
    messages = run_turns(manager, kit, 20, size=2000)
    assert compactions(task) == []  # masking was enough every time
    assert sum(estimate_message(m) for m in messages) <= 3500
    verbatim = [m for m in messages if m.tool_results and not is_masked(m.tool_results[0])]
    assert 1 <= len(verbatim) <= 3 + 4 and verbatim[-1] == messages[-1]
    # every masked turn is on disk, raw
    saved = raw_turns(task)
    masked = [pos for pos, m in enumerate(messages) if m.tool_results and m not in verbatim]
    assert masked and all(pos in saved for pos in masked)
    # when masking all but the newest round is not enough either, it compacts
    run_turns(make_manager(compact_threshold_tokens=1000, mask_keep_rounds=3), kit, 30, size=2000)
    assert [c["outcome"] for c in compactions(task, "auto")][:1] == ["ok"]


def test_under_the_threshold_masking_keeps_the_last_rounds_and_waits_for_its_batch(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    manager = make_manager(
        compact_threshold_tokens=100_000, mask_keep_rounds=3, mask_batch_rounds=4
    )
    messages = run_turns(manager, kit, 6, size=2000)
    assert not any(is_masked(r) for m in messages for r in m.tool_results)  # 3 wait, batch is 4
    messages = manager.prepare(
        [*messages, *kit.exchange(6, size=2000)], phase=1, last_instruction="go"
    )
    masked = [m for m in messages if m.tool_results and is_masked(m.tool_results[0])]
    assert len(masked) == 4
