"""A task's report: one self-contained HTML page built from its event log, plan and git.

`write(task, out)` builds the report (`model.build`), renders it (`page.render`) and
writes it atomically; nothing is written when the task has no event to report.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.report.model import Report, build
from orchestrator.report.page import render
from orchestrator.store.fs import atomic_write
from orchestrator.store.tasks import TaskFolder

DEFAULT_NAME = "report.html"


def write(task: TaskFolder, out: Path | None = None) -> tuple[Path, Report]:
    """Write task's report to `out` (default: report.html in the task's folder)."""
    target = (out or task.path / DEFAULT_NAME).absolute()
    report = build(task)
    atomic_write(target, render(report, target.parent))
    return target, report
