"""Fixtures for the model layer: an orch-initialised git repository and script helpers."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from orchestrator.store.layout import Layout
from orchestrator.store.scaffold import scaffold


@pytest.fixture
def layout(git_repo: Path) -> Layout:
    """A real git repository with orch's layout, a pyproject.toml to cite, one commit."""
    (git_repo / "pyproject.toml").write_text(
        '[project]\nname = "sample"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
        encoding="utf-8",
    )
    (git_repo / "app.py").write_text("def handler():\n    return 1\n", encoding="utf-8")
    repo_layout = Layout(git_repo)
    scaffold(repo_layout)
    subprocess.run(["git", "add", "-A"], cwd=git_repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "start"], cwd=git_repo, check=True)
    return repo_layout
