"""The memory audit (Checklist D and more): read-only, one finding per problem.

Finding kinds and their severity (`--check` fails on errors only):

| kind | severity | what |
|---|---|---|
| near_duplicate | warning | a decay candidate of a near-duplicate group (`related`: keeper first) |
| contradiction | warning | two active memories give one slot, named in both facts, two values; neither supersedes the other (an error when a configured model proposed the pair and the rules accepted it) |
| stale_citation | error | a claim (citation or backticked name) fails against the working tree |
| moved_citation | warning | a path a memory names went elsewhere; its fact holds (`orch memory verify --fix`) |
| excluded_content | warning | a save exclusion: git history, ephemeral task state, derivable from code |
| secret | error | an API key, token, private key or password in a memory file |
| invalid_file | error | a file that does not parse, or misses name/description/type |
| missing_field | warning | a loadable memory without subject, reason, citations or fact |
| index_drift | error | MEMORY.md is not what the files render to |
| index_oversize | error | MEMORY.md over 200 lines |
| notes_style | error / warning | NOTES.md over 20 lines (error); a task-progress line (warning) |

Near-duplicates and contradictions never compare all pairs: near-duplicate candidates
come from exact prefix-filter joins and value buckets (see `duplicate_candidates`) and
from an inverted index of rare words (see `rarity`);
contradiction candidates from buckets of one normalised subject, and across subjects from
buckets of one counted unit (see `contradictions`). Each candidate pair then gets the full
test in `compare`.

The audit changes nothing in the repository. It keeps caches in `.orch/cache.sqlite`:
verification results (see `verify`), secret scans by the digest of each file's text, and
its last report, read back while no memory file, MEMORY.md, NOTES.md or tracked file
changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from orchestrator import __version__
from orchestrator.checks.secrets import SecretHit, scan_texts
from orchestrator.config import MemoryConfig
from orchestrator.events.log import EventLog
from orchestrator.memory import compare, proposals, rarity, slots
from orchestrator.memory.cards import card_conflicts
from orchestrator.memory.codeindex import TreeState
from orchestrator.memory.decay import decay_candidates
from orchestrator.memory.dedup import (
    THRESHOLD,
    contained_pairs,
    cross_pairs,
    dedup_key,
    jaccard,
    normalise_subject,
    similar_pairs,
)
from orchestrator.memory.exclusions import Exclusion, excluded
from orchestrator.memory.proposals import Proposer
from orchestrator.memory.text import Reading, read_fact, subject_stems
from orchestrator.memory.usage import usage_path
from orchestrator.memory.verify import verify_store_details
from orchestrator.store.cache import Cache, stat_key
from orchestrator.store.index import MAX_INDEX_LINES, render_index
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory
from orchestrator.store.notes import MAX_NOTES_LINES
from orchestrator.store.repo import LoadResult, RepoMemoryStore

KINDS = (
    "near_duplicate",
    "contradiction",
    "stale_citation",
    "moved_citation",
    "excluded_content",
    "secret",
    "invalid_file",
    "missing_field",
    "index_drift",
    "index_oversize",
    "notes_style",
    "low_value",
)
TITLES = {
    "near_duplicate": "Near-duplicates",
    "contradiction": "Contradictions",
    "stale_citation": "Stale claims",
    "moved_citation": "Moved citations",
    "excluded_content": "Save-exclusion violations",
    "secret": "Secrets",
    "invalid_file": "Invalid files",
    "missing_field": "Missing fields",
    "index_drift": "Index drift",
    "index_oversize": "Index size",
    "notes_style": "NOTES.md",
    "low_value": "Decay candidates",
}
SMALL_BUCKET = 8  # memories asserting one value set compared pairwise; more are joined
REPORT_TABLE = "audit-report"  # digest of everything the audit reads -> the report
REPORT_VERSION = 26
ENUMERATION = 3  # facts of one subject clashing by names with each other: a list
SERIES = 3  # values of one count, at least, across facts clashing over it: a log of runs
SIBLING_TERMS = 4  # a fact of this many terms at most may be a list entry's name (`_list_siblings`)
HELD_BUCKET = 200  # memories sharing one value, at most, joined by containment across subjects
SECRETS_TABLE = "secret-scans"  # SHA-1 of a memory file's text -> the secrets found in it
SECRETS_VERSION = 2
READINGS_TABLE = "fact-readings"  # SHA-1 of a subject and a fact -> its reading, exclusion
READINGS_VERSION = 17
_ENTRY = re.compile(r"^- \[([^\]]+)\]\(([^)]+)\.md\)")
_PROGRESS = re.compile(
    r"^\s*[-*]\s+\[[ xX]\]|[✅✔☑]|\b(?:done|completed|finished|fixed|merged|passed|passing|"
    r"wip)\s*[.!]?\s*$|\b\d{1,3}\s*%|\b(?:phase|iteration|step|attempt)\s+#?\d+\b|"
    r"\b\d+\s*(?:/|of|out of)\s*\d+\b[^.;]{0,30}?\b(?:done|complete|completed|finished|"
    r"passed|passing|green)\b|\btests?\s+(?:are\s+|were\s+)?(?:passing|green|failing|red)\b|"
    # a line that opens with a past-tense account of work done
    r"^\s*[-*]\s+(?:done|completed|finished|fixed|added|migrated|implemented|removed|"
    r"refactored|merged|deployed|wip|in progress|modified|updated|changed|edited|committed|"
    r"pushed|wrote|rewrote|created|deleted|renamed|moved|extracted|ported|wired|re-?ran|ran|"
    r"tested|resolved|closed|shipped|released|converted|replaced|upgraded|bumped|switched|"
    r"landed|started|began|opened|reverted|cleaned up|integrated)\b",
    re.I,
)


@dataclass(frozen=True)
class Finding:
    kind: str
    memory: str | None
    related: tuple[str, ...]
    detail: str
    severity: str  # error | warning

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "memory": self.memory,
            "related": list(self.related),
            "detail": self.detail,
            "severity": self.severity,
        }


@dataclass(frozen=True)
class Group:
    keeper: str
    decay: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"keeper": self.keeper, "decay": list(self.decay)}


@dataclass
class AuditReport:
    memories: int
    findings: list[Finding] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "memories": self.memories,
            "findings": [f.to_dict() for f in self.findings],
            "groups": [g.to_dict() for g in self.groups],
        }

    def counts(self) -> dict[str, int]:
        out = {k: 0 for k in KINDS}
        for f in self.findings:
            out[f.kind] += 1
        return out

    def payload(self) -> dict[str, Any]:
        """The `memory_audit` event payload."""
        return {
            "memories": self.memories,
            "counts": self.counts(),
            "errors": len(self.errors),
            "warnings": len(self.findings) - len(self.errors),
            "groups": len(self.groups),
        }

    def text(self) -> str:
        errors, total = len(self.errors), len(self.findings)
        lines = [
            "Audit Report",
            "",
            f"Memories: {self.memories}    Findings: {total} "
            f"({errors} error{'s' if errors != 1 else ''}, {total - errors} "
            f"warning{'s' if total - errors != 1 else ''})",
        ]
        if not self.findings:
            lines += ["", "No findings: repo memory is clean."]
            return "\n".join(lines) + "\n"
        by_kind: dict[str, list[Finding]] = defaultdict(list)
        for f in self.findings:
            by_kind[f.kind].append(f)
        for kind in KINDS:
            found = by_kind.get(kind)
            if not found:
                continue
            lines += ["", f"## {TITLES[kind]} ({len(found)})"]
            if kind == "near_duplicate":
                for g in self.groups:
                    lines.append(f"- keep {g.keeper}; decay candidates: {', '.join(g.decay)}")
                continue
            for f in found:
                who = f.memory or "-"
                if f.kind == "contradiction" and f.related:
                    who = f"{f.memory} vs {f.related[0]}"
                lines.append(f"- [{f.severity}] {who}: {f.detail}")
        if self.errors:
            lines += ["", "Errors fail `orch memory audit --check`."]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _Keys:
    """What the candidate joins read of each active memory, by position in the store."""

    raw: list[frozenset[str]]  # Checklist A's tokens
    stems: list[frozenset[str]]  # stemmed content, values included
    values: list[frozenset[str]]  # asserted values
    anchors: list[frozenset[str]]  # the anchored ones: code spans, paths, URLs
    facts: list[frozenset[str]]  # the facts' own stems, subjects aside (`Reading.flat_stems`)

    @classmethod
    def of(cls, active: Sequence[Memory], readings: compare.Readings) -> _Keys:
        values = [readings.of(m).values for m in active]
        return cls(
            [dedup_key(m) for m in active],
            [compare.content_stems(m, readings=readings) for m in active],
            values,
            [compare.anchored(v) for v in values],
            [readings.plain(m).flat_stems for m in active],
        )


def duplicate_candidates(
    active: list[Memory], readings: compare.Readings | None = None
) -> set[tuple[str, str]]:
    """Pairs that might be near-duplicates: a superset of `compare.duplicate`'s pairs.

    `compare.duplicate` holds only for memories whose asserted values are nested (one set
    holds the other) when both assert any, so two such memories share every value of the
    smaller set; the joins run within each value's bucket, never across the store:

    - Checklist A's token Jaccard 0.85 and stemmed-content Jaccard `compare.REWORDED`:
      exact prefix-filter joins (`dedup.similar_pairs`) within each bucket;
    - the very same anchored values (code spans, paths, URLs) with stemmed-content Jaccard
      `compare.ANCHORED`: buckets of equal anchored sets (a bucket larger than
      `SMALL_BUCKET` is joined at ANCHORED, not paired);
    - one holding `compare.CONTAINED` of the other's content, sharing an anchored value: an
      exact containment join (`dedup.contained_pairs`) within each anchored value's bucket.

    A memory asserting no values pairs with any other only through Checklist A's test or
    `compare.REWORDED` (the latter for one subject): exact cross joins (`dedup.cross_pairs`)
    of those memories against the store.
    """
    keys = _Keys.of(active, readings or compare.Readings())
    pairs = _value_bucket_pairs(keys) | _anchor_bucket_pairs(keys) | _bare_pairs(keys)
    names = [m.name for m in active]
    return {(min(names[a], names[b]), max(names[a], names[b])) for a, b in pairs if a != b}


def _value_bucket_pairs(keys: _Keys) -> set[tuple[int, int]]:
    """Within each asserted value's bucket: Checklist A, rewording, containment."""
    by_value: dict[str, list[int]] = defaultdict(list)
    for i, found in enumerate(keys.values):
        for value in found:
            by_value[value].append(i)
    pairs: set[tuple[int, int]] = set()
    for value, members in by_value.items():
        if len(members) < 2:
            continue
        raw = [(i, keys.raw[i]) for i in members]
        stems = [(i, keys.stems[i]) for i in members]
        pairs |= {(a, b) for a, b, _ in similar_pairs(raw, THRESHOLD)}
        pairs |= {(a, b) for a, b, _ in similar_pairs(stems, compare.REWORDED)}
        if value in keys.anchors[members[0]]:
            held = contained_pairs(stems, compare.CONTAINED, compare.CONTAINED_MIN)
            pairs |= {(a, b) for a, b, _ in held}
    return pairs


