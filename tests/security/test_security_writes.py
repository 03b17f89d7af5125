"""A failed memory write changes nothing: a full disk (a real tmpfs filled to a few
kilobytes) and a process killed between the two writes of a supersede."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.store.layout import Layout
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.scaffold import scaffold

ORCH = str(Path(sys.executable).with_name("orch"))
ADD = ("memory", "add", "--type", "reference", "--subject", "entry point",
       "--reason", "every change starts there", "--cite", "app.py")  # fmt: skip


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def make(repo: Path) -> Layout:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "t")
    git(repo, "config", "user.email", "t@orch.invalid")
    (repo / "app.py").write_text("def main():\n    return 0\n")
    layout = Layout(repo)
    scaffold(layout)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    return layout


def orch(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ORCH, *args], cwd=repo, capture_output=True, text=True, timeout=60)


def consistent(layout: Layout) -> tuple[set[str], str]:
    """(the memory files' names, MEMORY.md) after checking they agree."""
    store = RepoMemoryStore(layout)
    loaded = store.load_all()
    names = {m.name for m in loaded.memories}
    index = layout.memory_index.read_text()
    for m in loaded.active:
        assert f"[{m.name}]({m.name}.md)" in index, (m.name, index)
    for line in index.splitlines():
        if line.startswith("- ["):
            assert line[3:].split("]")[0] in names, line
    return names, index


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs (mounting needs root: CI runs as root; skipped otherwise)."""
    where = tmp_path / "disk"
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk: Path, leave: int) -> None:
    """Fill the disk up to `leave` bytes free."""
    st = os.statvfs(disk)
    free = st.f_bavail * st.f_frsize
    with (disk / "ballast").open("wb") as f:
        f.write(b"\0" * max(0, free - leave))
    os.sync()


def test_a_full_disk_fails_in_one_line_and_changes_nothing(tiny_disk: Path) -> None:
    layout = make(tiny_disk / "repo")
    first = orch(layout.root, *ADD, "--name", "entry-point", "--fact", "The app starts in `main`.")
    assert first.returncode == 0, first.stderr
    before = consistent(layout)
    fill(tiny_disk, leave=2048)
    long_fact = "The app's main function returns zero on success. " * 80  # 4 KB: will not fit
    done = orch(layout.root, *ADD, "--name", "exit-code", "--fact", long_fact)
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "internal error" not in done.stderr and "nothing was changed" in done.stderr
    (tiny_disk / "ballast").unlink()
    assert consistent(layout) == before
    assert not (layout.repo_memories / "exit-code.md").exists()
    assert not list(layout.repo_memories.glob(".*.tmp"))
    again = orch(layout.root, *ADD, "--name", "exit-code", "--fact", long_fact)
    assert again.returncode == 0, again.stderr  # room again: the same write goes through


KILL_BETWEEN = textwrap.dedent(
    """
    import os, signal, sys
    from orchestrator.store import repo
    from orchestrator.store.layout import Layout
    from orchestrator.store.memfile import Memory, Citation
    from orchestrator.memory.writer import MemoryWriter

    real = repo.atomic_write
    memory_writes = 0

    def dying(path, data, **kw):
        global memory_writes
        real(path, data, **kw)
        if path.suffix == ".md" and path.name != "MEMORY.md":
            memory_writes += 1
            if memory_writes == 1:  # the new memory is written; the old one not yet marked
                os.kill(os.getpid(), signal.SIGKILL)

    repo.atomic_write = dying
    new = Memory(name="entry-point-2", description="Where the app starts now",
                 type="reference", subject="entry point", reason="every change starts there",
                 citations=(Citation("app.py"),), body="The app starts in `main` in app.py.\\n")
    MemoryWriter(Layout(__import__("pathlib").Path(sys.argv[1]))).supersede("entry-point", new)
    """
)


def test_a_kill_between_the_writes_of_a_supersede_is_undone_by_the_next_command(
    tmp_path: Path,
) -> None:
    layout = make(tmp_path / "repo")
    assert (
        orch(
            layout.root, *ADD, "--name", "entry-point", "--fact", "It starts in `main`."
        ).returncode
        == 0
    )
    before = consistent(layout)
    died = subprocess.run(
        [sys.executable, "-c", KILL_BETWEEN, str(layout.root)], capture_output=True
    )
    assert died.returncode == -9
    assert (layout.repo_memories / "entry-point-2.md").exists()  # half done on disk
    listed = orch(layout.root, "memory", "list")
    assert listed.returncode == 0 and "entry-point-2" not in listed.stdout
    assert not (layout.repo_memories / "entry-point-2.md").exists()
    assert consistent(layout) == before
    assert RepoMemoryStore(layout).get("entry-point").active
