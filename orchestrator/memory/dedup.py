"""Near-duplicate detection for Checklist A (DESIGN.md section 5).

A memory's key is its normalised subject and its fact; two memories are near-duplicates
when the token Jaccard similarity of `subject | fact` is at least 0.85.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from orchestrator.store.memfile import Memory

THRESHOLD = 0.85
_WORD = re.compile(r"[a-z0-9_]+(?:[.'/-][a-z0-9_]+)*")


def normalise_subject(subject: str | None) -> str:
    """Lower case, words only, single spaces: "Test  Command!" -> "test command"."""
    return " ".join(_WORD.findall((subject or "").lower()))


def tokens(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def dedup_key(memory: Memory) -> frozenset[str]:
    return tokens(f"{normalise_subject(memory.subject)} | {memory.fact}")


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True)
class NearDuplicate:
    memory: Memory
    score: float


def near_duplicates(
    new: Memory, existing: Iterable[Memory], *, threshold: float = THRESHOLD
) -> list[NearDuplicate]:
    """Active memories in `existing` that near-duplicate `new` (`new` itself is skipped)."""
    key = dedup_key(new)
    found = []
    for other in existing:
        if other is new or not other.active:
            continue
        score = jaccard(key, dedup_key(other))
        if score >= threshold:
            found.append(NearDuplicate(other, score))
    return sorted(found, key=lambda d: (-d.score, d.memory.name))
