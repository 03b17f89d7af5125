"""What the blind set is made of, read from its data: memories, planted labels, look-alikes.

A domain is a folder: `before/` (the code of the first commit), `after/` (what the refactor
commit writes over it) and `memories.yaml`, which names the files the refactor deletes,
holds NOTES.md's items, and describes the memories in cases: the memories a case adds
(fields of `Mem`) and its labels, `plant: KIND` (a finding the audit must report) or
`clean: KIND` (a look-alike it must not report as KIND), each naming its memories. The
labels are written from the rules users are promised (docs/memory.md, docs/storage.md),
never from what a detector happens to do.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Text = str | tuple[str, ...]  # one wording, or alternatives the seed chooses among

PAIR_KINDS = ("near_duplicate", "contradiction")


@dataclass
class Mem:
    """One file in `memories/repo/`.

    `cite` holds citations as `path`, `(path, line)` or `(path, line, symbol)`. `batch` 1
    files are written against the code before the refactor commit, batch 2 after it.
    `fm` adds or overrides frontmatter keys (status, supersedes, distinct_from, tags...);
    `omit` leaves keys out; `raw` replaces the whole file (files that must not load).
    `style`: "block" (the store's own form), "flow" (citations in flow style and
    comments), "crlf", "bom", "folded" (description as a folded block scalar),
    "fence-space" (spaces after the `---` fences).
    """

    name: str
    type: str
    description: str = ""
    fact: Text = ""
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

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Mem:
        """A memory from its YAML record (lists become tuples; nothing is shared)."""
        fields = copy.deepcopy(record)
        if isinstance(fields.get("fact"), list):
            fields["fact"] = tuple(fields["fact"])
        fields["cite"] = tuple(
            tuple(c) if isinstance(c, list) else c for c in fields.get("cite", ())
        )
        fields["omit"] = tuple(fields.get("omit", ()))
        return cls(**fields)


@dataclass
class Store:
    """The memories of one repository and what the audit should (and should not) find."""

    rng: random.Random
    mems: list[Mem] = field(default_factory=list)
    expected: list[dict[str, Any]] = field(default_factory=list)
    lookalikes: list[dict[str, Any]] = field(default_factory=list)

    def pick(self, text: Text) -> str:
        return text if isinstance(text, str) else self.rng.choice(text)

    def add(self, *mems: Mem) -> None:
        taken = {m.name for m in self.mems}
        for m in mems:
            if m.name in taken:
                raise ValueError(f"memory name used twice: {m.name}")
            taken.add(m.name)
            self.mems.append(m)

    def label(self, record: dict[str, Any]) -> None:
        """A `plant` record is a finding the audit must report; a `clean` one a look-alike
        it must not report as that kind."""
        planted = "plant" in record
        kind = record["plant"] if planted else record["clean"]
        names = list(record["memories"])
        unknown = sorted(set(names) - {m.name for m in self.mems})
        if unknown:
            raise ValueError(f"{kind} label names no memory of the set: {unknown}")
        entry: dict[str, Any] = {"kind": kind}
        if kind in PAIR_KINDS:
            if len(names) != 2:
                raise ValueError(f"{kind} labels a pair: {names}")
            entry["pair"] = sorted(names)
        else:
            if len(names) != 1:
                raise ValueError(f"{kind} labels one memory: {names}")
            entry["memory"] = names[0]
        if record.get("note"):
            entry["note"] = record["note"]
        (self.expected if planted else self.lookalikes).append(entry)


@dataclass(frozen=True)
class Domain:
    """A repository: code before the refactor, the refactor's changes, its memories."""

    name: str
    before: dict[str, str]
    after: dict[str, str | None]  # None deletes the file
    cases: list[dict[str, Any]]
    ordinary: list[dict[str, Any]]  # plain, clean memories, also used by small repositories
    # NOTES.md: (section, line, records task progress?) in order; section is one of
    # "objective", "blockers", "pending"
    notes: list[tuple[str, str, bool]]

    @classmethod
    def load(cls, folder: Path) -> Domain:
        data = yaml.safe_load((folder / "memories.yaml").read_text(encoding="utf-8"))
        after: dict[str, str | None] = dict(read_tree(folder / "after"))
        after.update(dict.fromkeys(data["deleted"]))
        return cls(
            folder.name,
            read_tree(folder / "before"),
            after,
            data["cases"],
            data["ordinary"],
            [(section, line, progress) for section, line, progress in data["notes"]],
        )

    def final(self) -> dict[str, str]:
        """The code after the refactor."""
        merged = {**self.before, **self.after}
        return {path: text for path, text in merged.items() if text is not None}

    def describe(self, s: Store) -> None:
        """Add every memory of the domain to `s`, with its labels."""
        for case in self.cases:
            s.add(*(Mem.from_record(r) for r in case["memories"]))
            for label in case.get("labels", ()):
                s.label(label)
        self.add_ordinary(s)

    def add_ordinary(self, s: Store) -> None:
        s.add(*(Mem.from_record(r) for r in self.ordinary))


def read_tree(root: Path) -> dict[str, str]:
    """Every file under `root`, by its path relative to `root`, as written (no newline
    translation)."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes().decode("utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }
