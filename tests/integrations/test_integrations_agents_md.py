"""AGENTS.md's orch section: written from verified memory, text around it untouched, checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from integrations_support import git, memory, orch

from orchestrator.memory.writer import MemoryWriter
from orchestrator.store.layout import Layout

SOURCE = Path(__file__).resolve().parents[2]
START, END = "<!-- orch:memory:start -->", "<!-- orch:memory:end -->"


def test_the_section_is_written_between_markers_and_kept_true(project: Layout) -> None:
    repo = project.root
    mine = "# Contributing\n\nRun the tests before you push.\n"
    (repo / "AGENTS.md").write_text(mine)
    first = orch(repo, "memory", "export", "--agents-md")
    assert first.returncode == 0, first.stderr
    text = (repo / "AGENTS.md").read_text()
    assert text.startswith(mine) and START in text and text.rstrip().endswith(END)
    section = text.split(START)[1].split(END)[0]
    assert "(`entry-point`)" in section and "(`store-load`)" in section
    assert orch(repo, "memory", "export", "--agents-md", "--check").returncode == 0
    (repo / "AGENTS.md").write_text(text + "\n## More of mine\n")  # text after the markers
    (repo / "app" / "store.py").unlink()  # store-load goes stale
    git(repo, "commit", "-qam", "drop the store")
    check = orch(repo, "memory", "export", "--agents-md", "--check")
    assert check.returncode == 1 and "out of date" in check.stdout
    assert orch(repo, "memory", "export", "--agents-md").returncode == 0
    after = (repo / "AGENTS.md").read_text()
    assert after.startswith(mine) and after.endswith("\n## More of mine\n")
    assert "store-load" not in after and "(`entry-point`)" in after  # stale memory left out


def test_the_section_is_short_and_says_what_it_left_out(project: Layout) -> None:
    writer = MemoryWriter(project)
    for n in range(40):
        writer.add(
            memory(f"rule-{n:02d}", f"Rule {n} of app/main.py: keep `main` free of I/O number {n}.",
                   "app/main.py", f"main rule {n}"),
            on_duplicate="create", reason="each rule stands alone",
        )  # fmt: skip
    done = orch(project.root, "memory", "export", "--agents-md", "--json")
    assert done.returncode == 0
    section = (project.root / "AGENTS.md").read_text().split(START)[1].split(END)[0]
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(lines) <= 31 and "more: `orch memory list`" in lines[-1]


def test_claude_md_without_the_import_gets_a_hint_never_an_edit(project: Layout) -> None:
    repo = project.root
    (repo / "CLAUDE.md").write_text("# Notes for Claude\n")
    done = orch(repo, "memory", "export", "--agents-md")
    assert "@AGENTS.md" in done.stderr
    assert (repo / "CLAUDE.md").read_text() == "# Notes for Claude\n"
    (repo / "CLAUDE.md").write_text("# Notes for Claude\n@AGENTS.md\n")
    assert "@AGENTS.md" not in orch(repo, "memory", "export", "--agents-md").stderr


@pytest.mark.skipif(not (SOURCE / ".git").exists(), reason="needs the source checkout")
def test_the_pre_commit_hook_fails_when_the_section_is_out_of_date(
    project: Layout, tmp_path: Path
) -> None:
    repo = project.root
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")

    def hook() -> subprocess.CompletedProcess[str]:
        git(repo, "add", "-A")
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(SOURCE), "orch-agents-md-check",
             "--all-files", "--color", "never"],
            cwd=repo, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    assert orch(repo, "memory", "export", "--agents-md").returncode == 0
    passed = hook()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    MemoryWriter(project).add(
        memory(
            "store-class", "The `Store` class lives in app/store.py.", "app/store.py", "store class"
        )
    )
    failed = hook()
    assert failed.returncode == 1 and "out of date" in failed.stdout
