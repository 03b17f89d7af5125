"""The memory audit (Checklist D and more): read-only, one finding per problem.

Finding kinds and their severity (`--check` fails on errors only):

| kind | severity | what |
|---|---|---|
| near_duplicate | warning | a decay candidate of a near-duplicate group (`related`: keeper first) |
| contradiction | error | two active memories on one subject disagree; neither supersedes the other |
| stale_citation | error | a claim (citation or backticked name) fails against the working tree |
| excluded_content | warning | a save exclusion: git history, ephemeral task state, derivable from code |
| secret | error | an API key, token, private key or password in a memory file |
| invalid_file | error | a file that does not parse, or misses name/description/type |
| missing_field | warning | a loadable memory without subject, reason, citations or fact |
| index_drift | error | MEMORY.md is not what the files render to |
| index_oversize | error | MEMORY.md over 200 lines |
| notes_style | error / warning | NOTES.md over 20 lines (error); a task-progress line (warning) |

Near-duplicates and contradictions never compare all pairs: near-duplicate candidates
come from exact prefix-filter joins and value buckets (see `duplicate_candidates`);
contradiction candidates from buckets of one normalised subject. Each candidate pair then
gets the full test in `compare`.

The audit changes nothing in the repository. It keeps caches in `.orch/` (git-ignored):
verification results, secret scans, and its last report, read back while no memory file,
MEMORY.md, NOTES.md or tracked file changed.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from orchestrator.memory import compare
from orchestrator.memory.dedup import (
    THRESHOLD,
    contained_pairs,
    cross_pairs,
    dedup_key,
    normalise_subject,
    similar_pairs,
)
from orchestrator.memory.exclusions import excluded
from orchestrator.store.index import MAX_INDEX_LINES, render_index
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory
from orchestrator.store.notes import MAX_NOTES_LINES

if TYPE_CHECKING:
    from orchestrator.events.log import EventLog
    from orchestrator.store.repo import LoadResult

KINDS = (
    "near_duplicate",
    "contradiction",
    "stale_citation",
    "excluded_content",
    "secret",
    "invalid_file",
    "missing_field",
    "index_drift",
    "index_oversize",
    "notes_style",
)
TITLES = {
    "near_duplicate": "Near-duplicates",
    "contradiction": "Contradictions",
    "stale_citation": "Stale claims",
    "excluded_content": "Save-exclusion violations",
    "secret": "Secrets",
    "invalid_file": "Invalid files",
    "missing_field": "Missing fields",
    "index_drift": "Index drift",
    "index_oversize": "Index size",
    "notes_style": "NOTES.md",
}
SMALL_BUCKET = 8  # memories asserting one value set compared pairwise; more are joined
PARALLEL_FROM = 2000  # memories from which the claim and secret checks run in a child
AUDIT_CACHE = "audit.json"
AUDIT_CACHE_VERSION = 4
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


def _linked(a: Memory, b: Memory) -> bool:
    """One supersedes the other (either side of the link is enough)."""
    return (
        a.name in b.supersedes
        or b.name in a.supersedes
        or a.superseded_by == b.name
        or b.superseded_by == a.name
    )


def duplicate_candidates(active: list[Memory]) -> set[tuple[str, str]]:
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
    names = [m.name for m in active]
    raw = [(i, dedup_key(m)) for i, m in enumerate(active)]
    stems = [(i, compare.content_stems(m)) for i, m in enumerate(active)]
    values = [compare.reading(m).values for m in active]
    anchors = [compare.anchored(v) for v in values]
    pairs: set[tuple[int, int]] = set()

    by_value: dict[str, list[int]] = defaultdict(list)
    for i, found in enumerate(values):
        for value in found:
            by_value[value].append(i)
    for value, members in by_value.items():
        if len(members) < 2:
            continue
        pairs |= {(a, b) for a, b, _ in similar_pairs([raw[i] for i in members], THRESHOLD)}
        sub = [stems[i] for i in members]
        pairs |= {(a, b) for a, b, _ in similar_pairs(sub, compare.REWORDED)}
        if value in anchors[members[0]]:
            pairs |= {
                (a, b) for a, b, _ in contained_pairs(sub, compare.CONTAINED, compare.CONTAINED_MIN)
            }

    by_anchors: dict[frozenset[str], list[int]] = defaultdict(list)
    for i, found in enumerate(anchors):
        if found:
            by_anchors[found].append(i)
    for members in by_anchors.values():
        if len(members) <= SMALL_BUCKET:
            pairs |= {(a, b) for k, a in enumerate(members) for b in members[k + 1 :]}
        else:
            sub = [stems[i] for i in members]
            pairs |= {(a, b) for a, b, _ in similar_pairs(sub, compare.ANCHORED)}

    bare = [i for i, found in enumerate(values) if not found]
    if bare:
        pairs |= {(a, b) for a, b, _ in cross_pairs([raw[i] for i in bare], raw, THRESHOLD)}
        left = [stems[i] for i in bare]
        pairs |= {(a, b) for a, b, _ in cross_pairs(left, stems, compare.REWORDED)}
    return {(min(names[a], names[b]), max(names[a], names[b])) for a, b in pairs if a != b}


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Comparing a large store creates many small objects and no cycles: Python's cyclic
    collector would rescan the growing heap over and over (a superlinear cost), so it waits."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def near_duplicate_groups(memories: list[Memory]) -> list[tuple[Memory, list[Memory]]]:
    """(keeper, decay candidates) for every near-duplicate group of active memories."""
    with _gc_paused():
        return _near_duplicate_groups(memories)


def _near_duplicate_groups(memories: list[Memory]) -> list[tuple[Memory, list[Memory]]]:
    active = [m for m in memories if m.active]
    by_name = {m.name: m for m in active}
    candidates = duplicate_candidates(active)
    parent: dict[str, str] = {}
    members: set[str] = set()

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            parent[x] = parent.get(parent[x], parent[x])
            x = parent[x]
        return x

    for a, b in sorted(candidates):
        ma, mb = by_name[a], by_name[b]
        if _linked(ma, mb) or compare.duplicate(ma, mb) is None:
            continue
        parent[find(a)] = find(b)
        members.update((a, b))
    groups: dict[str, list[Memory]] = defaultdict(list)
    for name in members:
        groups[find(name)].append(by_name[name])
    out = []
    for group in groups.values():
        if len(group) < 2:
            continue
        keep = compare.keeper(group)
        out.append((keep, sorted((m for m in group if m is not keep), key=lambda m: m.name)))
    return sorted(out, key=lambda g: g[0].name)


def contradictions(memories: list[Memory]) -> list[tuple[Memory, Memory, compare.Conflict]]:
    buckets: dict[str, list[Memory]] = defaultdict(list)
    for m in memories:
        if m.active and normalise_subject(m.subject):
            buckets[normalise_subject(m.subject)].append(m)
    found = []
    for bucket in buckets.values():
        for i, a in enumerate(bucket):
            for b in bucket[i + 1 :]:
                if _linked(a, b):
                    continue
                how = compare.conflict(a, b)
                if how is not None:
                    first, second = sorted((a, b), key=lambda m: m.name)
                    found.append((first, second, how))
    return found


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


def _cache_key(layout: Layout, store: Any, verify: bool) -> str:
    """What an audit depends on: every memory file, MEMORY.md and NOTES.md (by stat key),
    every tracked file (by blob id, for the claims) and this code's version."""
    import hashlib
    import os

    from orchestrator import __version__
    from orchestrator.memory.codeindex import TreeState
    from orchestrator.store.cache import file_key

    digest = hashlib.sha1(f"audit {AUDIT_CACHE_VERSION} {__version__} {verify}\n".encode())
    for path, st in sorted(store.files()):
        digest.update(f"{path}\0{file_key(st)}\n".encode())
    for extra in (layout.memory_index, layout.notes):
        try:
            digest.update(f"{extra}\0{file_key(os.stat(extra))}\n".encode())
        except OSError:
            digest.update(f"{extra}\0missing\n".encode())
    if verify:
        digest.update(TreeState.read(layout.root).signature(code_only=False).encode())
    return digest.hexdigest()


