r"""Promotion candidates: what a task offers to repo memory, and where it comes from.

Sources, all in the task folder or the session scratch (read in this order):

1. `plans/artifacts/<slug>/memory-candidates.ndjson`: appended by the executor's tools
   (`append_candidate`), one JSON object a line: `{"v": 1, "fact": "...", "subject"?,
   "type"?, "reason"?, "citations"?: [{"path", "line"?, "symbol"?}], "scope"?: "repo" |
   "task", "kind"?: "fact" | "pattern", "name"?, "ts"?}`.
2. `l3.json` (the context part's merged L3 items: facts, decisions, eliminated approaches,
   patterns with how often they were seen); without it, `episodes/*.json` (`"l3"` items and
   `"patterns"`, objects with the fields above or strings).
3. The session notes' `## Key Results` bullets.
4. Each phase report's `## Notes for later phases` bullets.

A bullet may carry its fields in a trailing bracket:
`- The test command is \`pytest -q\`. [subject: test command; type: reference;
cite: pyproject.toml:12; why: every phase gate runs it; scope: repo]`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from orchestrator.checks.secrets import redact_data
from orchestrator.errors import UsageError
from orchestrator.store.fs import file_lock
from orchestrator.store.memfile import MEMORY_TYPES, Citation, now_iso
from orchestrator.store.session import SessionNotes
from orchestrator.store.tasks import TaskFolder

CANDIDATES_FILE = "memory-candidates.ndjson"
SCOPES = ("repo", "task")
KINDS = ("fact", "pattern")
_TRAILER = re.compile(r"\s*\[((?:[a-z_ ]+:[^\]]*;?\s*)+)\]\s*$", re.I)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_CITE = re.compile(r"^(?P<path>[^:#\s]+)(?::(?P<line>\d+))?(?:#(?P<symbol>\S+))?$")


@dataclass(frozen=True)
class Candidate:
    """One thing a task learned that might belong in repo memory."""

    source: str  # candidates_file | episode | session_notes | phase_report | person
    ref: str  # where in the source ("phase-2-report.md:14", "episodes/e3.json#l3[0]")
    fact: str
    subject: str | None = None
    type: str | None = None  # proposed: user | feedback | project | reference
    reason: str | None = None
    citations: tuple[Citation, ...] = ()
    scope: str | None = None  # proposed: repo | task
    kind: str = "fact"  # fact | pattern
    name: str | None = None
    seen: int = 1  # how often the task saw it (L3 items count their sources)
    proposed_by: tuple[str, ...] = field(default=(), compare=False)
    card: tuple[tuple[str, str], ...] = ()  # a user card's person, relationship, observed

    @property
    def id(self) -> str:
        """Stable across runs: the same source line gives the same id."""
        digest = hashlib.sha1(f"{self.source}\0{self.ref}\0{self.fact}".encode()).hexdigest()
        return digest[:12]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "ref": self.ref,
            "fact": self.fact,
            "subject": self.subject,
            "type": self.type,
            "reason": self.reason,
            "citations": [c.to_dict() for c in self.citations],
            "scope": self.scope,
            "kind": self.kind,
            "name": self.name,
            **({"card": dict(self.card)} if self.card else {}),
        }

    def with_changes(self, **changes: Any) -> Candidate:
        return replace(self, **changes)


def parse_citation(text: str) -> Citation | None:
    match = _CITE.match(text.strip())
    if not match:
        return None
    line = match.group("line")
    return Citation(match.group("path"), int(line) if line else None, match.group("symbol"))


def _citations(raw: Any) -> tuple[Citation, ...]:
    out = []
    for item in raw or ():
        if isinstance(item, dict):
            cite = Citation.loosely(item)
            if cite is not None:
                out.append(cite)
        elif isinstance(item, str):
            cite = parse_citation(item)
            if cite is not None:
                out.append(cite)
    return tuple(out)


def _text(value: Any) -> str | None:
    return " ".join(value.split()) if isinstance(value, str) and value.strip() else None


def from_record(raw: dict[str, Any], source: str, ref: str) -> Candidate | None:
    """A candidate from a JSON object (candidates file, L3 item); None without a fact."""
    fact = _text(raw.get("fact") or raw.get("text") or raw.get("pattern"))
    if fact is None:
        return None
    kind = str(raw["kind"]) if raw.get("kind") in KINDS else "fact"
    if "pattern" in raw and "fact" not in raw and "text" not in raw:
        kind = "pattern"
    return Candidate(
        source=source,
        ref=ref,
        fact=fact,
        subject=_text(raw.get("subject")),
        type=raw.get("type") if raw.get("type") in MEMORY_TYPES else None,
        reason=_text(raw.get("reason") or raw.get("why")),
        citations=_citations(raw.get("citations")),
        scope=raw.get("scope") if raw.get("scope") in SCOPES else None,
        kind=kind,
        name=_text(raw.get("name")),
    )


def from_bullet(line: str, source: str, ref: str) -> Candidate | None:
    """A candidate from a markdown bullet, with its optional `[key: value; ...]` trailer."""
    text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line).strip()
    if not text or text.lower() in ("none", "n/a", "-"):
        return None
    fields: dict[str, Any] = {}
    trailer = _TRAILER.search(text)
    if trailer:
        text = text[: trailer.start()].strip()
        for part in trailer.group(1).split(";"):
            key, _, value = part.partition(":")
            key = key.strip().lower()
            value = value.strip()
            if not value:
                continue
            if key in ("cite", "cites", "citation", "citations"):
                fields.setdefault("citations", []).extend(v.strip() for v in value.split(","))
            elif key in ("why", "reason"):
                fields["reason"] = value
            else:
                fields[key] = value
    fields["fact"] = text
    return from_record(fields, source, ref)


def _section_lines(text: str, heading: str) -> list[tuple[int, str]]:
    out = []
    inside = False
    for n, line in enumerate(text.splitlines(), start=1):
        match = re.match(r"^#{2,3}\s+(.*?)\s*$", line)
        if match:
            inside = match.group(1).strip().lower() == heading.lower()
            continue
        if inside:
            out.append((n, line))
    return out


def candidates_path(task: TaskFolder) -> Path:
    return task.path / CANDIDATES_FILE


def append_candidate(task: TaskFolder, candidate: dict[str, Any]) -> None:
    """Append one candidate to the task's candidates file (what the executor's tools call).

    Requires `fact`; `type`, `scope`, `kind` must be valid when given. One line a call,
    written with O_APPEND under the task's file lock, so a crash never tears a record.
    """
    fact = _text(candidate.get("fact"))
    if fact is None:
        raise UsageError("a memory candidate needs a non-empty 'fact'")
    for key, allowed in (("type", MEMORY_TYPES), ("scope", SCOPES), ("kind", KINDS)):
        if candidate.get(key) is not None and candidate[key] not in allowed:
            raise UsageError(f"candidate {key} must be one of {', '.join(allowed)}")
    record = {"v": 1, "ts": now_iso(), **{k: v for k, v in candidate.items() if v is not None}}
    data = (json.dumps(redact_data(record), ensure_ascii=False) + "\n").encode("utf-8")
    path = candidates_path(task)
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(task.layout.locks, f"task-{task.slug}-files"):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)


def _episode_items(path: Path, rel: str) -> list[Candidate]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    records: list[Any] = raw if isinstance(raw, list) else [raw]
    out: list[Candidate] = []
    for r_i, record in enumerate(records):
        if not isinstance(record, dict):
            continue
        at = f"{rel}[{r_i}]" if isinstance(raw, list) else rel
        for i, item in enumerate(record.get("l3") or []):
            cand = (
                from_record(item, "episode", f"{at}#l3[{i}]")
                if isinstance(item, dict)
                else from_record({"fact": item}, "episode", f"{at}#l3[{i}]")
            )
            if cand is not None:
                out.append(cand)
        for i, item in enumerate(record.get("patterns") or []):
            data = item if isinstance(item, dict) else {"pattern": item}
            cand = from_record({**data, "kind": "pattern"}, "episode", f"{at}#patterns[{i}]")
            if cand is not None:
                out.append(cand)
    return out


def _l3_items(task: TaskFolder) -> list[Candidate] | None:
    """The task's L3 items (`l3.json`, kept by the context part), or None without the file."""
    path = task.path / "l3.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return []
    out = []
    for i, item in enumerate(raw.get("items") or [] if isinstance(raw, dict) else []):
        if not isinstance(item, dict):
            continue
        record = {**item, "fact": item.get("text") or item.get("fact")}
        record["kind"] = "pattern" if item.get("kind") == "pattern" else "fact"
        cand = from_record(record, "l3", f"l3.json#{item.get('id') or i}")
        if cand is not None:
            seen = item.get("seen")
            out.append(cand.with_changes(seen=seen if isinstance(seen, int) and seen > 0 else 1))
    return out


