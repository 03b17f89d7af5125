"""Near-duplicates and contradictions worded apart, and the exact joins that find their
candidates. Real files in real git repositories; the joins are held to brute force."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from itertools import combinations
from typing import Any

import pytest

from evals.hygiene_blind import generate as blind_set
from orchestrator.memory import compare
from orchestrator.memory.audit import (
    READINGS_TABLE,
    READINGS_VERSION,
    REPORT_TABLE,
    REPORT_VERSION,
    AuditReport,
    audit,
    duplicate_candidates,
)
from orchestrator.memory.dedup import contained_pairs, cross_pairs, jaccard
from orchestrator.memory.text import read_fact
from orchestrator.store.cache import Cache
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory

Put = Callable[..., Any]


def kinds(report: AuditReport, kind: str) -> list[tuple[str | None, tuple[str, ...]]]:
    return sorted((f.memory, f.related) for f in report.findings if f.kind == kind)


def test_near_duplicates_worded_apart(layout: Layout, put: Put) -> None:
    put("docs-a", "Run `make docs` to build the site.", subject="docs build")
    put(
        "docs-b",
        "`make docs` builds the site with mkdocs and checks every link.",
        subject="docs build",
        citations=(Citation("app/main.py", 3, "parse_config"),),
        updated="2026-11-01T00:00:00Z",
    )
    put("bodies-a", "Never log request bodies; they can hold card numbers.", subject="body logging")
    put(
        "bodies-b",
        "Request bodies must not be logged because they can contain card numbers.",
        subject="body logging",
    )
    # look-alikes: a denial of another aspect, a retry count against none
    put("docs-c", "`make docs` does not build the API reference.", subject="docs build")
    put("uploads-a", "Failed uploads are retried twice.", subject="upload retries")
    put("uploads-b", "Failed uploads are never retried.", subject="upload retries")
    report = audit(layout)
    assert kinds(report, "near_duplicate") == [
        ("bodies-a", ("bodies-b",)),
        ("docs-a", ("docs-b",)),
    ]
    assert kinds(report, "contradiction") == [("uploads-a", ("uploads-b",))]


def test_contradictions_worded_apart(layout: Layout, put: Put) -> None:
    pairs = {
        "threads": ("The worker pool has 8 threads.", "The worker pool runs 16 threads."),
        "node": ("The docs are built with Node 18.", "Docs builds run on Node 20."),
        "flags": (
            "Feature flags are read at start-up.",
            "Feature flags are never read at start-up; they are fetched per request.",
        ),
        "webhooks": ("Failed webhooks are retried 5 times.", "Failed webhooks are not retried."),
        "broker": (
            "The message broker is RabbitMQ.",
            "The message broker is Kafka, run by the platform team.",
        ),
    }
    for subject, (a, b) in pairs.items():
        put(f"{subject}-a", a, subject=subject, kind="project")
        put(f"{subject}-b", b, subject=subject, kind="project")
    # one subject, compatible facts
    looks = {
        "replicas": ("Staging runs 2 replicas.", "Production runs 6 replicas."),
        "test-db": ("Unit tests use SQLite.", "Integration tests use Postgres."),
        "retry-methods": (
            "GET requests are retried on 503.",
            "POST requests are never retried.",
        ),
        "pool": ("The pool holds 10 connections.", "Idle connections close after 300 seconds."),
    }
    for subject, (a, b) in looks.items():
        put(f"{subject}-a", a, subject=subject, kind="project")
        put(f"{subject}-b", b, subject=subject, kind="project")
    found = {m for m, _ in kinds(audit(layout), "contradiction")}
    assert found == {f"{s}-a" for s in pairs}


def test_reading_normalises_numbers_times_and_denials() -> None:
    (clause,) = read_fact("The loader writes 20,000 rows per batch at 02:00.").clauses
    assert ("20000", "row") in clause.numbers and "02:00" in clause.values
    failed = read_fact("Failed charges are retried 3 times.", "charge retries")
    assert not failed.negated  # "failed charges": which charges, not a denial
    cut = read_fact("Every call is cut off after 10 seconds.", "timeout")
    assert not cut.negated
    instead = read_fact("Mail is sent by a worker instead of inside the request.")
    assert [c.negated for c in instead.clauses] == [False, True]


def test_a_path_of_three_parts_is_a_value_and_two_facts_on_two_folders_are_no_duplicates(
    layout: Layout, put: Put
) -> None:
    assert "public/assets/images" in read_fact("Images are in public/assets/images").values
    assert not read_fact("Works for frontend/backend alike.").values  # words, not a path
    put("images", "Images are in web/static/images", subject="File layout")
    put("styles", "Style sheets are in web/static/css", subject="File layout")
    assert kinds(audit(layout, verify=False), "near_duplicate") == []


def _random_sets(n: int, seed: int) -> list[tuple[int, frozenset[str]]]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(40)]
    out: list[tuple[int, frozenset[str]]] = []
    for i in range(n):
        if i % 3 and out:
            base = set(rng.choice(out)[1])
            for _ in range(rng.randrange(0, 3)):
                base.add(rng.choice(vocab))
            out.append((i, frozenset(base)))
        else:
            out.append((i, frozenset(rng.sample(vocab, rng.randrange(1, 12)))))
    return out


@pytest.mark.parametrize(("threshold", "least"), [(0.8, 4), (0.6, 1), (1.0, 2)])
def test_containment_join_finds_exactly_the_pairs_all_pairs_would(
    threshold: float, least: int
) -> None:
    sets = _random_sets(300, seed=int(threshold * 10) + least)
    brute = {
        (min(a, b), max(a, b))
        for (a, sa), (b, sb) in combinations(sets, 2)
        if min(len(sa), len(sb)) >= least and compare.containment(sa, sb) >= threshold
    }
    found = {(min(a, b), max(a, b)) for a, b, _ in contained_pairs(sets, threshold, least)}
    assert found == brute and brute


@pytest.mark.parametrize("threshold", [0.6, 0.85])
def test_cross_join_finds_exactly_the_pairs_all_pairs_would(threshold: float) -> None:
    sets = _random_sets(300, seed=int(threshold * 100))
    left = sets[::4]
    brute = {(a, b) for a, sa in left for b, sb in sets if a != b and jaccard(sa, sb) >= threshold}
    assert {(a, b) for a, b, _ in cross_pairs(left, sets, threshold)} == brute and brute


def test_duplicate_candidates_hold_every_near_duplicate_pair(mk: Callable[..., Memory]) -> None:
    """The candidate joins miss no pair `compare.duplicate` accepts (brute force)."""
    rng = random.Random(3)
    words = [
        "cache",
        "queue",
        "worker",
        "export",
        "import",
        "token",
        "retry",
        "batch",
        "report",
        "invoice",
    ]
    spans = ["`make test`", "`load()`", "`app/main.py`", "`Loader.load`", "`--dry-run`"]
    memories = []
    for i in range(160):
        picked = rng.sample(words, rng.randrange(2, 6))
        fact = " ".join(picked).capitalize()
        if i % 4:
            fact += " with " + " and ".join(rng.sample(spans, rng.randrange(1, 3)))
        if i % 5 == 0:
            fact += f" after {rng.choice([10, 30])} seconds"
        if i % 7 == 0:
            fact = "Never " + fact[0].lower() + fact[1:]
        memories.append(mk(f"m{i:03d}", fact + ".", subject=" ".join(picked[:2])))
    brute = {
        (a.name, b.name)
        for a, b in combinations(memories, 2)
        if compare.duplicate(a, b) is not None
    }
    assert brute  # the store holds near-duplicates, so the test can fail
    assert brute <= duplicate_candidates(memories)


def test_blind_set_labels_name_real_files(tmp_path: Any) -> None:
    """The blind evaluation set (evals/hygiene_blind) builds, and each label names a file."""
    repos = blind_set.build(tmp_path / "blind", 1)
    assert len(repos) >= 10
    for root in repos:
        labels = json.loads((root / "labels.json").read_text())
        stems = {p.stem for p in (root / "memories" / "repo").glob("*.md")}
        for entry in labels["expected"] + labels["lookalikes"]:
            names = entry.get("pair") or ([entry["memory"]] if entry.get("memory") else [])
            assert set(names) <= stems, (root.name, entry)


def test_an_audit_from_its_caches_gives_the_same_report(layout: Layout, put: Put) -> None:
    """Without its last report, the second audit reads how each fact reads, verifications
    and secret scans back from `.orch/cache.sqlite`: it must find what the first found
    (denials and units included)."""
    put("threads-a", "The worker pool has 8 threads.", subject="pool size", kind="project")
    put("threads-b", "The worker pool runs 16 threads.", subject="pool size", kind="project")
    put("flags-a", "Feature flags are read at start-up.", subject="flags", kind="project")
    put("flags-b", "Feature flags are never read at start-up.", subject="flags", kind="project")
    first = audit(layout).to_dict()
    with Cache(layout.cache) as cache:
        reports = cache.table(REPORT_TABLE, REPORT_VERSION)
        assert len(reports.items()) == 1
        reports.replace_all([])
        assert len(cache.table(READINGS_TABLE, READINGS_VERSION).items()) == 4
    assert audit(layout).to_dict() == first
    assert len([f for f in first["findings"] if f["kind"] == "contradiction"]) == 2


def test_facts_that_each_name_the_others_values_do_not_conflict(
    mk: Callable[..., Memory],
) -> None:
    hooks = mk(
        "hooks-a",
        "**Vue Composables**: The application uses Vue's ref and computed composables for state.",
        subject="state management",
    )
    listed = mk(
        "hooks-b",
        "Vue composables (ref, computed) are used for shared state",
        subject="state management",
    )
    assert compare.conflict(hooks, listed) is None
    # naming the other's value is not enough when the other does not name one's own
    old = mk("wh-a", "The warehouse is Snowflake.", subject="warehouse")
    new = mk("wh-b", "The warehouse is BigQuery, moved from Snowflake.", subject="warehouse")
    assert compare.conflict(old, new) is not None
