"""`orch hook claude-code EVENT` as Claude Code runs it: a subprocess fed the event's JSON."""

from __future__ import annotations

import json
from pathlib import Path

from integrations_support import git, orch

from orchestrator.memory.usage import UsageLog
from orchestrator.store.layout import Layout
from orchestrator.store.notes import NotesFile


def payload(repo: Path, event: str, **more: object) -> str:
    return json.dumps(
        {
            "session_id": "s-1",
            "transcript_path": str(repo.parent / "transcript.jsonl"),
            "cwd": str(repo),
            "hook_event_name": event,
            **more,
        }
    )


def test_session_start_gives_notes_brief_and_verified_index(project: Layout) -> None:
    repo = project.root
    NotesFile(project).set(objective=["Ship the store rewrite"])
    (repo / "app" / "store.py").unlink()  # store-load no longer holds
    git(repo, "commit", "-qam", "drop the store")
    for source in ("startup", "resume", "clear", "compact"):
        done = orch(repo, "hook", "claude-code", "SessionStart",
                    stdin=payload(repo, "SessionStart", source=source))  # fmt: skip
        assert done.returncode == 0 and done.stderr == "", done.stderr
        out = json.loads(done.stdout)["hookSpecificOutput"]
        assert out["hookEventName"] == "SessionStart"
        context = out["additionalContext"]
        assert f"session {source}" in context and "Ship the store rewrite" in context
        assert "[entry-point](entry-point.md)" in context
        assert "store-load" not in context.split("Withheld as stale")[0]  # never as true
    with UsageLog(project) as usage:
        assert usage.summary()["entry-point"].reached == 4  # served: recorded as reaching


def test_pre_compact_saves_the_transcript_path_and_the_scratch(project: Layout) -> None:
    repo = project.root
    (project.session / "some-task-notes.md").write_text("# Session\n\nworking on the loader\n")
    done = orch(repo, "hook", "claude-code", "PreCompact",
                stdin=payload(repo, "PreCompact", trigger="auto", custom_instructions=""))  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() in ("", "{}")
    saved = list((project.session / "claude-code").glob("precompact-*.json"))
    assert len(saved) == 1
    record = json.loads(saved[0].read_text())
    assert record["transcript_path"].endswith("transcript.jsonl") and record["trigger"] == "auto"
    assert "working on the loader" in record["session_scratch"]["some-task-notes.md"]


def test_stop_reports_memories_the_session_made_stale_and_never_blocks(project: Layout) -> None:
    repo = project.root
    quiet = orch(
        repo, "hook", "claude-code", "Stop", stdin=payload(repo, "Stop", stop_hook_active=False)
    )
    assert quiet.returncode == 0 and quiet.stdout.strip() == ""  # nothing changed: nothing said
    (repo / "app" / "store.py").write_text("class Repository:\n    pass\n")  # Store.load gone
    done = orch(
        repo, "hook", "claude-code", "Stop", stdin=payload(repo, "Stop", stop_hook_active=False)
    )
    assert done.returncode == 0
    answer = json.loads(done.stdout)
    assert "store-load" in answer["systemMessage"] and "entry-point" not in answer["systemMessage"]
    assert "decision" not in answer and answer.get("continue", True) is True
    again = orch(
        repo, "hook", "claude-code", "Stop", stdin=payload(repo, "Stop", stop_hook_active=True)
    )
    assert again.returncode == 0 and again.stdout.strip() == ""  # already continuing: silent


def test_bad_input_is_one_line_and_exit_zero(project: Layout, tmp_path: Path) -> None:
    repo = project.root
    for stdin in ("", "not json", "[1, 2]"):
        done = orch(repo, "hook", "claude-code", "SessionStart", stdin=stdin)
        assert done.returncode == 0 and done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    elsewhere = tmp_path / "plain"
    elsewhere.mkdir()
    git(elsewhere, "init", "-q")
    done = orch(
        elsewhere, "hook", "claude-code", "SessionStart", stdin=payload(elsewhere, "SessionStart")
    )
    assert done.returncode == 0 and "orch init" in done.stderr and done.stdout == ""
