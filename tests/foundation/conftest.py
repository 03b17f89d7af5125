"""Fixtures for the foundation tests: an initialised repository and the CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from foundation_helpers import Run

from orchestrator.cli import cli
from orchestrator.store.layout import Layout
from orchestrator.store.scaffold import scaffold


@pytest.fixture
def layout(git_repo: Path) -> Layout:
    """`orch init` done in a real, empty git repository (the current directory)."""
    lay = Layout(git_repo)
    scaffold(lay)
    return lay


@pytest.fixture
def orch() -> Callable[..., Run]:
    """Run `orch ARGS...` through click's CliRunner (stdout and stderr kept apart)."""

    def run(*args: str, input: str | None = None) -> Run:
        return Run(CliRunner().invoke(cli, list(args), input=input, catch_exceptions=True))

    return run
