"""NOTES.md (tier 3 objective state), session notes (tier 1) and task folders (tier 2)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from foundation_helpers import one_error_line, snapshot

from orchestrator.errors import InvalidFile, UsageError
from orchestrator.store.layout import Layout
from orchestrator.store.notes import MAX_NOTES_LINES, NotesFile, blocker_task, parse_notes
from orchestrator.store.plans import dependency_cycle, plan_problems, topological_order
from orchestrator.store.session import HEADINGS, SessionNotes, session_slugs
from orchestrator.store.tasks import TaskFolder, VerifiedItem, list_tasks, slugify

# -- NOTES.md -------------------------------------------------------------------------------


def test_notes_set_keeps_the_form_and_unnamed_sections(layout: Layout) -> None:
    notes = NotesFile(layout)
    notes.set(objective=["Ship the store"], blockers=["CI is red"])
    notes.set(pending=["write docs", "  ", "bench\nit"])
    text = layout.notes.read_text()
    assert text == (
        "# NOTES\n\n## Active objective\n- Ship the store\n\n## Blockers\n- CI is red\n\n"
        "## Pending\n- write docs\n- bench it\n"
    )
    assert parse_notes(text).to_dict() == {
        "objective": ["Ship the store"],
        "blockers": ["CI is red"],
        "pending": ["write docs", "bench it"],
    }


def test_notes_over_20_lines_are_refused_and_the_file_is_untouched(layout: Layout) -> None:
    before = layout.notes.read_bytes()
    with pytest.raises(UsageError, match="at most 20"):
        NotesFile(layout).set(pending=[f"item {i}" for i in range(MAX_NOTES_LINES)])
    assert layout.notes.read_bytes() == before
    NotesFile(layout).set(pending=[f"item {i}" for i in range(MAX_NOTES_LINES - 9)])
    assert layout.notes.read_text().count("\n") == MAX_NOTES_LINES


def test_task_blockers_are_tagged_and_each_task_clears_only_its_own(
    layout: Layout, orch: Any
) -> None:
    notes = NotesFile(layout)
    notes.set(blockers=["waiting on the API key from ops"])  # a person's own
    notes.set(task_blocker=("task-a", "phase 1 stopped: tests failed"))
    notes.set(task_blocker=("task-b", "BLOCKED: no-such-runner cannot run"))
    notes.set(task_blocker=("task-a", "phase 2 stopped: lint failed"))  # replaces a's own
    assert notes.read().blockers == [
        "waiting on the API key from ops",
        "task task-b: BLOCKED: no-such-runner cannot run",
        "task task-a: phase 2 stopped: lint failed",
    ]
    notes.set(objective=[], pending=[], task_blocker=("task-b", None))  # b completes
    shown = orch("notes", "show")
    assert shown.code == 0 and "- task task-a: phase 2 stopped: lint failed" in shown.out
    assert "task-b" not in shown.out and "- waiting on the API key from ops" in shown.out
    # 20 lines full: Pending is shortened first, then other tasks' oldest blockers leave
    notes.set(objective=["one task"], pending=[f"phase {n}: step" for n in range(1, 11)])
    notes.set(task_blocker=("task-c", "stopped"))
    notes.set(task_blocker=("task-d", "stopped too"))
    after = notes.read()
    assert layout.notes.read_text().count("\n") == MAX_NOTES_LINES
    assert after.pending[-1] == "and 3 more pending items" and len(after.pending) == 8
    assert after.blockers[0] == "waiting on the API key from ops"
    assert after.blockers[-2:] == ["task task-c: stopped", "task task-d: stopped too"]
    for t in "efghijkl":
        notes.set(task_blocker=(f"task-{t}", "stopped"))
    full = notes.read()
    assert [blocker_task(b) for b in full.blockers] == [None, "task-c", "task-d"] + [
        f"task-{t}" for t in "efghijkl"
    ]  # task-a's, the oldest of another task, left; the person's stays
    assert full.pending == ["and 10 more pending items"]
    assert layout.notes.read_text().count("\n") == MAX_NOTES_LINES


def test_notes_set_refuses_to_drop_hand_written_text(layout: Layout) -> None:
    layout.notes.write_text("# NOTES\n\n## Active objective\n- a\n\n## Context\nkeep me\n")
    before = layout.notes.read_bytes()
    with pytest.raises(InvalidFile, match=r"keep me|Context"):
        NotesFile(layout).set(objective=["b"])
    assert layout.notes.read_bytes() == before


def test_notes_cli_show_and_set(layout: Layout, orch: Any) -> None:
    assert orch("notes", "set", "--objective", "Build it").code == 0
    shown = orch("notes", "show")
    assert shown.code == 0 and "- Build it" in shown.out
    data = json.loads(orch("notes", "show", "--json").out)
    assert data == {"objective": ["Build it"], "blockers": [], "pending": [], "problems": []}
    assert orch("notes", "set", "--blocker", "x").code == 0
    assert orch("notes", "set", "--clear-blockers").code == 0
    assert parse_notes(layout.notes.read_text()).blockers == []


def test_notes_show_reports_a_file_that_strays_from_its_form(layout: Layout, orch: Any) -> None:
    layout.notes.write_text("# NOTES\n" + "".join(f"- line {i}\n" for i in range(25)))
    run = orch("notes", "show")
    assert run.code == 1
    assert "- line 24" in run.out  # the file is shown as it is
    assert "NOTES.md: 26 lines (at most 20)" in run.err


def test_notes_set_without_options_is_a_usage_error(layout: Layout, orch: Any) -> None:
    before = snapshot(layout.root)
    one_error_line(orch("notes", "set"), 2, "notes set needs")
    assert snapshot(layout.root) == before


# -- session notes --------------------------------------------------------------------------


def test_session_notes_have_the_five_headings(layout: Layout) -> None:
    notes = SessionNotes(layout, "add-rate-limit")
    notes.ensure("Add rate limiting")
    text = notes.text()
    assert text.startswith("# Session notes: Add rate limiting\n")
    assert [line[3:] for line in text.splitlines() if line.startswith("## ")] == list(HEADINGS)
    assert HEADINGS == (
        "Current State",
        "Files and Functions",
        "Errors & Corrections",
        "Key Results",
        "Worklog",
    )


def test_session_notes_edit_one_section_at_a_time(layout: Layout) -> None:
    notes = SessionNotes(layout, "t")
    notes.set("Current State", "Phase 2 of 3")
    notes.append("Worklog", "ran the tests")
    notes.append("Worklog", "- fixed the lint")
    notes.append("Key Results", "## sneaky heading")
    sections = notes.sections()
    assert sections["Current State"] == "Phase 2 of 3"
    assert sections["Worklog"] == "- ran the tests\n- fixed the lint"
    assert list(sections) == list(HEADINGS)  # a heading in a body cannot add a section
    notes.set("Current State", "Phase 3 of 3")
    assert notes.sections()["Current State"] == "Phase 3 of 3"
    assert notes.sections()["Worklog"] == "- ran the tests\n- fixed the lint"
    with pytest.raises(UsageError, match="unknown session heading"):
        notes.set("Mood", "fine")


def test_session_slug_cannot_escape(layout: Layout) -> None:
    for bad in ("../x", "a/b", "", "UP", "-x"):
        with pytest.raises(UsageError):
            SessionNotes(layout, bad)


def test_session_cli_show_and_clear(layout: Layout, orch: Any) -> None:
    assert orch("session", "show").code == 2  # none yet
    SessionNotes(layout, "one").ensure()
    run = orch("session", "show")
    assert run.code == 0 and "## Current State" in run.out
    data = json.loads(orch("session", "show", "one", "--json").out)
    assert list(data["sections"]) == list(HEADINGS)
    SessionNotes(layout, "two").ensure()
    one_error_line(orch("session", "show"), 2, "several sessions (one, two)")
    assert orch("session", "clear", "one").code == 0
    assert session_slugs(layout) == ["two"]
    assert orch("session", "clear", "--all").code == 0
    assert session_slugs(layout) == []
    one_error_line(orch("session", "clear", "one"), 2, "no session notes")


# -- task folders ---------------------------------------------------------------------------


def test_slug_from_title() -> None:
    assert slugify("Add rate limiting to the API!") == "add-rate-limiting-to-the-api"
    assert slugify("Réparer l'été") == "reparer-l-ete"
    assert slugify("x" * 100) == "x" * 48
    long = slugify("word " * 30)
    assert len(long) <= 48 and not long.endswith("-")
    with pytest.raises(UsageError):
        slugify("!!! ???")


def test_slug_collisions_get_numbered(layout: Layout) -> None:
    first = TaskFolder.create(layout, "Fix the bug")
    second = TaskFolder.create(layout, "Fix the bug")
    third = TaskFolder.create(layout, "fix THE bug...")
    assert [t.slug for t in (first, second, third)] == [
        "fix-the-bug",
        "fix-the-bug-2",
        "fix-the-bug-3",
    ]
    long = "a" * 48
    TaskFolder.create(layout, long)
    assert TaskFolder.create(layout, long).slug == "a" * 46 + "-2"
    assert [t.slug for t in list_tasks(layout)][:3] == ["a" * 46 + "-2", "a" * 48, "fix-the-bug"]


def test_open_unknown_task_names_the_known_ones(layout: Layout) -> None:
    TaskFolder.create(layout, "one")
    with pytest.raises(UsageError, match="no task 'two' \\(tasks: one\\)"):
        TaskFolder.open(layout, "two")
    with pytest.raises(UsageError):
        TaskFolder.open(layout, "../one")


def test_verified_items_round_trip_with_pipes_and_the_header_word(layout: Layout) -> None:
    task = TaskFolder.create(layout, "t")
    items = [
        VerifiedItem("V-1", "a | b", "2026-01-01", "2026-01-02", "VERIFIED"),
        VerifiedItem("V-2", "mentions Item ID in text", "2026-01-01", "2026-01-03", "REGRESSED"),
        VerifiedItem("V-3", "ends with a backslash \\", "x", "y", "PENDING"),
        VerifiedItem("-", "---", "-", ":-:", "-"),  # looks like a separator row, is not
        VerifiedItem("Item ID", "an item named like the header", "", "", "RETIRED"),
    ]
    task.save_verified(items)
    assert task.load_verified() == items
    text = task.verified_items.read_text()
    assert "| Item ID | Description | First Verified | Last Verified | Status |" in text


def test_revisions_append_in_order(layout: Layout) -> None:
    task = TaskFolder.create(layout, "t")
    task.append_revision(1, "First plan.")
    task.append_revision(2, "Split phase 2.\n")
    assert task.revisions.read_text() == (
        "# Plan revisions: t\n\n## Iteration 1\n\nFirst plan.\n\n## Iteration 2\n\nSplit phase 2.\n"
    )


def test_phase_reports(layout: Layout) -> None:
    task = TaskFolder.create(layout, "t")
    path = task.write_phase_report(2, "# Phase 2 report\n")
    assert path == layout.artifacts / "t" / "phase-2-report.md"
    assert path.read_text() == "# Phase 2 report\n"
    assert task.event_log_path == layout.artifacts / "t" / "observability" / "t.ndjson"


def plan(**changes: Any) -> dict[str, Any]:
    phase = {
        "phase_id": 1,
        "title": "Store",
        "objective": "Write the store",
        "files": [{"path": "a.py", "action": "create", "reason": "new"}],
        "steps": ["write it"],
        "tests": ["test_a"],
        "acceptance_criteria": ["tests pass"],
        "quality_gates": ["tests_pass"],
        "dependencies": [],
    }
    level = {"level": "low", "notes": ""}
    out: dict[str, Any] = {
        "schema_version": 1,
        "task_title": "T",
        "slug": "t",
        "summary": "S",
        "status": "READY_FOR_EXECUTION",
        "confidence": 0.8,
        "complexity_tier": "SMALL",
        "phases": [
            phase,
            {**copy.deepcopy(phase), "phase_id": 2, "dependencies": [1]},
            {**copy.deepcopy(phase), "phase_id": 3, "dependencies": [1, 2]},
        ],
        "open_questions": [],
        "risks": [{"description": "d", "severity": "low", "mitigation": "m"}],
        "risk_review": {
            k: dict(level)
            for k in (
                "data_volume",
                "performance",
                "concurrency",
                "access_control",
                "migration_rollback",
                "dependency",
                "operability",
            )
        },
        "success_criteria": ["done"],
    }
    out.update(changes)
    return out


def test_plan_validation_and_round_trip(layout: Layout) -> None:
    good = plan()
    assert plan_problems(good) == []
    assert topological_order(good) == [1, 2, 3]
    task = TaskFolder.create(layout, "t")
    task.save_plan(good)
    assert task.load_plan() == good
    assert "### Phase 2: Store" in task.plan_md.read_text()


def test_plan_dependency_problems() -> None:
    cyclic = plan()
    cyclic["phases"][0]["dependencies"] = [3]
    assert plan_problems(cyclic) == ["phases: dependency cycle 1 -> 3 -> 1"]
    selfdep = plan()
    selfdep["phases"][1]["dependencies"] = [2]
    assert plan_problems(selfdep) == ["phases/2: depends on itself"]
    unknown = plan()
    unknown["phases"][2]["dependencies"] = [9]
    assert plan_problems(unknown) == ["phases/3: depends on unknown phase 9"]
    gaps = plan()
    gaps["phases"][2]["phase_id"] = 5
    assert any("phase_id must run 1..3" in p for p in plan_problems(gaps))
    assert dependency_cycle({1: [2], 2: [3], 3: [2]}) == [2, 3, 2]
    assert dependency_cycle({1: [], 2: [1]}) is None


def test_plan_schema_problems_name_the_field() -> None:
    bad = plan(confidence=2)
    assert plan_problems(bad) == ["confidence: 2 is greater than the maximum of 1"]
    assert plan_problems([]) and plan_problems(plan(status="MAYBE"))
    missing = plan()
    del missing["phases"][0]["steps"]
    assert any("'steps' is a required property" in p for p in plan_problems(missing))


def test_a_plan_that_fails_its_schema_is_not_written(layout: Layout) -> None:
    task = TaskFolder.create(layout, "t")
    with pytest.raises(InvalidFile, match="plan fails its schema") as bad:
        task.save_plan(plan(complexity_tier="HUGE", confidence=7))
    assert bad.value.line() == (
        "plans/artifacts/t/plan.json: plan fails its schema: "
        "complexity_tier: 'HUGE' is not one of ['TRIVIAL', 'SMALL', 'MEDIUM', 'LARGE'] (and 1 more)"
    )
    assert not task.plan_json.exists() and not task.plan_md.exists()
    task.plan_json.write_text("{not json")
    with pytest.raises(InvalidFile, match="not JSON") as broken:
        task.load_plan()
    assert broken.value.line().startswith("plans/artifacts/t/plan.json: not JSON: ")
    task.plan_json.write_text(json.dumps(plan(phases=[])))
    with pytest.raises(
        InvalidFile, match=r"^plans/artifacts/t/plan.json: plan fails its schema: phases"
    ):
        task.load_plan()
    task.plan_json.unlink()
    task.plan_json.mkdir()
    with pytest.raises(InvalidFile, match="unreadable"):
        task.load_plan()


def test_task_lock_is_exclusive(layout: Layout) -> None:
    from orchestrator.errors import Locked

    task = TaskFolder.create(layout, "t")
    with task.lock(), pytest.raises(Locked), task.lock():
        pass
    with task.lock():  # released
        pass


def test_templates_with_stray_braces_still_fill(layout: Layout) -> None:
    (layout.templates / "session-notes.md").write_text(
        "# Session {title} {0} {a.b} { {{literal}}\n\n## Current State\n"
    )
    SessionNotes(layout, "x").ensure("T")
    assert SessionNotes(layout, "x").text().startswith("# Session T {0} {a.b} { {literal}\n")


def test_layout_paths(layout: Layout) -> None:
    root = layout.root
    assert layout.notes == root / "NOTES.md"
    assert layout.memory_index == root / "memories" / "repo" / "MEMORY.md"
    assert layout.session_notes("t") == root / "memories" / "session" / "t-notes.md"
    assert layout.artifacts == root / "plans" / "artifacts"
    assert layout.cache == root / ".orch"
    assert Path(".gitignore").read_text().splitlines()[-3:] == [
        "memories/session/",
        ".orch/",
        "plans/artifacts/*/transcripts/",
    ]
