"""The end of a run: a closed stdout never changes what the task does (`orch run ... |
head -1`), and the last lines say where the task leaves you."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from engine_support import Script, orch

ORCH = str(Path(sys.executable).with_name("orch"))


def test_a_reader_that_goes_away_leaves_the_task_running_to_its_end(
    mini: Path, tmp_path: Path
) -> None:
    model = Script().write(tmp_path / "script.json")
    proc = subprocess.Popen(
        [ORCH, "run", "Add a subtract function", "--model", model, "--yes"],
        cwd=mini,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # like `head -1`: one line, then the pipe closes
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=300)
    assert first and code == 0, err
    assert "Traceback" not in err
    status = orch("status", "--json")
    rows = json.loads(status.output)
    assert [row["state"] for row in rows] == ["COMPLETE"]


def test_the_end_of_a_task_says_where_it_leaves_you(mini: Path, tmp_path: Path) -> None:
    model = Script().write(tmp_path / "script.json")
    result = orch("run", "Add a subtract function", "--model", model, "--yes")
    assert result.exit_code == 0, result.output
    assert "on branch:   main" in result.output
    assert "not committed:" in result.output and "of orch's records" in result.output


def test_records_commit_true_commits_them_when_the_task_completes(
    mini: Path, tmp_path: Path
) -> None:
    with (mini / "orch.toml").open("a") as fh:
        fh.write("\n[records]\ncommit = true\n")
    subprocess.run(["git", "-C", str(mini), "commit", "-qam", "records on"], check=True)
    model = Script().write(tmp_path / "script.json")
    result = orch("run", "Add a subtract function", "--model", model, "--yes")
    assert result.exit_code == 0, result.output
    assert "not committed:" not in result.output
    log = subprocess.run(
        ["git", "-C", str(mini), "log", "--format=%s", "-3"], capture_output=True, text=True
    ).stdout.splitlines()
    assert log[0] == "orch: records of task add-a-subtract-function"
    status = subprocess.run(
        ["git", "-C", str(mini), "status", "--porcelain", "--", "plans", "memories", "NOTES.md"],
        capture_output=True,
        text=True,
    ).stdout
    assert status == ""


def test_branch_mode_says_the_branch_and_where_the_edits_went(mini: Path, tmp_path: Path) -> None:
    with (mini / "orch.toml").open("a") as fh:
        fh.write('dirty_tree = "branch"\n')
    subprocess.run(["git", "-C", str(mini), "commit", "-qam", "branch mode"], check=True)
    (mini / "notes.txt").write_text("an edit of mine, not committed\n")
    model = Script().write(tmp_path / "script.json")
    result = orch("run", "Add a subtract function", "--model", model, "--yes")
    assert result.exit_code == 0, result.output
    assert "on branch:   orch/add-a-subtract-function" in result.output
    assert "your edits from before the task are in the stash" in result.output
    stashes = subprocess.run(
        ["git", "-C", str(mini), "stash", "list"], capture_output=True, text=True
    ).stdout
    assert stashes.strip()
