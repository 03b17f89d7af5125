"""A cache of how each memory's text reads, in `.orch/analysis.sqlite`.

Reading a fact (clauses, frames, values, polarity) and testing it against the save
exclusions cost about a tenth of a millisecond a memory: a second over 10,000. Both depend
only on the subject and the fact, so they are kept under a digest of the two and read back
by later audits. Rebuildable: a broken or unwritable database is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from orchestrator.memory import compare
from orchestrator.memory.exclusions import Exclusion, excluded
from orchestrator.memory.text import Clause, Reading
from orchestrator.store.memfile import Memory

CACHE_VERSION = 3


def _digest(memory: Memory) -> str:
    text = f"{memory.subject or ''}\0{compare.fact_of(memory.body)}"
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


def _encode(reading: Reading, exclusion: Exclusion | None) -> str:
    return json.dumps(
        [
            [
                [sorted(c.frame), sorted(c.values), c.negated, sorted(c.words), sorted(c.numbers)]
                for c in reading.clauses
            ],
            [exclusion.kind, exclusion.evidence] if exclusion else None,
        ]
    )


def _decode(text: str) -> tuple[Reading, Exclusion | None]:
    clauses_raw, exclusion_raw = json.loads(text)
    clauses = tuple(
        Clause(frozenset(f), frozenset(v), bool(n), frozenset(w), frozenset(tuple(p) for p in nums))
        for f, v, n, w, nums in clauses_raw
    )
    frames: set[str] = set()
    values: set[str] = set()
    negated = False
    for clause in clauses:
        frames |= clause.frame
        values |= clause.values
        negated ^= clause.negated
    reading = Reading(frozenset(frames | values), frozenset(values), negated, clauses)
    return reading, Exclusion(*exclusion_raw) if exclusion_raw else None


class Analysis:
    """Readings and exclusions for a set of memories, primed from the cache."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.conn: sqlite3.Connection | None = None
        self.exclusions: dict[str, Exclusion | None] = {}
        self.fresh: list[tuple[str, str]] = []
        if cache_dir is None or not cache_dir.is_dir():
            return
        try:
            conn = sqlite3.connect(cache_dir / "analysis.sqlite", timeout=10)
            if conn.execute("PRAGMA user_version").fetchone()[0] != CACHE_VERSION:
                conn.execute("DROP TABLE IF EXISTS analysis")
                conn.execute(f"PRAGMA user_version = {CACHE_VERSION}")
            conn.execute("CREATE TABLE IF NOT EXISTS analysis (digest TEXT PRIMARY KEY, data TEXT)")
            conn.commit()
            self.conn = conn
        except sqlite3.DatabaseError:
            self.conn = None

    def prime(self, memories: Iterable[Memory]) -> None:
        """Read every memory's reading and exclusion, from the cache or afresh."""
        wanted = {_digest(m): m for m in memories}
        known: dict[str, str] = {}
        if self.conn is not None:
            with contextlib.suppress(sqlite3.DatabaseError):
                known = dict(self.conn.execute("SELECT digest, data FROM analysis"))
        for digest, memory in wanted.items():
            fact = compare.fact_of(memory.body)
            if digest in known:
                reading, exclusion = _decode(known[digest])
                compare.prime(memory, reading)
            else:
                reading = compare.reading(memory)
                exclusion = excluded(fact)
                self.fresh.append((digest, _encode(reading, exclusion)))
            self.exclusions[fact] = exclusion
        self.keep = set(wanted)

    def excluded(self, memory: Memory) -> Exclusion | None:
        fact = compare.fact_of(memory.body)
        return self.exclusions[fact] if fact in self.exclusions else excluded(fact)

    def close(self) -> None:
        if self.conn is None:
            return
        with contextlib.suppress(sqlite3.DatabaseError), self.conn:
            self.conn.executemany("INSERT OR REPLACE INTO analysis VALUES (?, ?)", self.fresh)
            stale = [
                (d,)
                for (d,) in self.conn.execute("SELECT digest FROM analysis")
                if d not in self.keep
            ]
            self.conn.executemany("DELETE FROM analysis WHERE digest = ?", stale)
        self.conn.close()
        self.conn = None
