"""Facts that fill no one slot: prohibitions that add up, chains of arrows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.memory.audit import audit
from orchestrator.store.layout import Layout

Put = Callable[..., Any]


def contradictions(layout: Layout) -> set[frozenset[str]]:
    report = audit(layout)
    return {
        frozenset({f.memory or "", *f.related[:1]})
        for f in report.findings
        if f.kind == "contradiction"
    }


def test_prohibitions_and_flows_are_not_contradictions(layout: Layout, put: Put) -> None:
    put("no-jquery", "Never use jQuery in the frontend.", subject="frontend rules")
    put("no-moment", "Never use Moment in the frontend.", subject="frontend rules")
    put("tree", "3 Phases → 52 Weeks → 312 Days → Tasks", subject="data model")
    put("cascade", "Completion cascade: Tasks → Day → Week, automatic", subject="data model")
    assert contradictions(layout) == set()


def test_limits_and_plain_statements_still_conflict(layout: Layout, put: Put) -> None:
    put("up-10", "Uploads larger than 10 MB are rejected by the api.", subject="upload size")
    put("up-25", "Uploads larger than 25 MB are rejected by the api.", subject="upload size")
    put("db-pg", "The warehouse is Snowflake.", subject="warehouse")
    put("db-bq", "The warehouse is BigQuery.", subject="warehouse")
    assert contradictions(layout) == {
        frozenset({"up-10", "up-25"}),
        frozenset({"db-pg", "db-bq"}),
    }
