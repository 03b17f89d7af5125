"""Checklist A: near-duplicates are flagged on every write; the writer must choose."""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import combinations
from typing import Any

import pytest
from click.testing import CliRunner

from orchestrator.cli import cli
from orchestrator.memory.dedup import (
    SMALL_JOIN,
    DedupIndex,
    contained_pairs,
    dedup_key,
    jaccard,
    near_duplicates,
    normalise_subject,
    similar_pairs,
)
from orchestrator.memory.writer import MemoryWriter, NearDuplicateFound
from orchestrator.store.layout import Layout
from orchestrator.store.repo import RepoMemoryStore

FACT = "The test command is `pytest -q`, run from the repository root of the project."
AGAIN = "The test command is `pytest -q`, run from the repository root of this project."


def add_args(name: str, fact: str) -> list[str]:
    return [
        "memory", "add", "--name", name, "--type", "reference", "--subject", "Test  Command!",
        "--reason", "every gate runs it", "--cite", "pyproject.toml", "--fact", fact,
    ]  # fmt: skip


def test_normalised_subject_and_jaccard(mk: Callable[..., Any]) -> None:
    make_memory = mk
    assert normalise_subject("Test  Command!") == "test command"
    a = make_memory("a", FACT, subject="Test Command")
    b = make_memory("b", AGAIN, subject="test   command")
    assert jaccard(dedup_key(a), dedup_key(b)) >= 0.85
    c = make_memory("c", "The lint command is `ruff check .`.", subject="lint command")
    assert jaccard(dedup_key(a), dedup_key(c)) < 0.85


def test_cli_write_refuses_a_near_duplicate_until_the_writer_chooses(layout: Layout) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, add_args("test-command", FACT)).exit_code == 0
    refused = runner.invoke(cli, add_args("test-command-again", AGAIN))
    assert refused.exit_code == 1
    assert "near-duplicates test-command" in refused.output
    assert "Traceback" not in refused.output
    assert not (layout.repo_memories / "test-command-again.md").exists()

    skipped = runner.invoke(cli, [*add_args("test-command-again", AGAIN), "--on-duplicate", "skip"])
    assert skipped.exit_code == 0 and "Skipped" in skipped.output
    assert not (layout.repo_memories / "test-command-again.md").exists()

    no_reason = runner.invoke(
        cli, [*add_args("test-command-again", AGAIN), "--on-duplicate", "create"]
    )
    assert no_reason.exit_code == 2 and "stated reason" in no_reason.output

    created = runner.invoke(
        cli,
        [
            *add_args("test-command-again", AGAIN),
            "--on-duplicate", "create", "--duplicate-reason", "the CI variant differs",
        ],
    )  # fmt: skip
    assert created.exit_code == 0, created.output
    text = (layout.repo_memories / "test-command-again.md").read_text()
    assert "distinct_from" in text and "the CI variant differs" in text

    superseded = runner.invoke(
        cli, [*add_args("test-command-v3", AGAIN + " "), "--on-duplicate", "supersede"]
    )
    assert superseded.exit_code == 0, superseded.output
    # the closest near-duplicate (the identical one) is superseded, and kept on disk
    old = RepoMemoryStore(layout).get("test-command-again")
    assert old.status == "superseded" and old.superseded_by == "test-command-v3"
    assert RepoMemoryStore(layout).get("test-command-v3").supersedes == ("test-command-again",)


def test_the_writer_runs_checklist_a_for_every_writer(
    layout: Layout, mk: Callable[..., Any]
) -> None:
    writer = MemoryWriter(layout)
    writer.add(mk("one", FACT, subject="test command"))
    with pytest.raises(NearDuplicateFound):
        writer.add(mk("two", AGAIN, subject="test command"))
    assert [m.name for m in writer.store.load_all().memories] == ["one"]


def _random_sets(n: int, seed: int) -> list[tuple[int, frozenset[str]]]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(40)]
    base = [frozenset(rng.sample(vocab, rng.randrange(3, 12))) for _ in range(n // 2)]
    out = []
    for i in range(n):
        if i % 2 and base:
            s = set(rng.choice(base))
            if rng.random() < 0.5:
                s.add(rng.choice(vocab))
            out.append((i, frozenset(s)))
        else:
            out.append((i, frozenset(rng.sample(vocab, rng.randrange(2, 12)))))
    return out


@pytest.mark.parametrize("threshold", [0.5, 0.6, 0.85, 1.0])
def test_prefix_filter_join_finds_exactly_the_pairs_all_pairs_would(threshold: float) -> None:
    sets = _random_sets(300, seed=int(threshold * 100))
    brute = {
        (min(a, b), max(a, b))
        for (a, sa), (b, sb) in combinations(sets, 2)
        if jaccard(sa, sb) >= threshold
    }
    found = {(min(a, b), max(a, b)) for a, b, _ in similar_pairs(sets, threshold)}
    assert found == brute
    assert brute  # the sets hold near-duplicates, so the test can fail


def test_a_few_sets_are_joined_as_the_full_join_would_report_them() -> None:
    """Up to SMALL_JOIN sets are compared pair by pair: the same pairs, each the same way
    round, with the same scores, as the prefix-filter joins give once unrelated sets make
    the input too large for the shortcut."""
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(10)]
    padding = [(f"pad{i}", frozenset({f"alone{i}"})) for i in range(SMALL_JOIN)]
    seen = 0
    for _ in range(1500):
        sets = [
            (f"s{k}", frozenset(rng.sample(vocab, rng.randrange(0, 7))))
            for k in range(rng.randrange(2, SMALL_JOIN + 1))
        ]
        threshold = rng.choice([0.4, 0.6, 0.8])
        few = similar_pairs(sets, threshold)
        assert sorted(few) == sorted(similar_pairs(sets + padding, threshold))
        held = contained_pairs(sets, threshold, 2)
        assert sorted(held) == sorted(contained_pairs(sets + padding, threshold, 2))
        seen += len(few) + len(held)
    assert seen  # some pairs pass, so the test can fail


def test_probe_finds_what_a_full_scan_finds(mk: Callable[..., Any]) -> None:
    memories = [
        mk(f"m{i}", f"Fact number {i % 7} about `thing{i % 5}` and its {i % 3} rules.")
        for i in range(60)
    ]
    index = DedupIndex(memories)
    for probe in memories[:20]:
        full = {
            m.name
            for m in memories
            if m is not probe and jaccard(dedup_key(probe), dedup_key(m)) >= 0.85
        }
        assert {d.memory.name for d in index.probe(probe)} == full
        assert {d.memory.name for d in near_duplicates(probe, memories)} == full


def test_probe_skips_inactive_memories(mk: Callable[..., Any]) -> None:
    old = mk("old", FACT, status="superseded")
    assert near_duplicates(mk("new", AGAIN), [old]) == []
    same = {"subject": "test command"}
    assert near_duplicates(mk("new", AGAIN, **same), [mk("old", FACT, **same)]) != []
