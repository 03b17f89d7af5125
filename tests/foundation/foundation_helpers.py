"""Helpers for the foundation tests (kept out of conftest.py so that test modules and the
processes they spawn can import them by a name no other conftest shares)."""

from __future__ import annotations

import hashlib
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from click.testing import Result

ORCH = Path(sys.executable).with_name("orch")


@dataclass
class Run:
    result: Result

    @property
    def code(self) -> int:
        return self.result.exit_code

    @property
    def out(self) -> str:
        return self.result.stdout

    @property
    def err(self) -> str:
        return self.result.stderr


def hears_ctrl_c() -> None:
    """A child's `preexec_fn`: Ctrl-C (SIGINT) back to its default. A shell starts a
    background job with SIGINT ignored and the ignoring is inherited through exec, so a
    test run in the background would otherwise send a Ctrl-C orch never receives."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def snapshot(root: Path) -> dict[str, str]:
    """{relative path: sha256} of every file under `root` except .git and the cache/locks.

    `.orch/` holds only rebuildable state (parse cache, lock files), so it is left out:
    a failed command may touch a lock file, never a tracked or user-visible file.
    """
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        rel_folder = Path(folder).relative_to(root)
        dirs[:] = [d for d in dirs if not (rel_folder == Path(".") and d in (".git", ".orch"))]
        for name in files:
            path = Path(folder) / name
            key = (rel_folder / name).as_posix()
            out[key] = (
                "link:" + os.readlink(path)
                if path.is_symlink()
                else hashlib.sha256(path.read_bytes()).hexdigest()
            )
        for name in dirs:
            out[(rel_folder / name).as_posix() + "/"] = "dir"
    return out


def one_error_line(run: Run, code: int, *needles: str) -> str:
    """Assert a failed command printed exactly one line, no traceback, and the exit code."""
    assert run.code == code, (run.code, run.out, run.err)
    assert run.result.exception is None or isinstance(run.result.exception, SystemExit), (
        run.result.exception
    )
    lines = [line for line in run.err.splitlines() if line.strip()]
    assert len(lines) == 1, run.err
    assert "Traceback" not in run.err + run.out
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


MEMORY_TEXT = """---
name: test-command
description: How to run the test suite
type: reference
subject: test command
reason: Every phase gate runs it
citations:
  - path: pyproject.toml
    line: 12
    symbol: null
status: active
supersedes: []
superseded_by: null
created: 2026-11-21T10:00:00Z
updated: 2026-11-21T10:00:00Z
source: {task: add-rate-limit, phase: 2}
verified: {commit: 3f2a1b0, at: 2026-11-21T10:00:00Z, result: ok}
---
The test command is `pytest -q`, run from the repository root.

**Why:** every phase gate runs it.
**How to apply:** run it before committing a phase.
"""
