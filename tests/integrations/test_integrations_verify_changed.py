"""The pre-commit hook for code changes: verify the memories citing the staged files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from integrations_support import git, orch

from orchestrator.store.layout import Layout

SOURCE = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not (SOURCE / ".git").exists(), reason="needs the source checkout")
def test_the_hook_fails_on_the_commit_that_makes_a_cited_memory_stale(
    project: Layout, tmp_path: Path
) -> None:
    repo = project.root
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")

    store = repo / "app" / "store.py"
    store.write_text(store.read_text().replace("def load", "def read"))  # the memory goes stale
    (repo / "app" / "util.py").write_text("def helper():\n    return 1\n")
    git(repo, "add", "-A")  # the staged files are what pre-commit passes
    failed = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(SOURCE),
         "orch-memory-verify-changed", "--color", "never"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "STALE    store-load:" in failed.stdout and "Store has no member load" in failed.stdout
    assert "entry-point" not in failed.stdout  # it cites no staged file: not checked


def test_changed_alone_passes_and_bad_input_is_one_line(project: Layout) -> None:
    repo = project.root
    assert orch(repo, "memory", "verify", "--record").returncode == 0
    git(repo, "commit", "-qam", "record verification")
    (repo / "app" / "main.py").write_text("def main():\n    return 1\n")  # still holds
    done = orch(repo, "memory", "verify", "--changed", "app/main.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0].startswith("CHANGED  entry-point:")
    assert "store-load" not in done.stdout
    store = repo / "app" / "store.py"
    store.write_text(store.read_text().replace("def load", "def read"))  # `Store.load` is gone
    stale = orch(repo / "app", "memory", "verify", "--changed", "store.py", "--json")
    assert stale.returncode == 1 and '"stale": 1' in stale.stdout
    quiet = orch(repo, "memory", "verify", "--changed", "README.md")  # no memory cites it
    assert quiet.returncode == 0 and quiet.stdout == "No active memory cites the changed file.\n"
    for args, words in (
        ((), "needs the changed files"),
        (("/etc/hosts",), "outside the repository"),
        (("--all", "app/main.py"), "active memories only"),
    ):
        bad = orch(repo, "memory", "verify", "--changed", *args)
        assert bad.returncode == 2 and words in bad.stderr
        assert len(bad.stderr.splitlines()) == 1 and "Traceback" not in bad.stderr