def _anchor_bucket_pairs(keys: _Keys) -> set[tuple[int, int]]:
    """Memories naming the very same code spans, paths or URLs.

    In a bucket of `SMALL_BUCKET` or fewer, the pairs whose stemmed content reaches
    `compare.ANCHORED`, and those where one fact holds `compare.CONTAINED` of the other's
    stems (`compare.duplicate_across` may take them though `across_candidates` leaves
    values common to many memories unjoined); any other pair of the bucket passes no
    test the other joins do not find it for."""
    by_anchors: dict[frozenset[str], list[int]] = defaultdict(list)
    for i, found in enumerate(keys.anchors):
        if found:
            by_anchors[found].append(i)
    pairs: set[tuple[int, int]] = set()
    for members in by_anchors.values():
        if len(members) <= SMALL_BUCKET:
            pairs |= {
                (a, b)
                for k, a in enumerate(members)
                for b in members[k + 1 :]
                if _anchored_alike(keys, a, b)
            }
        else:
            stems = [(i, keys.stems[i]) for i in members]
            pairs |= {(a, b) for a, b, _ in similar_pairs(stems, compare.ANCHORED)}
    return pairs


def _anchored_alike(keys: _Keys, a: int, b: int) -> bool:
    """Two memories naming the same anchored values that a test may take as alike: stemmed
    content sharing `compare.ANCHORED`, or one fact's stems (at least
    `compare.CONTAINED_MIN`) held `compare.CONTAINED` in the other's."""
    if jaccard(keys.stems[a], keys.stems[b]) >= compare.ANCHORED:
        return True
    fa, fb = keys.facts[a], keys.facts[b]
    return min(len(fa), len(fb)) >= compare.CONTAINED_MIN and (
        compare.containment(fa, fb) >= compare.CONTAINED
    )


