"""Helpers for the integration tests: a project with orch set up, running `orch`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from orchestrator.memory.writer import MemoryWriter
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory
from orchestrator.store.scaffold import scaffold

ORCH = str(Path(sys.executable).with_name("orch"))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def memory(name: str, fact: str, cite: str, subject: str) -> Memory:
    return Memory(
        name=name,
        description=fact.split(". ")[0],
        type="reference",
        subject=subject,
        reason="every change there relies on it",
        citations=(Citation(cite),),
        body=fact + "\n",
    )


def make_project(git_repo: Path) -> Layout:
    (git_repo / "app").mkdir()
    (git_repo / "app" / "main.py").write_text("def main():\n    return 0\n")
    (git_repo / "app" / "store.py").write_text(
        "class Store:\n    def load(self):\n        return {}\n"
    )
    layout = Layout(git_repo)
    scaffold(layout)
    writer = MemoryWriter(layout)
    writer.add(
        memory(
            "entry-point", "The app starts in `main` in app/main.py.", "app/main.py", "entry point"
        )
    )
    writer.add(
        memory(
            "store-load",
            "`Store.load` in app/store.py reads the saved state.",
            "app/store.py",
            "state loading",
        )
    )
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "app")
    return layout


def orch(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ORCH, *args], cwd=repo, input=stdin, capture_output=True, text=True, timeout=120
    )
