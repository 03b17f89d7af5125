"""Bad input ends in one clear line and a non-zero exit, with nothing half-written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from engine_support import Script, git, only_task, orch

TASK = "Add a subtract function"


def artifacts(repo: Path) -> list[str]:
    return sorted(p.name for p in (repo / "plans" / "artifacts").iterdir())


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_an_empty_task_is_refused_and_writes_nothing(mini: Path, text: str) -> None:
    result = orch("run", text, "--model", "scripted:/nowhere.yaml")
    assert result.exit_code == 2
    assert "the task is empty" in result.output and "Traceback" not in result.output
    assert artifacts(mini) == [".gitkeep"]


def test_a_dirty_tree_is_refused_by_default(mini: Path, tmp_path: Path) -> None:
    (mini / "calc.py").write_text("# edited by hand\n")
    (mini / "new.txt").write_text("untracked\n")
    result = orch("run", TASK, "--model", Script().write(tmp_path / "s.json"))
    assert result.exit_code == 2
    assert "uncommitted changes (calc.py, new.txt)" in result.output
    assert 'dirty_tree = "branch"' in result.output
    assert artifacts(mini) == [".gitkeep"]


def test_a_dirty_tree_with_the_branch_policy_works_on_a_new_branch(
    mini: Path, tmp_path: Path
) -> None:
    with (mini / "orch.toml").open("a") as fh:
        fh.write('dirty_tree = "branch"\n')
    git(mini, "commit", "-qam", "Work on a branch when the tree is dirty")
    (mini / "notes.txt").write_text("my own work in progress\n")
    result = orch("run", TASK, "--yes", "--model", Script().write(tmp_path / "s.json"))
    assert result.exit_code == 0, result.output
    slug = only_task(mini)
    assert git(mini, "symbolic-ref", "--short", "HEAD").strip() == f"orch/{slug}"
    assert git(mini, "log", "--format=%s", "main").splitlines()[0] == (
        "Work on a branch when the tree is dirty"
    )
    assert "Phase 1: Add subtract" in git(mini, "log", "--format=%s")
    assert not (mini / "notes.txt").exists()  # kept safe in the stash, not in a phase commit
    assert "notes.txt" in git(mini, "stash", "show", "--include-untracked", "--name-only")


def test_unknown_models_tiers_and_scripts_are_usage_errors(mini: Path, tmp_path: Path) -> None:
    for args, message in (
        (["--model", "gpt:4"], "unknown model 'gpt:4'"),
        (["--model", f"scripted:{tmp_path / 'missing.yaml'}"], "cannot read it"),
        (["--tier", "HUGE"], "Invalid value for '--tier'"),
    ):
        result = orch("run", TASK, *args)
        assert result.exit_code == 2, result.output
        assert message in result.output and "Traceback" not in result.output
    assert artifacts(mini) == [".gitkeep"]


def test_a_repository_without_orch_or_without_commits(tmp_path: Path, monkeypatch) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=bare, check=True)
    monkeypatch.chdir(bare)
    result = orch("run", TASK)
    assert result.exit_code == 2 and "orch is not set up" in result.output
    assert orch("init").exit_code == 0
    result = orch("run", TASK, "--model", "scripted:x.yaml")
    assert result.exit_code == 2 and "no commit yet" in result.output
    monkeypatch.chdir(tmp_path)
    result = orch("status")
    assert result.exit_code == 2 and "not inside a git repository" in result.output


def test_a_bad_dirty_tree_setting_is_named(mini: Path, tmp_path: Path) -> None:
    with (mini / "orch.toml").open("a") as fh:
        fh.write('dirty_tree = "stash"\n')
    git(mini, "commit", "-qam", "A bad setting")
    result = orch("run", TASK, "--model", Script().write(tmp_path / "s.json"))
    assert result.exit_code == 2 and "dirty_tree must be one of refuse, branch" in result.output


def test_resume_approve_and_status_name_what_is_missing(mini: Path) -> None:
    result = orch("resume")
    assert result.exit_code == 2 and "no unfinished task to resume" in result.output
    result = orch("approve", "no-such-task")
    assert result.exit_code == 2 and "no task 'no-such-task'" in result.output
    result = orch("status")
    assert result.exit_code == 0 and "No tasks yet" in result.output
    assert json.loads(orch("status", "--json").output) == []


def test_a_task_whose_first_event_never_made_it_is_explained(mini: Path) -> None:
    (mini / "plans" / "artifacts" / "half-made").mkdir()  # a crash between mkdir and log
    result = orch("resume", "half-made")
    assert result.exit_code == 2
    assert "never started (its log is empty)" in result.output
    info = json.loads(orch("status", "half-made", "--json").output)
    assert info["state"] == "EMPTY"