def _cached_report(layout: Layout, key: str) -> AuditReport | None:
    import json

    try:
        raw = json.loads((layout.cache / AUDIT_CACHE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict) or raw.get("key") != key:
        return None
    data = raw["report"]
    return AuditReport(
        memories=data["memories"],
        findings=[
            Finding(f["kind"], f["memory"], tuple(f["related"]), f["detail"], f["severity"])
            for f in data["findings"]
        ],
        groups=[Group(g["keeper"], tuple(g["decay"])) for g in data["groups"]],
    )


def _save_report(layout: Layout, key: str, report: AuditReport) -> None:
    import json

    from orchestrator.store.fs import atomic_write

    if not layout.cache.is_dir():
        return
    with contextlib.suppress(OSError):  # a cache only
        atomic_write(
            layout.cache / AUDIT_CACHE, json.dumps({"key": key, "report": report.to_dict()})
        )


def _secret_findings(layout: Layout) -> list[Finding]:
    """One `secret` finding per memory file holding any (the secret itself never shown)."""
    from orchestrator.memory.secrets import SecretScanner
    from orchestrator.store.repo import RepoMemoryStore

    texts = []
    names = []
    for path, _ in sorted(RepoMemoryStore(layout).files()):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                texts.append(fh.read())
        except OSError:
            continue
        names.append(path.rsplit("/", 1)[-1][:-3])
    found = []
    scanner = SecretScanner(layout.cache if layout.cache.is_dir() else None)
    try:
        for name, hits in zip(names, scanner.scan_many(texts), strict=True):
            if hits:
                kinds = sorted({h.kind for h in hits})
                lines = ", ".join(str(h.line) for h in hits[:5])
                found.append(
                    Finding(
                        "secret",
                        name,
                        (),
                        f"{' / '.join(kinds)} on line {lines}: remove it and rotate the secret",
                        "error",
                    )
                )
    finally:
        scanner.close()
    return found


Side = tuple[tuple[list[Any], dict[str, bool], bool] | None, list[Finding]]
_SIDE_INPUT: tuple[Layout, LoadResult, bool] | None = None


def _side_checks(layout: Layout, loaded: LoadResult, verify: bool) -> Side:
    """The checks that read files other than the memories' text: claims and secrets."""
    from orchestrator.memory.verify import verify_store_details

    verified = verify_store_details(layout, loaded=loaded) if verify else None
    return verified, _secret_findings(layout)


def _side_in_child() -> Side:
    assert _SIDE_INPUT is not None
    return _side_checks(*_SIDE_INPUT)


def audit(
    layout: Layout,
    *,
    verify: bool = True,
    log: EventLog | None = None,
    phase: int | None = None,
) -> AuditReport:
    """Audit repo memory, MEMORY.md and NOTES.md. Reads only (caches in `.orch/` aside).

    On a large store with no cached report, the claim and secret checks run in a forked
    child process while this one compares the memories with each other (two cores, about
    half the time); elsewhere, and on small stores, everything runs here.
    """
    global _SIDE_INPUT
    from orchestrator.store.repo import RepoMemoryStore

    store = RepoMemoryStore(layout)
    key = _cache_key(layout, store, verify)
    cached = _cached_report(layout, key)
    if cached is not None:
        if log is not None:
            log.append("memory_audit", cached.payload(), phase=phase)
        return cached
    loaded = store.load_all()
    memories = loaded.memories
    active = [m for m in memories if m.active]
    pool = None
    pending = None
    if len(memories) >= PARALLEL_FROM and "fork" in multiprocessing.get_all_start_methods():
        _SIDE_INPUT = (layout, loaded, verify)
        try:
            pool = multiprocessing.get_context("fork").Pool(1)
            pending = pool.apply_async(_side_in_child)
        finally:
            _SIDE_INPUT = None
    try:
        with _gc_paused():
            report = _compare_memories(layout, memories, active)
        side = pending.get() if pending is not None else _side_checks(layout, loaded, verify)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    verified, secret_findings = side
    findings = list(report.findings)
    complete = True
    if verified is not None:
        results, is_active, complete = verified
        findings += [
            Finding("stale_citation", r.name, (), r.summary(), "error")
            for r in results
            if r.stale and is_active.get(r.name)
        ]
    findings += secret_findings
    for problem in loaded.problems:
        stem = problem.path.rsplit("/", 1)[-1].removesuffix(".md")
        findings.append(Finding(problem.kind, stem, (), problem.detail, problem.severity))
    findings += _index_findings(layout, memories)
    findings += _notes_findings(layout)
    order = {k: i for i, k in enumerate(KINDS)}
    report.findings = sorted(findings, key=lambda f: (order[f.kind], f.memory or "", f.detail))
    if complete:
        _save_report(layout, key, report)
    if log is not None:
        log.append("memory_audit", report.payload(), phase=phase)
    return report


def _compare_memories(layout: Layout, memories: list[Memory], active: list[Memory]) -> AuditReport:
    """Near-duplicates, contradictions and save exclusions: the memories among themselves."""
    from orchestrator.memory.analysis import Analysis

    analysis = Analysis(layout.cache if layout.cache.is_dir() else None)
    analysis.prime(active)
    analysis.close()
    report = AuditReport(memories=len(memories))
    for keep, decay in near_duplicate_groups(memories):
        report.groups.append(Group(keep.name, tuple(m.name for m in decay)))
        why = (
            "more specific"
            if any(compare.specificity(keep) > compare.specificity(m) for m in decay)
            else "most recent"
        )
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
    for a, b, how in contradictions(memories):
        report.findings.append(
            Finding(
                "contradiction",
                a.name,
                (b.name,),
                f"both about {normalise_subject(a.subject)!r} and active: {how.detail()}; "
                "supersede the wrong one",
                "error",
            )
        )
    for m in active:
        exclusion = analysis.excluded(m)
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
