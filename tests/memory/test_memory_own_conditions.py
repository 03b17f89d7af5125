"""What a reported contradiction is not: values that each hold under their own
condition, list entries labelled in bold with an aside, and a list of names set against
one name (docs/memory.md, "A reported contradiction names its slot")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conftest import contradictions

from orchestrator.memory import compare, slots
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory

Put = Callable[..., Any]
Mk = Callable[..., Memory]


def test_values_under_their_own_conditions_do_not_clash(layout: Layout, put: Put) -> None:
    # two cases, each with its own value: both hold
    put("buy", "For buy orders, the stop is placed below the lower band", subject="stops")
    put("sell", "For sell orders, the stop is placed above the upper band", subject="stops")
    put("hit", "If the key is cached, serve the stored page", subject="page cache")
    put("miss", "If the key is not cached, render the page again", subject="page cache")
    # one condition given two values still clashes
    put("pool-a", "For the primary, the pool holds 16 connections", subject="db pool")
    put("pool-b", "For the primary, the pool holds 12 connections", subject="db pool")
    assert contradictions(layout) == {frozenset({"pool-a", "pool-b"})}


def test_counts_across_subjects_under_their_own_conditions(mk: Mk) -> None:
    nightly = mk("n", "For nightly runs, the export writes 500 rows per batch", subject="export")
    hourly = mk("h", "For hourly runs, the export writes 50 rows per batch", subject="batches")
    assert compare.count_conflict(nightly, hourly, compare.Readings()) is None
    plain = mk("p", "The export writes 50 rows per batch", subject="batches")
    assert compare.count_conflict(nightly, plain, compare.Readings()) is not None


def test_a_condition_is_read_up_to_its_comma() -> None:
    assert slots.own_conditions("When the queue is full, drop", "When the queue is empty, wait")
    assert not slots.own_conditions("When the queue is full, drop", "When the queue is full, wait")
    assert not slots.own_conditions("When the queue is full, drop", "Drop new jobs")


def test_bold_labels_with_an_aside_are_two_entries(mk: Mk) -> None:
    assert compare.entry_label("**Job Runner** (runner.py)") == "job runner"
    one = mk("rb", "**Job Runner** (runner.py)", subject="main parts")
    two = mk("ms", "**Job Scheduler** (jobs.py)", subject="main parts")
    assert compare.different_slots(one, two)
    assert compare.conflict(one, two) is None


def test_a_list_of_names_against_one_name_names_no_rival(layout: Layout, put: Put) -> None:
    put(
        "cols",
        "Missing `orders` columns: `taxRate`, `shipFee`, `discountCode`",
        subject="schema check",
    )
    put("col", "Missing `payments.settledAt` column", subject="schema check")
    # one value against one, the slot written alike, still reported
    put("q-a", "The worker pool reads jobs from the Redis queue", subject="worker pool")
    put("q-b", "The worker pool reads jobs from the SQS queue", subject="worker pool")
    assert contradictions(layout) == {frozenset({"q-a", "q-b"})}


def test_two_accounts_of_work_done_add_up(layout: Layout, put: Put) -> None:
    put("t-a", "Successfully tested the exporter with API calls", subject="Work Done")
    put("t-b", "Successfully tested the exporter with check_export.py", subject="Work Done")
    # two plain statements of one slot still clash
    put("q-a", "The worker pool reads jobs from the Redis queue", subject="worker pool")
    put("q-b", "The worker pool reads jobs from the SQS queue", subject="worker pool")
    assert contradictions(layout) == {frozenset({"q-a", "q-b"})}
