"""Snapshots built in the kept index are the trees a fresh index gives.

Every snapshot below is compared with the one a fresh private index makes (HEAD read in,
then `git add -A` of the project, then `git write-tree`): how snapshots were always made.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from engine_support import MINI_FILES, git, make_repo

from orchestrator.engine.vcs import STALE_WORK_SECONDS, ProjectRepo
from orchestrator.store.layout import Layout


def fresh(repo: ProjectRepo) -> str:
    """The snapshot as a fresh index gives it."""
    root = repo.layout.root
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": os.path.join(tmp, "index")}

        def run(*args: str) -> str:
            return subprocess.run(
                ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
            ).stdout.strip()

        if subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=root).returncode == 0:
            run("read-tree", "HEAD")
        run("add", "-A", "--", *repo.pathspec())
        return run("write-tree")


def same(repo: ProjectRepo) -> str:
    tree = repo.snapshot()
    assert tree == fresh(repo)
    return tree


@pytest.fixture
def repo(tmp_path: Path) -> ProjectRepo:
    files = {
        **MINI_FILES,
        ".gitignore": "__pycache__/\n*.log\n",
        "config.cfg": "debug = false\n",
        "docs/guide.md": "# Guide\n",
        "pkg/a": "a file that becomes a folder\n",
    }
    return ProjectRepo(Layout(make_repo(tmp_path / "p", files, "")))


def test_a_task_s_changes_snapshot_as_a_fresh_index_does(repo: ProjectRepo) -> None:
    root = repo.layout.root
    clean = same(repo)
    assert clean == repo.head_tree()
    (root / "calc.py").write_text("def add(a, b):\n    return b + a\n")  # modified
    (root / "new_module.py").write_text("X = 1\n")  # added
    (root / "docs" / "guide.md").unlink()  # deleted
    (root / "tests" / "test_calc.py").rename(root / "tests" / "test_sum.py")  # renamed
    (root / "run.log").write_text("ignored\n")  # ignored
    (root / "deep" / "er").mkdir(parents=True)
    (root / "deep" / "er" / "x y *?.txt").write_text("untracked, a name with pathspec magic\n")
    (root / "ünïcode.txt").write_text("é\n")
    (root / "calc.py").chmod(0o755)
    (root / "link").symlink_to("calc.py")
    (root / "plans" / "artifacts" / "scratch.md").write_text("orch's own: never in it\n")
    changed = same(repo)
    assert changed != clean
    files = repo.changed_paths(clean, changed)
    assert ("A", "new_module.py") in files and ("D", "docs/guide.md") in files
    assert not any(p.endswith((".log", "scratch.md")) for _, p in files)
    assert same(repo) == changed  # nothing changed in between

    # undone: the snapshot is HEAD's tree again
    (root / "new_module.py").unlink()
    (root / "deep" / "er" / "x y *?.txt").unlink()
    (root / "ünïcode.txt").unlink()
    (root / "link").unlink()
    (root / "tests" / "test_sum.py").rename(root / "tests" / "test_calc.py")
    git(root, "checkout", "--", "calc.py", "docs/guide.md")
    (root / "calc.py").chmod(0o644)
    assert same(repo) == clean


def test_rewrites_within_one_timestamp_tick_are_seen(repo: ProjectRepo) -> None:
    root = repo.layout.root
    target = root / "calc.py"
    seen = set()
    for i in range(6):  # same size each time, written as fast as it goes
        target.write_text(f"VALUE = {i}\n")
        seen.add(same(repo))
    assert len(seen) == 6


def test_a_file_rewritten_in_the_tick_the_index_was_written_is_hashed_again(
    repo: ProjectRepo,
) -> None:
    """git's racy-file check: an entry as new as its index file is compared by content.
    The kept index keeps its file's time when copied, so the check holds across snapshots."""
    root = repo.layout.root
    git(root, "config", "core.trustctime", "false")  # the times below are set by hand
    target = root / "calc.py"  # as in HEAD, so its entry keeps its stat data
    tick = time.time_ns() - 3600 * 10**9
    os.utime(target, ns=(tick, tick))
    same(repo)
    # as if the index had been written in the tick the file was last changed in
    kept, record = repo.snapshot_index, repo.snapshot_index.with_name("index.json")
    os.utime(kept, ns=(tick, tick))
    data = json.loads(record.read_text())
    data["stat"][2] = tick
    record.write_text(json.dumps(data))
    target.write_text("def add(a, b):\n    return a - b\n")  # same size, same tick
    os.utime(target, ns=(tick, tick))
    tree = same(repo)
    blob = git(root, "rev-parse", f"{tree}:calc.py").strip()
    assert git(root, "cat-file", "-p", blob) == "def add(a, b):\n    return a - b\n"


def test_what_git_ignores_follows_the_ignore_rules_of_the_moment(repo: ProjectRepo) -> None:
    root = repo.layout.root
    (root / "notes.txt").write_text("untracked, then ignored\n")
    with_notes = same(repo)
    gitignore = root / ".gitignore"
    gitignore.write_text(gitignore.read_text() + "notes.txt\n*.cfg\n")
    without = same(repo)
    assert without != with_notes  # the fresh index leaves the newly ignored file out
    # a file HEAD tracks stays in, ignored or not: deleted, then written again
    (root / "config.cfg").unlink()
    same(repo)
    (root / "config.cfg").write_text("debug = true\n")
    tree = same(repo)
    assert "config.cfg" in git(root, "ls-tree", "--name-only", tree)


