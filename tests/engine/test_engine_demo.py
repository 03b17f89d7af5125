"""`orch demo` end to end, in a real process, as `make demo` runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from orchestrator.engine.demo import orch_command
from orchestrator.events.log import read_events

pytestmark = pytest.mark.slow


def test_the_demo_runs_the_whole_workflow_and_says_what_it_did(tmp_path: Path) -> None:
    where = tmp_path / "demo" / "wordstats"
    proc = subprocess.run(
        orch_command("demo", "--dir", str(where)), capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "The model is SCRIPTED" in out and "no API key" in out
    assert "WAITING_APPROVAL" in out  # the plan waited for `orch approve`
    assert "exit code -9 (killed by SIGKILL)" in out
    assert "task folder:" in out and "event log:" in out
    assert "Demo finished: task count-contractions-and-hyphenated-words-as-one is COMPLETE" in out
    status = subprocess.run(
        orch_command("status", "--json"), cwd=where, capture_output=True, text=True, timeout=60
    )
    [info] = json.loads(status.stdout)
    assert info["state"] == "COMPLETE" and info["committed"] == 2
    assert f"({info['events']} events)" in out
    subjects = subprocess.run(
        ["git", "log", "--format=%s"], cwd=where, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert subjects == [
        "Phase 2: Report the most frequent words",
        "Phase 1: Keep contractions and hyphenated words whole",
        "Initial commit: the wordstats sample",
    ]
    assert (where / "memories" / "repo" / "test-and-lint-commands.md").is_file()
    log = read_events(Path(info["log"]), check=True)
    assert log.problems == [] and len(log.events) == info["events"] > 50
    kinds = {e.event_type for e in log.events}
    assert {"gate_event", "plan_audit", "tool_call", "model_call", "verdict"} <= kinds
    steps = [e.payload.get("step") for e in log.events if e.event_type == "state_change"]
    assert "approval_given" in steps and steps[-1] == "complete"
    again = subprocess.run(
        orch_command("demo", "--dir", str(where)), capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 2 and "exists; give a new folder" in again.stderr
