"""Two real processes writing at once lose nothing: memories, the index, the event log."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

from foundation_helpers import ORCH

from orchestrator.events.log import EventLog, read_events
from orchestrator.memory.writer import MemoryWriter
from orchestrator.store.index import render_index
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory
from orchestrator.store.repo import RepoMemoryStore

ROUNDS = 12


def fact(worker: int, i: int) -> str:
    return f"Worker {worker} wrote entry {i} with marker w{worker}e{i}."


def test_two_processes_running_orch_memory_add_lose_nothing(layout: Layout) -> None:
    script = (
        'for i in $(seq 1 {n}); do "{orch}" memory add --type user --subject "w{w} entry $i" '
        '--reason "concurrency test" --fact "Worker {w} wrote entry $i with marker w{w}e$i." '
        "> /dev/null || exit 1; done"
    )
    workers = [
        subprocess.Popen(
            ["bash", "-c", script.format(n=ROUNDS, orch=ORCH, w=w)],
            cwd=layout.root,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in (1, 2)
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
    result = RepoMemoryStore(layout).load_all()
    assert result.problems == [] or {p.severity for p in result.problems} == {"warning"}
    facts = sorted(m.fact for m in result.memories)
    assert facts == sorted(fact(w, i) for w in (1, 2) for i in range(1, ROUNDS + 1))
    assert layout.memory_index.read_text() == render_index(result.memories)
    leftovers = [p.name for p in layout.repo_memories.iterdir() if p.name.startswith(".")]
    assert leftovers == []  # no temp file left behind


def _add_many(root: str, worker: int, count: int) -> None:
    writer = MemoryWriter(Layout(Path(root)))
    for i in range(count):
        writer.add(
            Memory(
                name=f"w{worker}-m{i}",
                description=f"entry {i} of worker {worker}",
                type="feedback",
                body=fact(worker, i) + "\n",
                subject=f"worker {worker} entry {i}",
                reason="concurrency test",
            )
        )


def test_two_processes_adding_through_the_writer_keep_the_index_whole(layout: Layout) -> None:
    count = 40
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_add_many, args=(str(layout.root), w, count)) for w in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    result = RepoMemoryStore(layout).load_all()
    assert len(result.memories) == 2 * count
    index = layout.memory_index.read_text()
    assert index == render_index(result.memories)
    assert all(f"[w{w}-m{i}]" in index for w in (1, 2) for i in range(count))


def _append_many(path: str, worker: int, count: int) -> None:
    log = EventLog(Path(path), "t")
    for i in range(count):
        log.append("tool_call", {"worker": worker, "i": i, "pad": "x" * (i * 37 % 3000)})


def test_two_processes_appending_events_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "t.ndjson"
    EventLog(path, "t").append("state_change", {"to": "ACTING"})
    count = 300
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(str(path), w, count)) for w in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    result = read_events(path, check=True)
    assert result.problems == []
    for w in (1, 2):
        mine = [e.payload["i"] for e in result.events if e.payload.get("worker") == w]
        assert mine == list(range(count))  # all there, in each writer's order
    assert len({e.trace_id for e in result.events}) == 1


def test_a_killed_writer_never_leaves_a_half_written_memory(layout: Layout) -> None:
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from orchestrator.store import fs\n"
        "real = os.replace\n"
        "def die(a, b):\n"
        "    os._exit(9)  # killed between writing the temp file and renaming it\n"
        "fs.os.replace = die\n"
        "fs.atomic_write(Path(sys.argv[1]), 'new content')\n"
    )
    target = layout.repo_memories / "x.md"
    target.write_text("old content")
    proc = subprocess.run([sys.executable, "-c", code, str(target)], check=False)
    assert proc.returncode == 9
    assert target.read_text() == "old content"
    assert os.path.exists(target)
