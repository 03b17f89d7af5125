"""Checklist C on a real task folder: every decision, its event, and its file."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from click.testing import CliRunner

from orchestrator.cli import cli
from orchestrator.config import MemoryConfig
from orchestrator.memory.candidates import append_candidate, task_candidates
from orchestrator.memory.promotion import promote
from orchestrator.models.scripted import ScriptedModel
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.session import SessionNotes
from orchestrator.store.tasks import TaskFolder

TIMEOUT = {
    "fact": "The default timeout is 45 seconds (`DEFAULT_TIMEOUT` in `app/main.py`).",
    "subject": "default timeout",
    "reason": "slow backends need it",
    "type": "reference",
}


def decisions(report: Any) -> dict[str, str]:
    return {d.candidate.fact: d.decision for d in report.decisions}


def test_each_rule_of_checklist_c(layout: Layout, put: Callable[..., Any]) -> None:
    put(
        "default-timeout",
        "The default timeout is 30 seconds (`DEFAULT_TIMEOUT` in `app/main.py`).",
        subject="default timeout",
        citations=(Citation("app/main.py", 5),),
    )
    put(
        "loader",
        "`Loader.load` returns None for unknown paths, never raises.",
        subject="loader misses",
        citations=(Citation("app/main.py", 12, "Loader.load"),),
    )
    task = TaskFolder.create(layout, "tune timeouts")
    append_candidate(task, TIMEOUT)  # contradicts default-timeout: supersedes it
    append_candidate(
        task,
        {
            "fact": "Commit 3f2a9c1 fixed the flaky loader test.",
            "subject": "loader test",
            "reason": "r",
        },
    )
    append_candidate(
        task, {"fact": "Iteration 3 passed at 14:32.", "subject": "progress", "reason": "r"}
    )
    append_candidate(
        task,
        {
            "fact": "`parse_config` is defined in `app/main.py`.",
            "subject": "config parser",
            "reason": "r",
        },
    )
    append_candidate(
        task,
        {
            "fact": "For now the retry budget in this phase is 2.",
            "subject": "retry budget",
            "reason": "r",
        },
    )
    append_candidate(
        task,
        {
            "fact": "The cart must render without network access.",
            "subject": "offline cart",
            "type": "project",
        },
    )
    append_candidate(
        task,
        {
            "fact": "`Loader.load` returns None for unknown paths and never raises.",
            "subject": "loader misses",
            "reason": "callers check for None",
            "type": "reference",
            "citations": ["app/main.py:12#Loader.load"],
        },
    )
    append_candidate(
        task,
        {
            "fact": "The user prefers small commits with one change each.",
            "subject": "commit size",
            "reason": "review speed",
        },
    )
    append_candidate(
        task,
        {
            "fact": "Always run `app --dry-run` before a real import.",
            "subject": "dry runs",
            "reason": "imports cannot be undone",
        },
    )
    log = task.events()
    report = promote(layout, task, log, phase=3)

    assert decisions(report) == {
        TIMEOUT["fact"]: "superseded",
        "Commit 3f2a9c1 fixed the flaky loader test.": "excluded",
        "Iteration 3 passed at 14:32.": "excluded",
        "`parse_config` is defined in `app/main.py`.": "excluded",
        "For now the retry budget in this phase is 2.": "task_only",
        "The cart must render without network access.": "incomplete",
        "`Loader.load` returns None for unknown paths and never raises.": "skipped",
        "The user prefers small commits with one change each.": "written",
        "Always run `app --dry-run` before a real import.": "written",
    }
    by_fact = {d.candidate.fact: d for d in report.decisions}
    assert {d.exclusion for d in report.decisions if d.decision == "excluded"} == {
        "git_history", "ephemeral_task_state", "derivable_from_code",
    }  # fmt: skip
    assert (
        "missing reason, citations"
        in by_fact["The cart must render without network access."].reason
    )

    store = RepoMemoryStore(layout)
    old = store.get("default-timeout")
    assert old.status == "superseded"
    new = store.get(old.superseded_by or "")
    assert new.type == "reference" and new.source == {"task": task.slug, "phase": 3}
    assert new.citations == (Citation("app/main.py"),)  # derived from the fact's path
    assert store.get("commit-size").type == "user"
    assert store.get("dry-runs").type == "feedback"

    kept = (task.path / "task-memory.md").read_text()
    assert "For now the retry budget" in kept and "The cart must render" in kept
    assert "Commit 3f2a9c1" not in kept

    events = log.read(check=True)
    assert events.problems == []
    promotions = [e for e in events.events if e.event_type == "memory_promotion"]
    assert len(promotions) == len(report.decisions) == 9
    assert all(e.phase == 3 for e in promotions)


def test_a_second_run_decides_nothing_twice(layout: Layout) -> None:
    task = TaskFolder.create(layout, "again")
    append_candidate(
        task, {**TIMEOUT, "fact": "`Loader` keeps a cache of parsed files in `app/main.py`."}
    )
    log = task.events()
    first = promote(layout, task, log)
    assert [d.decision for d in first.decisions] == ["written"]
    second = promote(layout, task, log)
    assert second.decisions == [] and second.already_decided == 1
    assert len([e for e in log.read().events if e.event_type == "memory_promotion"]) == 1


def test_sources_session_notes_phase_reports_and_episodes(layout: Layout) -> None:
    task = TaskFolder.create(layout, "sources")
    notes = SessionNotes(layout, task.slug)
    notes.ensure()
    notes.append(
        "Key Results",
        "Config is parsed by `parse_config()` in `app/main.py`. [subject: config entry; "
        "type: reference; cite: app/main.py:16#parse_config; why: every command starts there]",
    )
    task.write_phase_report(
        1,
        "# Phase 1 report\n\n## What changed\n- things\n\n## Notes for later phases\n"
        "- The next phase must keep the old flag.\n",
    )
    task.episodes.mkdir(parents=True)
    (task.episodes / "e1.json").write_text(
        json.dumps(
            {
                "l3": [
                    {
                        "fact": "The web client renders carts with `renderCart()` in `web/cart.js`.",
                        "subject": "cart rendering",
                        "reason": "UI changes start there",
                    }
                ],
                "patterns": ["Write the failing test first, then fix the code."],
            }
        )
    )
    found = task_candidates(task)
    assert [(c.source, c.kind) for c in found] == [
        ("episode", "fact"),
        ("episode", "pattern"),
        ("session_notes", "fact"),
        ("phase_report", "fact"),
    ]
    notes_candidate = found[2]
    assert notes_candidate.citations == (Citation("app/main.py", 16, "parse_config"),)
    assert notes_candidate.reason == "every command starts there"
    report = promote(layout, task, task.events())
    assert [d.decision for d in report.decisions] == [
        "pattern_noted",
        "written",
        "written",
        "task_only",
    ]


def test_recurring_patterns_become_skill_proposals_never_applied(layout: Layout) -> None:
    earlier = TaskFolder.create(layout, "earlier")
    append_candidate(
        earlier,
        {"fact": "Reproduce the bug in a failing test before fixing it.", "kind": "pattern"},
    )
    task = TaskFolder.create(layout, "now")
    append_candidate(
        task,
        {
            "fact": "Reproduce the bug with a failing test before fixing it.",
            "kind": "pattern",
            "subject": "test first",
        },
    )
    below = promote(layout, task, task.events(), config=MemoryConfig(skill_min_occurrences=3))
    assert [d.decision for d in below.decisions] == ["pattern_noted"]
    assert not task.skill_proposals.exists()

    append_candidate(
        task, {"fact": "Reproduce a bug as a failing test before fixing it.", "kind": "pattern"}
    )
    report = promote(layout, task, task.events(), config=MemoryConfig(skill_min_occurrences=3))
    assert "skill_proposal" in [d.decision for d in report.decisions]
    (proposal,) = task.skill_proposals.iterdir()
    text = proposal.read_text()
    assert "orch never applies a skill proposal" in text and "Seen 3 times" in text
    assert RepoMemoryStore(layout).load_all().memories == []  # nothing applied or written


def test_the_model_proposes_and_the_rules_decide(layout: Layout) -> None:
    task = TaskFolder.create(layout, "with model")
    append_candidate(task, {"fact": "Retries for imports are capped at 3 in `app/main.py`."})
    append_candidate(task, {"fact": "Branch `feature/x` was merged into main yesterday."})
    ids = [c.id for c in task_candidates(task)]
    reply = json.dumps(
        [
            {
                "id": ids[0],
                "subject": "import retries",
                "type": "user",
                "reason": "imports flake",
                "scope": "repo",
            },
            {
                "id": ids[1],
                "subject": "merge",
                "type": "project",
                "reason": "history",
                "scope": "repo",
            },
        ]
    )
    model = ScriptedModel.from_replies({"text": f"```json\n{reply}\n```"})
    report = promote(layout, task, task.events(), model=model)
    assert model.requests[0].purpose == "extractor"
    assert "Save exclusions" in model.requests[0].system_text()
    by = {d.candidate.fact[:7]: d for d in report.decisions}
    assert by["Retries"].decision == "written" and by["Retries"].type == "reference"  # not "user"
    assert by["Branch "].decision == "excluded"


def test_cli_promote_prints_json(layout: Layout) -> None:
    task = TaskFolder.create(layout, "cli task")
    append_candidate(task, {"fact": "Iteration 2 passed at 10:15.", "subject": "x", "reason": "y"})
    result = CliRunner().invoke(cli, ["memory", "promote", task.slug, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (
        data["counts"]["excluded"] == 1
        and data["decisions"][0]["exclusion"] == "ephemeral_task_state"
    )
    missing = CliRunner().invoke(cli, ["memory", "promote", "no-such-task"])
    assert missing.exit_code == 2 and "no task 'no-such-task'" in missing.output


def test_l3_items_kept_by_the_context_part_are_candidates(layout: Layout) -> None:
    from orchestrator.context.semantic import Candidate as L3Candidate
    from orchestrator.context.semantic import merge_into_task

    task = TaskFolder.create(layout, "folded")
    fact = L3Candidate(
        "fact",
        "loader misses",
        "`Loader.load` returns None for unknown paths.",
        "callers check for None",
        ({"path": "app/main.py", "line": 12, "symbol": "Loader.load"},),
    )
    pattern = L3Candidate("pattern", "test first", "Reproduce the bug in a failing test first.")
    for episode in ("ep-0001", "ep-0002", "ep-0003"):
        merge_into_task(task, [fact, pattern], episode)
    # the episodes' own copies are merged into l3.json: they are not counted again
    task.episodes.mkdir(parents=True, exist_ok=True)
    (task.episodes / "ep-0001.json").write_text(json.dumps({"l3": [{"fact": "ignored"}]}))
    found = task_candidates(task)
    assert [(c.source, c.kind, c.seen) for c in found] == [("l3", "fact", 3), ("l3", "pattern", 3)]
    report = promote(layout, task, task.events(), config=MemoryConfig(skill_min_occurrences=3))
    assert [d.decision for d in report.decisions] == ["skill_proposal", "written"]
    written = RepoMemoryStore(layout).get(report.decisions[1].memory or "")
    assert written.citations == (Citation("app/main.py", 12, "Loader.load"),)


def test_gate_notes_are_dropped_without_a_decision(layout: Layout) -> None:
    task = TaskFolder.create(layout, "gate notes")
    log = task.events()
    notes = SessionNotes(layout, task.slug)
    notes.ensure()
    gate_notes = [
        "phase 1: tests_pass: PASS; lint_clean: NOT_RUN",  # what orch itself writes
        "tests passed after the retry",
        "gate lint_clean failed once",
        "lint was fixed in phase 2",
    ]
    lesson = "tests failed because the fixture needs TZ=UTC"  # says why: a decision
    for line in [*gate_notes, lesson]:
        notes.append("Key Results", f"- {line}")
    append_candidate(task, TIMEOUT)
    report = promote(layout, task, log, phase=1)
    assert report.gate_notes == 4 and report.to_dict()["gate_notes_dropped"] == 4
    assert decisions(report) == {lesson: "excluded", TIMEOUT["fact"]: "written"}
    logged = [e.payload["fact"] for e in log.read().events if e.event_type == "memory_promotion"]
    assert sorted(logged) == sorted([lesson, TIMEOUT["fact"]])
    assert report.summary() == "Checklist C: 1 written, 1 excluded"
    assert not (task.path / "task-memory.md").exists()
    again = promote(layout, task, log, phase=1)  # nothing new to decide, nothing said
    assert again.decisions == [] and again.summary().startswith("Checklist C: no new")
