"""The index follows every write, equals a rebuild, and heals when broken."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import refs, write_json, write_transcript

from orchestrator.memory.writer import MemoryWriter
from orchestrator.retrieval import Doc, SearchIndex, index_written
from orchestrator.store.layout import Layout
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.tasks import TaskFolder


def snapshot(index: SearchIndex) -> set[tuple[str, str, str, str]]:
    conn = sqlite3.connect(index.path)
    try:
        return set(conn.execute("SELECT kind, ref, text, meta FROM doc").fetchall())
    finally:
        conn.close()


def test_memory_add_change_and_remove_reach_an_open_index(layout: Layout, add_memory) -> None:
    with SearchIndex(layout) as index:
        assert index.search("pytest") == []  # the first search has refreshed from the files
        add_memory("test-command", "The test command is pytest -q, run from the root.")
        hits = index.search("pytest")
        assert [(h.kind, h.ref) for h in hits] == [("memory", "test-command")]
        assert hits[0].meta["status"] == "active"
        assert hits[0].meta["path"] == "memories/repo/test-command.md"

        MemoryWriter(layout).update("test-command", status="stale")
        assert index.search("pytest")[0].meta["status"] == "stale"

        path = RepoMemoryStore(layout).path_of("test-command")
        path.unlink()
        index_written(layout, path)
        assert index.search("pytest") == []


def test_superseding_a_memory_indexes_both_files(layout: Layout, add_memory) -> None:
    from orchestrator.store.memfile import Memory

    add_memory("lint-command", "Lint with flake8 before every commit.")
    new = Memory(
        name="lint-command-ruff",
        description="Lint with ruff",
        type="user",
        body="Lint with ruff check before every commit.\n",
        subject="lint command",
        reason="the gate runs it",
    )
    MemoryWriter(layout).supersede("lint-command", new)
    with SearchIndex(layout) as index:
        assert refs(index, "ruff") == ["memory:lint-command-ruff"]
        statuses = {h.ref: h.meta["status"] for h in index.search("lint commit")}
    assert statuses == {"lint-command": "superseded", "lint-command-ruff": "active"}


def test_episode_add_change_remove(layout: Layout, task: TaskFolder) -> None:
    path = task.episodes / "e1.json"
    write_json(layout, path, {"id": "e1", "summary": "Chose a token bucket for rate limits"})
    with SearchIndex(layout) as index:
        index.search("anything")
        assert refs(index, "token bucket") == [f"episode:{task.slug}/e1"]
        write_json(layout, path, {"id": "e1", "summary": "Chose a sliding window instead"})
        assert refs(index, "token bucket") == []
        assert refs(index, "sliding window") == [f"episode:{task.slug}/e1"]
        path.unlink()
        index_written(layout, path)
        assert refs(index, "sliding window") == []


def test_transcript_lines_are_turns_and_appends_are_indexed(
    layout: Layout, task: TaskFolder
) -> None:
    path = task.transcripts / "1.jsonl"
    write_transcript(layout, path, [("user", "add a limiter"), ("assistant", "reading app.py")])
    with SearchIndex(layout) as index:
        assert refs(index, "limiter", k=1) == [f"transcript:{task.slug}/1:1"]
        with path.open("a", encoding="utf-8") as fh:
            turn = {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "grep", "input": {"q": "redis"}}
                ],
            }
            fh.write(json.dumps(turn) + "\n")
            fh.write('{"role": "user", "content": [{"type": "tex')  # a torn last line
        index_written(layout, path)
        assert refs(index, "redis", k=1) == [f"transcript:{task.slug}/1:3"]
        assert index.count() == 3


def test_every_kind_gets_its_ref(layout: Layout, task: TaskFolder, add_memory) -> None:
    add_memory("queue-choice", "The job queue is a zebra broker.")
    write_json(layout, task.episodes / "ep-2.json", {"summary": "zebra episode"})
    write_json(
        layout,
        task.l3,
        {
            "v": 1,
            "items": [{"id": "f1", "kind": "fact", "text": "zebra fact", "episodes": ["ep-2"]}],
        },
    )
    task.write_phase_report(2, "# Phase 2: zebra report\n\nDone.\n")
    index_written(layout, task.phase_report(2))
    task.summaries.mkdir()
    (task.summaries / "long-20261121T100000Z.md").write_text("zebra summary\n", encoding="utf-8")
    index_written(layout, task.summaries / "long-20261121T100000Z.md")
    write_transcript(layout, task.transcripts / "4.jsonl", [("user", "a zebra turn")])
    slug = task.slug
    with SearchIndex(layout) as index:
        assert set(refs(index, "zebra", k=20)) == {
            "memory:queue-choice",
            f"episode:{slug}/ep-2",
            f"l3:{slug}/f1",
            f"report:{slug}/phase-2",
            f"summary:{slug}/long-20261121T100000Z",
            f"transcript:{slug}/4:1",
        }
        assert {h.kind for h in index.search("zebra", kinds={"l3", "report"})} == {"l3", "report"}
        l3 = index.search("zebra fact", k=1)[0]
        assert l3.meta["episodes"] == ["ep-2"]
        assert (
            index.search("zebra", k=1, kinds={"report"})[0].meta["title"] == "Phase 2: zebra report"
        )


def test_rebuild_equals_incremental(layout: Layout, task: TaskFolder, add_memory) -> None:
    add_memory("cache-dir", "The cache lives in .orch and is never committed.")
    add_memory("deploy-target", "Deploys go to the staging cluster first.")
    write_json(
        layout,
        task.episodes / "e1.json",
        {"summary": "moved the cache", "decisions": ["keep .orch"]},
    )
    write_transcript(
        layout,
        task.transcripts / "1.jsonl",
        [("user", "deploy it"), ("assistant", "staging first")],
    )
    write_json(layout, task.episodes / "e2.json", {"summary": "gone soon"})
    (task.episodes / "e2.json").unlink()
    index_written(layout, task.episodes / "e2.json")
    with SearchIndex(layout) as index:
        incremental = snapshot(index)
        queries = ["cache", "deploy staging", "orch"]
        before = {q: index.search(q) for q in queries}
        assert index.rebuild() == len(incremental) == 5
        assert snapshot(index) == incremental
        assert {q: index.search(q) for q in queries} == before


def test_files_written_behind_its_back_are_found_on_first_search(
    layout: Layout, task: TaskFolder
) -> None:
    with SearchIndex(layout) as index:
        index.rebuild()
    write_json(layout, task.episodes / "quiet.json", {"summary": "a silent walrus"}, notify=False)
    with SearchIndex(layout) as index:
        assert refs(index, "walrus") == [f"episode:{task.slug}/quiet"]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "missing", "old-version"])
def test_a_broken_index_is_rebuilt(layout: Layout, add_memory, damage: str) -> None:
    add_memory("broker", "The broker is a heron queue.")
    db = layout.cache / "search.sqlite"
    with SearchIndex(layout) as index:
        assert refs(index, "heron") == ["memory:broker"]
    if damage == "garbage":
        db.write_bytes(b"this is not a database" * 100)
    elif damage == "truncated":
        db.write_bytes(db.read_bytes()[:1000])
    elif damage == "missing":
        db.unlink()
    else:
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA user_version = 99")
        conn.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    with SearchIndex(layout) as index:
        assert refs(index, "heron") == ["memory:broker"]


def test_an_index_failure_never_fails_a_memory_write(
    layout: Layout, add_memory, caplog: pytest.LogCaptureFixture
) -> None:
    db = layout.cache / "search.sqlite"
    db.mkdir(parents=True)  # sqlite cannot open a folder
    with caplog.at_level(logging.WARNING, logger="orchestrator.retrieval.index"):
        add_memory("owl-fact", "Owls run the nightly job.")
    assert RepoMemoryStore(layout).get("owl-fact").fact == "Owls run the nightly job."
    assert "search index not updated" in caplog.text
    db.rmdir()
    with SearchIndex(layout) as index:
        assert refs(index, "owls") == ["memory:owl-fact"]


def test_update_and_remove_documents_directly(layout: Layout) -> None:
    with SearchIndex(layout) as index:
        index.update("l3", "t/x1", "prefer bounded queues", {"title": "queues", "type": "pattern"})
        hits = index.search("bounded")
        assert [(h.kind, h.ref, h.meta["type"]) for h in hits] == [("l3", "t/x1", "pattern")]
        index.update("l3", "t/x1", "prefer unbounded channels")
        assert refs(index, "bounded") == []
        index.remove("l3", "t/x1")
        assert refs(index, "channels") == []
        with pytest.raises(ValueError, match="unknown document kind"):
            index.update("nonsense", "r", "text")


def test_an_answer_next_to_the_question_is_found(layout: Layout) -> None:
    """Neighbour smoothing: the reply carries none of the query's words."""
    turns = [
        ("user", "morning, how was the weekend"),
        ("assistant", "fine thanks, went hiking"),
        ("user", "which database did you pick for the billing service"),
        ("assistant", "Postgres, with one schema per tenant"),
        ("user", "ok and the weather"),
        ("assistant", "rainy all week"),
    ]
    with SearchIndex(layout) as index:
        index.update_many(
            Doc("transcript", f"t/1:{n}", text, {"title": role})
            for n, (role, text) in enumerate(turns, 1)
        )
        top = refs(index, "database for billing", k=2)
    assert top == ["transcript:t/1:3", "transcript:t/1:4"]


