"""The project explains itself: no tracked file cites a design document kept outside it."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = ("DESIGN.md", "STYLE.md")


def test_no_tracked_file_cites_a_document_outside_the_repository() -> None:
    found = subprocess.run(
        ["git", "grep", "-n", "-I", "-F", *(x for name in OUTSIDE for x in ("-e", name))],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    hits = [
        line
        for line in found.stdout.splitlines()
        if not line.startswith("tests/test_self_contained.py:")
    ]
    assert found.returncode in (0, 1), found.stderr
    assert hits == [], "cite docs/design.md instead:\n" + "\n".join(hits)
