"""How the index orders documents for a query.

1. Each content word of the query (stop words dropped) is scored on its own with FTS5's
   BM25 over the title, body and date columns (porter-stemmed), times the word's IDF
   (`idf_power`), so that rare words weigh more than BM25 alone makes them; a document's
   score is the sum over the words.
2. Neighbours: a transcript turn passes a share of its score to the turns after it
   (`before`: it is before them) and before it (`after`), `reach` turns each way, fading
   by `decay` a step. An answer sits next to the question it answers, and a conversation
   names a thing once and then talks about it.
3. Kinds: each score is multiplied by its kind's weight (`kind_weights`: repo memories and
   L3 items 2, episodes and reports 1.2, transcript turns and the summaries folded from
   them 1), so that a checked fact outranks a turn that only mentions its words more often.

Measured and left off by default (docs/retrieval.md has the figures): a boost for a
title (speaker) named in the query, a share of the session's best turn, pseudo-relevance
feedback (RM3-like), and reciprocal rank fusion of the plain and smoothed rankings.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from orchestrator.retrieval.text import query_terms, words

if TYPE_CHECKING:
    from orchestrator.retrieval.index import SearchIndex


@dataclass(frozen=True)
class Ranking:
    """The ranking's settings; the defaults are the measured choice (docs/retrieval.md)."""

    title_weight: float = 1.0  # BM25 column weights
    body_weight: float = 1.0
    date_weight: float = 1.0
    stop_words: bool = True  # drop stop words from the query
    idf_power: float = 1.0  # each query word's BM25 is also multiplied by its IDF ** this
    before: float = 0.6  # share of a turn's score the next turn takes
    after: float = 0.3  # share of a turn's score the previous turn takes
    reach: int = 2  # how many turns each way
    decay: float = 0.5  # each step further passes this much less
    title_boost: float = 0.0  # a document whose title holds a query word scores (1 + this) times
    group_share: float = 0.0  # a turn also takes this share of its session's best turn score
    prf_docs: int = 0  # pseudo-relevance feedback: the words of the best this-many documents...
    prf_terms: int = 0  # ...this many of them (by weight times IDF) join the query...
    prf_weight: float = 0.3  # ...each weighing this much of a query word
    pool: int = 300  # how many of the best documents pass shares to neighbours (at least 10 k)
    fuse: int = 0  # >0: reciprocal rank fusion (with this k) of the plain and smoothed rankings
    # What a document of each kind weighs: a checked, durable fact above a task's episode and
    # reports, those above the turns of a transcript and the summaries folded from them (a
    # summary weighed above its turns hid facts the turns hold: the context suite measures
    # it); kinds not listed weigh 1.
    kind_weights: tuple[tuple[str, float], ...] = (
        ("memory", 2.0),
        ("l3", 2.0),
        ("episode", 1.2),
        ("summary", 1.0),
        ("report", 1.2),
        ("transcript", 1.0),
    )


def rank(
    index: SearchIndex, query: str, *, k: int, kinds: set[str] | None = None
) -> list[tuple[int, float]]:
    """The best `k` (document id, score) pairs for `query`, best first."""
    r = index.ranking
    terms = query_terms(query) if r.stop_words else list(dict.fromkeys(words(query)))
    if not terms:  # a query of stop words only: search them rather than nothing
        terms = list(dict.fromkeys(words(query)))
    plain: dict[int, float] = {}
    _add_terms(index, plain, terms, 1.0)
    if r.title_boost:
        _boost_titles(index, plain, terms, r.title_boost)
    plain = _only(index, plain, kinds)
    pool = max(r.pool, 10 * k)
    scores = _context(index, plain, pool)
    if r.fuse:
        scores = _fuse([plain, scores], r.fuse)
    if r.prf_docs and r.prf_terms and scores:
        extra = _feedback_terms(index, scores, terms, r.prf_docs, r.prf_terms)
        if extra:
            more = dict(plain)
            _add_terms(index, more, extra, r.prf_weight)
            scores = _context(index, _only(index, more, kinds), pool)
    scores = _weigh_kinds(index, scores, dict(r.kind_weights))
    return heapq.nlargest(k, scores.items(), key=lambda item: (item[1], -item[0]))


def _weigh_kinds(
    index: SearchIndex, scores: dict[int, float], weights: dict[str, float]
) -> dict[int, float]:
    """Each document's score times its kind's weight: one scale for every kind."""
    if not weights or len(set(weights.values())) == 1:
        return scores
    docs = index.doc_info(scores)
    return {i: s * weights.get(docs[i][0], 1.0) for i, s in scores.items()}


FTS5_IDF_FLOOR = 1e-6  # FTS5's BM25 uses this IDF for a term in half the rows or more


