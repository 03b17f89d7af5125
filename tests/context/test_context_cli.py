"""`orch compact SLUG` on a real task folder, and the context suite (`python -m evals.context`)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from evals.context import context
from orchestrator.cli import cli
from orchestrator.context.compaction import read_head, reinjected
from orchestrator.context.saved import compact_saved
from orchestrator.context.transcripts import read_transcript, transcript_numbers
from orchestrator.events.log import read_events
from orchestrator.messages import Message
from orchestrator.models.scripted import ScriptedModel
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder


@pytest.fixture
def repo_task(git_repo: Path) -> TaskFolder:
    result = CliRunner().invoke(cli, ["init"])
    assert result.exit_code == 0, result.output
    return TaskFolder.create(Layout(git_repo), "add rate limiting")


def save_conversation(task: TaskFolder, phase: int, messages: list[Message], **extra: Any) -> Path:
    path = task.conversation(phase)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "v": 1,
        "phase": phase,
        "turn": sum(m.role == "assistant" for m in messages),
        "messages": [m.to_dict() for m in messages],
        "last_instruction": "add rate limiting, keep the API stable",
        **extra,
    }
    path.write_text(json.dumps(data))
    return path


def use_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: dict[str, Any]) -> None:
    path = tmp_path / "model.json"
    path.write_text(json.dumps(script))
    monkeypatch.setenv("ORCH_MODEL", f"scripted:{path}")


def test_orch_compact_rewrites_the_current_phase_after_saving_its_turns(
    repo_task: TaskFolder, kit: SimpleNamespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_script(tmp_path, monkeypatch, kit.script())
    (repo_task.layout.root / "orch.toml").write_text("[context]\nmask_batch_rounds = 1\n")
    older = save_conversation(repo_task, 1, kit.conversation(2))
    older_bytes = older.read_bytes()
    messages = kit.conversation(12, size=1500)
    path = save_conversation(repo_task, 2, messages, rules=kit.RULES, phase_card=kit.PHASE_CARD)

    result = CliRunner().invoke(cli, ["compact", repo_task.slug])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"compacted phase 2 of {repo_task.slug}: ")
    assert "saved in transcripts/1.jsonl" in result.output

    data = json.loads(path.read_text())
    assert data["last_instruction"] == "add rate limiting, keep the API stable"
    assert data["rules"] == kit.RULES and data["turn"] == 12  # the engine's fields are kept
    compacted = [Message.from_dict(m) for m in data["messages"]]
    head = read_head(compacted)
    assert head is not None and head.first_turn == 0
    assert reinjected(compacted) == {
        "repository-rules": kit.RULES,
        "phase-card": kit.PHASE_CARD,
        "last-instruction": "add rate limiting, keep the API stable",
    }
    # the dropped turns are on disk, raw, in the transcript the event names
    lines = read_transcript(repo_task, 1)
    assert [line.turn for line in lines] == list(range(head.last_turn + 1))
    assert [line.message for line in lines] == messages[: head.last_turn + 1]
    # the kept turns whose results were masked are saved too, in the next transcript
    masked = read_transcript(repo_task, 2)
    assert masked and masked[0].turn == head.last_turn + 1
    assert [line.message for line in masked] == messages[masked[0].turn : masked[-1].turn + 1]
    assert older.read_bytes() == older_bytes  # other phases are left alone
    events = read_events(repo_task.event_log_path, check=True).events
    (event,) = [e for e in events if e.event_type == "compaction"]
    assert event.phase == 2 and event.payload["kind"] == "manual"
    assert event.payload["outcome"] == "ok"
    calls = [e for e in events if e.event_type == "model_call"]
    assert calls and all(c.agent == "Compactor" for c in calls)
    assert all(c.payload["purpose"] == "compactor" for c in calls)

    # a second run compacts again from the first summary, with the same verbatim parts
    again = CliRunner().invoke(cli, ["compact", repo_task.slug, "--phase", "2", "--json"])
    assert again.exit_code in (0,), again.output
    report = json.loads(again.output)
    assert report["phase"] == 2 and report["outcome"] in ("ok", "nothing")


def test_orch_compact_json_reports_the_figures(
    repo_task: TaskFolder, kit: SimpleNamespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_script(tmp_path, monkeypatch, kit.script())
    save_conversation(repo_task, 1, kit.conversation(12, size=1500), phase_card=kit.PHASE_CARD)
    result = CliRunner().invoke(cli, ["compact", repo_task.slug, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["outcome"] == "ok" and report["transcript"] == "transcripts/1.jsonl"
    assert report["tokens_after"] < report["tokens_before"]
    assert report["messages_before"] == 25 and report["messages_after"] < 25


def test_a_failed_compaction_changes_nothing_and_says_so_in_one_line(
    repo_task: TaskFolder, kit: SimpleNamespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_script(tmp_path, monkeypatch, kit.script(summary="I could not summarise that."))
    path = save_conversation(repo_task, 1, kit.conversation(12, size=1500))
    before = path.read_bytes()
    result = CliRunner().invoke(cli, ["compact", repo_task.slug])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: compaction failed: the summary lacks the sections Task overview, Current state, "
        "Important discoveries, Next steps, Context to preserve; phase-1.json is unchanged"
    ]
    assert path.read_bytes() == before
    assert transcript_numbers(repo_task) == []  # a failed attempt writes nothing but its event
    (event,) = [
        e for e in read_events(repo_task.event_log_path).events if e.event_type == "compaction"
    ]
    assert event.payload["outcome"] == "failed" and event.payload["kind"] == "manual"


def test_a_crash_while_writing_back_leaves_the_transcript_and_the_old_file(
    repo_task: TaskFolder, kit: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    import orchestrator.context.saved as saved_module
    from orchestrator.config import Config

    messages = kit.conversation(12, size=1500)
    path = save_conversation(repo_task, 1, messages)
    before = path.read_bytes()

    def crash(*args: Any, **kw: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(saved_module, "atomic_write", crash)
    with pytest.raises(OSError, match="disk full"):
        compact_saved(repo_task, Config(), model=ScriptedModel(kit.script()))
    assert path.read_bytes() == before
    lines = read_transcript(repo_task, 1)
    assert lines and [line.message for line in lines] == messages[: len(lines)]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["compact", "no-such-task"], 2, "no task 'no-such-task'"),
        (["compact", "add-rate-limiting"], 2, "has no saved conversation to compact yet"),
        (["compact", "add-rate-limiting", "--phase", "4"], 2, "no saved conversation for phase 4"),
    ],
)
def test_bad_targets_are_one_line_usage_errors(
    repo_task: TaskFolder, args: list[str], code: int, message: str
) -> None:
    if "--phase" in args:
        save_conversation(repo_task, 1, [Message.user("go")])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == code
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_running_task_is_not_compacted_under_its_feet(
    repo_task: TaskFolder, kit: SimpleNamespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_script(tmp_path, monkeypatch, kit.script())
    path = save_conversation(repo_task, 1, kit.conversation(12, size=1500))
    before = path.read_bytes()
    with repo_task.lock():
        result = CliRunner().invoke(cli, ["compact", repo_task.slug])
    assert result.exit_code == 3 and "locked by another orch process" in result.output
    assert path.read_bytes() == before


def test_a_short_conversation_has_nothing_to_compact(
    repo_task: TaskFolder, kit: SimpleNamespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_script(tmp_path, monkeypatch, kit.script())
    path = save_conversation(repo_task, 1, kit.conversation(2))
    before = path.read_bytes()
    result = CliRunner().invoke(cli, ["compact", repo_task.slug])
    assert result.exit_code == 0 and result.output.startswith("nothing to compact in phase 1")
    assert path.read_bytes() == before


def test_the_context_suite_reports_its_figures(git_repo: Path) -> None:
    result = CliRunner().invoke(
        context, ["--turns", "120", "--threshold", "8000", "--budget", "12000", "--json"]
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["suite"] == "context" and figures["turns"] == 120
    assert figures["under_budget"] and figures["peak_prompt_tokens"] <= 12000
    assert figures["compactions"] >= 1 and figures["failed_compactions"] == 0
    assert figures["uncompacted_ratio_last_to_50"] > 2 > figures["ratio_last_to_50"]
    facts = figures["facts"]
    assert facts["planted"] == facts["in_transcripts"] == 10
    assert facts["found_by_search"] == 10
    assert list(Path(git_repo).iterdir()) == [Path(git_repo) / ".git"]  # ran in a temp folder