def _bare_pairs(keys: _Keys) -> set[tuple[int, int]]:
    """Memories asserting no values, against the whole store."""
    bare = [i for i, found in enumerate(keys.values) if not found]
    if not bare:
        return set()
    raw = list(enumerate(keys.raw))
    pairs = {(a, b) for a, b, _ in cross_pairs([raw[i] for i in bare], raw, THRESHOLD)}
    stems = list(enumerate(keys.stems))
    left = [stems[i] for i in bare]
    pairs |= {(a, b) for a, b, _ in cross_pairs(left, stems, compare.REWORDED)}
    return pairs


def across_candidates(active: list[Memory], readings: compare.Readings) -> set[tuple[str, str]]:
    """Pairs that might say the same thing whatever their subjects: copies (one bucket a
    `compare.copy_key`) and facts whose own stems reach `compare.ACROSS` (an exact
    prefix-filter join over the store). One fact held in another while both name a value
    comes from a containment join within each value's bucket (values read with code spans
    as their words; buckets of more than `HELD_BUCKET` memories name something too common
    to join on)."""
    # positions in tuples, which the garbage collector stops tracking (lists it keeps scanning)
    copies: dict[str, tuple[int, ...]] = {}
    for i, m in enumerate(active):
        key = readings.copy_key(m)
        copies[key] = (*copies.get(key, ()), i)
    pairs = {
        (a, b)
        for members in copies.values()
        for k, a in enumerate(members)
        for b in members[k + 1 :]
    }
    stems = [(i, readings.plain(m).flat_stems) for i, m in enumerate(active)]
    pairs |= {(a, b) for a, b, _ in similar_pairs(stems, compare.ACROSS)}
    by_value: dict[str, list[int]] = defaultdict(list)
    for i, m in enumerate(active):
        for value in readings.plain(m).flat_values:
            by_value[value].append(i)
    for members in by_value.values():
        if 2 <= len(members) <= HELD_BUCKET:
            bucket = [stems[i] for i in members]
            held = contained_pairs(bucket, compare.CONTAINED, compare.CONTAINED_MIN)
            pairs |= {(a, b) for a, b, _ in held}
    names = [m.name for m in active]
    return {(min(names[a], names[b]), max(names[a], names[b])) for a, b in pairs if a != b}


def _duplicates(a: Memory, b: Memory, readings: compare.Readings, passing: frozenset[str]) -> bool:
    """Whether two memories near-duplicate each other: under fitting subjects
    (`compare.duplicate`) or across them (`compare.duplicate_across`; ephemeral task state,
    in `passing`, only as copies)."""
    if compare.linked(a, b):
        return False
    if (
        a.name not in passing
        and b.name not in passing
        and compare.says_alike(a, b, readings)
        and compare.duplicate(a, b, readings=readings) is not None
    ):
        return True
    copies_only = a.name in passing or b.name in passing
    return compare.duplicate_across(a, b, readings=readings, copies_only=copies_only) is not None


def near_duplicate_groups(
    memories: list[Memory],
    readings: compare.Readings | None = None,
    passing: frozenset[str] = frozenset(),
    stages: Mapping[str, str] | None = None,
) -> list[tuple[Memory, list[Memory]]]:
    """(keeper, decay candidates) for every near-duplicate group of active memories.
    Facts are compared by what they say: the subject is evidence, not a fence. Pairs come
    from the candidate joins here and from the words they share weighted by rarity
    (`rarity.rare_duplicates`). `stages` gives the class of each memory of ephemeral task
    state: an item still to do and one done or changed ("[ ] Refine the upload form"
    against "[x] Upload form") are two stages of work, not one item told twice, unless
    their words are the same (`compare.copy_key`). Every decay candidate near-duplicates
    its keeper itself (`_groups`)."""
    readings = readings or compare.Readings()
    active = [m for m in memories if m.active]
    by_name = {m.name: m for m in active}
    candidates = duplicate_candidates(active, readings) | across_candidates(active, readings)
    accepted = {
        (a, b) for a, b in candidates if _duplicates(by_name[a], by_name[b], readings, passing)
    }
    accepted |= rarity.rare_duplicates(active, readings, passing)
    accepted = {(a, b) for a, b in accepted if not _list_siblings(by_name[a], by_name[b], readings)}
    accepted |= same_item_pairs(active, readings)
    if stages:
        accepted = {
            (a, b)
            for a, b in accepted
            if not _stages_apart(stages, a, b)
            or readings.copy_key(by_name[a]) == readings.copy_key(by_name[b])
        }
    return sorted(_groups(accepted, by_name, readings), key=lambda g: g[0].name)


