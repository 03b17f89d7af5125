"""Save exclusions and task progress in NOTES.md, as a store really words them."""

from __future__ import annotations

import pytest

from orchestrator.memory.audit import audit
from orchestrator.memory.exclusions import excluded
from orchestrator.store.layout import Layout


@pytest.mark.parametrize(
    ("fact", "kind"),
    [
        ("PR #88 introduced the retry jitter.", "git_history"),
        ("The cache was rewritten in pull request #301.", "git_history"),
        ("Merged PR #57: exports now stream.", "git_history"),
        ("Reverted 7d3e2f1 after the outage.", "git_history"),
        ("Iteration 2: lint clean, 3 tests still red.", "ephemeral_task_state"),
        ("In attempt 3 the `e2e/` suite passed.", "ephemeral_task_state"),
        ("The backfill is 45% done as of 09:10.", "ephemeral_task_state"),
        ("45% of the backfill was done at 09:10.", "ephemeral_task_state"),
        (
            "`billing/invoice.py` defines `render_invoice()` and `InvoiceRow`.",
            "derivable_from_code",
        ),
    ],
)
def test_more_ways_of_writing_save_exclusions(fact: str, kind: str) -> None:
    found = excluded(fact)
    assert found is not None and found.kind == kind


@pytest.mark.parametrize(
    "fact",
    [
        "The vendored libyaml is pinned to commit 2c1f9e8a7b6d5c4e3f2a1b0c9d8e7f6a5b4c3d2e.",
        "Invoices use the exchange rate of the invoice date, never today's rate.",
        "Reports compare today's totals with yesterday's.",
        "Retries happen in attempt 2 only when the first attempt timed out.",
    ],
)
def test_pins_possessives_and_rules_are_not_exclusions(fact: str) -> None:
    assert excluded(fact) is None


def test_notes_lines_that_report_work_done(layout: Layout) -> None:
    lines = [
        "# NOTES",
        "",
        "## Active objective",
        "- Rename Loader to Reader across the app",  # 4: what to do
        "- Renamed Loader in app/main.py",  # 5: done
        "",
        "## Blockers",
        "- Blocked on the schema review",  # 8
        "",
        "## Pending",
        "- Updated the fixtures and reran the suite",  # 11
        "- 2 of 4 steps done",  # 12
        "- Tests green as of 10:15",  # 13
        "- Split the loader into two modules",  # 14: an instruction
        "- Keep the error budget under one page a week",  # 15
    ]
    layout.notes.write_text("\n".join(lines) + "\n")
    report = audit(layout)
    flagged = sorted(
        int(f.detail.split("line ")[1].split()[0])
        for f in report.findings
        if f.kind == "notes_style"
    )
    assert flagged == [5, 11, 12, 13]
