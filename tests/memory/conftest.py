"""Fixtures for memory discipline tests: a real git repository with code and orch's layout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.memory.audit import audit
from orchestrator.memory.verify import Verification, verify_memories
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory, serialize_memory
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.scaffold import scaffold

APP = '''"""The sample application."""

import argparse

DEFAULT_TIMEOUT = 30


class Loader:
    def __init__(self):
        self.cache = {}

    def load(self, path):
        return self.cache.get(path)


def parse_config(path):
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dry-run", action="store_true")
    return parser.parse_args()
'''
JS = "function renderCart(items) {\n  return items;\n}\n"
PYPROJECT = '[project]\nname = "app"\nversion = "0.1"\n\n[project.scripts]\napp = "app.main:main"\n'


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def file_statuses(root: Path, path: str = "AGENTS.md") -> dict[int, str]:
    """`orch memory verify --file PATH --json` run in `root` (no ORCH_ settings): each
    finding's line -> its status."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORCH_")}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "orch"), "memory", "verify", "--file", path, "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return {c["line"]: c["status"] for c in json.loads(done.stdout)["claims"]}


def contradictions(layout: Layout) -> set[frozenset[str]]:
    """The pairs of memories the audit reports as contradicting each other."""
    return {
        frozenset({f.memory or "", *f.related[:1]})
        for f in audit(layout).findings
        if f.kind == "contradiction"
    }


def verify_all(layout: Layout) -> dict[str, Verification]:
    """Every memory of the repository store verified, by name."""
    return {v.name: v for v in verify_memories(layout, RepoMemoryStore(layout).load_all().memories)}


def commit(root: Path, message: str = "change") -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", message)
    return git(root, "rev-parse", "HEAD")


def lost(root: Path, code: str, name: str = "lost_code.py") -> None:
    """`code` committed as the file `name`, then removed (not committed): the file and the
    names it holds were the project's where the words of an uncommitted file were written
    (the last commit), and are gone now."""
    (root / name).write_text(code)
    commit(root, "code to lose")
    git(root, "rm", "-q", name)


def write_files(root: Path, files: dict[str, str]) -> None:
    """Each path of `files` (folders made as needed) written with its text."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def recorded_ok(layout: Layout) -> dict[str, str]:
    """A memory's record of a verification that found it ok at the current commit."""
    head = git(layout.root, "rev-parse", "HEAD")
    return {"commit": head, "at": "2026-10-01T10:00:00Z", "result": "ok"}


def committed(layout: Layout, files: dict[str, str], message: str) -> dict[str, str]:
    """`files` written and committed; a record of a verification ok at that commit."""
    write_files(layout.root, files)
    commit(layout.root, message)
    return recorded_ok(layout)


@pytest.fixture
def layout(git_repo: Path) -> Layout:
    """An initialised repository with a small Python and JavaScript code base, committed."""
    (git_repo / "app").mkdir()
    (git_repo / "app" / "__init__.py").write_text("")
    (git_repo / "app" / "main.py").write_text(APP)
    (git_repo / "web").mkdir()
    (git_repo / "web" / "cart.js").write_text(JS)
    (git_repo / "pyproject.toml").write_text(PYPROJECT)
    result = Layout(git_repo)
    scaffold(result)
    commit(git_repo, "code")
    return result


def make_memory(
    name: str,
    fact: str,
    *,
    subject: str | None = None,
    kind: str = "reference",
    reason: str | None = "later tasks rely on it",
    citations: tuple[Citation, ...] = (Citation("app/main.py"),),
    **extra: Any,
) -> Memory:
    return Memory(
        name=name,
        description=fact.split(". ")[0][:100],
        type=kind,
        body=fact + "\n",
        subject=subject if subject is not None else name.replace("-", " "),
        reason=reason,
        citations=citations,
        created=extra.pop("created", "2026-10-01T10:00:00Z"),
        updated=extra.pop("updated", "2026-10-01T10:00:00Z"),
        **extra,
    )


@pytest.fixture
def put(layout: Layout) -> Callable[..., Memory]:
    """Write a memory file directly (no Checklist A: for planting pollution), reindexing."""

    def write(name: str, fact: str, **kw: Any) -> Memory:
        memory = make_memory(name, fact, **kw)
        (layout.repo_memories / f"{name}.md").write_text(serialize_memory(memory))
        RepoMemoryStore(layout).regenerate_index()
        return memory

    return write


@pytest.fixture
def mk() -> Callable[..., Memory]:
    """`make_memory`: a complete memory record (nothing written)."""
    return make_memory


@pytest.fixture
def commit_all() -> Callable[..., str]:
    """`commit(root, message)`: stage everything and commit; returns the new HEAD."""
    return commit
