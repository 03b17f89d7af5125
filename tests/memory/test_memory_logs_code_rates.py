"""What a reported contradiction is not, as a fresh pool of memory banks showed: log
entries stamped with their own moments, values under conditions that end on a colon,
code, a denial under its own condition, a rate against a count, and things added one
after another (docs/memory.md, "A reported contradiction names its slot")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conftest import contradictions

from orchestrator.memory import compare, slots
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory

Put = Callable[..., Any]
Mk = Callable[..., Memory]


def clash(put: Put) -> None:
    """One slot given two values, which every test below still expects reported."""
    put("q-a", "The worker pool reads jobs from the Redis queue", subject="worker pool")
    put("q-b", "The worker pool reads jobs from the SQS queue", subject="worker pool")


CLASH = frozenset({"q-a", "q-b"})


def test_log_entries_stamped_with_their_own_moments(layout: Layout, put: Put) -> None:
    put("r1", "[2031-05-02 10:14:03] Tag build 4.7.1 of the viewer", subject="tag")
    put("r2", "[2031-05-02 11:40:55] Tag build 4.7.2 of the viewer", subject="tag")
    clash(put)
    assert contradictions(layout) == {CLASH}
    assert slots.stamped_apart("2031-05-02: Tag 4.7.1", "2031-05-03: Tag 4.7.2")
    assert not slots.stamped_apart("2031-05-02: Tag 4.7.1", "2031-05-02: Tag 4.7.2")
    assert not slots.stamped_apart("2031-05-02: Tag 4.7.1", "Tag 4.7.2")


def test_stamped_counts_are_each_their_own_moment(mk: Mk) -> None:
    one = mk("a", "[2031-05-02] The parser suite has 41 tests", subject="suite")
    two = mk("b", "[2031-05-09] The parser suite has 47 tests", subject="tests")
    assert compare.count_conflict(one, two, compare.Readings()) is None
    plain = mk("c", "The parser suite has 47 tests", subject="tests")
    assert compare.count_conflict(one, plain, compare.Readings()) is not None


def test_a_condition_may_end_on_a_colon(layout: Layout, put: Put) -> None:
    put("p1", "If a plan is needed: the planner splits the job into steps", subject="plan needed")
    put(
        "p2",
        "If a plan is not needed, the planner sends the job on as it is",
        subject="plan needed",
    )
    clash(put)
    assert contradictions(layout) == {CLASH}
    assert slots.own_conditions("**On success**: return the id", "**On failure**: return nothing")


def test_code_states_no_value(layout: Layout, put: Put) -> None:
    put(
        "c1",
        "\\`\\`\\`bash mkdir -p static/old cp -r ../site/old/* static/old/ \\`\\`\\`",
        subject="\\`",
    )
    put("c2", '\\`\\`\\`tsx <Loader src="/old/app.js" mode="eager" /> \\`\\`\\`', subject="\\`")
    put(
        "c3",
        "// When the board saves a card const savedEvent = new Event('board:saved')",
        subject="events",
    )
    put(
        "c4",
        "// When the board drops a card const droppedEvent = new Event('board:dropped')",
        subject="events",
    )
    clash(put)
    assert contradictions(layout) == {CLASH}
    assert slots.code("```js const a = 1 ```") and slots.code("// keep the cache warm")
    assert not slots.code("The cache is kept warm by `warm()`")


def test_a_denial_under_its_own_condition_denies_nothing(layout: Layout, put: Put) -> None:
    put(
        "d1",
        "Ask for both the Calendar scope and the Contacts scope",
        subject="oauth scope contacts",
    )
    put(
        "d2",
        "**Rationale**: Invites need the Contacts scope to look people up by name. Without "
        "the Contacts scope, the app cannot look people up by name, only by address.",
        subject="oauth scope contacts",
    )
    clash(put)
    assert contradictions(layout) == {CLASH}
    assert slots.conditional_denial("Without the key, the job cannot start.")
    assert not slots.conditional_denial("The job cannot start without the key. It waits.")


def test_a_rate_is_not_a_count(mk: Mk) -> None:
    subject = "Scenario Builder - Done"
    rate = mk(
        "r",
        "It builds scenarios from the 5 region templates per region "
        "(cycling through them by run number).",
        subject=subject,
    )
    total = mk("t", "Ready for 600 scenario builds (4 regions × 150 repetitions).", subject=subject)
    assert compare.count_conflict(rate, total, compare.Readings()) is None
    # two rates per one thing still clash
    other = mk("o", "It builds scenarios from the 7 region templates per region.", subject=subject)
    assert compare.count_conflict(rate, other, compare.Readings()) is not None


def test_what_two_facts_add_adds_up(layout: Layout, put: Put) -> None:
    put("a1", "Adds ownerId to invoices", subject="migration adds invoices")
    put("a2", "Adds a tagIds array to invoices", subject="migration adds invoices")
    clash(put)
    assert contradictions(layout) == {CLASH}


def test_code_spans_with_an_aside_are_two_entries(layout: Layout, put: Put) -> None:
    put("e1", "`cursor` (query parameter, optional)", subject="query parameter")
    put("e2", "`pageSize` (query parameter, default: 50)", subject="query parameter")
    clash(put)
    assert contradictions(layout) == {CLASH}
    assert compare.entry_label("`pageSize` (query parameter, default: 50)") == "pagesize"
    # one name given two values in its asides is still one entry
    assert compare.entry_label("`TIMEOUT` (45 seconds)") == compare.entry_label(
        "`TIMEOUT` (30 seconds)"
    )


def test_an_http_status_is_no_count(mk: Mk) -> None:
    one = mk(
        "s1", "✅ Fixed 404 error in the invoices endpoint - the view was missing", subject="fixes"
    )
    two = mk("s2", "Fixed 401 errors in InvoiceList.jsx invoices endpoint", subject="done")
    assert compare.count_conflict(one, two, compare.Readings()) is None
    assert slots.counts("Added the HTTP 500 error test") == frozenset()
    # a count of errors is still a count
    assert slots.counts("There are 150 errors left") == {("150", "error")}
    left = mk("l1", "The invoices endpoint still throws 12 errors", subject="fixes")
    more = mk("l2", "The invoices endpoint still throws 19 errors", subject="done")
    assert compare.count_conflict(left, more, compare.Readings()) is not None