def test_a_file_and_a_folder_of_the_same_name_trade_places(repo: ProjectRepo) -> None:
    root = repo.layout.root
    (root / "pkg" / "a").unlink()
    (root / "pkg" / "a").mkdir()
    (root / "pkg" / "a" / "b.py").write_text("B = 1\n")
    same(repo)
    (root / "pkg" / "a" / "b.py").unlink()
    (root / "pkg" / "a").rmdir()
    (root / "pkg" / "a").write_text("a file again\n")
    same(repo)


def test_new_commits_and_orch_s_records_come_from_head(repo: ProjectRepo) -> None:
    root = repo.layout.root
    (root / "calc.py").write_text("def add(a, b):\n    return a + b + 0\n")
    (root / "extra.py").write_text("E = 1\n")
    before = same(repo)
    repo.commit_phase(slug="t", trace_id="x", phase=1, subject="Phase 1", body="")
    assert same(repo) == repo.head_tree() == before  # the commit holds what it held
    (root / "NOTES.md").write_text("# Notes\n\nchanged\n")
    assert same(repo) == repo.head_tree()  # orch's records as in HEAD, not as on disk
    assert repo.commit_records("records")
    (root / "extra.py").unlink()
    same(repo)
    git(root, "reset", "-q", "--hard", "HEAD~2")  # HEAD moves back, past both commits
    same(repo)


def test_a_new_gitattributes_hashes_every_file_anew(repo: ProjectRepo) -> None:
    root = repo.layout.root
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    git(root, "add", "crlf.txt")
    git(root, "commit", "-q", "-m", "crlf")
    hour_ago = time.time() - 3600
    os.utime(root / "crlf.txt", (hour_ago, hour_ago))  # its stat data is trusted from now on
    same(repo)
    same(repo)
    (root / ".gitattributes").write_text("*.txt text eol=lf\n")
    tree = same(repo)  # the file is stored normalised now, though it did not change
    blob = git(root, "rev-parse", f"{tree}:crlf.txt").strip()
    assert git(root, "cat-file", "-p", blob) == "one\ntwo\n"


def test_a_repository_without_a_commit(tmp_path: Path) -> None:
    root = tmp_path / "new"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.py").write_text("A = 1\n")
    repo = ProjectRepo(Layout(root))
    same(repo)
    (root / "b.py").write_text("B = 1\n")
    same(repo)


def test_the_kept_index_lives_in_the_git_folder_and_leaves_the_user_s_alone(
    repo: ProjectRepo,
) -> None:
    root = repo.layout.root
    (root / "staged.py").write_text("S = 1\n")
    git(root, "add", "staged.py")
    user_index = (root / ".git" / "index").read_bytes()
    (root / "calc.py").write_text("changed = True\n")
    same(repo)
    assert (root / ".git" / "index").read_bytes() == user_index
    kept = repo.snapshot_index
    assert kept.is_file() and kept.is_relative_to(root / ".git")
    assert sorted(p.name for p in kept.parent.iterdir()) == ["index", "index.json"]
    assert git(root, "status", "--porcelain", "--", ".git") == ""


def test_after_a_crash_at_any_point_the_next_snapshot_is_right(repo: ProjectRepo) -> None:
    root = repo.layout.root
    kept, record = repo.snapshot_index, repo.snapshot_index.with_name("index.json")
    (root / "calc.py").write_text("v = 1\n")
    same(repo)

    # a process died mid-snapshot: its work copy and git's lock on it are left behind
    dead = kept.with_name("index.4242.deadbeef.tmp")
    dead.write_bytes(kept.read_bytes())
    dead.with_name(dead.name + ".lock").write_bytes(b"")
    (root / "calc.py").write_text("v = 2\n")
    same(repo)
    assert dead.exists()  # another process's copy is left alone while it may be in use
    old = time.time() - STALE_WORK_SECONDS - 60
    for path in (dead, dead.with_name(dead.name + ".lock")):
        os.utime(path, (old, old))
    same(repo)
    assert sorted(p.name for p in kept.parent.iterdir()) == ["index", "index.json"]

    # the record was written, the index not replaced: the record does not match the file
    data = json.loads(record.read_text())
    data["stat"][0] += 1
    record.write_text(json.dumps(data))
    (root / "calc.py").write_text("v = 3\n")
    same(repo)

    # the record names a tree the repository no longer has (pruned by `git gc`)
    data = json.loads(record.read_text())
    data["tree"] = "1" * 40
    record.write_text(json.dumps(data))
    (root / "calc.py").write_text("v = 4\n")
    same(repo)

    # the kept index or its record is gone, or the record is not JSON
    kept.unlink()
    same(repo)
    record.write_text("{not json")
    (root / "calc.py").write_text("v = 5\n")
    same(repo)
    record.unlink()
    same(repo)


def test_restore_puts_back_what_a_snapshot_held(repo: ProjectRepo) -> None:
    root = repo.layout.root
    (root / "calc.py").write_text("first = 1\n")
    (root / "added.py").write_text("A = 1\n")
    first = same(repo)
    (root / "calc.py").write_text("second = 2\n")
    (root / "added.py").unlink()
    (root / "other.py").write_text("O = 1\n")
    same(repo)
    assert sorted(repo.restore(first)) == ["added.py", "calc.py", "other.py"]
    assert same(repo) == first
    assert (root / "calc.py").read_text() == "first = 1\n"
