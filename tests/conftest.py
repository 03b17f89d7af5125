"""Test isolation: no test touches the network or the user's home directory."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "orch tests")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "tests@orch.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "orch tests")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "tests@orch.invalid")
    for key in list(os.environ):
        if key.startswith("ORCH_") or key == "ANTHROPIC_API_KEY":
            monkeypatch.delenv(key, raising=False)


@pytest.fixture
def git_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real, empty git repository as the current directory."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    monkeypatch.chdir(repo)
    return repo
