"""Every write to repo memory: the store's rules, Checklist A, MEMORY.md, the search index.

The CLI, the model's memory tool, promotion (Checklist C), import and `verify --record`
write through a `MemoryWriter`, so one set of rules holds for all of them:

- the store's validation (`RepoMemoryStore.validation_errors`) before anything is written;
- Checklist A, before a new memory is written: the active memories it near-duplicates
  (`dedup.near_duplicates`, normalised subject and fact, token Jaccard >= 0.85), read
  under the store's lock so that two writers cannot both add one fact. A near-duplicate
  makes the writer choose: `refuse` (the default: `NearDuplicateFound`), `skip`,
  `supersede` the closest one, or `create` both with a stated reason (kept in the new
  memory's `distinct_from`);
- the store's transaction: the lock, atomic files, MEMORY.md regenerated;
- the search index: the store hands the files each transaction wrote to
  `retrieval.index_written`, so search is current without a rebuild.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from orchestrator.errors import OrchError, UsageError
from orchestrator.memory.dedup import near_duplicates
from orchestrator.memory.usage import UsageLog
from orchestrator.retrieval import index_written
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory
from orchestrator.store.repo import LoadResult, RepoMemoryStore, Transaction

DuplicatePolicy = Literal["refuse", "skip", "supersede", "create"]
DUPLICATE_POLICIES: tuple[DuplicatePolicy, ...] = ("refuse", "skip", "supersede", "create")


class NearDuplicateFound(OrchError):
    """Checklist A: the writer must choose skip, supersede, or create with a reason."""

    def __init__(self, name: str, others: list[tuple[str, float]]) -> None:
        self.name = name
        self.others = others
        listed = ", ".join(f"{n} ({s:.2f})" for n, s in others)
        super().__init__(
            f"memory {name!r} near-duplicates {listed}: choose --on-duplicate skip, "
            "supersede, or create with --duplicate-reason"
        )


@dataclass
class WriteResult:
    action: Literal["created", "skipped", "superseded", "updated"]
    memory: Memory
    superseded: list[str] = field(default_factory=list)
    duplicates: list[tuple[str, float]] = field(default_factory=list)  # (name, score)
    reason: str | None = None


class MemoryWriter:
    """Repo memory under the rules above (the engine's `MemoryStore`); `store` reads too."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.store = RepoMemoryStore(layout, on_write=self._index)

    def load_all(self) -> LoadResult:
        return self.store.load_all()

    def get(self, name: str) -> Memory:
        return self.store.get(name)

    def _index(self, paths: list[Path]) -> None:
        index_written(self.layout, *paths)  # never raises: the index is a cache

    def _cited(self, tx: Transaction, memory: Memory) -> list[str]:
        """The other memories `memory` names in its text (use: it is cited by a newer one)."""
        words = {w.rstrip("._-") for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9_.-]*", memory.body)}

        def names(other: str) -> bool:  # a one-word name counts only when marked as a name
            if "-" in other:
                return other in words
            return any(f in memory.body for f in (f"`{other}`", f"[[{other}]]", f"{other}.md"))

        return [m.name for m in tx.current.memories if m.name != memory.name and names(m.name)]

    def _record(self, written: Memory, cited: list[str], superseded: list[str]) -> None:
        """Links for the importance score (memory.importance); never fails a write."""
        if not cited and not superseded:
            return
        with UsageLog(self.layout) as usage:
            for name in superseded:
                usage.record_link(name, written.name, "superseded")
            for name in cited:
                usage.record_link(name, written.name, "cited")

    def _duplicates(
        self, tx: Transaction, memory: Memory, *, besides: str | None = None
    ) -> list[tuple[str, float]]:
        """Checklist A: the active memories `memory` near-duplicates, closest first."""
        current = [m for m in tx.current.memories if m.name != besides]
        return [(d.memory.name, round(d.score, 3)) for d in near_duplicates(memory, current)]

    def add(
        self,
        memory: Memory,
        *,
        on_duplicate: DuplicatePolicy = "refuse",
        reason: str | None = None,
    ) -> WriteResult:
        """Write a new memory after validation and Checklist A (see the module docstring)."""
        if on_duplicate not in DUPLICATE_POLICIES:
            raise UsageError(f"on_duplicate must be one of {', '.join(DUPLICATE_POLICIES)}")
        self.store.check(memory.with_changes(status="active"))
        with self.store.transaction() as tx:
            found = self._duplicates(tx, memory)
            if found and on_duplicate == "refuse":
                raise NearDuplicateFound(memory.name, found)
            if found and on_duplicate == "skip":
                return WriteResult("skipped", memory, duplicates=found)
            cited = self._cited(tx, memory)
            if found and on_duplicate == "supersede":
                old = found[0][0]
                new = tx.supersede(old, memory)
                self._record(new, cited, [old])
                return WriteResult("superseded", new, superseded=[old], duplicates=found)
            if found:  # create, with the reason both must exist
                if not (reason or "").strip():
                    raise UsageError(
                        "creating a near-duplicate needs a stated reason (--duplicate-reason)"
                    )
                extra = dict(memory.extra)
                extra["distinct_from"] = [{"name": n, "reason": reason} for n, _ in found]
                memory = memory.with_changes(extra=extra)
            written = tx.create(memory)
        self._record(written, cited, [])
        return WriteResult("created", written, duplicates=found, reason=reason)

    def supersede(
        self,
        old_name: str,
        new: Memory,
        *,
        refuse_duplicates: bool = False,
        reason: str | None = None,
    ) -> WriteResult:
        """Write `new` in place of `old_name` (kept, marked superseded). With
        `refuse_duplicates`, Checklist A holds against every memory but the old one: a
        near-duplicate refuses the write unless a `reason` says why both must exist."""
        done = self.supersede_all(
            [(old_name, new)], refuse_duplicates=refuse_duplicates, reason=reason
        )
        return done[0]

    def supersede_all(
        self,
        replacements: Sequence[tuple[str, Memory]],
        *,
        refuse_duplicates: bool = False,
        reason: str | None = None,
    ) -> list[WriteResult]:
        """`supersede` for each (old name, new memory), in one transaction of the store:
        every one is written, or (a refusal, a failed write) none is."""
        for _, new in replacements:
            self.store.check(new.with_changes(status="active"))
        done: list[tuple[Memory, list[str], str, list[tuple[str, float]]]] = []
        with self.store.transaction() as tx:
            for old_name, new in replacements:
                found = self._duplicates(tx, new, besides=old_name) if refuse_duplicates else []
                if found and not (reason or "").strip():
                    raise NearDuplicateFound(new.name, found)
                cited = [n for n in self._cited(tx, new) if n != old_name]
                done.append((tx.supersede(old_name, new), cited, old_name, found))
        for written, cited, old_name, _ in done:
            self._record(written, cited, [old_name])
        return [WriteResult("superseded", w, superseded=[o], duplicates=f) for w, _, o, f in done]

    def update(self, name: str, **changes: Any) -> WriteResult:
        """Change fields of memory `name` in place (status, verified...), keeping the bytes
        of every key that did not change."""
        with self.store.transaction() as tx:
            memory = tx.update(name, **changes)
        return WriteResult("updated", memory)