def _list_siblings(a: Memory, b: Memory, readings: compare.Readings) -> bool:
    """Two short entries under one subject, each with a term of its own ("Component test
    coverage" and "Integration test coverage" under "Success Metrics", "Local environment
    variables" and "Secure environment variables"): a list names two items apart by the
    word each has, not one item twice. Short is `SIBLING_TERMS` terms at most (aliases
    read as one, `rarity.terms`); a word that only says how plain or central an item is
    (`rarity.QUALIFIERS`) is no term of its own, and copies stay copies."""
    if normalise_subject(a.subject) != normalise_subject(b.subject):
        return False
    ta, tb = rarity.terms(readings.plain(a)), rarity.terms(readings.plain(b))
    if max(len(ta), len(tb)) > SIBLING_TERMS or not ta & tb:
        return False
    return bool((ta - tb) - rarity.QUALIFIERS) and bool((tb - ta) - rarity.QUALIFIERS)


def _groups(
    pairs: set[tuple[str, str]], by_name: Mapping[str, Memory], readings: compare.Readings
) -> list[tuple[Memory, list[Memory]]]:
    """Groups of the accepted `pairs`, each a keeper (`compare.keeper`, the most specific
    of what is left of its connected set) and the memories paired with it: a decay
    candidate says what its keeper says, not what some third memory between them says
    ("Grid spacing: the distance between entries" and "A larger grid spacing spreads the
    entries" each meet a third fact on the same setting, not each other). Members the
    keeper does not pair with form groups of their own from the pairs among them.

    Word-for-word copies (`compare.copy_key`) are grouped first (`_copy_groups`): one
    line told under three headings ("[x] Invoice export") decays against one of its
    copies, not against a later, longer fact each copy also meets ("Created the Invoice
    export for Stripe"); the copy kept stands for the others in the groups formed after."""
    copied, near = _copy_groups(pairs, by_name, readings)
    out: list[tuple[Memory, list[Memory]]] = []
    left = set(near)
    while left:
        seen, todo = set(), [min(left)]
        while todo:  # the connected set of what is left
            x = todo.pop()
            if x not in seen:
                seen.add(x)
                todo += near[x] & left
        if len(seen) < 2:
            left -= seen
            continue
        keep = compare.keeper([by_name[x] for x in sorted(seen)], readings=readings)
        decay = near[keep.name] & left
        out.append((keep, sorted((by_name[x] for x in decay), key=lambda m: m.name)))
        left -= decay | {keep.name}
    merged: dict[str, list[Memory]] = {}
    for kept, decayed in copied + out:  # a copy kept may keep a looser group too
        merged.setdefault(kept.name, []).extend(decayed)
    return [(by_name[k], sorted(v, key=lambda m: m.name)) for k, v in merged.items()]


def _copy_groups(
    pairs: set[tuple[str, str]], by_name: Mapping[str, Memory], readings: compare.Readings
) -> tuple[list[tuple[Memory, list[Memory]]], dict[str, set[str]]]:
    """The groups of word-for-word copies among `pairs` (each its keeper and the other
    copies), and the partners of every memory not decayed as a copy: a copy's other
    partners pass to the copy kept."""
    near: dict[str, set[str]] = defaultdict(set)
    same: dict[str, set[str]] = defaultdict(set)
    for a, b in pairs:
        near[a].add(b)
        near[b].add(a)
        if readings.copy_key(by_name[a]) == readings.copy_key(by_name[b]):
            same[a].add(b)
            same[b].add(a)
    groups: list[tuple[Memory, list[Memory]]] = []
    kept_for: dict[str, str] = {}
    for name in sorted(same):
        if name in kept_for:
            continue
        members, todo = set(), [name]
        while todo:
            x = todo.pop()
            if x not in members:
                members.add(x)
                todo += same[x]
        keep = compare.keeper([by_name[x] for x in sorted(members)], readings=readings)
        groups.append(
            (keep, sorted((by_name[x] for x in members - {keep.name}), key=lambda m: m.name))
        )
        kept_for.update(dict.fromkeys(members, keep.name))
    merged: dict[str, set[str]] = defaultdict(set)
    for a, partners in near.items():
        for b in partners:
            ka, kb = kept_for.get(a, a), kept_for.get(b, b)
            if ka != kb:
                merged[ka].add(kb)
    return groups, merged


# an item named by an id before its words: "Task 3: ...", "**BUG-007**: ...", "Backend B4:"
_ITEM_ID = re.compile(
    r"^\W{0,4}(?:\[[ xX]\]\s*)?(?:\*\*)?((?:[A-Za-z]+ ){0,2}(?:[A-Z]{1,6}-?\d{1,4}|\d{1,3}))"
    r"(?:\*\*)?\s*(?::|[-–—]\s)"
)


# a command or name quoted whole before its description: "`make docs` - Build the docs"
_LEAD_SPAN = re.compile(r"^\W{0,4}(`[^`\n]{2,80}`)\**\s*(?::|[-–—]\s)")


