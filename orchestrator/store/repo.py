"""Repo memory (tier 3): `memories/repo/<name>.md` files and their MEMORY.md index.

Every write goes through `RepoMemoryStore`: it validates the memory (the same rules for
the CLI, the model's memory tool and promotion), runs Checklist A against the active
memories, writes atomically under the store's lock, and regenerates MEMORY.md. Memories
are superseded, never overwritten.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from orchestrator.errors import InvalidFile, OrchError, UsageError
from orchestrator.store.cache import ParseCache
from orchestrator.store.fs import atomic_write, confine, file_lock
from orchestrator.store.index import render_index
from orchestrator.store.layout import INDEX_FILE, Layout
from orchestrator.store.memfile import (
    KEBAB,
    MEMORY_TYPES,
    NEEDS_CITATIONS,
    Memory,
    Problem,
    now_iso,
    parse_memory,
    schema_problems,
    serialize_memory,
)

DuplicatePolicy = Literal["refuse", "skip", "supersede", "create"]
LOCK_NAME = "memories"


class InvalidMemory(UsageError):
    """A memory that may not be written, with every reason."""

    def __init__(self, name: str, reasons: list[str]) -> None:
        self.reasons = reasons
        super().__init__(f"memory {name!r} not written: {'; '.join(reasons)}")


class NearDuplicateFound(OrchError):
    """Checklist A: the writer must choose skip, supersede, or create with a reason."""

    def __init__(self, name: str, others: list[tuple[str, float]]) -> None:
        self.others = others
        listed = ", ".join(f"{n} ({s:.2f})" for n, s in others)
        super().__init__(
            f"memory {name!r} near-duplicates {listed}: choose --on-duplicate skip, "
            "supersede, or create with --duplicate-reason"
        )


@dataclass
class LoadResult:
    memories: list[Memory]
    problems: list[Problem]

    def by_name(self) -> dict[str, Memory]:
        return {m.name: m for m in self.memories}

    @property
    def active(self) -> list[Memory]:
        return [m for m in self.memories if m.active]


@dataclass
class WriteResult:
    action: Literal["created", "skipped", "superseded", "updated", "deleted", "renamed"]
    memory: Memory
    superseded: list[str] = field(default_factory=list)
    duplicates: list[tuple[str, float]] = field(default_factory=list)
    reason: str | None = None


def _parse_file(path: str) -> dict[str, Any]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return {
            "memory": None,
            "problems": [Problem(path, "invalid_file", f"unreadable: {exc}").to_dict()],
        }
    parsed = parse_memory(text, p.stem, path=path)
    memory = None
    if parsed.memory is not None:
        memory = parsed.memory.to_dict()
        memory["extra"] = parsed.memory.extra
    return {"memory": memory, "problems": [pr.to_dict() for pr in parsed.problems]}


class RepoMemoryStore:
    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.dir = layout.repo_memories

    # reading ---------------------------------------------------------------------------

    def files(self) -> Iterator[tuple[str, os.stat_result]]:
        try:
            entries = list(os.scandir(self.dir))
        except FileNotFoundError:
            return
        for entry in entries:
            if entry.name.endswith(".md") and entry.name != INDEX_FILE and entry.is_file():
                yield entry.path, entry.stat()

    def load_all(self) -> LoadResult:
        """Every memory that loads, and a problem per file that does not (or is incomplete)."""
        cache = ParseCache(self.layout.cache / "cache.sqlite")
        try:
            parsed = cache.load(self.files(), _parse_file)
        finally:
            cache.close()
        memories: list[Memory] = []
        problems: list[Problem] = []
        for path in sorted(parsed):
            item = parsed[path]
            if item["memory"] is not None:
                memories.append(Memory.from_dict(item["memory"]))
            if item["problems"]:  # relative paths only when needed: 10,000 files add up
                rel = self._rel(path)
                problems.extend(
                    Problem(rel, p["kind"], p["detail"], p["severity"]) for p in item["problems"]
                )
        memories.sort(key=lambda m: m.name)
        return LoadResult(memories, problems)

    def _rel(self, path: str) -> str:
        try:
            return Path(path).relative_to(self.layout.root).as_posix()
        except ValueError:
            return path

    def path_of(self, name: str) -> Path:
        if not name or "/" in name or "\\" in name or name.startswith("."):
            raise UsageError(f"{name!r} is not a memory name")
        return self.dir / f"{name}.md"

    def get(self, name: str) -> Memory:
        path = self.path_of(name)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UsageError(f"no memory named {name!r} (see `orch memory list`)") from None
        parsed = parse_memory(text, name, path=self._rel(str(path)))
        if parsed.memory is None:
            raise InvalidFile(self._rel(str(path)), parsed.problems[0].detail)
        return parsed.memory

    # validation ------------------------------------------------------------------------

    def validation_errors(self, memory: Memory) -> list[str]:
        """Why `memory` may not be written ([] when it may). The one rule set for all writers."""
        errs: list[str] = []
        if not KEBAB.match(memory.name) or len(memory.name) > 80:
            errs.append("name must be kebab-case (a-z, 0-9, single dashes), at most 80 characters")
        if memory.name.upper() == "MEMORY":
            errs.append("name 'MEMORY' is reserved for the index")
        if not memory.description.strip() or "\n" in memory.description.strip():
            errs.append("description must be one non-empty line")
        if memory.type not in MEMORY_TYPES:
            errs.append(f"type must be one of {', '.join(MEMORY_TYPES)}")
        if not (memory.subject or "").strip():
            errs.append("subject is required")
        if not (memory.reason or "").strip():
            errs.append("reason is required (why it matters beyond one task)")
        if not memory.fact:
            errs.append("the fact (the body's first paragraph) is empty")
        if memory.type in NEEDS_CITATIONS and not memory.citations:
            errs.append(f"{memory.type} memories need at least one citation")
        for citation in memory.citations:
            try:
                target = confine(self.layout.root, citation.path)
            except OrchError as exc:
                errs.append(f"citation {exc.message}")
                continue
            if not target.exists():
                errs.append(f"cited path {citation.path!r} does not exist")
        errs += [detail for _, detail in schema_problems(memory.frontmatter())]
        return errs

    def check(self, memory: Memory) -> None:
        errs = self.validation_errors(memory)
        if errs:
            raise InvalidMemory(memory.name, errs)

    # writing ---------------------------------------------------------------------------

    def _lock(self) -> Any:
        self.layout.require_initialised()
        return file_lock(self.layout.locks, LOCK_NAME, what="the memory store")

    def _write(self, memory: Memory, original: str | None = None) -> None:
        atomic_write(self.path_of(memory.name), serialize_memory(memory, original))

    def regenerate_index(self) -> bool:
        """Rewrite MEMORY.md from the files; True if it changed."""
        text = render_index(self.load_all().memories)
        try:
            if self.layout.memory_index.read_text(encoding="utf-8") == text:
                return False
        except FileNotFoundError:
            pass
        atomic_write(self.layout.memory_index, text)
        return True

    def index(self) -> bool:
        with self._lock():
            return self.regenerate_index()

    def add(
        self,
        memory: Memory,
        *,
        on_duplicate: DuplicatePolicy = "refuse",
        reason: str | None = None,
    ) -> WriteResult:
        """Create a new memory after validation and Checklist A."""
        from orchestrator.memory.dedup import near_duplicates

        stamp = now_iso()
        memory = memory.with_changes(
            created=memory.created or stamp, updated=memory.updated or stamp, status="active"
        )
        self.check(memory)
        with self._lock():
            current = self.load_all()
            dups = near_duplicates(memory, current.memories)
            found = [(d.memory.name, round(d.score, 3)) for d in dups]
            exists = memory.name in current.by_name() or self.path_of(memory.name).exists()
            if exists and not (dups and on_duplicate in ("skip", "supersede")):
                if dups and on_duplicate == "refuse":
                    raise NearDuplicateFound(memory.name, found)
                raise UsageError(
                    f"a memory named {memory.name!r} exists; memories are superseded, not "
                    "overwritten: use `orch memory supersede` or another --name"
                )
            if dups and on_duplicate == "refuse":
                raise NearDuplicateFound(memory.name, found)
            if dups and on_duplicate == "skip":
                return WriteResult("skipped", memory, duplicates=found)
            if dups and on_duplicate == "supersede":
                return self._supersede_locked(dups[0].memory.name, memory, current, found)
            if dups and on_duplicate == "create":
                if not (reason or "").strip():
                    raise UsageError("creating a near-duplicate needs a stated reason (--reason)")
                extra = dict(memory.extra)
                extra["distinct_from"] = [{"name": n, "reason": reason} for n, _ in found]
                memory = memory.with_changes(extra=extra)
            self._write(memory)
            self.regenerate_index()
        return WriteResult("created", memory, duplicates=found, reason=reason)

    def supersede(self, old_name: str, new: Memory) -> WriteResult:
        """Write `new` in place of `old_name`: the old file is kept, marked superseded."""
        stamp = now_iso()
        new = new.with_changes(
            created=new.created or stamp, updated=new.updated or stamp, status="active"
        )
        self.check(new)
        with self._lock():
            current = self.load_all()
            return self._supersede_locked(old_name, new, current, [])

    def _supersede_locked(
        self, old_name: str, new: Memory, current: LoadResult, found: list[tuple[str, float]]
    ) -> WriteResult:
        old = current.by_name().get(old_name)
        if old is None:
            raise UsageError(f"no memory named {old_name!r} to supersede")
        if not old.active:
            raise UsageError(f"memory {old_name!r} is already {old.status}")
        if new.name == old_name:
            raise UsageError("the new memory needs a new name; the old file is kept as superseded")
        if new.name in current.by_name() or self.path_of(new.name).exists():
            raise UsageError(f"a memory named {new.name!r} exists")
        new = new.with_changes(supersedes=tuple(dict.fromkeys((*new.supersedes, old_name))))
        old_path = self.path_of(old_name)
        original = old_path.read_text(encoding="utf-8")
        self._write(new)
        self._write(
            old.with_changes(status="superseded", superseded_by=new.name, updated=now_iso()),
            original,
        )
        self.regenerate_index()
        return WriteResult("superseded", new, superseded=[old_name], duplicates=found)

    def update(self, name: str, **changes: Any) -> WriteResult:
        """Change fields of an existing memory in place (status, verified...), keeping bytes."""
        with self._lock():
            path = self.path_of(name)
            try:
                original = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                raise UsageError(f"no memory named {name!r}") from None
            memory = self.get(name).with_changes(**changes)
            errs = [d for _, d in schema_problems(memory.frontmatter())]
            if errs:
                raise InvalidMemory(name, errs)
            self._write(memory, original)
            self.regenerate_index()
        return WriteResult("updated", memory)
