"""`orch status`: every task, one task, and JSON for scripts."""

from __future__ import annotations

import json
from pathlib import Path

from engine_support import Script, orch


def test_status_lists_tasks_and_details_one(mini: Path, tmp_path: Path) -> None:
    script = Script().write(tmp_path / "s.json")
    assert orch("run", "Add a subtract function", "--model", script).exit_code == 0
    assert orch("run", "Add a multiply function", "--yes", "--model", script).exit_code == 0
    rows = json.loads(orch("status", "--json").output)
    assert [(r["task"], r["state"]) for r in rows] == [
        ("add-a-multiply-function", "COMPLETE"),
        ("add-a-subtract-function", "WAITING_APPROVAL"),
    ]
    text = orch("status").output
    assert "add-a-subtract-function" in text and "WAITING_APPROVAL" in text
    assert "phases 1/1" in text
    detail = orch("status", "add-a-multiply-function").output
    assert "phase 1: closed" in detail and "event log:" in detail and "events)" in detail
    info = json.loads(orch("status", "add-a-multiply-function", "--json").output)
    assert info["phases"][0]["commit"] and info["committed"] == 1 and info["tier"] == "TRIVIAL"
    assert info["log"].endswith("add-a-multiply-function.ndjson")


def test_run_json_prints_one_object_for_scripts(mini: Path, tmp_path: Path) -> None:
    result = orch(
        "run",
        "Add a subtract function",
        "--yes",
        "--json",
        "--model",
        Script().write(tmp_path / "s.json"),
    )
    assert result.exit_code == 0
    info = json.loads(result.output)
    assert info["state"] == "COMPLETE" and info["events"] > 20
