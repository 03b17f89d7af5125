"""Checklist A: near-duplicate detection before any write to `memories/repo/`.

A memory's key is its normalised subject and its fact; two memories are near-duplicates
when the token Jaccard similarity of `subject | fact` is at least 0.85. Every writer (the
CLI, the memory tool, promotion, import) goes through `writer.MemoryWriter.add`, which
calls `near_duplicates` and makes the writer choose skip, supersede, or create with a
reason.

Nothing here compares all pairs. A probe checks only the memories that share one of its
rarest `|q| - ceil(t|q|) + 1` tokens (any set with Jaccard >= t must share one of them)
and whose size is within the Jaccard bound; `similar_pairs` is the AllPairs prefix-filter
join with PPJoin's positional filter (Xiao et al., WWW 2008): exact, and in practice
near-linear in the corpus size.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from orchestrator.store.memfile import Memory

THRESHOLD = 0.85
SMALL_JOIN = 16  # a join of this many sets or fewer compares every pair (cheaper than indexing)
_WORD = re.compile(r"[a-z0-9_]+(?:[.'/-][a-z0-9_]+)*")
K = TypeVar("K", bound=Hashable)


def normalise_subject(subject: str | None) -> str:
    """Lower case, words only, single spaces: "Test  Command!" -> "test command"."""
    return " ".join(_WORD.findall((subject or "").lower()))


@lru_cache(maxsize=65536)
def tokens(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def dedup_key(memory: Memory) -> frozenset[str]:
    return tokens(f"{normalise_subject(memory.subject)} | {memory.fact}")


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)


def _overlap_needed(size: int, threshold: float) -> int:
    """Least overlap with any set that reaches `threshold` Jaccard with a set of `size`."""
    return max(1, math.ceil(threshold * size - 1e-9))


@dataclass(frozen=True)
class NearDuplicate:
    memory: Memory
    score: float


class DedupIndex:
    """An inverted index over memories' Checklist A keys, for probes that skip most of them."""

    def __init__(self, memories: Iterable[Memory], *, threshold: float = THRESHOLD) -> None:
        self.threshold = threshold
        self.memories: list[Memory] = []
        self.keys: list[frozenset[str]] = []
        self.postings: dict[str, list[int]] = defaultdict(list)
        for memory in memories:
            if not memory.active:
                continue
            key = dedup_key(memory)
            i = len(self.memories)
            self.memories.append(memory)
            self.keys.append(key)
            for token in key:
                self.postings[token].append(i)

    def probe(self, new: Memory) -> list[NearDuplicate]:
        key = dedup_key(new)
        t = self.threshold
        if not key:
            return []
        # rarest tokens first: the smallest posting lists give the fewest candidates
        ordered = sorted(key, key=lambda tok: (len(self.postings.get(tok, ())), tok))
        prefix = ordered[: len(key) - _overlap_needed(len(key), t) + 1]
        seen: set[int] = set()
        found: list[NearDuplicate] = []
        low, high = t * len(key), len(key) / t
        for token in prefix:
            for i in self.postings.get(token, ()):
                if i in seen:
                    continue
                seen.add(i)
                other = self.memories[i]
                size = len(self.keys[i])
                if other is new or other.name == new.name or not low <= size <= high:
                    continue
                score = jaccard(key, self.keys[i])
                if score >= t:
                    found.append(NearDuplicate(other, score))
        return sorted(found, key=lambda d: (-d.score, d.memory.name))


def near_duplicates(
    new: Memory,
    existing: Iterable[Memory] | DedupIndex,
    *,
    threshold: float = THRESHOLD,
) -> list[NearDuplicate]:
    """Active memories in `existing` that near-duplicate `new` (`new` itself is skipped).

    Pass a `DedupIndex` to probe many new memories against the same store cheaply.
    """
    index = (
        existing if isinstance(existing, DedupIndex) else DedupIndex(existing, threshold=threshold)
    )
    if index.threshold != threshold:
        index = DedupIndex(index.memories, threshold=threshold)
    return index.probe(new)


