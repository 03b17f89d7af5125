"""A real git repository with orch set up, code, and two memories, committed."""

from __future__ import annotations

from pathlib import Path

import pytest
from integrations_support import make_project

from orchestrator.store.layout import Layout


@pytest.fixture
def project(git_repo: Path) -> Layout:
    return make_project(git_repo)