def test_a_small_index_still_ranks_by_how_well_documents_match(layout: Layout) -> None:
    """In a two-document index every word is 'common' to FTS5; scores must still order."""
    with SearchIndex(layout) as index:
        index.update("l3", "t/a", "retry the upload with backoff, retry the download")
        index.update("l3", "t/b", "upload once")
        hits = index.search("retry upload")
        assert [h.ref for h in hits] == ["t/a", "t/b"]
        assert hits[0].score > hits[1].score > 0.01
        assert [h.ref for h in index.search("the")] == ["t/a"]  # stop words only: still searched


def test_a_memory_outranks_turns_that_only_repeat_its_words(layout: Layout, add_memory) -> None:
    add_memory("attachments", "Attachments are stored base64 encoded in the `blob` column.")
    with SearchIndex(layout) as index:
        index.update_many(
            [
                Doc("transcript", f"t1#{n}", f"base64 again: base64 output {n} looks odd", {})
                for n in range(12)
            ]
        )
        hits = index.search("base64", k=5)
        assert hits[0].kind == "memory" and hits[0].ref == "attachments"
        turns = index.search("base64", k=5, kinds={"transcript"})
        assert turns and {h.kind for h in turns} == {"transcript"}


def test_a_file_rewritten_in_place_is_read_again_when_a_search_returns_it(
    layout: Layout, add_memory
) -> None:
    add_memory("broker", "The broker is a heron queue.")
    path = layout.repo_memories / "broker.md"
    past = path.stat().st_mtime - 60
    os.utime(layout.repo_memories, (past, past))  # an old folder: its signature is kept
    with SearchIndex(layout) as index:
        index.rebuild()
    folder = layout.repo_memories.stat()
    with open(path, "r+", encoding="utf-8") as fh:  # in place: the folder does not change
        text = fh.read().replace("heron", "egret")
        fh.seek(0)
        fh.write(text)
        fh.truncate()
    assert layout.repo_memories.stat().st_mtime_ns == folder.st_mtime_ns
    with SearchIndex(layout) as index:
        assert refs(index, "heron") == []
        assert refs(index, "egret") == ["memory:broker"]


def test_a_task_folder_removed_takes_its_documents_with_it(
    layout: Layout, task: TaskFolder
) -> None:
    write_json(layout, task.episodes / "e1.json", {"summary": "a lonely walrus"})
    with SearchIndex(layout) as index:
        assert refs(index, "walrus") == [f"episode:{task.slug}/e1"]
    shutil.rmtree(task.path)
    with SearchIndex(layout) as index:
        assert refs(index, "walrus") == []
