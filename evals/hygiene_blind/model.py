"""What a blind set is made of: memories, planted labels and clean look-alikes.

A domain module describes its repository (code before and after a refactor) and calls
`Store.add` / `Store.plant` / `Store.clean` to describe its memories. The labels are
written from the rules users are promised (DESIGN.md sections 1, 2 and 5, docs/memory.md,
docs/storage.md), never from what a detector happens to do.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

Text = str | tuple[str, ...]  # one wording, or alternatives the seed chooses among

MEMORY_KINDS = (
    "stale_citation",
    "excluded_content",
    "secret",
    "invalid_file",
    "missing_field",
)
PAIR_KINDS = ("near_duplicate", "contradiction")


@dataclass
class Mem:
    """One file in `memories/repo/`.

    `cite` holds citations as `path`, `(path, line)` or `(path, line, symbol)`. `batch` 1
    files are written against the code before the refactor commit, batch 2 after it.
    `fm` adds or overrides frontmatter keys (status, supersedes, distinct_from, tags...);
    `omit` leaves keys out; `raw` replaces the whole file (files that must not load).
    `style`: "block" (the store's own form), "flow" (citations in flow style and
    comments), "crlf", "bom", "folded" (description as a folded block scalar).
    """

    name: str
    type: str
    description: str
    fact: Text
    subject: str | None = None
    reason: str | None = None
    cite: tuple[Any, ...] = ()
    more: str = ""
    batch: int = 2
    fm: dict[str, Any] = field(default_factory=dict)
    omit: tuple[str, ...] = ()
    raw: str | None = None
    style: str = "block"
    age: int = 0  # days before the newest memory: a larger age is older
    record_verified: bool = False  # a `verified` record naming the first commit


@dataclass
class Store:
    """The memories of one repository and what the audit should (and should not) find."""

    rng: random.Random
    mems: list[Mem] = field(default_factory=list)
    expected: list[dict[str, Any]] = field(default_factory=list)
    lookalikes: list[dict[str, Any]] = field(default_factory=list)

    def pick(self, text: Text) -> str:
        return text if isinstance(text, str) else self.rng.choice(text)

    def add(self, *mems: Mem) -> tuple[Mem, ...]:
        taken = {m.name for m in self.mems}
        for m in mems:
            if m.name in taken:
                raise ValueError(f"memory name used twice: {m.name}")
            taken.add(m.name)
            self.mems.append(m)
        return mems

    def plant(self, kind: str, *mems: Mem, note: str = "") -> None:
        """A finding the audit must report."""
        self._label(self.expected, kind, mems, note)

    def clean(self, kind: str, *mems: Mem, note: str = "") -> None:
        """A look-alike the audit must not report as `kind`."""
        self._label(self.lookalikes, kind, mems, note)

    @staticmethod
    def _label(into: list[dict[str, Any]], kind: str, mems: tuple[Mem, ...], note: str) -> None:
        entry: dict[str, Any] = {"kind": kind}
        if kind in PAIR_KINDS:
            if len(mems) != 2:
                raise ValueError(f"{kind} labels a pair")
            entry["pair"] = sorted(m.name for m in mems)
        else:
            if len(mems) != 1:
                raise ValueError(f"{kind} labels one memory")
            entry["memory"] = mems[0].name
        if note:
            entry["note"] = note
        into.append(entry)


@dataclass
class Domain:
    """A repository: code before the refactor, the refactor's changes, its memories."""

    name: str
    before: dict[str, str]
    after: dict[str, str | None]  # None deletes the file
    describe: Any  # (store: Store, code: dict[str, str]) -> None, code = the final tree
    # NOTES.md: (section, line, records task progress?) in order; section is one of
    # "objective", "blockers", "pending"
    notes: list[tuple[str, str, bool]] = field(default_factory=list)