def same_item_pairs(active: Sequence[Memory], readings: compare.Readings) -> set[tuple[str, str]]:
    """Facts that name one item by its id ("Backend B4: MinIO upload, ..." and "Backend B4:
    upload service with its queue"; "**Task 2**: ..." and "[ ] **Task 2**: ..."; a command
    quoted whole before its description, `_LEAD_SPAN`) and share
    a word besides the id: one item told twice, however differently. Two items of one id
    that share nothing else (two plans' "Step 1", two records both headed "ADR-012") stay
    apart, as do facts one denies; an id's words are set aside as the facts read them
    ("ADR-012" as "adr" and "012")."""
    by_id: dict[str, list[Memory]] = defaultdict(list)
    for m in active:
        found = _ITEM_ID.match(m.fact) or _LEAD_SPAN.match(m.fact)
        if found:
            by_id[found.group(1).lower()].append(m)
    out = set()
    for key, members in by_id.items():
        own = subject_stems(key) | read_fact(key, "").flat_stems
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                ra, rb = readings.plain(a), readings.plain(b)
                if ra.negated != rb.negated or compare.linked(a, b):
                    continue
                if (ra.flat_stems & rb.flat_stems) - own:
                    out.add((min(a.name, b.name), max(a.name, b.name)))
    return out


_AHEAD = frozenset({"todo_next"})
_DONE = frozenset({"progress_status", "change_account"})


def _stages_apart(stages: Mapping[str, str], a: str, b: str) -> bool:
    """One memory is work still to do and the other work done (or a change made)."""
    sa, sb = stages.get(a, ""), stages.get(b, "")
    return (sa in _AHEAD and sb in _DONE) or (sb in _AHEAD and sa in _DONE)


def contradictions(
    memories: list[Memory],
    readings: compare.Readings | None = None,
    passing: frozenset[str] = frozenset(),
) -> list[tuple[Memory, Memory, compare.Conflict]]:
    """Pairs of active memories that give one slot two values: on one subject, any slot
    `compare.conflict` reads; across subjects, one count (`slots.count`), the candidates
    from the units the memories count (a unit more than `rarity.RARE_DF` memories count
    is counted in too many senses to join on). Memories in `passing` (ephemeral task
    state, reported as such) are not compared with the others: a status that moved on is
    not a second truth. Among themselves, only a count is: two task-state notes giving one
    count two values ("all 318 tests pass", "suite: 322 passed") hold a stale figure,
    whatever their subjects; any other slot they share is a status told twice. A count
    that facts under several subjects, or task-state notes, give `SERIES` values or more
    is a log of runs (`_without_series`); facts of one subject giving one slot three
    values are one slot stated three ways, each clash reported."""
    readings = readings or compare.Readings()
    compared = [m for m in memories if m.active and m.name not in passing]
    state = [m for m in memories if m.active and m.name in passing]
    found = _subject_conflicts(compared, readings)
    # a clash of two values is reported once: a memory already at odds with another over
    # them is not reported again against a third under another subject
    reported: dict[str, list[compare.Conflict]] = defaultdict(list)
    for a, b, how in found:
        reported[a.name].append(how)
        reported[b.name].append(how)
    across = []
    for a, b in _count_candidates(compared, readings):
        count = compare.count_conflict(a, b, readings)
        if count is not None and not any(
            count.repeats(how) for how in reported[a.name] + reported[b.name]
        ):
            across.append((a, b, count))
    logged = []
    for a, b in _count_candidates(state, readings, any_subject=True):
        count = compare.count_conflict(a, b, readings)
        if count is not None:
            logged.append((a, b, count))
    return found + _without_series(across) + _without_series(logged)


