"""L3 semantic memory: one file per task, `l3.json` (`TaskFolder.l3`), merged, not appended.

    {"v": 1, "task": "<slug>", "updated": "<ts>", "items": [<item>...]}
    item: {"id": "l3-0001", "kind": "fact" | "decision" | "eliminated" | "pattern",
           "subject": "...", "text": "...", "reason": "..." | null,
           "citations": [{"path": "...", "line": 12, "symbol": null}],
           "episodes": ["ep-0001", "ep-0004"], "seen": 2,
           "created": "<ts>", "updated": "<ts>",
           "history": [{"text": "...", "source": "ep-0001", "at": "<ts>"}]}

A candidate from a new episode that matches an item (same kind, and the same normalised
subject or a token Jaccard of `subject | text` of at least 0.85, Checklist A's measure)
updates it: the newer text and reason win, the old text goes to `history`, the episode is
added to `episodes` and `seen` grows. Anything else becomes a new item. Every item names
the episodes (or, with cascading folding, the short-term summaries) it came from.

These items are the candidates Checklist C considers for `memories/repo/`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from orchestrator.checks.secrets import redact_data
from orchestrator.errors import InvalidFile
from orchestrator.events.log import utc_ts
from orchestrator.memory.dedup import THRESHOLD, jaccard, normalise_subject, tokens
from orchestrator.schemas import errors
from orchestrator.store.fs import atomic_write, file_lock
from orchestrator.store.tasks import TaskFolder

KINDS = ("fact", "decision", "eliminated", "pattern")
HISTORY_KEEP = 10


@dataclass(frozen=True)
class Candidate:
    kind: str
    subject: str
    text: str
    reason: str | None = None
    citations: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class L3Item:
    id: str
    kind: str
    subject: str
    text: str
    reason: str | None
    episodes: tuple[str, ...]  # where it came from: ep-<n> (or short-<n>, cascading)
    seen: int
    created: str
    updated: str
    citations: tuple[dict[str, Any], ...] = ()
    history: tuple[dict[str, Any], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "subject": self.subject,
            "text": self.text,
            "reason": self.reason,
            "citations": [dict(c) for c in self.citations],
            "episodes": list(self.episodes),
            "seen": self.seen,
            "created": self.created,
            "updated": self.updated,
            "history": [dict(h) for h in self.history],
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> L3Item:
        return cls(
            id=str(raw["id"]),
            kind=str(raw["kind"]),
            subject=str(raw["subject"]),
            text=str(raw["text"]),
            reason=raw.get("reason"),
            episodes=tuple(raw.get("episodes") or ()),
            seen=int(raw.get("seen", 1)),
            created=str(raw["created"]),
            updated=str(raw["updated"]),
            citations=tuple(raw.get("citations") or ()),
            history=tuple(raw.get("history") or ()),
        )

    def render(self) -> str:
        """One line for the prompt: kind, subject, text, reason, where it came from."""
        why = f" (because: {self.reason})" if self.reason else ""
        seen = f", seen {self.seen}x" if self.seen > 1 else ""
        return (
            f"- [{self.kind}] {self.subject}: {self.text}{why} [{', '.join(self.episodes)}{seen}]"
        )


@dataclass(frozen=True)
class MergeReport:
    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()


def _key(subject: str, text: str) -> frozenset[str]:
    return tokens(f"{normalise_subject(subject)} | {text}")


def find_match(items: Sequence[L3Item], candidate: Candidate) -> int | None:
    """The item `candidate` restates: same kind, and the same normalised subject or a
    near-duplicate `subject | text` (only the text when the candidate has no subject)."""
    subject = normalise_subject(candidate.subject)
    key = _key(candidate.subject, candidate.text) if subject else tokens(candidate.text)
    best, best_score = None, 0.0
    for index, item in enumerate(items):
        if item.kind != candidate.kind:
            continue
        if subject and normalise_subject(item.subject) == subject:
            return index
        other = _key(item.subject, item.text) if subject else tokens(item.text)
        score = jaccard(key, other)
        if score >= THRESHOLD and score > best_score:
            best, best_score = index, score
    return best


def merge(
    items: Sequence[L3Item], candidates: Iterable[Candidate], source: str, *, now: str
) -> tuple[list[L3Item], MergeReport]:
    """Fold `candidates` from episode `source` into `items` (pure)."""
    out = list(items)
    added: list[str] = []
    updated: list[str] = []
    next_id = 1 + max((int(i.id.split("-")[-1]) for i in out), default=0)
    for cand in candidates:
        at = find_match(out, cand)
        if at is None:
            item = L3Item(
                id=f"l3-{next_id:04d}",
                kind=cand.kind,
                subject=cand.subject.strip() or " ".join(cand.text.split()[:8]),
                text=cand.text,
                reason=cand.reason,
                episodes=(source,),
                seen=1,
                created=now,
                updated=now,
                citations=cand.citations,
            )
            next_id += 1
            out.append(item)
            added.append(item.id)
            continue
        old = out[at]
        history = old.history
        if cand.text != old.text:
            history = (
                *old.history,
                {"text": old.text, "source": old.episodes[-1], "at": old.updated},
            )
            history = history[-HISTORY_KEEP:]
        citations = old.citations + tuple(c for c in cand.citations if c not in old.citations)
        out[at] = replace(
            old,
            text=cand.text,
            reason=cand.reason or old.reason,
            episodes=old.episodes if source in old.episodes else (*old.episodes, source),
            seen=old.seen + (0 if source in old.episodes else 1),
            updated=now,
            citations=citations,
            history=history,
        )
        if old.id not in updated and old.id not in added:
            updated.append(old.id)
    return out, MergeReport(tuple(added), tuple(updated))


def ranked(items: Sequence[L3Item]) -> list[L3Item]:
    """Most useful first: seen more often, then updated more recently."""
    return sorted(items, key=lambda i: (i.seen, i.updated, i.id), reverse=True)


def load_items(task: TaskFolder) -> list[L3Item]:
    path = task.l3
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except ValueError as exc:
        raise InvalidFile(path, f"not JSON: {exc}") from None
    problems = errors("l3", raw)
    if problems:
        raise InvalidFile(path, f"fails its schema: {problems[0]}")
    return [L3Item.from_dict(i) for i in raw["items"]]


def save_items(task: TaskFolder, items: Sequence[L3Item], *, now: str) -> None:
    data = {"v": 1, "task": task.slug, "updated": now, "items": [i.to_dict() for i in items]}
    problems = errors("l3", data)
    if problems:
        raise InvalidFile(task.l3, f"would fail its schema: {problems[0]}")
    atomic_write(task.l3, json.dumps(redact_data(data), indent=2, ensure_ascii=False) + "\n")


def merge_into_task(
    task: TaskFolder, candidates: Sequence[Candidate], source: str
) -> tuple[list[L3Item], MergeReport]:
    """Read-modify-write `l3.json` under its lock."""
    with file_lock(task.layout.locks, f"task-{task.slug}-l3"):
        now = utc_ts()
        items, report = merge(load_items(task), candidates, source, now=now)
        if report.added or report.updated:
            save_items(task, items, now=now)
        return items, report