def _idf(total: int, matches: int) -> float:
    return max(math.log((total - matches + 0.5) / (matches + 0.5)), 0.01)


def _add_terms(
    index: SearchIndex, scores: dict[int, float], terms: list[str], weight: float
) -> None:
    """Add each term's weighted BM25 to `scores`.

    A term in half the documents or more is left out unless every term is: FTS5's BM25
    gives it an IDF of 1e-6, so it would only cost time. When every term is (a small
    index), that 1e-6 is replaced by a small positive IDF, log(1 + (N - n + 0.5) / (n +
    0.5)), so that scores stay comparable and readable.
    """
    power = index.ranking.idf_power
    total = index.total()
    counted = [(term, index.term_count(term)) for term in terms]
    counted = [(t, n) for t, n in counted if n]
    rare = [(t, n) for t, n in counted if 2 * n < total]
    for term, matches in rare or counted:
        if 2 * matches < total:
            w = weight * (_idf(total, matches) ** power if power else 1.0)
        else:
            small = math.log1p((total - matches + 0.5) / (matches + 0.5))
            w = weight * small ** (1.0 + power) / FTS5_IDF_FLOOR
        for doc_id, score in index.term_scores(term):
            scores[doc_id] = scores.get(doc_id, 0.0) + w * score


def _only(index: SearchIndex, scores: dict[int, float], kinds: set[str] | None) -> dict[int, float]:
    if kinds is None:
        return scores
    docs = index.doc_info(scores)
    return {i: s for i, s in scores.items() if docs[i][0] in kinds}


def _boost_titles(
    index: SearchIndex, scores: dict[int, float], terms: list[str], boost: float
) -> None:
    named: set[int] = set()
    for term in terms:
        named.update(doc_id for doc_id, _ in index.term_scores(term, "title"))
    for doc_id in named & scores.keys():
        scores[doc_id] *= 1.0 + boost


def _context(index: SearchIndex, scores: dict[int, float], pool: int) -> dict[int, float]:
    """Scores after each turn passed shares to its neighbours (and its session, if set).

    Only the best `pool` documents pass shares: the rest score too low to lift anyone.
    """
    r = index.ranking
    out = dict(scores)
    if len(scores) > pool:
        givers = heapq.nlargest(pool, scores.items(), key=lambda item: item[1])
    else:
        givers = list(scores.items())
    docs = index.doc_info(scores)
    if r.before or r.after:
        for doc_id, score in givers:
            _, group, pos = docs[doc_id]
            if group is None or pos is None:
                continue
            for distance in range(1, r.reach + 1):
                fade = r.decay ** (distance - 1)
                for step, share in ((distance, r.before), (-distance, r.after)):
                    other = index.neighbour(group, pos + step) if share else None
                    if other is not None:
                        out[other] = out.get(other, 0.0) + share * fade * score
    if r.group_share:
        docs = index.doc_info(out)
        best: dict[str, float] = {}
        for doc_id, score in givers:
            group = docs[doc_id][1]
            if group is not None and score > best.get(group, 0.0):
                best[group] = score
        for doc_id in list(out):
            group = docs[doc_id][1]
            if group is not None:
                out[doc_id] += r.group_share * best.get(group, 0.0)
    return out


def _fuse(rankings: list[dict[int, float]], k: int) -> dict[int, float]:
    """Reciprocal rank fusion: each ranking gives a document 1 / (k + its place)."""
    out: dict[int, float] = {}
    for scores in rankings:
        ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        for place, (doc_id, _) in enumerate(ordered, 1):
            out[doc_id] = out.get(doc_id, 0.0) + 1.0 / (k + place)
    return out


def _feedback_terms(
    index: SearchIndex, scores: dict[int, float], terms: list[str], n_docs: int, n_terms: int
) -> list[str]:
    """RM3-like expansion: words frequent in the best documents and rare in the index."""
    top = heapq.nlargest(n_docs, scores.items(), key=lambda item: item[1])
    best = top[0][1] or 1.0
    weight = {doc_id: score / best for doc_id, score in top}
    mass: dict[str, float] = {}
    known = set(terms)
    for doc_id, text in index.doc_texts([doc_id for doc_id, _ in top]):
        found = [w for w in query_terms(text) if w not in known and not w.isdigit()]
        for word in found:
            mass[word] = mass.get(word, 0.0) + weight[doc_id] / len(found)
    total = index.total()
    rated = []
    for word, m in heapq.nlargest(n_terms * 3, mass.items(), key=lambda item: item[1]):
        matches = index.term_count(word)
        if matches > 1:
            rated.append((m * _idf(total, matches), word))
    return [word for _, word in sorted(rated, reverse=True)[:n_terms]]