def similar_pairs(
    sets: Sequence[tuple[K, frozenset[str]]],
    threshold: float,
) -> list[tuple[K, K, float]]:
    """Every pair of (id, set) with Jaccard >= `threshold`, without comparing all pairs.

    PPJoin (Xiao et al., WWW 2008): tokens ordered by global frequency, rarest first;
    sets visited by size; each set probes the index with its prefix of
    `|x| - ceil(t|x|) + 1` tokens and indexes only `|x| - ceil(2t/(1+t)|x|) + 1`; a
    candidate whose overlap so far plus what its remaining tokens could add cannot reach
    the overlap the pair needs is dropped (positional filter). Survivors are verified
    exactly, so the result equals the all-pairs answer. A few sets (`SMALL_JOIN` at most,
    as in most of the audit's value buckets) are compared pair by pair instead, each pair
    in the order the join gives it (the smaller set first).
    """
    if len(sets) <= SMALL_JOIN:
        return _all_similar(sets, threshold)
    freq: Counter[str] = Counter()
    for _, s in sets:
        freq.update(s)
    rank = {tok: i for i, tok in enumerate(sorted(freq, key=lambda tok: (freq[tok], tok)))}
    # tuples of tokens: the garbage collector stops tracking them (lists it keeps scanning)
    records = [tuple(sorted(s, key=rank.__getitem__)) for _, s in sets]
    sizes = [len(r) for r in records]
    order = sorted(range(len(sets)), key=sizes.__getitem__)
    # token -> (set, its size, how many of its tokens follow) of the sets indexed, in the
    # order of `order`: by size, so the sets too small for the current one form a head of
    # each list, skipped from `start` on
    index: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    start: dict[str, int] = defaultdict(int)
    pairs: list[tuple[K, K, float]] = []
    t = threshold
    bounds: dict[int, tuple[int, int, list[int]]] = {}  # by set size: see `_bounds`
    for x in order:
        rx = records[x]
        nx = sizes[x]
        if not nx:
            continue
        known = bounds.get(nx)
        if known is None:
            known = bounds[nx] = _bounds(nx, t)
        probe, indexed, needed = known
        low = t * nx
        overlap: dict[int, int] = {}
        for i, token in enumerate(rx[:probe]):
            postings = index.get(token)
            if postings:
                first = start[token]
                while first < len(postings) and postings[first][1] < low:
                    first += 1
                start[token] = first
                left = nx - i - 1
                for y, ny, rest in postings[first:]:
                    seen = overlap.get(y, 0)
                    if seen < 0:
                        continue
                    if seen + 1 + (left if left < rest else rest) >= needed[ny]:
                        overlap[y] = seen + 1
                    else:
                        overlap[y] = -1
            if i < indexed:
                index[token].append((x, nx, nx - i - 1))
        sx = sets[x][1]
        for y, seen in overlap.items():
            if seen > 0:
                # the overlap decides: a pair short of `needed` cannot reach `t`
                common = len(sx & sets[y][1])
                if common >= needed[sizes[y]]:
                    score = common / (nx + sizes[y] - common)
                    if score >= t:
                        pairs.append((sets[y][0], sets[x][0], score))
    return pairs


def _bounds(nx: int, t: float) -> tuple[int, int, list[int]]:
    """For a set of `nx` tokens in a join at Jaccard `t`: how many of its tokens probe the
    index, how many are indexed, and the overlap a pair with a set of each size up to
    `nx` needs."""
    probe = nx - _overlap_needed(nx, t) + 1
    indexed = nx - max(1, math.ceil(2 * t / (1 + t) * nx - 1e-9)) + 1
    return probe, indexed, [math.ceil(t / (1 + t) * (nx + ny) - 1e-9) for ny in range(nx + 1)]