def task_candidates(task: TaskFolder) -> list[Candidate]:
    """Every candidate the task offers, from every source, in a stable order."""
    out: list[Candidate] = []
    cfile = candidates_path(task)
    if cfile.is_file():
        for n, line in enumerate(cfile.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except ValueError:
                continue  # a torn last line: the append was cut; nothing to promote
            if isinstance(raw, dict):
                cand = from_record(raw, "candidates_file", f"{CANDIDATES_FILE}:{n}")
                if cand is not None:
                    out.append(cand)
    l3 = _l3_items(task)
    if l3 is not None:
        out += l3  # the episodes' facts and patterns, merged: do not count them twice
    elif task.episodes.is_dir():
        for path in sorted(task.episodes.glob("*.json")):
            out += _episode_items(path, f"episodes/{path.name}")
    notes = SessionNotes(task.layout, task.slug)
    if notes.exists():
        text = notes.text()
        for n, line in _section_lines(text, "Key Results"):
            if _BULLET.match(line):
                cand = from_bullet(line, "session_notes", f"session-notes:{n}")
                if cand is not None:
                    out.append(cand)
    for report in sorted(task.path.glob("phase-*-report.md"), key=_phase_number):
        text = report.read_text(encoding="utf-8")
        for n, line in _section_lines(text, "Notes for later phases"):
            if _BULLET.match(line):
                cand = from_bullet(line, "phase_report", f"{report.name}:{n}")
                if cand is not None:
                    out.append(cand)
    return out


def _phase_number(path: Path) -> int:
    match = re.search(r"phase-(\d+)-report", path.name)
    return int(match.group(1)) if match else 0
