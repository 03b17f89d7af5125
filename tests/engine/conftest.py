"""Engine fixtures: a tiny committed project and the demo's sample, as the current directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_support import MINI_FILES, TEST_CMD, make_repo

from orchestrator.engine.demo import prepare_repo, sample_paths


@pytest.fixture
def mini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tiny committed project with orch set up; the current directory."""
    repo = make_repo(
        tmp_path / "mini",
        MINI_FILES,
        f'test_command = "{TEST_CMD}"\nmax_retries = 0\nfallback_model = ""\n',
    )
    monkeypatch.chdir(repo)
    return repo


@pytest.fixture
def sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """The demo's sample project and its model script; the current directory."""
    with sample_paths() as (src, script):
        repo = prepare_repo(tmp_path / "wordstats", src)
        monkeypatch.chdir(repo)
        yield repo, script
