"""A model proposes, the code decides: near-duplicates and contradictions the lexical rules
cannot see.

Where a model is configured (`orch memory audit --model NAME`), the audit hands it a
bounded set of candidate pairs: active memories, not ephemeral task state, not linked by
supersession, not already in a finding, whose facts (subjects aside) share at least
`NEAR` of their stems or a code span, path or URL; the `LIMIT` most similar. The model
answers for each pair `same`, `contradicts` (with the slot: what the two facts give two
values for) or `different`. The code then accepts a proposal only when it meets the rules
the deterministic audit applies:

- `same`: the same polarity, no clause of one denying the other, nested values, equal
  numbers when both give some, not two parallel statements about the parts their subjects
  name (see `compare.duplicate_across`), and not two list items labelled apart;
- `contradicts`: a slot named, not two list items labelled apart, and either a value each
  asserts that the other does not, or one denying what the other states.

Without a model the audit stays deterministic: this module is not called.
"""

from __future__ import annotations

import heapq
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.memory import compare
from orchestrator.memory.dedup import jaccard, similar_pairs
from orchestrator.memory.exclusions import excluded
from orchestrator.store.memfile import Memory

NEAR = 0.2  # stems two facts share, subjects aside, to be put to the model
LIMIT = 100  # pairs put to the model at most, the most similar first
VERDICTS = ("same", "contradicts", "different")


@dataclass(frozen=True)
class Proposal:
    a: str
    b: str
    verdict: str  # one of VERDICTS
    slot: str = ""  # for `contradicts`: what the facts give two values for


# The model's side: the candidate pairs in, its proposals out.
Proposer = Callable[[Sequence[tuple[Memory, Memory]]], list[Proposal]]


PROMPT = """You review pairs of facts from a project's memory. For each pair, answer:
- "same" when the two facts state the same thing (one may add detail), whatever heading
  they were filed under;
- "contradicts" when they give one slot (the same command for the same purpose, the same
  setting, version, count, rule or status) two different values; name the slot in a few
  words;
- "different" otherwise: facts about different things, or parallel facts about two parts.
Answer with JSON only: {"pairs": [{"id": <id>, "verdict": "same" | "contradicts" |
"different", "slot": "<the slot, for contradicts>"}]}, one entry per pair."""


def question(pairs: Sequence[tuple[Memory, Memory]]) -> str:
    """The user message putting `pairs` to the model."""
    listing = [
        {
            "id": n,
            "a": {"subject": a.subject or "", "fact": a.fact},
            "b": {"subject": b.subject or "", "fact": b.fact},
        }
        for n, (a, b) in enumerate(pairs)
    ]
    return json.dumps({"pairs": listing}, ensure_ascii=False, indent=1)


_JSON = re.compile(r"\{.*\}", re.S)


def parse_reply(text: str, pairs: Sequence[tuple[Memory, Memory]]) -> list[Proposal]:
    """The proposals in the model's answer; ValueError (one line) when it is not the JSON
    asked for. Entries naming no pair, or with another verdict, are left out."""
    found = _JSON.search(text)
    try:
        data: Any = json.loads(found.group(0)) if found else None
    except json.JSONDecodeError as exc:
        raise ValueError(f"the model's answer is not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
        raise ValueError('the model\'s answer has no "pairs" list')
    put = {frozenset({a.name, b.name}) for a, b in pairs}
    out = []
    for entry in data["pairs"]:
        if not isinstance(entry, dict) or entry.get("verdict") not in VERDICTS:
            continue
        n = entry.get("id")
        if isinstance(n, int) and 0 <= n < len(pairs):
            names = (pairs[n][0].name, pairs[n][1].name)
        elif frozenset({str(entry.get("a")), str(entry.get("b"))}) in put:
            names = (str(entry["a"]), str(entry["b"]))  # named by the memories themselves
        else:
            continue  # a pair that was not put to the model
        out.append(Proposal(*names, entry["verdict"], str(entry.get("slot") or "")))
    return out


def candidates(
    memories: Sequence[Memory], found: set[frozenset[str]], readings: compare.Readings
) -> list[tuple[Memory, Memory]]:
    """The pairs put to the model (see the module docstring)."""
    active = [m for m in memories if m.active and excluded(m.fact, m.subject or "") is None]
    stems = [(i, readings.plain(m).stems) for i, m in enumerate(active)]
    scored = {(a, b): s for a, b, s in similar_pairs(stems, NEAR)}
    by_anchor: dict[str, list[int]] = {}
    for i, m in enumerate(active):
        for value in compare.anchored(readings.plain(m).values):
            by_anchor.setdefault(value, []).append(i)
    for members in by_anchor.values():
        for k, a in enumerate(members[:50]):
            for b in members[k + 1 : 50]:
                pair = (min(a, b), max(a, b))
                scored.setdefault(pair, jaccard(stems[a][1], stems[b][1]))
    kept = [
        (s, a, b)
        for (a, b), s in scored.items()
        if frozenset({active[a].name, active[b].name}) not in found
        and not compare.linked(active[a], active[b])
    ]
    best = heapq.nlargest(LIMIT, kept, key=lambda t: (t[0], -t[1], -t[2]))
    return [(active[a], active[b]) for _, a, b in best]


def accepted(proposal: Proposal, a: Memory, b: Memory, readings: compare.Readings) -> str:
    """'' when the code refuses the proposal, else the finding's detail."""
    if compare.different_slots(a, b) or proposal.verdict not in ("same", "contradicts"):
        return ""
    if proposal.verdict == "same":
        if compare.duplicate_across(a, b, readings=readings, loose=True) is None:
            return ""
        return "says what the other says (proposed by the model, checked by the rules)"
    slot = " ".join(proposal.slot.split())[:80]
    ra, rb = readings.plain(a), readings.plain(b)
    only_a, only_b = ra.values - rb.values, rb.values - ra.values
    opposed = ra.negated != rb.negated
    if not slot or not ((only_a and only_b) or opposed):
        return ""
    if opposed and not (only_a and only_b):
        return f"{slot}: one denies what the other states (proposed by the model)"
    left, right = ", ".join(sorted(only_a)), ", ".join(sorted(only_b))
    return f"{slot}: one says {left}, the other {right} (proposed by the model)"
