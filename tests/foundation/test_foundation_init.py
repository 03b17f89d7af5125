"""`orch init`: the layout of docs/design.md, idempotent, never touching a user's file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from foundation_helpers import snapshot

from orchestrator.store.index import render_index
from orchestrator.store.notes import Notes, render_notes
from orchestrator.store.templates import TEMPLATE_NAMES, package_template


def test_init_creates_the_layout(git_repo: Path, orch: Any) -> None:
    run = orch("init", "--json")
    assert run.code == 0, run.err
    data = json.loads(run.out)
    assert data["root"] == str(git_repo.resolve()) and data["kept"] == []
    for folder in (
        "memories/repo",
        "memories/session",
        "plans/templates",
        "plans/artifacts",
        ".orch",
    ):
        assert (git_repo / folder).is_dir(), folder
    assert (git_repo / "NOTES.md").read_text() == render_notes(Notes())
    assert (git_repo / "memories/repo/MEMORY.md").read_text() == render_index([])
    for name in TEMPLATE_NAMES:
        assert (git_repo / "plans/templates" / name).read_text() == package_template(name)
    ignored = subprocess.run(
        ["git", "check-ignore", "memories/session/x-notes.md", ".orch/cache.sqlite"],
        cwd=git_repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ignored.stdout.split() == ["memories/session/x-notes.md", ".orch/cache.sqlite"]
    tracked = subprocess.run(
        ["git", "check-ignore", "memories/repo/MEMORY.md", "NOTES.md"],
        cwd=git_repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert tracked.stdout == ""  # tier 3 and the plans are committed


def test_init_never_overwrites_a_users_files(git_repo: Path, orch: Any) -> None:
    (git_repo / "NOTES.md").write_text("my own notes\n")
    (git_repo / ".gitignore").write_text("node_modules\n/.orch/\n")
    (git_repo / "plans" / "templates").mkdir(parents=True)
    (git_repo / "plans" / "templates" / "plan.md").write_text("my plan template\n")
    run = orch("init")
    assert run.code == 0, run.err
    assert (git_repo / "NOTES.md").read_text() == "my own notes\n"
    assert (git_repo / "plans/templates/plan.md").read_text() == "my plan template\n"
    assert (git_repo / ".gitignore").read_text() == (
        "node_modules\n/.orch/\n\n# orch: session scratch, raw transcripts, rebuildable cache\n"
        "memories/session/\nplans/artifacts/*/transcripts/\n"
    )
    before = snapshot(git_repo)
    again = orch("init")
    assert again.code == 0 and "nothing changed" in again.out
    assert snapshot(git_repo) == before


def test_init_from_a_subfolder_sets_up_the_repository_root(
    git_repo: Path, orch: Any, monkeypatch: Any
) -> None:
    sub = git_repo / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert orch("init").code == 0
    assert (git_repo / "memories" / "repo" / "MEMORY.md").exists()
    assert not (sub / "memories").exists()


def test_gitignore_without_a_final_newline_is_extended_cleanly(git_repo: Path, orch: Any) -> None:
    (git_repo / ".gitignore").write_bytes(b"build")
    assert orch("init").code == 0
    assert (git_repo / ".gitignore").read_text().splitlines()[:3] == [
        "build",
        "",
        "# orch: session scratch, raw transcripts, rebuildable cache",
    ]


def test_transcripts_stay_in_git_when_the_user_opts_in(git_repo: Path, orch: Any) -> None:
    (git_repo / "orch.toml").write_text("[records]\ncommit_transcripts = true\n")
    assert orch("init").code == 0
    ignored = (git_repo / ".gitignore").read_text().splitlines()
    assert "memories/session/" in ignored and ".orch/" in ignored
    assert not any("transcripts" in line for line in ignored)
