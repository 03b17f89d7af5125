"""Atomic writes leave no temp file behind, and a crashed writer's temp is swept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from orchestrator.store.fs import atomic_write, sweep_temps


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_atomic_write_leaves_only_the_target(tmp_path: Path) -> None:
    target = tmp_path / "NOTES.md"
    atomic_write(target, "one\n")
    atomic_write(target, "two\n")
    assert target.read_text() == "two\n"
    assert [p.name for p in tmp_path.iterdir()] == ["NOTES.md"]


def test_sweep_removes_temps_of_dead_writers_only(tmp_path: Path) -> None:
    import os

    (tmp_path / "NOTES.md").write_text("intact\n")
    dead = tmp_path / f".NOTES.md.{dead_pid()}.0badc0de.tmp"
    dead.write_text("half")
    live = tmp_path / f".NOTES.md.{os.getpid()}.0badc0de.tmp"
    live.write_text("being written")
    lookalike = tmp_path / ".NOTES.md.backup.tmp"
    lookalike.write_text("a user's file")

    removed = sweep_temps(tmp_path)

    assert removed == [dead]
    assert not dead.exists()
    assert live.exists() and lookalike.exists()
    assert (tmp_path / "NOTES.md").read_text() == "intact\n"
    assert sweep_temps(tmp_path / "missing") == []
