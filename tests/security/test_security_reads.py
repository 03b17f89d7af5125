"""Reads confined like writes: links out, FIFOs, loops, a linked memory folder and a huge
memory (the table of `python -m evals.security --section reads`)."""

from __future__ import annotations

import json

import pytest

from evals.security_reads import CASES, reads_table

pytestmark = pytest.mark.slow


def test_no_read_escapes_hangs_or_breaks() -> None:
    rows = reads_table()
    assert [r["case"] for r in rows] == list(CASES)
    bad = [r for r in rows if not r["ok"]]
    assert bad == [], json.dumps(bad, indent=1)
    linked = next(r for r in rows if r["case"] == "linked memory folder")
    assert len(linked["warnings"]) == 3  # list, index and add each refused in one line
    assert all("leads outside the repository" in w for w in linked["warnings"])