def _without_series(
    found: list[tuple[Memory, Memory, compare.Conflict]],
) -> list[tuple[Memory, Memory, compare.Conflict]]:
    """Count clashes (across subjects, or of task-state notes), less those of counts
    that facts joined by count clashes give `SERIES` values or more: "Passed: 14
    suites", "Passed: 13 suites", "Passed: 11 suites" record a count along a log of runs,
    not one value and a rival; no one of them is the wrong one to supersede. Two values
    ("all 202 tests pass", "suite: 206 passed") still clash: one figure is stale."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.get(name, name) != name:
            name = parent[name]
        return name

    for a, b, _ in found:
        parent[root(a.name)] = root(b.name)
    values: dict[str, set[str]] = defaultdict(set)
    for a, _, how in found:
        values[root(a.name)] |= how.clause_a.values | how.clause_b.values
    series = {name for name, held in values.items() if len(held) >= SERIES}
    return [(a, b, how) for a, b, how in found if root(a.name) not in series]


def _subject_conflicts(
    memories: list[Memory], readings: compare.Readings
) -> list[tuple[Memory, Memory, compare.Conflict]]:
    """Pairs on one subject that `compare.conflict` calls contradictory and whose facts
    name the slot (`compare.named`), in name order."""
    buckets: dict[str, list[Memory]] = defaultdict(list)
    for m in memories:
        subject = normalise_subject(m.subject)
        if subject:
            buckets[subject].append(m)
    found = []
    for bucket in buckets.values():
        pairs = []
        for i, a in enumerate(bucket):
            for b in bucket[i + 1 :]:
                if compare.linked(a, b):
                    continue
                how = compare.conflict(a, b, readings=readings)
                if how is not None:
                    first, second = sorted((a, b), key=lambda m: m.name)
                    pairs.append((first, second, how))
        for a, b, how in _without_enumerations(pairs):
            named = compare.named(a, b, how, readings)
            if named is not None:
                found.append((a, b, named))
    return found


def _without_enumerations(
    pairs: list[tuple[Memory, Memory, compare.Conflict]],
) -> list[tuple[Memory, Memory, compare.Conflict]]:
    """The clashes of one subject's facts, less those of an enumeration: facts that each
    name their own thing ("the backend runs on port 8000", "PostgreSQL runs on port 5432",
    "Redis runs on port 6379"; `dev:local` runs the app on SQLite, `.env.production`
    holds the PostgreSQL settings) clash by values with `ENUMERATION - 1` others or more,
    each in words of its own, which one slot given two values does not: they are the
    entries of a list under one heading, each filling its own slot. A clash of the same
    words with other values ("the suite has 202 tests", "... 206 tests") and a clash of
    polarity are kept whatever their neighbours."""
    own = [_own_words(how) for _, _, how in pairs]
    degree: dict[str, int] = defaultdict(int)
    for (a, b, _), named in zip(pairs, own, strict=True):
        if named:
            degree[a.name] += 1
            degree[b.name] += 1
    listed = {name for name, n in degree.items() if n >= ENUMERATION - 1}
    return [
        pair
        for pair, named in zip(pairs, own, strict=True)
        if not (named and {pair[0].name, pair[1].name} & listed)
    ]


def _own_words(how: compare.Conflict) -> bool:
    """A clash of values that says which thing each fact is about: names or code set
    against each other, or numbers in clauses that each have words the other lacks."""
    a, b = how.clause_a, how.clause_b
    if how.how != "values":
        return False
    apart = (a.values - b.values) | (b.values - a.values)
    if any(not v[:1].isdigit() for v in apart):
        return True
    return bool(a.frame - b.frame) and bool(b.frame - a.frame)


def _count_candidates(
    memories: list[Memory], readings: compare.Readings, *, any_subject: bool = False
) -> list[tuple[Memory, Memory]]:
    """Pairs that count one unit (`slots.unit`), in name order: under different subjects
    (one subject's pairs are `compare.conflict`'s), or with `any_subject` under any."""
    by_unit: dict[str, list[Memory]] = defaultdict(list)
    for m in memories:
        for unit in {slots.unit(u) for c in readings.plain(m).clauses for _, u in c.numbers}:
            by_unit[unit].append(m)
    pairs = set()
    for bucket in by_unit.values():
        if len(bucket) <= rarity.RARE_DF:
            pairs |= {
                (a.name, b.name) if a.name < b.name else (b.name, a.name)
                for i, a in enumerate(bucket)
                for b in bucket[i + 1 :]
                if any_subject or not compare.same_subject(a, b)
            }
    by_name = {m.name: m for m in memories}
    return [(by_name[a], by_name[b]) for a, b in sorted(pairs)]


def _index_findings(layout: Layout, memories: list[Memory]) -> list[Finding]:
    expected = render_index(memories)
    try:
        actual = layout.memory_index.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [
            Finding(
                "index_drift", None, (), "MEMORY.md is missing; run `orch memory index`", "error"
            )
        ]
    out = []
    count = actual.count("\n") + (0 if actual.endswith("\n") or not actual else 1)
    if count > MAX_INDEX_LINES:
        out.append(
            Finding(
                "index_oversize",
                None,
                (),
                f"MEMORY.md has {count} lines (at most {MAX_INDEX_LINES}); run `orch memory index`",
                "error",
            )
        )
    if actual != expected:
        listed = {m.group(1) for m in map(_ENTRY.match, actual.splitlines()) if m}
        wanted = {m.group(1) for m in map(_ENTRY.match, expected.splitlines()) if m}
        extra, missing = sorted(listed - wanted), sorted(wanted - listed)
        parts = []
        if missing:
            parts.append(f"not listed: {', '.join(missing[:10])}")
        if extra:
            parts.append(f"listed but not an active memory: {', '.join(extra[:10])}")
        if not parts:
            parts.append("its text differs from what the files render to")
        out.append(
            Finding(
                "index_drift",
                None,
                tuple((missing + extra)[:20]),
                "MEMORY.md is out of step with the files (" + "; ".join(parts) + "); "
                "run `orch memory index`",
                "error",
            )
        )
    return out


def _notes_findings(layout: Layout) -> list[Finding]:
    try:
        text = layout.notes.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    lines = text.splitlines()
    if len(lines) > MAX_NOTES_LINES:
        out.append(
            Finding(
                "notes_style",
                None,
                (),
                f"NOTES.md has {len(lines)} lines (at most {MAX_NOTES_LINES}): keep it to the "
                "active objective",
                "error",
            )
        )
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("#") or not line.strip():
            continue
        item = re.sub(r"^\s*[-*]\s+(?!\[)", "", line).strip()
        exclusion = excluded(item)
        if _PROGRESS.search(line) or (
            exclusion is not None and exclusion.kind == "ephemeral_task_state"
        ):
            out.append(
                Finding(
                    "notes_style",
                    None,
                    (),
                    f"NOTES.md line {number} records task progress ({line.strip()[:80]!r}): "
                    "progress belongs in the task folder",
                    "warning",
                )
            )
    return out


Files = list[tuple[str, os.stat_result]]  # a store's listing: (path, stat) of each file


def _cache_key(layout: Layout, files: Files, tree: TreeState | None, config: MemoryConfig) -> str:
    """What an audit depends on: every memory file, MEMORY.md and NOTES.md (by stat key),
    every tracked file (by blob id in `tree`, for the claims; none when the audit does not
    verify) and this code's version."""
    verify = tree is not None
    digest = hashlib.sha1(f"audit {REPORT_VERSION} {__version__} {verify}\n".encode())
    for path, st in sorted(files):
        digest.update(f"{path}\0{stat_key(st)}\n".encode())
    for extra in (layout.memory_index, layout.notes):
        try:
            digest.update(f"{extra}\0{stat_key(os.stat(extra))}\n".encode())
        except OSError:
            digest.update(f"{extra}\0missing\n".encode())
    if tree is not None:
        digest.update(tree.signature(code_only=False).encode())
    # decay depends on use, on the tasks there are and on the day (memory.importance)
    try:
        digest.update(f"usage\0{stat_key(os.stat(usage_path(layout)))}\n".encode())
    except OSError:
        digest.update(b"usage\0missing\n")
    tasks = sorted(p.name for p in layout.artifacts.iterdir()) if layout.artifacts.is_dir() else []
    digest.update(f"{config}\0{tasks}\0{time.strftime('%Y-%m-%d', time.gmtime())}\n".encode())
    return digest.hexdigest()


