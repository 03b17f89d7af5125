"""Where each tier lives in the user's repository.

This module is the only place that spells the folder layout; everything else asks a
`Layout` (or a `TaskFolder` from `orchestrator.store.tasks`) for a path.
"""

from __future__ import annotations

import os
from pathlib import Path

from msgspec import Struct

from orchestrator.errors import NotARepository, NotInitialised

NOTES_FILE = "NOTES.md"
INDEX_FILE = "MEMORY.md"


def find_repo_root(start: Path | None = None) -> Path:
    """The top of the git work tree holding `start` (default: the current directory)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    raise NotARepository(here)


class Layout(Struct, frozen=True):
    """Where orch's folders are in one repository."""

    root: Path

    @classmethod
    def discover(cls, start: Path | None = None) -> Layout:
        override = os.environ.get("ORCH_REPO")
        return cls(find_repo_root(Path(override) if override else start))

    # tier 3: repo-persistent
    @property
    def notes(self) -> Path:
        return self.root / NOTES_FILE

    @property
    def memories(self) -> Path:
        return self.root / "memories"

    @property
    def repo_memories(self) -> Path:
        return self.memories / "repo"

    @property
    def memory_index(self) -> Path:
        return self.repo_memories / INDEX_FILE

    # tier 1: session scratch
    @property
    def session(self) -> Path:
        return self.memories / "session"

    def session_notes(self, slug: str) -> Path:
        return self.session / f"{slug}-notes.md"

    # tier 2: task-episodic
    @property
    def plans(self) -> Path:
        return self.root / "plans"

    @property
    def templates(self) -> Path:
        return self.plans / "templates"

    @property
    def artifacts(self) -> Path:
        return self.plans / "artifacts"

    # rebuildable cache
    @property
    def cache(self) -> Path:
        return self.root / ".orch"

    @property
    def locks(self) -> Path:
        return self.cache / "locks"

    @property
    def initialised(self) -> bool:
        return self.repo_memories.is_dir() and self.artifacts.is_dir()

    def require_initialised(self) -> Layout:
        if not self.initialised:
            raise NotInitialised(self.root)
        return self