def contained_pairs(
    sets: Sequence[tuple[K, frozenset[str]]],
    threshold: float,
    min_size: int = 1,
) -> list[tuple[K, K, float]]:
    """Every pair whose smaller set (of at least `min_size`) has at least `threshold` of its
    tokens in the other, without comparing all pairs.

    The prefix filter for overlap: if `|x & y| >= a = ceil(t|x|)`, then the `|x| - a + 1`
    rarest tokens of `x` meet `y`. Every set's tokens are indexed; each set probes with its
    prefix for sets at least as large. Survivors are verified exactly, so the result equals
    the all-pairs answer. A few sets (`SMALL_JOIN` at most) are compared pair by pair
    instead, each pair from the smaller set (or the first of two of one size).
    """
    few = len(sets) <= SMALL_JOIN
    freq: Counter[str] = Counter()
    index: dict[str, list[int]] = defaultdict(list)
    for i, (_, s) in enumerate(() if few else sets):
        freq.update(s)
        for token in s:
            index[token].append(i)
    # rarest first (ties by the token), as a number: one sort of the vocabulary
    rank = {tok: i for i, tok in enumerate(sorted(freq, key=lambda tok: (freq[tok], tok)))}
    pairs: list[tuple[K, K, float]] = []
    for x, (kx, sx) in enumerate(sets):
        nx = len(sx)
        if nx < min_size:
            continue
        needed = _overlap_needed(nx, threshold)
        if few:
            others: Iterable[int] = range(len(sets))
        else:
            prefix = sorted(sx, key=rank.__getitem__)[: nx - needed + 1]
            others = dict.fromkeys(y for token in prefix for y in index[token])
        for y in others:
            sy = sets[y][1]
            if y == x or len(sy) < nx or (len(sy) == nx and y < x):
                continue  # the pair is probed from the smaller set (or the first of two)
            common = len(sx & sy)
            if common >= needed:
                pairs.append((kx, sets[y][0], common / nx))
    return pairs


def _all_similar(
    sets: Sequence[tuple[K, frozenset[str]]], threshold: float
) -> list[tuple[K, K, float]]:
    """`similar_pairs` over a few sets, every pair compared (but a set too small to reach
    `threshold` with a larger one, whatever they share)."""
    order = sorted(range(len(sets)), key=lambda i: len(sets[i][1]))
    pairs: list[tuple[K, K, float]] = []
    for k, x in enumerate(order):
        kx, sx = sets[x]
        low = threshold * len(sx) - 1e-9  # Jaccard is at most the ratio of the sizes
        for y in order[:k]:
            ky, sy = sets[y]
            if len(sy) < low:
                continue
            common = len(sx & sy)
            score = common / (len(sx) + len(sy) - common) if sy else 0.0
            if score >= threshold:
                pairs.append((ky, kx, score))
    return pairs


def cross_pairs(
    left: Sequence[tuple[K, frozenset[str]]],
    right: Sequence[tuple[K, frozenset[str]]],
    threshold: float,
) -> list[tuple[K, K, float]]:
    """Every (x from `left`, y from `right`) with Jaccard >= `threshold` (x and y not the same
    key), without comparing all pairs: `right` is indexed by its prefixes, `left` probes with
    its own (tokens ordered rarest first over both sides; a pair reaching the threshold shares
    a token of both prefixes), candidates pass the length filter and are verified exactly."""
    freq: Counter[str] = Counter()
    for _, s in (*left, *right):
        freq.update(s)

    def prefix(s: frozenset[str]) -> list[str]:
        ordered = sorted(s, key=lambda tok: (freq[tok], tok))
        return ordered[: len(s) - _overlap_needed(len(s), threshold) + 1]

    index: dict[str, list[int]] = defaultdict(list)
    for j, (_, s) in enumerate(right):
        if s:
            for token in prefix(s):
                index[token].append(j)
    pairs: list[tuple[K, K, float]] = []
    for kx, sx in left:
        if not sx:
            continue
        low, high = threshold * len(sx), len(sx) / threshold
        seen: set[int] = set()
        for token in prefix(sx):
            for j in index.get(token, ()):
                if j in seen:
                    continue
                seen.add(j)
                ky, sy = right[j]
                if ky == kx or not low <= len(sy) <= high:
                    continue
                score = jaccard(sx, sy)
                if score >= threshold:
                    pairs.append((kx, ky, score))
    return pairs
