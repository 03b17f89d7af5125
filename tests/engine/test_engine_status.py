"""`orch status`: every task, one task, and JSON for scripts."""

from __future__ import annotations

import json
import subprocess
import sys
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


def test_status_and_log_import_none_of_the_workflow(mini: Path, tmp_path: Path) -> None:
    """They read logs and plans: no git, no model, no schema check of a plan the log
    recorded, no terminal library, and none of what only costs start-up time here:
    importlib.resources (tempfile, shutil), the secrets module (random, base64)."""
    script = Script().write(tmp_path / "s.json")
    assert orch("run", "Add a subtract function", "--yes", "--model", script).exit_code == 0
    heavy = ("jsonschema", "git", "rich", "orchestrator.engine.api", "orchestrator.models")
    heavy += ("importlib.resources", "tempfile", "shutil", "secrets")
    for args in (
        ["status"],
        ["status", "add-a-subtract-function"],
        ["log", "add-a-subtract-function"],
    ):
        probe = (
            "import sys\nfrom orchestrator.cli import main\n"
            f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
            f"print([m for m in {heavy!r} if m in sys.modules])"
        )
        out = subprocess.run(
            [sys.executable, "-c", probe], cwd=mini, capture_output=True, text=True, check=True
        ).stdout
        assert out.splitlines()[-1] == "[]", (args, out)


def test_a_plan_edited_by_hand_is_validated_before_status_shows_it(
    mini: Path, tmp_path: Path
) -> None:
    script = Script().write(tmp_path / "s.json")
    assert orch("run", "Add a subtract function", "--yes", "--model", script).exit_code == 0
    plan_json = next((mini / "plans" / "artifacts").glob("*/plan.json"))
    plan = json.loads(plan_json.read_text())
    assert json.loads(orch("status", "add-a-subtract-function", "--json").output)["phases"]
    plan["phases"][0]["title"] = 7  # no longer the plan the log recorded, and invalid
    plan_json.write_text(json.dumps(plan))
    info = json.loads(orch("status", "add-a-subtract-function", "--json").output)
    assert info["phases"] == []
    plan["phases"][0]["title"] = "Retitled by hand"  # not the recorded plan, but valid
    plan_json.write_text(json.dumps(plan))
    info = json.loads(orch("status", "add-a-subtract-function", "--json").output)
    assert info["phases"][0]["title"] == "Retitled by hand"
