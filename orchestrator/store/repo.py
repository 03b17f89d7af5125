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
    """One file's parse result as plain data (what the parse cache stores)."""
    stem = os.path.basename(path)[: -len(".md")]
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        problem = Problem(path, "invalid_file", "not UTF-8 text")
        return {"memory": None, "problems": [problem.to_dict()]}
    except OSError as exc:
        problem = Problem(path, "invalid_file", f"unreadable: {exc.strerror or exc}")
        return {"memory": None, "problems": [problem.to_dict()]}
    parsed = parse_memory(text, stem, path=path)
    memory = parsed.memory.to_dict() if parsed.memory is not None else None
    return {"memory": memory, "problems": [pr.to_dict() for pr in parsed.problems]}


class RepoMemoryStore:
    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.dir = layout.repo_memories
        self._outside: list[Problem] = []

    # reading ---------------------------------------------------------------------------

    def files(self) -> Iterator[tuple[str, os.stat_result]]:
        """(path, stat) of every memory file; symlinks that leave the repository are skipped
        (and reported by `load_all`)."""
        self._outside = []
        try:
            entries = list(os.scandir(self.dir))
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            if not entry.name.endswith(".md") or entry.name == INDEX_FILE:
                continue
            try:
                if entry.is_symlink() and not self._inside(entry.path):
                    self._outside.append(
                        Problem(
                            self._rel(entry.path),
                            "invalid_file",
                            "symlink to a file outside the repository; not read",
                        )
                    )
                    continue
                if entry.is_file():
                    yield entry.path, entry.stat()
            except OSError:
                continue  # removed while listing

    def _inside(self, path: str) -> bool:
        root = self.layout.root.resolve()
        return Path(path).resolve().is_relative_to(root)

    def load_all(self) -> LoadResult:
        """Every memory that loads, and a problem per file that does not (or is incomplete)."""
        cache = ParseCache(self.layout.cache / "cache.sqlite")
        try:
            parsed = cache.load(self.files(), _parse_file)
        finally:
            cache.close()
        memories: list[Memory] = []
        problems: list[Problem] = list(self._outside)
        for path in sorted(parsed):
            item = parsed[path]
            if item["memory"] is not None:
                memories.append(Memory.from_dict(item["memory"]))
            if item["problems"]:
                rel = self._rel(path)
                problems.extend(
                    Problem(rel, p["kind"], p["detail"], p["severity"]) for p in item["problems"]
                )
        memories.sort(key=lambda m: m.name)
        problems.sort(key=lambda p: p.path)
        return LoadResult(memories, problems)

    def _rel(self, path: str) -> str:
        root = str(self.layout.root).rstrip(os.sep) + os.sep
        return path[len(root) :].replace(os.sep, "/") if path.startswith(root) else path

    def path_of(self, name: str) -> Path:
        """The file of memory `name`; refused if `name` is not a file name or the file would
        lie outside the repository (a symlinked folder or file)."""
        if (
            not name
            or "/" in name
            or "\\" in name
            or "\x00" in name
            or name.startswith(".")
            or name.upper() == "MEMORY"
        ):
            raise UsageError(f"{name!r} is not a memory name")
        path = self.dir / f"{name}.md"
        confine(self.layout.root, path.relative_to(self.layout.root).as_posix())
        return path

    def get(self, name: str) -> Memory:
        path = self.path_of(name)
        where = self._rel(str(path))
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UsageError(f"no memory named {name!r} (see `orch memory list`)") from None
        except UnicodeDecodeError:
            raise InvalidFile(where, "not UTF-8 text") from None
        except OSError as exc:
            raise InvalidFile(where, f"unreadable: {exc.strerror or exc}") from None
        parsed = parse_memory(text, name, path=where)
        if parsed.memory is None:
            raise InvalidFile(where, parsed.problems[0].detail)
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
        from orchestrator.retrieval import index_written  # never raises: the index is a cache

        path = self.path_of(memory.name)
        atomic_write(path, serialize_memory(memory, original))
        index_written(self.layout, path)

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
                    raise UsageError(
                        "creating a near-duplicate needs a stated reason (--duplicate-reason)"
                    )
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
        if old_name not in current.by_name():
            raise UsageError(f"no memory named {old_name!r} to supersede")
        old = self.get(old_name)  # the file as it is now, not the cached copy
        if not old.active:
            raise UsageError(f"memory {old_name!r} is already {old.status}")
        if new.name == old_name:
            raise UsageError("the new memory needs a new name; the old file is kept as superseded")
        if new.name in current.by_name() or self.path_of(new.name).exists():
            raise UsageError(f"a memory named {new.name!r} exists")
        new = new.with_changes(supersedes=tuple(dict.fromkeys((*new.supersedes, old_name))))
        original = self.path_of(old_name).read_text(encoding="utf-8")
        # The new file first: a crash between the two writes leaves both active (the new
        # one naming the old in `supersedes`), never a dangling superseded_by.
        self._write(new)
        self._write(
            old.with_changes(status="superseded", superseded_by=new.name, updated=now_iso()),
            original,
        )
        self.regenerate_index()
        return WriteResult("superseded", new, superseded=[old_name], duplicates=found)

    def update(self, name: str, **changes: Any) -> WriteResult:
        """Change fields of an existing memory in place (status, verified...), keeping bytes."""
        if "name" in changes:
            raise UsageError("a memory's name is its file name; supersede it instead")
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
