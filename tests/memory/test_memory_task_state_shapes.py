"""Shapes of ephemeral task state read on a pool of memory banks never seen before: the
session at hand, a status board's labelled lines, a release's change log, work not begun,
what a change made of a part, an analysis's verbs, work outstanding in a word, the
progressive passive, a timeline's steps; and descriptions that are none of these."""

from __future__ import annotations

import pytest

from orchestrator.memory.ephemeral import ephemeral


@pytest.mark.parametrize(
    ("fact", "subject", "cls"),
    [
        # the session at hand, the one task at hand
        ("**Mode**: review only", "Current Session State", "session_summary"),
        ("**Workspace**: empty, pages being drafted", "Current Session Notes", "session_summary"),
        ("Ship the ledger export", "Primary Task", "in_progress"),
        # a release's entry of a change log, by its number
        ("Version bump for the nightly channel", "Version 2.4.1 (Previous)", "change_account"),
        ("Added to the worker a retry hook", "Version 1.8.0", "change_account"),
        # a plan's verb before its scope
        ("Defined a six-week plan with three stages", "planning", "change_account"),
        # a thin check mark at the head
        ("✓ Stage 2: importer rewritten", "", "progress_status"),
        # a to-do after a plain label, work outstanding in a word
        ("Note: Need to decide which banks come first", "banks", "todo_next"),
        ("The importer needs refactoring before the next release", "", "todo_next"),
        ("Docs need expansion", "docs", "todo_next"),
        # a status board's labelled lines
        ("Build Status: green on every branch", "", "progress_status"),
        ("**Current Version**: 2.4.1", "", "progress_status"),
        ("Development Focus: the exporter and its tests", "", "in_progress"),
        ("Recent PRs: the parser split and the rate cache", "", "change_account"),
        ("**Latest Changes**: the ledger grid and its filters", "", "change_account"),
        # nothing there for now
        ("None at the moment", "Known Issues", "progress_status"),
        ("No open bugs at this time", "bugs", "progress_status"),
        # an outcome checked, a stamped line of work finished, a test failing now
        ("Successfully verified the import against three banks", "", "progress_status"),
        ("Smoke script run with all its checks passing", "", "progress_status"),
        ("[2031-05-02 10:00] - Completed implementation of the rate cache", "", "progress_status"),
        ("The export test is still failing on Windows", "", "progress_status"),
        # work not begun or waiting
        ("Bank feed import not started", "", "progress_status"),
        ("Statement export setup pending", "", "progress_status"),
        # what a change made of a part, or a change told as recent
        ("Made the ledger table more compact", "", "change_account"),
        ("Page size changed from 50 to 20", "", "change_account"),
        ("The export now defaults to CSV", "", "change_account"),
        ("Issue: Recently added, may need tuning", "", "change_account"),
        # what one task's analysis found
        ("Measured the bundle sizes (web: 2 MB, worker: 1 MB)", "", "session_summary"),
        ("Profiled the import worker on a large statement", "", "session_summary"),
        # work under way in the progressive passive
        ("The ledger docs are being moved to the wiki", "", "in_progress"),
        # a timeline's steps
        ("Week 2: exports and reports", "Timeline", "todo_next"),
        # a participle of change with its object stays an account under a design heading
        ("Unified the provider layer", "Key Technical Decisions", "change_account"),
    ],
)
def test_task_state_shapes(fact: str, subject: str, cls: str) -> None:
    found = ephemeral(fact, subject)
    assert found is not None and found.cls == cls, (fact, subject, found)


@pytest.mark.parametrize(
    ("fact", "subject"),
    [
        # a participle of quality leading a description under a design's heading
        ("Unified interface through a provider layer", "Key Technical Decisions"),
        ("Centralized settings loading through a shared package", "Architectural Patterns"),
        ("Simplified onboarding of new data sources", "Design Patterns in Use"),
        ("Optimized rendering of long ledgers", "Performance Optimizations"),
        # a gerund naming the choice in a list of decisions
        ("Implementing the ledger in SQLite for portability", "Active Decisions"),
        # a trade-off, an imperative, a process, a unit
        ("Balancing between freshness and stability", "Dependency Management"),
        ("Keep the changelog updated", "Notes"),
        ("Readers wait while the file is being written", "files"),
        ("Measured in milliseconds", "metrics"),
        ("If the export test is failing, clear the cache first", "testing"),
        ("Recently added items appear first in the list", "ledger"),
        # a timeline's step is a plan only under a timeline or schedule
        ("Week 2: exports and reports", "Lessons"),
    ],
)
def test_not_task_state(fact: str, subject: str) -> None:
    assert ephemeral(fact, subject) is None, ephemeral(fact, subject)


def test_a_plan_for_a_version_is_no_change_log() -> None:
    found = ephemeral("Offline ledgers", "Version 3.0 Goals")
    assert found is None or found.cls != "change_account"
