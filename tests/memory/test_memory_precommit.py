"""The shipped pre-commit hook, run by pre-commit itself against a real repository.

`pre-commit try-repo` clones this source tree (a local path: no network) and runs the
`orch-memory-audit-system` hook, which uses `language: system` (the `orch` of this
environment) and so installs nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.store.layout import Layout

SOURCE = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    not (SOURCE / ".git").exists(), reason="needs the source checkout as a git repository"
)


def run_hook(layout: Layout, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    subprocess.run(["git", "add", "-A"], cwd=layout.root, check=True)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(SOURCE), "orch-memory-audit-system",
         "--all-files", "--color", "never"],
        cwd=layout.root, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_hook_passes_a_clean_store_and_fails_on_an_error(
    layout: Layout, put: Callable[..., Any], tmp_path: Path
) -> None:
    put("timeout", "`DEFAULT_TIMEOUT` is 30 seconds; raise it with the fixtures.")
    clean = run_hook(layout, tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "orch memory audit (orch on PATH)" in clean.stdout and "Passed" in clean.stdout

    put("deploy", "CI pushes with ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8.")
    dirty = run_hook(layout, tmp_path)
    assert dirty.returncode == 1, dirty.stdout + dirty.stderr
    assert "Failed" in dirty.stdout and "## Secrets (1)" in dirty.stdout
    assert "ghp_" not in dirty.stdout


def test_hook_ignores_commits_that_touch_no_memory(layout: Layout, tmp_path: Path) -> None:
    (layout.repo_memories / "MEMORY.md").write_text("# hand-edited\n")
    subprocess.run(["git", "add", "-A"], cwd=layout.root, check=True)
    subprocess.run(["git", "commit", "-qm", "x", "--no-verify"], cwd=layout.root, check=True)
    (layout.root / "app" / "extra.py").write_text("X = 1\n")
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    subprocess.run(["git", "add", "app/extra.py"], cwd=layout.root, check=True)
    staged = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(SOURCE), "orch-memory-audit-system",
         "--color", "never"],
        cwd=layout.root, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert staged.returncode == 0, staged.stdout + staged.stderr
    assert "Skipped" in staged.stdout


def test_lint_hook_checks_staged_instruction_files_without_orch_init(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "package.json").write_text('{"scripts": {"build": "tsc"}}')
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")

    def hook(agents: str) -> subprocess.CompletedProcess[str]:
        (root / "AGENTS.md").write_text(agents)
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(SOURCE), "orch-lint-agent-files",
             "--color", "never"],
            cwd=root, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    clean = hook("- Build with `npm run build`.\n")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    stale = hook("- Build with `npm run build-client`.\n")
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "AGENTS.md:1: STALE" in stale.stdout and "build-client" in stale.stdout
