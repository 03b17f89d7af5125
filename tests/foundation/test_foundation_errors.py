"""Every error path: one line naming the file and the reason, exit 1 for findings and 2 for
usage errors, no traceback, and nothing on disk changed by the failed command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from foundation_helpers import one_error_line, snapshot

from orchestrator.store.layout import Layout

GOOD = "---\nname: good\ndescription: A good memory\ntype: user\n---\nA fact.\n"
BAD_FILES = {
    "broken-yaml": ("---\nname: [broken-yaml\n---\nfact\n", "broken YAML frontmatter"),
    "missing-field": (
        "---\nname: missing-field\ntype: user\n---\nf\n",
        "missing required field 'description'",
    ),
    "unknown-type": (
        "---\nname: unknown-type\ndescription: d\ntype: opinion\n---\nf\n",
        "unknown type 'opinion'",
    ),
    "wrong-name": (
        "---\nname: other-name\ndescription: d\ntype: user\n---\nf\n",
        "is not the file's stem",
    ),
}


@pytest.fixture
def repo_with_bad_files(layout: Layout) -> Layout:
    (layout.repo_memories / "good.md").write_text(GOOD)
    for name, (text, _) in BAD_FILES.items():
        (layout.repo_memories / f"{name}.md").write_text(text)
    (layout.root / "a.py").write_text("x = 1\n")
    return layout


def test_list_reports_each_bad_file_in_one_line_and_lists_the_rest(
    repo_with_bad_files: Layout, orch: Any
) -> None:
    before = snapshot(repo_with_bad_files.root)
    run = orch("memory", "list")
    assert run.code == 1
    assert run.out.splitlines() == ["good  user       A good memory"]
    errs = run.err.splitlines()
    assert len(errs) == len(BAD_FILES)
    for line, (name, (_, reason)) in zip(errs, sorted(BAD_FILES.items()), strict=True):
        assert line.startswith(f"warning: memories/repo/{name}.md: ")
        assert reason in line
    assert "Traceback" not in run.err
    assert snapshot(repo_with_bad_files.root) == before


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_show_of_a_bad_file_is_one_line_exit_1(
    repo_with_bad_files: Layout, orch: Any, name: str
) -> None:
    before = snapshot(repo_with_bad_files.root)
    one_error_line(
        orch("memory", "show", name), 1, f"memories/repo/{name}.md: ", BAD_FILES[name][1]
    )
    assert snapshot(repo_with_bad_files.root) == before


def test_writes_still_work_next_to_bad_files(repo_with_bad_files: Layout, orch: Any) -> None:
    run = orch(
        "memory",
        "add",
        "--type",
        "project",
        "--subject",
        "entry point",
        "--reason",
        "r",
        "--cite",
        "a.py:1",
        "--fact",
        "The entry point is a.py.",
    )
    assert run.code == 0, run.err
    index = repo_with_bad_files.memory_index.read_text()
    assert "[entry-point]" in index and "[good]" in index and "broken-yaml" not in index


FAILING_COMMANDS: list[tuple[list[str], int, str]] = [
    # usage errors: exit 2
    (["memory", "add", "--type", "user"], 2, "memory add needs --subject, --fact"),
    (["memory", "add", "--type", "user", "--subject", "s", "--fact", "f"], 2, "reason is required"),
    (
        [
            "memory",
            "add",
            "--type",
            "user",
            "--subject",
            "s",
            "--reason",
            "r",
            "--fact",
            "f",
            "--name",
            "Bad_Name",
        ],
        2,
        "kebab-case",
    ),
    (
        [
            "memory",
            "add",
            "--type",
            "user",
            "--subject",
            "s",
            "--reason",
            "r",
            "--fact",
            "f",
            "--name",
            "good",
        ],
        2,
        "exists",
    ),
    (
        ["memory", "add", "--type", "project", "--subject", "s", "--reason", "r", "--fact", "f"],
        2,
        "need at least one citation",
    ),
    (
        [
            "memory",
            "add",
            "--type",
            "project",
            "--subject",
            "s",
            "--reason",
            "r",
            "--fact",
            "f",
            "--cite",
            "../etc/passwd",
        ],
        2,
        "outside the repository",
    ),
    (
        [
            "memory",
            "add",
            "--type",
            "project",
            "--subject",
            "s",
            "--reason",
            "r",
            "--fact",
            "f",
            "--cite",
            "/etc/passwd",
        ],
        2,
        "outside the repository",
    ),
    (
        [
            "memory",
            "add",
            "--type",
            "project",
            "--subject",
            "s",
            "--reason",
            "r",
            "--fact",
            "f",
            "--cite",
            "nope.py",
        ],
        2,
        "does not exist",
    ),
    (
        [
            "memory",
            "add",
            "--type",
            "project",
            "--subject",
            "s",
            "--reason",
            "r",
            "--fact",
            "f",
            "--cite",
            "a.py:x",
        ],
        2,
        "expected PATH[:LINE][#SYMBOL]",
    ),
    (
        [
            "memory",
            "add",
            "--type",
            "user",
            "--subject",
            "s",
            "--reason",
            "r",
            "--body-file",
            "missing.txt",
        ],
        2,
        "--body-file missing.txt",
    ),
    (
        ["memory", "add", "--type", "user", "--subject", "!!!", "--reason", "r", "--fact", "f"],
        2,
        "no letters or digits",
    ),
    (["memory", "add", "--type", "fact"], 2, "Invalid value for '--type'"),
    (["memory", "show", "nope"], 2, "no memory named 'nope'"),
    (["memory", "show", "../../etc/passwd"], 2, "is not a memory name"),
    (["memory", "show", "MEMORY"], 2, "is not a memory name"),
    (["memory", "supersede", "nope", "--name", "x", "--fact", "f"], 2, "no memory named 'nope'"),
    (["memory", "supersede", "good", "--fact", "f"], 2, "needs --name"),
    (
        [
            "memory",
            "supersede",
            "good",
            "--name",
            "good",
            "--fact",
            "f",
            "--subject",
            "s",
            "--reason",
            "r",
        ],
        2,
        "needs a new name",
    ),
    (["memory", "bogus"], 2, "No such command 'bogus'"),
    (["session", "show", "../x"], 2, "is not a task name"),
    (["session", "clear", "nope"], 2, "no session notes for task 'nope'"),
    (["log", "nope"], 2, "no task 'nope'"),
    (["log", "../x"], 2, "no task '../x'"),
    (["notes", "set"], 2, "notes set needs"),
    (["bogus"], 2, "No such command 'bogus'"),
    # findings: exit 1
    (["memory", "show", "broken-yaml"], 1, "memories/repo/broken-yaml.md: broken YAML frontmatter"),
    (["memory", "index", "--check"], 1, "MEMORY.md is out of step"),
]


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    FAILING_COMMANDS,
    ids=lambda x: " ".join(x) if isinstance(x, list) else str(x),
)
def test_failing_command_prints_one_line_and_changes_nothing(
    repo_with_bad_files: Layout, orch: Any, args: list[str], code: int, needle: str
) -> None:
    before = snapshot(repo_with_bad_files.root)
    run = orch(*args)
    assert run.code == code, (run.out, run.err)
    assert needle in run.err
    assert "Traceback" not in run.err + run.out
    if code != 2 or ("No such command" not in needle and "Invalid value" not in needle):
        one_error_line(run, code, needle)
    assert snapshot(repo_with_bad_files.root) == before


def test_not_a_repository_and_not_initialised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, orch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    one_error_line(orch("memory", "list"), 2, "not inside a git repository")
    one_error_line(orch("init"), 2, "not inside a git repository")
    (tmp_path / ".git").mkdir()
    for args in (["memory", "list"], ["notes", "show"], ["session", "show"], ["log", "x"]):
        one_error_line(orch(*args), 2, "orch is not set up", "run `orch init` first")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git"]


def test_locked_store_is_exit_3_and_writes_nothing(
    repo_with_bad_files: Layout, orch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.store import fs

    monkeypatch.setattr(fs, "DEFAULT_LOCK_TIMEOUT", 0.2)
    before = snapshot(repo_with_bad_files.root)
    with fs.file_lock(repo_with_bad_files.locks, "memories"):
        run = orch(
            "memory", "add", "--type", "user", "--subject", "s", "--reason", "r", "--fact", "f"
        )
    one_error_line(run, 3, "the memory store is locked by another orch process")
    assert snapshot(repo_with_bad_files.root) == before


def test_internal_errors_are_one_line_too(
    layout: Layout, orch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.store import repo

    def boom(self: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(repo.RepoMemoryStore, "load_all", boom)
    one_error_line(orch("memory", "list"), 1, "internal error: RuntimeError: disk on fire")


def test_init_refuses_a_file_where_a_folder_goes_and_creates_nothing(
    git_repo: Path, orch: Any
) -> None:
    (git_repo / "memories").write_text("I am a file\n")
    before = snapshot(git_repo)
    one_error_line(orch("init"), 1, "memories: exists but is not a folder")
    assert snapshot(git_repo) == before


def test_init_refuses_a_symlink_out_of_the_repository(
    git_repo: Path, tmp_path: Path, orch: Any
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (git_repo / "plans").symlink_to(elsewhere)
    before = snapshot(git_repo)
    one_error_line(orch("init"), 2, "outside the repository")
    assert snapshot(git_repo) == before
    assert list(elsewhere.iterdir()) == []


def test_ctrl_c_is_one_line_and_exit_130(layout: Layout) -> None:
    import signal
    import subprocess
    import time

    from foundation_helpers import ORCH, hears_ctrl_c

    proc = subprocess.Popen(
        [
            str(ORCH),
            "memory",
            "add",
            "--type",
            "user",
            "--subject",
            "s",
            "--reason",
            "r",
            "--body-file",
            "-",
        ],
        cwd=layout.root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=hears_ctrl_c,
    )
    time.sleep(1.5)  # waiting for the body on stdin
    before = snapshot(layout.root)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err == "Interrupted.\n" and out == ""
    assert snapshot(layout.root) == before


def test_tier_folders_symlinked_out_of_the_repository_are_refused(
    layout: Layout, tmp_path: Path, orch: Any
) -> None:
    from orchestrator.errors import PathEscape
    from orchestrator.store.notes import NotesFile
    from orchestrator.store.session import SessionNotes
    from orchestrator.store.tasks import TaskFolder

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "t").mkdir()
    (outside / "t-notes.md").write_text("# Session notes: t\n\n## Current State\nsecret\n")
    (outside / "NOTES.md").write_text("# NOTES\n\n## Active objective\n- secret\n")
    for folder in (layout.artifacts, layout.session):
        folder.rename(folder.with_name(folder.name + ".orig"))
        folder.symlink_to(outside, target_is_directory=True)
    layout.notes.unlink()
    layout.notes.symlink_to(outside / "NOTES.md")
    before = sorted(p.name for p in outside.iterdir())

    with pytest.raises(PathEscape):
        TaskFolder.create(layout, "new task")
    with pytest.raises(PathEscape):
        TaskFolder.open(layout, "t")
    with pytest.raises(PathEscape):
        SessionNotes(layout, "t").set("Current State", "overwritten")
    with pytest.raises(PathEscape):
        NotesFile(layout).set(objective=["overwritten"])
    for args in (["session", "show", "t"], ["notes", "show"], ["log", "t"]):
        run = orch(*args)
        one_error_line(run, 2, "outside the repository")
        assert "secret" not in run.out
    assert sorted(p.name for p in outside.iterdir()) == before
    assert "secret" in (outside / "t-notes.md").read_text()
