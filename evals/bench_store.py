"""Speed of the store, the CLI start-up and the event log (run on demand, never in tests).

    python -m evals.bench_store [--runs 11] [--big-runs 5] [--files 10000] [--events 100000]
    python -m evals.bench_store --only events     # the event log's figures alone

Every figure is the median of several runs. Start-up and the memory commands run as real
subprocesses of the installed `orch` console script, against `python -c pass` for scale.
Each figure is wall-clock time and CPU time (user + system, of this process and its
children): on a machine shared with other work, CPU time is the steadier of the two.
"cold" means no parse cache (`.orch/cache.sqlite` deleted before each run); "warm" means
the cache holds every file. The memory files are written, then left to age past the
cache's racy window (2 s) before anything is timed.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evals.bytecode import compile_package
from orchestrator.events.chain import GENESIS, line_hash, seal
from orchestrator.events.keys import load_key
from orchestrator.events.log import Event, EventLog, read_events
from orchestrator.events.verify import verify_log
from orchestrator.store.index import render_index
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory, serialize_memory
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.scaffold import scaffold

ORCH = Path(sys.executable).with_name("orch")
TYPES = ("user", "feedback", "project", "reference")


def cpu_now() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def median_time(
    fn: Callable[[], object], runs: int, before: Callable[[], object] | None = None
) -> tuple[float, float]:
    """(median wall seconds, median CPU seconds) of `runs` calls of `fn`."""
    walls, cpus = [], []
    for _ in range(runs):
        if before is not None:
            before()
        cpu, start = cpu_now(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(cpu_now() - cpu)
    return statistics.median(walls), statistics.median(cpus)


# Commands run as a user runs them: with byte-code caches (a session that sets
# PYTHONDONTWRITEBYTECODE would otherwise compile every orch module on every start).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_cmd(args: list[str], cwd: Path) -> Callable[[], None]:
    def go() -> None:
        subprocess.run(
            args,
            cwd=cwd,
            env=ENV,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )

    return go


def make_repo(where: Path, files: int) -> Layout:
    where.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=where, check=True)
    layout = Layout(where)
    scaffold(layout)
    (where / "README.md").write_text("# bench\n" * 50)
    for i in range(files):
        kind = TYPES[i % 4]
        memory = Memory(
            name=f"memory-{i:05d}",
            description=f"Fact {i}: how part {i % 97} of the build behaves",
            type=kind,
            body=f"Part {i % 97} of the build runs step {i} before packaging.\n\n**Why:** bench.\n",
            subject=f"build part {i}",
            reason="Every phase gate depends on it",
            citations=(Citation("README.md", 1 + i % 50),)
            if kind in ("project", "reference")
            else (),
            created="2026-11-21T10:00:00Z",
            updated="2026-11-21T10:00:00Z",
            source={"task": "bench", "phase": 1 + i % 5},
        )
        (layout.repo_memories / f"{memory.name}.md").write_text(serialize_memory(memory))
    return layout


def event_line(i: int) -> str:
    return Event(
        ts="2026-11-21T10:00:00.123Z",
        trace_id="0b0e7a52-7d4c-4b8e-9a3f-2f0e6b7c9d10",
        task="bench",
        agent="Executor",
        phase=1 + i % 5,
        event_type="tool_call",
        payload={
            "tool": "shell",
            "command": f"pytest -q tests/test_{i}.py",
            "exit_code": 0,
            "ms": i % 900,
        },
    ).to_line()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="orch store benchmarks")
    parser.add_argument("--runs", type=int, default=11, help="runs for start-up figures")
    parser.add_argument("--big-runs", type=int, default=5, help="runs for the 10,000-file figures")
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--appends", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument(
        "--only", choices=("all", "events"), default="all", help="events: the event log alone"
    )
    args = parser.parse_args(argv)
    compile_package()
    if not ORCH.exists():
        print(f"no console script at {ORCH}: run `make test` (it installs the package) first")
        return 2

    rows: list[tuple[str, float, float, str, str]] = []  # what, wall, cpu, target, verdict

    def row(what: str, t: tuple[float, float], target: float | None = None, note: str = "") -> None:
        wall, cpu = t
        verdict = "" if target is None else ("met" if wall < target else "MISSED")
        shown = f"< {target * 1000:.0f} ms" if target is not None else ""
        rows.append((what, wall, cpu, shown, f"{verdict} {note}".strip()))
        print(f"  {what}: {wall * 1000:.1f} ms wall, {cpu * 1000:.1f} ms CPU", flush=True)

    import orchestrator

    compileall.compile_dir(Path(orchestrator.__file__).parent, quiet=1)  # the .pyc a user has
    tmp = Path(tempfile.mkdtemp(prefix="orch-bench-"))
    try:
        load = os.getloadavg()[0]
        print(
            f"orch benchmarks: Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {load:.2f}"
        )
        # The event log's key and head records go to a state folder of the bench's own.
        os.environ["ORCH_STATE_DIR"] = str(tmp / "state")
        if args.only == "all":
            store_figures(args, tmp, row)
        event_figures(args, tmp, row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    width = max(len(r[0]) for r in rows)
    print()
    print(
        f"load average after the run: {os.getloadavg()[0]:.2f}; medians of {args.runs} runs "
        f"(start-up) and {args.big_runs} runs (10,000 files, reads)"
    )
    print(f"{'what':<{width}}  {'wall':>10}  {'CPU':>10}  {'target':>9}  result")
    print(f"{'-' * width}  {'-' * 10}  {'-' * 10}  {'-' * 9}  ------")
    for what, wall, cpu, target, verdict in rows:
        print(
            f"{what:<{width}}  {wall * 1000:>7.1f} ms  {cpu * 1000:>7.1f} ms  {target:>9}  {verdict}"
        )
    return 0


Row = Callable[..., None]


def store_figures(args: argparse.Namespace, tmp: Path, row: Row) -> None:
    small = make_repo(tmp / "small", 20)
    time.sleep(2.2)  # past the parse cache's racy window
    run_cmd([str(ORCH), "memory", "list"], small.root)()  # fill the cache
    python = median_time(run_cmd([sys.executable, "-c", "pass"], small.root), args.runs)
    row("python -c pass", python)
    for cmd in (["--help"], ["memory", "list"]):
        t = median_time(run_cmd([str(ORCH), *cmd], small.root), args.runs)
        row(f"orch {' '.join(cmd)} (20 memories)", t, 0.150, f"{t[0] / python[0]:.1f}x python")

    print(f"writing {args.files} memory files...", flush=True)
    big = make_repo(tmp / "big", args.files)
    time.sleep(2.2)
    cache = big.cache / "cache.sqlite"

    def drop_cache() -> None:
        cache.unlink(missing_ok=True)

    def drop_index() -> None:
        big.memory_index.unlink(missing_ok=True)

    def drop_both() -> None:
        drop_cache()
        drop_index()

    n = f"{args.files:,}"
    list_json = run_cmd([str(ORCH), "memory", "list", "--json"], big.root)
    index = run_cmd([str(ORCH), "memory", "index"], big.root)
    row(
        f"orch memory list --json, {n} files, cold",
        median_time(list_json, args.big_runs, drop_cache),
        1.0,
    )
    list_json()  # fill the cache
    row(f"orch memory list --json, {n} files, warm", median_time(list_json, args.big_runs), 1.0)
    row(f"orch memory index, {n} files, cold", median_time(index, args.big_runs, drop_both), 1.0)
    list_json()
    row(
        f"orch memory index, {n} files, warm",
        median_time(index, args.big_runs, drop_index),
        1.0,
    )
    memories = RepoMemoryStore(big).load_all().memories
    row(
        f"render_index alone, {n} memories",
        median_time(lambda: render_index(memories), args.runs),
    )


def event_figures(args: argparse.Namespace, tmp: Path, row: Row) -> None:
    log_path = tmp / "append" / "bench.ndjson"
    log = EventLog(log_path, "bench")
    payload = {"tool": "shell", "command": "pytest -q", "exit_code": 0}

    def appends() -> None:
        for _ in range(args.appends):
            log.append("tool_call", payload, agent="Executor", phase=1)

    t = median_time(appends, 1)
    assert len(read_events(log_path).events) == args.appends
    row(
        f"append {args.appends:,} events, one fsync each (1 run)",
        t,
        note=f"{t[0] / args.appends * 1e6:.0f} us/event",
    )

    read_path = tmp / "read" / "bench.ndjson"
    read_path.parent.mkdir()
    read_path.write_text("".join(event_line(i) for i in range(args.events)))
    got = read_events(read_path)
    assert len(got.events) == args.events and not got.problems
    t = median_time(lambda: read_events(read_path), args.big_runs)
    row(f"read back {args.events:,} events", t, note=f"{t[0] / args.events * 1e6:.1f} us/event")
    t = median_time(lambda: read_events(read_path, check=True), 1)
    row(f"read back {args.events:,} events, schema-checked (1 run)", t)

    signed_path = tmp / "signed" / "bench.ndjson"
    signed_path.parent.mkdir()
    key = load_key()
    assert key is not None
    with signed_path.open("wb") as fh:
        prev = GENESIS
        for i in range(args.events):
            line, _ = seal(json.loads(event_line(i)), prev, key)
            fh.write(line)
            prev = line_hash(line[:-1])
    t = median_time(lambda: read_events(signed_path), args.big_runs)
    row(f"read back {args.events:,} signed events", t)
    assert verify_log(signed_path, task="bench").ok
    t = median_time(lambda: verify_log(signed_path, task="bench"), args.big_runs)
    row(
        f"verify {args.events:,} signed events (orch log --check, status, resume)",
        t,
        note=f"{t[0] / args.events * 1e6:.1f} us/event",
    )


if __name__ == "__main__":
    sys.exit(main())