def _report_from(data: dict[str, Any]) -> AuditReport:
    return AuditReport(
        memories=data["memories"],
        findings=[
            Finding(f["kind"], f["memory"], tuple(f["related"]), f["detail"], f["severity"])
            for f in data["findings"]
        ],
        groups=[Group(g["keeper"], tuple(g["decay"])) for g in data["groups"]],
    )


def _secret_findings(files: Files, read: dict[str, str], cache: Cache) -> list[Finding]:
    """One `secret` finding per memory file holding any (the secret itself never shown).
    Scans are cached by the digest of the file's text; `read` holds the texts of files
    read already."""
    texts: dict[str, str] = {}
    for path, _ in sorted(files):
        name = os.path.basename(path)[: -len(".md")]
        if path in read:
            texts[name] = read[path]
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                texts[name] = fh.read()
        except OSError:
            continue
    digests = {n: hashlib.sha1(t.encode("utf-8", "replace")).hexdigest() for n, t in texts.items()}
    table = cache.table(SECRETS_TABLE, SECRETS_VERSION)
    known = {d: json.loads(hits) for d, hits in table.get_many(digests.values()).items()}
    todo = [n for n in texts if digests[n] not in known]
    fresh = dict(zip(todo, scan_texts([texts[n] for n in todo]), strict=True))
    table.put_many(
        (digests[n], json.dumps([h.to_dict() for h in hits])) for n, hits in fresh.items()
    )
    found = []
    for name in texts:
        hits = fresh.get(name) or [SecretHit(**h) for h in known.get(digests[name], [])]
        if hits:
            kinds = sorted({h.kind for h in hits})
            lines = ", ".join(str(h.line) for h in hits[:5])
            detail = f"{' / '.join(kinds)} on line {lines}: remove it and rotate the secret"
            found.append(Finding("secret", name, (), detail, "error"))
    return found


def audit(
    layout: Layout,
    *,
    verify: bool = True,
    log: EventLog | None = None,
    phase: int | None = None,
    config: MemoryConfig | None = None,
    proposer: Proposer | None = None,
) -> AuditReport:
    """Audit repo memory, MEMORY.md and NOTES.md. Reads only (caches in `.orch/` aside):
    a report is read back while nothing it read changed. With a `proposer` (a model), the
    pairs it proposes and the rules accept are added (see `proposals`); such a report is
    neither read from nor kept in the cache."""
    config = config or MemoryConfig()
    store = RepoMemoryStore(layout)
    store.recover()  # a write a killed process left half-done, rolled back before listing
    files = list(store.files())
    tree = TreeState.read(layout.root) if verify else None
    key = _cache_key(layout, files, tree, config)
    with Cache(layout.cache) as cache:
        reports = cache.table(REPORT_TABLE, REPORT_VERSION)
        cached = None if proposer else reports.get(key)
        if cached is not None:
            report = _report_from(json.loads(cached))
        else:
            report, complete = _run(layout, store, files, cache, tree, config)
            if proposer is not None:
                report.findings += _proposed(store.load_all().memories, report, proposer)
                order = {k: i for i, k in enumerate(KINDS)}
                report.findings.sort(key=lambda f: (order[f.kind], f.memory or "", f.detail))
            elif complete:
                reports.replace_all([(key, json.dumps(report.to_dict()))])
    if log is not None:
        log.append("memory_audit", report.payload(), phase=phase)
    return report


def _run(
    layout: Layout,
    store: RepoMemoryStore,
    files: Files,
    cache: Cache,
    tree: TreeState | None,
    config: MemoryConfig,
) -> tuple[AuditReport, bool]:
    """Every check; (the report, whether it depends on tracked files only). Each memory
    file is listed once (`files`, the store's last listing) and read at most once; claims
    are verified against `tree` (none: not verified)."""
    texts: dict[str, str] = {}
    loaded = store.load_all(files, texts)
    report = _compare_memories(loaded.memories, cache)
    findings = list(report.findings)
    findings += _card_findings(loaded.memories, findings)
    findings += [
        Finding("low_value", c.name, (), f"{c.reason}: `orch memory decay --apply`", "warning")
        for c in decay_candidates(layout, loaded.memories, config)
    ]
    complete = True
    if tree is not None:
        results, is_active, complete = verify_store_details(
            layout, loaded=loaded, files=files, tree=tree
        )
        findings += [
            Finding("stale_citation", r.name, (), r.summary(), "error")
            for r in results
            if r.stale and is_active.get(r.name)
        ]
        findings += [
            Finding(
                "moved_citation",
                r.name,
                (),
                f"{r.summary()}: `orch memory verify --fix`",
                "warning",
            )
            for r in results
            if r.result == "moved" and is_active.get(r.name)
        ]
    findings += _secret_findings(files, texts, cache)
    findings += _problem_findings(loaded)
    findings += _index_findings(layout, loaded.memories)
    findings += _notes_findings(layout)
    order = {k: i for i, k in enumerate(KINDS)}
    report.findings = sorted(findings, key=lambda f: (order[f.kind], f.memory or "", f.detail))
    return report, complete


