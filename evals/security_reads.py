"""The reads table: nothing orch reads for the agent or an index leaves the repository,
hangs, or breaks on a strange entry.

Each case plants one thing in a fresh repository (orch set up, one memory, a file holding a
marker) and runs the real tools and commands that read:

- `link out in the tree`: `notes.txt -> <a file outside holding a marker>`; the executor's
  `search` and `read_file`, and the search index;
- `link out in memories`: `memories/repo/leak.md -> <outside>`; `orch memory list`,
  `orch memory search`;
- `FIFO in memories`: `memories/repo/pipe.md` is a FIFO; `orch memory list`,
  `orch memory search` (reading one would block forever);
- `FIFO in the tree`: a FIFO the executor's `search` walks past;
- `symlink loop`: `memories/repo/loop.md -> loop.md`; `orch memory list`, `audit`;
- `linked memory folder`: `memories/repo` itself a link to a folder outside; `orch memory
  list`, `add` and `index` must refuse it (nothing read, nothing written there);
- `huge memory`: a 50 MB memory file; `orch memory audit` reports it without reading it.

A row holds: escaped (the marker, or the outside folder's content, was shown or indexed, or
the outside folder changed), hung (a command ran past its time limit), warnings (the lines
that named the entry; each case wants at least one and no traceback), and the seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.config import PolicyConfig
from orchestrator.engine.tools import ExecutorTools
from orchestrator.engine.vcs import ProjectRepo
from orchestrator.messages import ToolCall
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory, serialize_memory
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.scaffold import scaffold
from orchestrator.store.tasks import TaskFolder

ORCH = str(Path(sys.executable).with_name("orch"))
MARKER = "OUTSIDE-MARKER-7f3a"
TIMEOUT = 20.0
TRACE = "5ec0e7a1-0000-4000-8000-000000000003"


@dataclass
class Row:
    case: str
    escaped: bool = False
    hung: bool = False
    warnings: list[str] = field(default_factory=list)
    tracebacks: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.escaped and not self.hung and bool(self.warnings) and not self.tracebacks

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


class Case:
    """A fresh repository with an outside folder beside it."""

    def __init__(self, base: Path) -> None:
        self.outside = base / "outside"
        self.outside.mkdir()
        (self.outside / "secret.txt").write_text(f"{MARKER}\n")
        (self.outside / "MEMORY.md").write_text(f"{MARKER} index\n")
        self.repo = base / "repo"
        self.repo.mkdir()
        for args in (("init", "-q", "-b", "main"), ("config", "user.name", "t"),
                     ("config", "user.email", "t@orch.invalid")):  # fmt: skip
            subprocess.run(["git", *args], cwd=self.repo, check=True, capture_output=True)
        (self.repo / "app.py").write_text("def main():\n    return 0\n")
        self.layout = Layout(self.repo)
        scaffold(self.layout)
        memory = Memory(
            name="entry-point",
            description="Where the app starts",
            type="reference",
            subject="entry point",
            reason="every change starts there",
            citations=(Citation("app.py"),),
            created="2026-01-01T00:00:00Z",
            updated="2026-01-01T00:00:00Z",
            body="The app starts in `main` in app.py.\n",
        )
        (self.layout.repo_memories / "entry-point.md").write_text(serialize_memory(memory))
        RepoMemoryStore(self.layout).regenerate_index()
        subprocess.run(["git", "add", "-A"], cwd=self.repo, check=True, capture_output=True)
        subprocess.run(
            ["git", "commit", "-q", "-m", "fixture"], cwd=self.repo, check=True, capture_output=True
        )
        self.before = self.outside_state()

    def outside_state(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in self.outside.iterdir()}

    def orch(self, row: Row, *args: str) -> str:
        try:
            done = subprocess.run(
                [ORCH, *args], cwd=self.repo, capture_output=True, text=True, timeout=TIMEOUT
            )
        except subprocess.TimeoutExpired:
            row.hung = True
            return ""
        out = done.stdout + done.stderr
        row.tracebacks += out.count("Traceback")
        row.escaped |= MARKER in out
        return out

    def tool(self, row: Row, name: str, **args: Any) -> str:
        tools = ExecutorTools(
            ProjectRepo(self.layout),
            phase=1,
            trace_id=TRACE,
            policy=PolicyConfig(),
            approvals={},
            tasklist_path=TaskFolder.create(self.layout, "reads").tasklist,
        )
        result = tools.run(ToolCall("reads", name, args))
        row.escaped |= MARKER in result.content
        return result.content

    def search_index(self, row: Row) -> None:
        """The search index must hold nothing from outside (its hits, not the query echoed)."""
        try:
            done = subprocess.run(
                [ORCH, "memory", "search", MARKER, "--json"],
                cwd=self.repo,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            row.hung = True
            return
        row.tracebacks += done.stderr.count("Traceback")
        try:
            hits = json.loads(done.stdout)["hits"]
        except (ValueError, KeyError):
            hits = []
        row.escaped |= any(MARKER in json.dumps(h) for h in hits)

    def finish(self, row: Row) -> None:
        row.escaped |= self.outside_state() != self.before


def _warned(row: Row, out: str, *names: str) -> None:
    row.warnings += [line for line in out.splitlines() if any(n in line for n in names)]


def link_out_in_tree(case: Case, row: Row) -> None:
    (case.repo / "notes.txt").symlink_to(case.outside / "secret.txt")
    found = case.tool(row, "search", pattern="MARKER")
    _warned(row, found, "notes.txt")
    read = case.tool(row, "read_file", path="notes.txt")
    _warned(row, read, "notes.txt")
    case.search_index(row)


def link_out_in_memories(case: Case, row: Row) -> None:
    (case.layout.repo_memories / "leak.md").symlink_to(case.outside / "secret.txt")
    _warned(row, case.orch(row, "memory", "list"), "leak.md")
    case.search_index(row)


def fifo_in_memories(case: Case, row: Row) -> None:
    os.mkfifo(case.layout.repo_memories / "pipe.md")
    _warned(row, case.orch(row, "memory", "list"), "pipe.md")
    case.search_index(row)
    case.orch(row, "memory", "audit", "--no-verify")


def fifo_in_tree(case: Case, row: Row) -> None:
    os.mkfifo(case.repo / "pipe.txt")
    _warned(row, case.tool(row, "search", pattern="anything"), "pipe.txt")
    _warned(row, case.tool(row, "read_file", path="pipe.txt"), "pipe.txt")


def symlink_loop(case: Case, row: Row) -> None:
    (case.layout.repo_memories / "loop.md").symlink_to("loop.md")
    _warned(row, case.orch(row, "memory", "list"), "loop.md")
    case.orch(row, "memory", "audit", "--no-verify")
    case.search_index(row)


def linked_memory_folder(case: Case, row: Row) -> None:
    real = case.layout.repo_memories
    for entry in real.iterdir():
        entry.unlink()
    real.rmdir()
    real.symlink_to(case.outside, target_is_directory=True)
    for args in (
        ("memory", "list"),
        ("memory", "index"),
        ("memory", "add", "--type", "reference", "--subject", "x", "--reason", "y",
         "--cite", "app.py", "--fact", "The app starts in `main`."),
    ):  # fmt: skip
        _warned(row, case.orch(row, *args), "memories/repo")


def huge_memory(case: Case, row: Row) -> None:
    path = case.layout.repo_memories / "huge.md"
    head = "---\nname: huge\ndescription: a huge memory\ntype: project\n---\n"
    with path.open("w") as f:
        f.write(head)
        f.write(("A very long fact about the app. " * 64 + "\n") * 25_000)  # ~50 MB
    started = time.monotonic()
    out = case.orch(row, "memory", "audit", "--no-verify", "--json")
    elapsed = time.monotonic() - started
    try:
        found = [f for f in json.loads(out)["findings"] if f["memory"] == "huge"]
    except (ValueError, KeyError):
        found = []
    row.warnings += [f"{f['kind']}: {f['detail']}" for f in found]
    row.hung |= elapsed > 10.0


CASES: dict[str, Callable[[Case, Row], None]] = {
    "link out in the tree": link_out_in_tree,
    "link out in memories": link_out_in_memories,
    "FIFO in memories": fifo_in_memories,
    "FIFO in the tree": fifo_in_tree,
    "symlink loop": symlink_loop,
    "linked memory folder": linked_memory_folder,
    "huge memory": huge_memory,
}


def reads_table() -> list[dict[str, Any]]:
    rows = []
    for name, run in CASES.items():
        with tempfile.TemporaryDirectory(prefix="orch-reads-") as tmp:
            case = Case(Path(tmp))
            row = Row(name)
            started = time.monotonic()
            run(case, row)
            case.finish(row)
            row.seconds = round(time.monotonic() - started, 2)
            rows.append(row.to_dict())
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    out = [f"{'case':<22} escaped  hung  warnings  seconds  result"]
    for r in rows:
        out.append(
            f"{r['case']:<22} {r['escaped']!s:>7} {r['hung']!s:>5} {len(r['warnings']):>9} "
            f"{r['seconds']:>8}  {'ok' if r['ok'] else 'FAILED'}"
        )
        out += [f"    {w[:110]}" for w in r["warnings"][:3]]
    good = sum(r["ok"] for r in rows)
    out.append(f"\n{good} of {len(rows)} cases: no escape, no hang, a warning each")
    return "\n".join(out)


if __name__ == "__main__":
    table = reads_table()
    print(json.dumps(table, indent=1) if "--json" in sys.argv else render(table))
    sys.exit(0 if all(r["ok"] for r in table) else 1)
