"""A contradiction the audit reports from words alone names its slot in the facts' own
words: a heading two list items share names a section, not a slot."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.memory import compare, slots
from orchestrator.memory.audit import audit
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory

Put = Callable[..., Any]


def reported(layout: Layout) -> dict[frozenset[str], str]:
    """Each contradiction the audit reports, by its pair, with its detail."""
    return {
        frozenset({f.memory or "", *f.related[:1]}): f.detail
        for f in audit(layout).findings
        if f.kind == "contradiction"
    }


def named(a: Memory, b: Memory) -> compare.Conflict | None:
    """The clash of `a` and `b` as the audit would report it, or None."""
    how = compare.conflict(a, b)
    return None if how is None else compare.named(a, b, how, compare.Readings())


def test_values_under_a_shared_heading_alone_name_no_slot(layout: Layout, put: Put) -> None:
    # two list items of one section, each with its own owner left in a parent item
    put("est-a", "Estimate: 5-6 weeks", subject="rollout plan")
    put("est-b", "Estimate: 1-2 weeks", subject="rollout plan")
    # the slot written alike in both facts (two words or more): reported, the slot named
    put("key-a", "The mobile app caches the session key in the Keychain.", subject="sessions")
    put("key-b", "The mobile app writes the session key to SharedPreferences.", subject="sessions")
    found = reported(layout)
    assert set(found) == {frozenset({"key-a", "key-b"})}
    detail = found[frozenset({"key-a", "key-b"})]
    assert "'mobile app session key'" in detail
    assert "keychain" in detail and "sharedpreferences" in detail


def test_one_identifier_written_in_both_facts_names_the_slot(mk: Callable[..., Any]) -> None:
    toml = mk("fmt-a", "`crate.lock` is YAML.", subject="lock format")
    json = mk("fmt-b", "The lock file `crate.lock` is stored as XML.", subject="lock format")
    found = named(toml, json)
    assert found is not None and found.slot == "`crate.lock`"


def test_a_clause_stating_only_the_slot_and_its_value_names_it(mk: Callable[..., Any]) -> None:
    one = mk("cache-a", "The cache is Memcached.", subject="cache")
    two = mk("cache-b", "The cache is Redis (cluster mode).", subject="cache")
    found = named(one, two)
    assert found is not None and found.slot == "cache"


def test_a_value_the_other_clause_also_writes_is_related_not_rival(
    mk: Callable[..., Any],
) -> None:
    # the other fact writes the first one's value: it relates the two things
    poll = mk("poll-a", "Queries cached job totals from StatsCollector", subject="poller")
    keep = mk("poll-b", "StatsCollector now caches job totals in a Deque", subject="poller")
    assert compare.conflict(poll, keep) is not None
    assert named(poll, keep) is None
    # one name in two forms is one value
    one = mk("stub-a", "Fake third-party API calls with canned payloads", subject="tests")
    two = mk("stub-b", "Fake third-party APIs with recorded payloads", subject="tests")
    assert named(one, two) is None


def test_a_path_under_the_other_holds_beside_it(mk: Callable[..., Any]) -> None:
    send = mk("step-a", "Uploads go through the `/docs` route", subject="flow")
    sign = mk("step-b", "Uploads go through the `/docs/{id}/link` route", subject="flow")
    other = mk("step-c", "Uploads go through the `/media` route", subject="flow")
    readings = compare.Readings()

    def clash(a: Memory, b: Memory) -> compare.Conflict:
        ca, cb = readings.of(a).clauses[0], readings.of(b).clauses[0]
        return compare.Conflict(ca, cb, "values")

    assert compare.named(send, sign, clash(send, sign), readings) is None
    assert compare.named(send, other, clash(send, other), readings) is not None


def test_a_crossed_out_fact_states_nothing(mk: Callable[..., Any]) -> None:
    old = mk("job-a", "~~The export worker runs on Celery~~", subject="open bugs")
    new = mk("job-b", "The export worker runs on Dramatiq", subject="open bugs")
    assert slots.struck(old.fact) and not slots.struck(new.fact)
    assert not slots.struck("Uses ~~Redux~~ Zustand for state")
    assert compare.conflict(old, new) is not None
    assert named(old, new) is None


def test_a_year_is_no_count() -> None:
    assert slots.counts("The 2027 survey ran with 12 survey questions.") == frozenset(
        {("12", "survey")}
    )
    assert ("5000", "row") in slots.counts("It writes 5000 rows per batch.")


def test_numbers_on_one_subject_clash_as_one_count(mk: Callable[..., Any]) -> None:
    small = mk("batch-a", "`Importer` reads 400 lines per chunk.", subject="import chunk size")
    big = mk("batch-b", "Each import chunk holds 2,500 lines.", subject="import chunk size")
    found = named(small, big)
    assert found is not None and found.how == "count"
    # the slot as the fact writes it, not as stems
    assert found.detail() == "the number of lines (chunk): one says 400, the other 2500"
    # a range's ends under a label: no count, and nothing else names the slot
    one = mk("est-a", "Effort: 3-4 sprints", subject="schedule")
    two = mk("est-b", "Effort: 7-8 sprints", subject="schedule")
    assert compare.conflict(one, two) is not None
    assert named(one, two) is None


def test_denials_name_what_they_deny(mk: Callable[..., Any]) -> None:
    yes = mk("gz-a", "Backups are compressed with zstd.", subject="backups")
    no = mk("gz-b", "Backups are never compressed.", subject="backups")
    found = named(yes, no)
    assert found is not None and found.how == "polarity" and found.slot == "backups compressed"
