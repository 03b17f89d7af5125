"""Checklist C: promote what a task learned into repo memory, by rules.

For each candidate not decided before (decisions are read back from the task's event log,
so a resumed run never decides twice), in order:

1. patterns (`kind: pattern`) are counted across all tasks; one seen at least
   `MemoryConfig.skill_min_occurrences` times becomes `skill-proposals/<slug>.md` in this
   task folder, for a human to review: never applied;
2. save exclusions (git history, ephemeral task state, derivable from code) are dropped,
   with the reason; gate notes (what a gate did in this run: "tests passed after the
   retry", orch's own "phase 1: tests_pass: PASS") are dropped without a decision, only
   counted (`exclusions.gate_note`);
3. task-only facts (proposed `scope: task`, or naming this task, this phase, "for now"...)
   stay in the task folder (`task-memory.md`);
4. the type is decided (the model may propose one; the rules below may overrule it);
5. only a complete memory is written: subject, fact, reason, type, and citations for
   project and reference memories (taken from the candidate, or from the repository paths
   its fact names); an incomplete one stays in the task folder, with what it lacks;
6. a fact that contradicts an active memory on the same subject supersedes it; one that
   near-duplicates a memory (Checklist A) supersedes it when it is at least as specific,
   else is skipped; otherwise it is written.

Candidates come from the task's files (`candidates.task_candidates`) and from what a
person said in the task (`cards.card_candidates`: user cards).

Each decision is one `memory_promotion` event.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from typing import Any

from orchestrator.checks.secrets import redact, secret_kind
from orchestrator.config import MemoryConfig
from orchestrator.errors import ModelError, OrchError, PathEscape
from orchestrator.events.log import EventLog
from orchestrator.memory import compare
from orchestrator.memory.candidates import Candidate, task_candidates
from orchestrator.memory.cards import card_candidates, said_in
from orchestrator.memory.dedup import DedupIndex, NearDuplicate, jaccard, normalise_subject
from orchestrator.memory.exclusions import excluded, gate_note
from orchestrator.memory.text import read_fact
from orchestrator.memory.writer import MemoryWriter, WriteResult
from orchestrator.messages import Message, Request, SystemPart
from orchestrator.prompts import prompt_text
from orchestrator.protocols import Model
from orchestrator.store.fs import atomic_write, confine, file_lock
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import KEBAB, MEMORY_TYPES, NEEDS_CITATIONS, Citation, Memory
from orchestrator.store.repo import LoadResult
from orchestrator.store.tasks import TaskFolder, list_tasks, slugify

DECISIONS = (
    "written",
    "superseded",
    "skipped",
    "task_only",
    "excluded",
    "incomplete",
    "skill_proposal",
    "pattern_noted",
)
TASK_MEMORY_FILE = "task-memory.md"
PATTERN_SIMILARITY = 0.6

_USER = re.compile(
    r"\b(?:the user|user's|the developer|i am|i'm|my role|i prefer|i like|i know|"
    r"user prefers|user is|user knows|user wants)\b",
    re.I,
)
_FEEDBACK = re.compile(
    r"^(?:always|never|don't|do not|avoid|prefer|stop|please|keep|make sure|remember to)\b",
    re.I,
)
_TASK_ONLY = re.compile(
    r"\b(?:this task|this phase|the next phase|later phases|next phase|this pr|this branch|"
    r"this run|for now|temporar(?:y|ily)|until the task|for the rest of the task|the plan|"
    r"phase \d+ of)\b",
    re.I,
)
_CODE = re.compile(r"`([^`\n]+)`")


@dataclass(frozen=True)
class Decision:
    candidate: Candidate
    decision: str
    reason: str
    memory: str | None = None
    type: str | None = None
    related: tuple[str, ...] = ()
    exclusion: str | None = None

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "candidate": self.candidate.id,
            "source": self.candidate.source,
            "ref": self.candidate.ref,
            "fact": redact(self.candidate.fact)[:300],  # redacted whole, then cut
            "decision": self.decision,
            "reason": self.reason,
            "memory": self.memory,
            "type": self.type,
            "related": list(self.related),
        }
        if self.exclusion:
            out["exclusion"] = self.exclusion
        return out


@dataclass
class PromotionReport:
    task: str
    decisions: list[Decision] = field(default_factory=list)
    already_decided: int = 0
    gate_notes: int = 0  # dropped without a decision: what a gate did in one run

    def counts(self) -> dict[str, int]:
        out = {d: 0 for d in DECISIONS}
        for d in self.decisions:
            out[d.decision] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "task": self.task,
            "counts": self.counts(),
            "already_decided": self.already_decided,
            "gate_notes_dropped": self.gate_notes,
            "decisions": [d.payload() for d in self.decisions],
        }

    def summary(self) -> str:
        """One line: how many candidates ended how."""
        counts = ", ".join(f"{n} {d.replace('_', ' ')}" for d, n in self.counts().items() if n)
        return f"Checklist C: {counts or 'no new candidates'}" + (
            f" ({self.already_decided} decided before)" if self.already_decided else ""
        )

    def text(self) -> str:
        lines = [f"Checklist C for {self.task}: {len(self.decisions)} decisions"]
        if self.already_decided:
            lines[0] += f" ({self.already_decided} candidates decided before)"
        for d in self.decisions:
            target = f" -> {d.memory}" if d.memory else ""
            fact = redact(d.candidate.fact)[:80]
            lines.append(f"- {d.decision}{target}: {fact!r} ({d.reason})")
        return "\n".join(lines) + "\n"


def _decided(log: EventLog | None) -> set[str]:
    if log is None:
        return set()
    done = set()
    for event in log.read().events:
        if event.event_type == "memory_promotion":
            ident = event.payload.get("candidate")
            if isinstance(ident, str) and event.payload.get("decision") != "pattern_noted":
                done.add(ident)
    return done


def _person(layout: Layout) -> str:
    """Who runs orch here (git's user.name), the person a task's statements are from."""
    found = subprocess.run(
        ["git", "config", "user.name"], cwd=layout.root, capture_output=True, text=True
    )
    return found.stdout.strip() or "the user"


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0][:150]


def classify(candidate: Candidate) -> tuple[str, str]:
    """(type, why): the rules decide; a proposed type stands unless a rule overrules it."""
    fact = candidate.fact
    if candidate.card:
        return "user", "a person said it of how they want the work done"
    if _USER.search(fact):
        return "user", "the fact is about the user"
    proposed = candidate.type if candidate.type in MEMORY_TYPES else None
    if proposed == "user":
        proposed = None  # nothing in the fact is about the user
    anchored = bool(candidate.citations or _CODE.search(fact))
    if _FEEDBACK.search(fact) and (proposed is None or (proposed != "feedback" and not anchored)):
        return "feedback", "the fact is guidance on how to work"
    if proposed is not None:
        return proposed, "as proposed"
    if candidate.citations or _CODE.search(fact):
        return "reference", "the fact points at files, commands or symbols"
    return "project", "a fact about the project"


def task_only(candidate: Candidate, slug: str) -> str | None:
    if candidate.scope == "task":
        return "proposed as task-only"
    match = _TASK_ONLY.search(candidate.fact)
    if match:
        return f"names the task's own scope ({match.group(0)!r})"
    if slug in candidate.fact:
        return f"names the task {slug!r}"
    return None


def derived_citations(layout: Layout, fact: str) -> tuple[Citation, ...]:
    """Citations for the repository paths a fact names in backticks (those that exist)."""
    out = []
    for span in _CODE.findall(fact):
        span = span.strip().rstrip("/")
        if " " in span or not span or ("/" not in span and "." not in span):
            continue
        try:
            target = confine(layout.root, span)
        except PathEscape:
            continue
        if target.is_file():
            out.append(Citation(span))
    return tuple(dict.fromkeys(out))


def _unique_name(wanted: str, taken: set[str]) -> str:
    base = wanted[:70].strip("-") or "memory"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def build_memory(
    layout: Layout, candidate: Candidate, kind: str, taken: set[str], source: dict[str, Any]
) -> tuple[Memory | None, list[str]]:
    """The memory a candidate would become, or None and what it lacks."""
    citations = candidate.citations or derived_citations(layout, candidate.fact)
    missing = []
    if not candidate.subject:
        missing.append("subject")
    if not candidate.reason:
        missing.append("reason")
    if kind in NEEDS_CITATIONS and not citations:
        missing.append(f"citations (required for {kind})")
    if missing:
        return None, missing
    assert candidate.subject
    wanted = candidate.name if candidate.name and KEBAB.match(candidate.name) else None
    name = _unique_name(wanted or slugify(candidate.subject), taken)
    memory = Memory(
        name=name,
        description=_first_sentence(candidate.fact),
        type=kind,
        body=candidate.fact.strip() + "\n",
        subject=candidate.subject,
        reason=candidate.reason,
        citations=citations,
        source=source,
    )
    if candidate.card:
        memory = memory.with_changes(**dict(candidate.card))
    return memory, []


def _append_task_memory(task: TaskFolder, lines: list[str]) -> None:
    if not lines:
        return
    path = task.path / TASK_MEMORY_FILE
    with file_lock(task.layout.locks, f"task-{task.slug}-files"):
        try:
            current = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = (
                f"# Task memory: {task.slug}\n\n"
                "Facts this task learned that stay with the task (Checklist C kept them out "
                "of repo memory).\n"
            )
        atomic_write(path, redact(current.rstrip("\n") + "\n" + "".join(f"{x}\n" for x in lines)))


# patterns -------------------------------------------------------------------------------


def _all_patterns(layout: Layout, current: TaskFolder) -> list[tuple[str, Candidate]]:
    out = []
    for task in list_tasks(layout):
        found = task_candidates(task) if task.slug != current.slug else []
        out += [(task.slug, c) for c in found if c.kind == "pattern"]
    return out


def _same_pattern(a: str, b: str) -> bool:
    return jaccard(read_fact(a).stems, read_fact(b).stems) >= PATTERN_SIMILARITY


def _write_skill_proposal(
    task: TaskFolder, pattern: Candidate, occurrences: list[tuple[str, Candidate]]
) -> str:
    slug = slugify(pattern.subject or pattern.fact, max_len=40)
    path = task.skill_proposals / f"{slug}.md"
    lines = [
        f"# Skill proposal: {pattern.subject or _first_sentence(pattern.fact)}",
        "",
        "Status: proposed. Review it by hand; orch never applies a skill proposal.",
        f"Seen {sum(c.seen for _, c in occurrences)} times.",
        "",
        "## Pattern",
        "",
        pattern.fact,
        "",
        "## Occurrences",
        "",
        *[f"- {slug_}: {c.ref}: {c.fact}" for slug_, c in occurrences],
    ]
    atomic_write(path, redact("\n".join(lines) + "\n"))
    return slug


# the checklist --------------------------------------------------------------------------


def _propose(model: Model, candidates: list[Candidate], phase: int | None) -> list[Candidate]:
    """Let the model fill in fields (subject, type, reason, scope, kind, name)."""
    prompt = prompt_text("extractor")
    request = Request(
        system=[SystemPart(prompt, cache=True, label="extractor")],
        messages=[Message.user(json.dumps([c.to_dict() for c in candidates], indent=1))],
        max_tokens=4096,
        purpose="extractor",
        phase=phase,
    )
    try:
        reply = model.complete(request)
    except ModelError:
        return candidates  # the rules work without proposals
    text = reply.text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    try:
        proposals = json.loads(fenced.group(1) if fenced else text)
    except ValueError:
        return candidates
    if not isinstance(proposals, list):
        return candidates
    by_id = {p.get("id"): p for p in proposals if isinstance(p, dict)}
    out = []
    for c in candidates:
        p = by_id.get(c.id)
        if not p:
            out.append(c)
            continue
        changes: dict[str, Any] = {"proposed_by": ("model",)}
        for key in ("subject", "reason", "name"):
            if not getattr(c, key) and isinstance(p.get(key), str) and p[key].strip():
                changes[key] = " ".join(p[key].split())
        if c.type is None and p.get("type") in MEMORY_TYPES:
            changes["type"] = p["type"]
        if c.scope is None and p.get("scope") in ("repo", "task"):
            changes["scope"] = p["scope"]
        if p.get("kind") == "pattern":
            changes["kind"] = "pattern"
        out.append(c.with_changes(**changes))
    return out


@dataclass
class _Checklist:
    """One run of Checklist C over a task's candidates: its decisions and what it keeps."""

    layout: Layout
    task: TaskFolder
    log: EventLog | None
    phase: int | None
    config: MemoryConfig
    writer: MemoryWriter
    report: PromotionReport
    task_lines: list[str] = field(default_factory=list)

    def decide(self, d: Decision) -> None:
        self.report.decisions.append(d)
        if self.log is not None:
            self.log.append("memory_promotion", d.payload(), phase=self.phase)

    def keep_in_task(self, c: Candidate, why: str) -> None:
        self.task_lines.append(f"- {c.fact} ({c.ref}; {why})")

    # 1. patterns ----------------------------------------------------------------------

    def patterns(self, found: list[Candidate], todo: list[Candidate]) -> None:
        """Count each new pattern across every task's; propose a skill when seen enough."""
        history = _all_patterns(self.layout, self.task) + [(self.task.slug, c) for c in found]
        clusters: list[list[tuple[str, Candidate]]] = []
        for slug_, c in history:
            for cluster in clusters:
                if _same_pattern(cluster[0][1].fact, c.fact):
                    cluster.append((slug_, c))
                    break
            else:
                clusters.append([(slug_, c)])
        needed = self.config.skill_min_occurrences
        for c in todo:
            cluster = next(cl for cl in clusters if any(x is c for _, x in cl))
            seen = sum(x.seen for _, x in cluster)
            if seen >= needed:
                proposal = _write_skill_proposal(self.task, cluster[0][1], cluster)
                why = (
                    f"seen {seen} times (at least {needed}): proposed in "
                    f"skill-proposals/{proposal}.md, not applied"
                )
                self.decide(Decision(c, "skill_proposal", why))
            else:
                why = f"seen {seen} of {needed} times needed for a skill proposal"
                self.decide(Decision(c, "pattern_noted", why))

    # 2.-6. facts ----------------------------------------------------------------------

    def facts(self, facts: list[Candidate]) -> None:
        current = self.writer.store.load_all()
        taken = {m.name for m in current.memories}
        taken |= {p.stem for p in self.layout.repo_memories.glob("*.md")}
        source: dict[str, Any] = {"task": self.task.slug}
        if self.phase is not None:
            source["phase"] = self.phase
        for c in facts:
            result = self.fact(c, current, taken, source)
            if result is not None:
                taken.add(result.memory.name)
                current = self.writer.store.load_all()

    def fact(
        self, c: Candidate, current: LoadResult, taken: set[str], source: dict[str, Any]
    ) -> WriteResult | None:
        """Steps 2 to 6 for one candidate; the write, if it made one."""
        said = " ".join((c.fact, c.subject or "", c.reason or ""))
        secret = "redacted on its way in" if "[REDACTED:" in said else secret_kind(said)
        if secret is not None:  # never written anywhere: not to memory, not to the task file
            self.decide(
                Decision(c, "excluded", f"holds a secret ({secret}); orch never stores one")
            )
            return None
        exclusion = excluded(c.fact, c.subject or "")
        if exclusion is not None:
            self.decide(Decision(c, "excluded", exclusion.reason(), exclusion=exclusion.kind))
            return None
        why_task = task_only(c, self.task.slug)
        if why_task is not None:
            self.keep_in_task(c, f"task-only: {why_task}")
            self.decide(Decision(c, "task_only", f"kept in {TASK_MEMORY_FILE}: {why_task}"))
            return None
        kind, why_kind = classify(c)
        memory, missing = build_memory(self.layout, c, kind, taken, source)
        if memory is None:
            lacks = ", ".join(missing)
            self.keep_in_task(c, f"incomplete: missing {lacks}")
            why = f"kept in {TASK_MEMORY_FILE}: missing {lacks}"
            self.decide(Decision(c, "incomplete", why, type=kind))
            return None
        try:
            return self.write(c, memory, kind, why_kind, current.active)
        except OrchError as exc:
            self.keep_in_task(c, f"not written: {exc.message}")
            self.decide(Decision(c, "incomplete", f"not written: {exc.message}", type=kind))
            return None

    def write(
        self, c: Candidate, memory: Memory, kind: str, why_kind: str, active: list[Memory]
    ) -> WriteResult | None:
        """Step 6: supersede a contradicted memory, supersede or skip a near-duplicate, or
        write; None when skipped."""
        rival = next(
            (
                m
                for m in active
                if compare.same_subject(m, memory) and compare.conflict(m, memory) is not None
            ),
            None,
        )
        if rival is not None:
            why = (
                f"contradicts {rival.name} on {normalise_subject(memory.subject)!r}: the "
                f"task's newer fact replaces it ({why_kind})"
            )
            return self.supersede(c, rival, memory, kind, why)
        dups: list[NearDuplicate] = DedupIndex(active).probe(memory)
        semantic = [m for m in active if compare.duplicate(m, memory)]
        if dups or semantic:
            old = dups[0].memory if dups else semantic[0]
            adds = not (compare.content_stems(memory) <= compare.content_stems(old))
            if adds and compare.specificity(memory) >= compare.specificity(old):
                why = f"near-duplicates {old.name} and is at least as specific"
                return self.supersede(c, old, memory, kind, why)
            why = f"near-duplicates {old.name}, which says as much"
            self.decide(Decision(c, "skipped", why, None, kind, (old.name,)))
            return None
        result = self.writer.add(memory, on_duplicate="refuse")
        self.decide(
            Decision(c, "written", f"complete {kind} memory ({why_kind})", memory.name, kind)
        )
        return result

    def supersede(
        self, c: Candidate, old: Memory, memory: Memory, kind: str, why: str
    ) -> WriteResult:
        result = self.writer.supersede(old.name, memory)
        self.decide(Decision(c, "superseded", why, memory.name, kind, (old.name,)))
        return result


def promote(
    layout: Layout,
    task: TaskFolder,
    log: EventLog | None,
    *,
    phase: int | None = None,
    config: MemoryConfig | None = None,
    model: Model | None = None,
) -> PromotionReport:
    """Run Checklist C on the task's candidates (see the module docstring)."""
    report = PromotionReport(task.slug)
    checklist = _Checklist(
        layout, task, log, phase, config or MemoryConfig(), MemoryWriter(layout), report
    )
    decided = _decided(log)
    found = task_candidates(task) + card_candidates(task, _person(layout), said_in(task))
    todo = [c for c in found if c.id not in decided]
    report.already_decided = len(found) - len(todo)
    kept = [c for c in todo if c.kind == "pattern" or c.card or not gate_note(c.fact)]
    report.gate_notes, todo = len(todo) - len(kept), kept
    if model is not None and todo:
        todo = _propose(model, todo, phase)
    patterns = [c for c in found if c.kind == "pattern"]
    if patterns:
        checklist.patterns(patterns, [c for c in todo if c.kind == "pattern"])
    facts = [c for c in todo if c.kind != "pattern"]
    if facts:
        checklist.facts(facts)
    _append_task_memory(task, checklist.task_lines)
    return report