def _proposed(memories: list[Memory], report: AuditReport, proposer: Proposer) -> list[Finding]:
    """The pairs a model proposes that the rules accept, as findings."""
    found = {frozenset({f.memory or "", *f.related[:1]}) for f in report.findings}
    readings = compare.Readings()
    pairs = proposals.candidates(memories, found, readings)
    if not pairs:
        return []
    by_name = {m.name: m for m in memories}
    out = []
    for p in proposer(pairs):
        a, b = by_name.get(p.a), by_name.get(p.b)
        if a is None or b is None or frozenset({a.name, b.name}) in found:
            continue
        detail = proposals.accepted(p, a, b, readings)
        if not detail:
            continue
        found.add(frozenset({a.name, b.name}))
        if p.verdict == "same":
            keep = compare.keeper([a, b], readings=readings)
            other = b if keep is a else a
            report.groups.append(Group(keep.name, (other.name,)))
            out.append(Finding("near_duplicate", other.name, (keep.name,), detail, "warning"))
        else:
            first, second = sorted((a, b), key=lambda m: m.name)
            out.append(Finding("contradiction", first.name, (second.name,), detail, "error"))
    return out


def _card_findings(memories: list[Memory], found: list[Finding]) -> list[Finding]:
    """User cards a newer card about the same person and preference overrules (the older
    is reported; a pair the contradiction check already named is not named twice)."""
    named = {frozenset((f.memory, *f.related)) for f in found if f.kind == "contradiction"}
    return [
        Finding("contradiction", c.older.name, (c.newer.name,), c.detail(), "warning")
        for c in card_conflicts(memories)
        if frozenset((c.older.name, c.newer.name)) not in named
    ]


def _problem_findings(loaded: LoadResult) -> list[Finding]:
    """Files that do not load, and loadable ones with fields missing."""
    return [
        Finding(p.kind, p.path.rsplit("/", 1)[-1].removesuffix(".md"), (), p.detail, p.severity)
        for p in loaded.problems
    ]


def _readings(
    active: list[Memory], cache: Cache
) -> tuple[compare.Readings, dict[tuple[str, str], Exclusion | None]]:
    """How each active memory reads and the save exclusion its fact falls under, read back
    from the cache by a digest of subject and fact, or read now (and cached); rows no
    memory needs any more are dropped."""
    table = cache.table(READINGS_TABLE, READINGS_VERSION)
    rows = table.items()
    known: dict[tuple[str, str], Reading] = {}
    exclusions: dict[tuple[str, str], Exclusion | None] = {}
    fresh, wanted = [], set()
    for key in [(m.fact, m.subject or "") for m in active]:
        digest = hashlib.sha1("\0".join(key).encode("utf-8", "replace")).hexdigest()
        wanted.add(digest)
        if key in known:
            continue
        row = rows.get(digest)
        if row is not None:
            clauses, exclusion = json.loads(row)
            known[key] = Reading.from_data(clauses)
            exclusions[key] = Exclusion(*exclusion) if exclusion else None
            continue
        known[key] = read_fact(*key)
        exclusions[key] = found = excluded(*key)
        data = [known[key].to_data(), [found.kind, found.evidence, found.cls] if found else None]
        fresh.append((digest, json.dumps(data)))
    table.put_many(fresh, drop=[d for d in rows if d not in wanted])
    return compare.Readings(known), exclusions


def _compare_memories(memories: list[Memory], cache: Cache) -> AuditReport:
    """Near-duplicates, contradictions and save exclusions: the memories among themselves."""
    active = [m for m in memories if m.active]
    readings, exclusions = _readings(active, cache)
    report = AuditReport(memories=len(memories))
    passing = frozenset(m.name for m in active if exclusions[(m.fact, m.subject or "")] is not None)
    stages = {
        m.name: found.cls
        for m in active
        if (found := exclusions[(m.fact, m.subject or "")]) is not None and found.cls
    }
    for keep, decay in near_duplicate_groups(memories, readings, passing, stages):
        report.groups.append(Group(keep.name, tuple(m.name for m in decay)))
        kept = compare.specificity(keep, readings=readings)
        more_specific = any(kept > compare.specificity(m, readings=readings) for m in decay)
        why = "more specific" if more_specific else "most recent"
        for m in decay:
            others = tuple(x.name for x in decay if x is not m)
            report.findings.append(
                Finding(
                    "near_duplicate",
                    m.name,
                    (keep.name, *others),
                    f"near-duplicates {keep.name} (keeper: {why}); a decay candidate",
                    "warning",
                )
            )
    passing = frozenset(m.name for m in active if exclusions[(m.fact, m.subject or "")] is not None)
    for a, b, how in contradictions(memories, readings, passing):
        report.findings.append(
            Finding(
                "contradiction",
                a.name,
                (b.name,),
                f"both about {how.slot or normalise_subject(a.subject)!r} and active: "
                f"{how.detail()}; "
                "supersede the wrong one",
                # read from words alone, a clash is a lead for a person, not a failed check:
                # on memory real projects wrote almost none was one (docs/memory.md)
                "warning",
            )
        )
    for m in active:
        exclusion = exclusions[(m.fact, m.subject or "")]
        if exclusion is not None:
            report.findings.append(
                Finding(
                    "excluded_content",
                    m.name,
                    (),
                    f"{exclusion.kind}: {exclusion.reason()}",
                    "warning",
                )
            )
    return report
