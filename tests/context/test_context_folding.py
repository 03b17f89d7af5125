"""Folded memory: thresholds, provenance (episode -> transcript offsets -> raw turns), the L3
merge, the cascading variant, and what the retrieval index can read."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from orchestrator.context import ContextManager
from orchestrator.context.compaction import read_head
from orchestrator.context.folding import episodes, fold_request, parse_fold_reply, summaries
from orchestrator.context.manager import l2_digest
from orchestrator.context.semantic import Candidate, load_items, merge
from orchestrator.context.transcripts import iter_lines, read_span
from orchestrator.events.log import read_events
from orchestrator.messages import Message, TextBlock
from orchestrator.models.scripted import ScriptedModel
from orchestrator.schemas import errors
from orchestrator.store.tasks import TaskFolder

Make = Callable[..., ContextManager]


def drive(
    manager: ContextManager, kit: SimpleNamespace, rounds: int, *, phase: int = 1
) -> tuple[list[Message], list[Message]]:
    """Run `rounds` tool rounds; return (what the engine keeps, every raw message sent)."""
    raw = [Message.user("add rate limiting to the API")]
    messages = list(raw)
    for turn in range(rounds):
        new = kit.exchange(turn, size=900, text=f"round {turn} marker-{turn}-end ")
        raw += new
        messages = manager.prepare([*messages, *new], phase=phase, last_instruction="go")
    return messages, raw


def fold_requests(model: ScriptedModel) -> int:
    return sum("Turns to fold" in r.last_user_text for r in model.requests)


def fold_events(task: TaskFolder) -> list[dict[str, Any]]:
    result = read_events(task.event_log_path, check=True)
    assert result.problems == []
    return [
        e.payload
        for e in result.events
        if e.event_type == "compaction" and e.payload["kind"] == "fold"
    ]


def test_folding_waits_for_its_threshold_and_never_runs_every_turn(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder, model: ScriptedModel
) -> None:
    manager = make_manager(fold_every_turns=1000)
    drive(manager, kit, 80)
    assert fold_requests(model) == 0 and episodes(task) == []

    other = make_manager(fold_every_turns=40)
    drive(other, kit, 80)
    compacted = sum(
        1
        for e in read_events(task.event_log_path).events
        if e.event_type == "compaction"
        and e.payload["kind"] == "auto"
        and e.payload["outcome"] == "ok"
    )
    made = episodes(task)
    assert 1 <= len(made) <= compacted < 80  # at most one fold per compaction, far fewer than turns
    assert fold_requests(model) == len(made)
    assert all(e["turns"]["last"] - e["turns"]["first"] + 1 >= 40 for e in made)


def test_an_episode_leads_back_to_the_exact_raw_turns(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    manager = make_manager(fold_every_turns=20)
    _, raw = drive(manager, kit, 60)
    made = episodes(task)
    assert len(made) >= 2
    covered: list[int] = []
    for episode in made:
        assert errors("episode", episode) == []
        turns: list[int] = []
        for source in episode["sources"]:
            lines = read_span(task, source["transcript"], source["byte_start"], source["byte_end"])
            assert len(lines) == source["last_line"] - source["first_line"] + 1
            assert [line["turn"] for line in lines] == list(
                range(source["first_turn"], source["last_turn"] + 1)
            )
            for line in lines:
                assert Message.from_dict(line) == raw[line["turn"]]  # raw, not masked
            turns += [line["turn"] for line in lines]
        assert turns == list(range(episode["turns"]["first"], episode["turns"]["last"] + 1))
        covered += turns
    assert covered == list(range(len(covered)))  # episodes tile the turns, in order, once


def test_l3_items_name_their_episodes_and_merge_instead_of_piling_up(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    drive(make_manager(fold_every_turns=20), kit, 60)
    made = [e["id"] for e in episodes(task)]
    items = load_items(task)
    assert errors("l3", json.loads(task.l3.read_text())) == []
    # the same three candidates came from every episode: three items, each citing all of them
    assert sorted(i.kind for i in items) == ["decision", "eliminated", "fact"]
    for item in items:
        assert list(item.episodes) == made and item.seen == len(made)
    fact = next(i for i in items if i.kind == "fact")
    assert fact.citations == ({"path": "pyproject.toml", "line": 3},)


def test_merge_updates_a_matching_item_and_keeps_its_history() -> None:
    first, report = merge(
        [],
        [
            Candidate("fact", "Test command", "pytest -q", "gates run it"),
            Candidate("decision", "storage", "use sqlite", "stdlib"),
        ],
        "ep-0001",
        now="2026-01-01T00:00:00.000Z",
    )
    assert report.added == ("l3-0001", "l3-0002") and report.updated == ()
    second, report = merge(
        first,
        [
            Candidate("fact", "test   command!", "make test", None),  # same subject, normalised
            Candidate(
                "fact", "storage", "sqlite lives in .orch/", None
            ),  # same subject, other kind
            Candidate("decision", "", "use sqlite", "it is in the standard library"),  # same text
        ],
        "ep-0002",
        now="2026-01-02T00:00:00.000Z",
    )
    assert report.added == ("l3-0003",) and report.updated == ("l3-0001", "l3-0002")
    fact = second[0]
    assert (fact.text, fact.reason, fact.episodes, fact.seen) == (
        "make test",
        "gates run it",
        ("ep-0001", "ep-0002"),
        2,
    )
    assert fact.history == (
        {"text": "pytest -q", "source": "ep-0001", "at": "2026-01-01T00:00:00.000Z"},
    )
    decision = second[1]
    assert decision.reason == "it is in the standard library" and decision.history == ()
    again, report = merge(
        second, [Candidate("fact", "test command", "make test")], "ep-0002", now="x"
    )
    assert again[0].seen == 2 and again[0].episodes == ("ep-0001", "ep-0002")  # same source once


def test_a_bad_fold_is_logged_and_retried_at_the_next_fold_point(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    model = ScriptedModel(
        kit.script(
            fold=[
                {"error": {"class": "transient", "message": "overloaded"}},
                {"text": json.dumps(kit.FOLD)},
            ]
        )
    )
    manager = make_manager(model_=model, fold_every_turns=20)
    drive(manager, kit, 60)
    events = fold_events(task)
    assert events[0]["outcome"] == "failed" and "overloaded" in events[0]["error"]
    assert events[1]["outcome"] == "ok"
    first = episodes(task)[0]
    assert first["turns"]["first"] == 0  # the failed span was not skipped


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("no json here", "no JSON object"),
        ('{"summary": ""}', "no summary"),
        ('{"summary": "x", "decisions": [}', "not valid JSON"),
    ],
)
def test_unusable_fold_replies_say_why(reply: str, problem: str) -> None:
    from orchestrator.context.folding import FoldError

    with pytest.raises(FoldError, match=problem):
        parse_fold_reply(reply)


def test_fold_replies_in_a_fence_with_partial_items_are_kept_where_valid() -> None:
    body = parse_fold_reply(
        '```json\n{"summary": "s", "decisions": [{"decision": "d", "reason": "r"}, {"decision": "no reason"}],'
        ' "facts": [{"subject": "a", "fact": "b", "citations": [{"path": "x.py", "line": 2}, {"line": 3}]}]}\n```'
    )
    assert body["decisions"] == [{"decision": "d", "reason": "r"}]
    assert body["l3"] == [  # the reply says facts; the episode keeps them under l3
        {"subject": "a", "fact": "b", "citations": [{"path": "x.py", "line": 2}]}
    ]
    assert body["eliminated"] == [] and body["open_questions"] == []


def test_closing_a_phase_folds_what_is_left(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    manager = make_manager(compact_threshold_tokens=100_000, fold_every_turns=40)
    messages, raw = drive(manager, kit, 5)
    assert episodes(task) == []
    (result,) = manager.close_phase(messages, phase=1)
    (episode,) = episodes(task)
    assert episode["id"] == result.id and episode["turns"] == {"first": 0, "last": len(raw) - 1}
    assert manager.close_phase(messages, phase=1) == []  # nothing left to fold


def test_cascading_keeps_every_version_and_folds_old_short_summaries_into_the_long_one(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder, model: ScriptedModel
) -> None:
    manager = make_manager(folding="cascading", fold_every_turns=20)
    drive(manager, kit, 80)
    shorts, longs = summaries(task, "short"), summaries(task, "long")
    assert episodes(task) == []
    assert len(shorts) >= 3 and len(longs) == len(shorts) - 1
    for record in shorts + longs:
        assert errors("summary", record) == []
        assert record["created"]
    assert [s["version"] for s in shorts] == list(range(1, len(shorts) + 1))
    # long-n folds short-n into long-(n-1); the newest short summary is not folded yet
    for n, long in enumerate(longs, start=1):
        assert long["folded"] == [s["id"] for s in shorts[:n]]
        assert long["previous"] == (longs[n - 2]["id"] if n > 1 else None)
    assert json.loads((task.summaries / "long.json").read_text()) == longs[-1]
    long_calls = [
        r for r in model.requests if "Fold into the long-term summary" in r.last_user_text
    ]
    assert len(long_calls) == len(longs)
    assert all(r.purpose == "compactor" for r in long_calls)
    assert f'<short-term-summary id="{shorts[-2]["id"]}"' in long_calls[-1].last_user_text
    # short summaries carry the same provenance as episodes, and feed L3
    assert all(s["sources"] for s in shorts)
    assert {i.episodes for i in load_items(task)} == {tuple(s["id"] for s in shorts)}
    digest = l2_digest(task, manager.config)
    assert digest[0].startswith(f"Long-term summary ({longs[-1]['id']})")
    assert digest[1].startswith(f"Short-term summary {shorts[-1]['id']}")


def test_everything_folded_is_found_by_the_search_index(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    from orchestrator.retrieval import SearchIndex

    drive(make_manager(fold_every_turns=20), kit, 60)
    with SearchIndex(task.layout) as index:
        # a raw turn that was masked and compacted away long ago
        hits = index.search("marker-3-end", k=5, kinds={"transcript"})
        assert hits and "marker-3-end" in hits[0].text
        assert hits[0].ref.startswith(f"{task.slug}/1:")
        # an episode, its L3 items (which name their episodes) and nothing stale
        episode = index.search("dict per process many workers", k=5, kinds={"episode"})
        assert episode and episode[0].ref == f"{task.slug}/ep-0001"
        l3 = index.search("limiter algorithm token bucket", k=5, kinds={"l3"})
        assert l3 and l3[0].ref.startswith(f"{task.slug}/l3-")
        assert l3[0].meta["episodes"] == [e["id"] for e in episodes(task)]


def test_cascading_summaries_are_found_by_the_search_index(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    from orchestrator.retrieval import SearchIndex

    drive(make_manager(folding="cascading", fold_every_turns=20), kit, 80)
    with SearchIndex(task.layout) as index:
        refs = {h.ref for h in index.search("limiter token bucket", k=50, kinds={"summary"})}
    assert f"{task.slug}/short-0001" in refs and f"{task.slug}/long" in refs
    assert not any("long-0" in ref for ref in refs)  # old versions do not crowd the results


def test_the_index_is_told_as_files_are_written_not_only_at_rebuild(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder
) -> None:
    import sqlite3

    drive(make_manager(fold_every_turns=20), kit, 60)
    # read the index's own table without SearchIndex, which would refresh from the files
    db = next(task.layout.cache.glob("search*.sqlite"))
    with sqlite3.connect(db) as conn:
        kinds = {kind for (kind,) in conn.execute("SELECT DISTINCT kind FROM doc")}
    assert {"transcript", "episode", "l3"} <= kinds


def drive_executor(
    manager: ContextManager, kit: SimpleNamespace, model: ScriptedModel
) -> tuple[Any, list[list[Message]]]:
    """Like `drive` for 12 rounds, with an executor's request on `model` (whose system
    prompt and tools take most of the threshold, so masking alone is soon not enough):
    that request, and the conversations handed to `prepare`."""
    executor = kit.executor_request(model)
    messages = [Message.user("add rate limiting to the API")]
    held = []
    for turn in range(12):
        messages = [*messages, *kit.exchange(turn, size=900, text=f"round {turn} ")]
        held.append(messages)
        messages = manager.prepare(
            messages, phase=1, last_instruction="go", executor=executor, system_tokens=2000
        )
    return executor, held


def test_on_the_executors_model_a_fold_repeats_the_executor_request_with_a_fold_turn(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder, model: ScriptedModel
) -> None:
    # every compaction drops more than fold_every_turns turns: each fold is of turns the
    # executor's conversation still holds
    manager = make_manager(fold_every_turns=4, mask_keep_rounds=50, keep_recent_turns=2)
    executor, held = drive_executor(manager, kit, model)
    folds = [r for r in model.requests if "Turns to fold" in r.last_user_text]
    made = episodes(task)
    assert folds and len(folds) == len(made)
    for request, episode in zip(folds, made, strict=True):
        assert request.system == list(executor.system) and request.tools == list(executor.tools)
        assert request.purpose == "compactor" and request.max_tokens == 4096
        # the conversation as the executor's previous request held it (the newest exchange
        # left out: no request has written it to the cache yet), one user turn longer
        conversation = next(m for m in held if m[:-3] == request.messages[:-1])
        newest, sent = conversation[-3], request.messages[-1]
        assert sent.content[: len(newest.content)] == newest.content
        volatile, ask = sent.content[len(newest.content) :]
        assert isinstance(volatile, TextBlock) and volatile.text == executor.volatile
        assert isinstance(ask, TextBlock)
        first, last = episode["turns"]["first"], episode["turns"]["last"]
        assert ask.text.startswith(f"Turns to fold: raw turns {first}-{last} of phase 1: every")
        assert "<folding-instructions>" in ask.text and "call no tool" in ask.text
        assert "<turns>" not in ask.text  # nothing written out: it is all in the conversation
        # the episode still leads back to the raw turns on disk
        turns = [
            line["turn"]
            for s in episode["sources"]
            for line in read_span(task, s["transcript"], s["byte_start"], s["byte_end"])
        ]
        assert turns == list(range(first, last + 1))


def test_a_fold_writes_out_only_the_turns_that_already_left_the_conversation(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder, model: ScriptedModel
) -> None:
    manager = make_manager(fold_every_turns=1000, mask_keep_rounds=50, keep_recent_turns=2)
    executor, held = drive_executor(manager, kit, model)
    lines = list(iter_lines(task))
    conversation = held[-1]
    head = read_head(conversation)
    assert head is not None and lines[0].turn < head.last_turn + 1 <= lines[-1].turn
    inside = [e for e in lines if e.turn <= head.last_turn + len(conversation) - 1]
    request = fold_request(task.slug, inside, executor, conversation)
    ask = request.messages[-1].content[-1]
    assert isinstance(ask, TextBlock)
    left = [e for e in inside if e.turn <= head.last_turn]
    assert f"the turns {left[0].turn}-{left[-1].turn}, which already left" in ask.text
    written = ask.text.split("<turns>\n", 1)[1]
    assert (
        f"[turn {left[-1].turn} · " in written and f"[turn {head.last_turn + 1} · " not in written
    )
    # without the executor's request, or lines after the conversation's start: all as text
    for args in ((None, conversation), (executor, conversation[:1])):
        text = fold_request(task.slug, inside, *args)
        assert [p.label for p in text.system] == ["folding"] and text.tools == []
        assert text.messages[0].text.startswith("Turns to fold (task ")


def test_a_fold_on_another_model_gets_the_turns_as_text(
    make_manager: Make, kit: SimpleNamespace, task: TaskFolder, model: ScriptedModel
) -> None:
    other = ScriptedModel(kit.script(), name="scripted:another-compactor")
    base = make_manager(fold_every_turns=4, mask_keep_rounds=50, keep_recent_turns=2)
    manager = ContextManager(
        task, model, base.config, base.log, rules="", phase_card="", compactor=other
    )
    drive_executor(manager, kit, model)
    folds = [r for r in other.requests if "Turns to fold" in r.last_user_text]
    assert folds and all([p.label for p in r.system] == ["folding"] for r in folds)
    assert all(r.tools == [] and "<turns>" in r.last_user_text for r in folds)
