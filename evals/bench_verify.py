"""`orch memory verify` over 1,000 memories on a repository of 50,000 files.

Run: `python -m evals.bench_verify` (from the repository root; `--files`, `--memories`,
`--runs` to change the sizes; `--orch PATH` to time another `orch`). It builds a git
repository of 50,000 files, nine tenths of them code spread over Python, TypeScript, Go,
Rust and Java (a class or type with members and a function or two each, small files as
real trees have them), the rest markdown and JSON, and a store of 1,000 memories, each
citing a definition of one file (path, line, symbol) and naming two or three more things
in its body (a function, a `Class.member`, a type; every 50th names one that does not
exist). Then it times `orch memory verify`, as a separate process each time:

- cold: no `.orch/cache.sqlite` at all (no file facts, no results);
- warm: nothing changed since the last run;
- after one code file changed: every result is checked again, the file facts of unchanged
  files come from the cache;
- cold, one code file changed: no cache, and the tree differs from the memories' recorded
  commit, so the claims that fail now (every 50th memory's) are checked again at that
  commit (see `past`: its files are read from git's objects, not checked out).

Each `--orch` starts from the clean tree (the edited file restored), so two of them in one
run are timed on the same scenarios.

Targets: warm under 1 s; cold reported, aimed under 10 s by parsing only the
files that hold a name some claim asks about (one `grep -F -w`), not the whole tree. Each
figure is the median of `--runs` runs (default 3), in wall-clock and in CPU seconds of the
`orch` process (what a loaded machine distorts least), with the number of files whose facts
the cold run computed. It is not a test: CI never runs it.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evals.bytecode import compile_package
from orchestrator.memory.codeindex import FACTS_TABLE
from orchestrator.store.cache import CACHE_FILE
from orchestrator.store.index import render_index
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory, serialize_memory
from orchestrator.store.scaffold import scaffold


@dataclass(frozen=True)
class Source:
    """One generated code file and what it defines."""

    path: str
    text: str
    owner: str  # the class or type
    members: tuple[str, ...]
    function: str
    line: int  # where the owner is defined


def python(i: int) -> Source:
    members = tuple(f"run_{k}" for k in range(3))
    body = "".join(f"    def {m}(self):\n        return {k}\n\n" for k, m in enumerate(members))
    text = (
        f'"""Module {i}."""\n\nclass Handler{i}:\n{body}\ndef load_handler_{i}(x):\n    return x\n'
    )
    return Source(
        f"svc/py{i % 97}/mod_{i}.py", text, f"Handler{i}", members, f"load_handler_{i}", 3
    )


def typescript(i: int) -> Source:
    members = tuple(f"render{k}" for k in range(3))
    body = "".join(f"  {m}(): number {{\n    return {k};\n  }}\n" for k, m in enumerate(members))
    text = (
        f"// Widget {i}\nexport class Widget{i} {{\n{body}}}\n\n"
        f"export function makeWidget{i}(): Widget{i} {{\n  return new Widget{i}();\n}}\n"
    )
    return Source(
        f"web/src/c{i % 89}/widget{i}.ts", text, f"Widget{i}", members, f"makeWidget{i}", 2
    )


def golang(i: int) -> Source:
    members = tuple(f"Start{k}" for k in range(3))
    body = "".join(f"func (s *Service{i}) {m}() error {{\n\treturn nil\n}}\n\n" for m in members)
    text = (
        f"package p{i % 83}\n\ntype Service{i} struct {{\n\tName string\n}}\n\n{body}"
        f"func NewService{i}() *Service{i} {{\n\treturn &Service{i}{{}}\n}}\n"
    )
    return Source(
        f"internal/p{i % 83}/service{i}.go", text, f"Service{i}", members, f"NewService{i}", 3
    )


def rust(i: int) -> Source:
    members = tuple(f"step_{k}" for k in range(3))
    body = "".join(
        f"    pub fn {m}(&self) -> u32 {{\n        {k}\n    }}\n" for k, m in enumerate(members)
    )
    text = (
        f"/// Engine {i}.\npub struct Engine{i} {{\n    pub size: u32,\n}}\n\n"
        f"impl Engine{i} {{\n{body}}}\n\npub fn build_engine_{i}() -> u32 {{\n    {i}\n}}\n"
    )
    return Source(
        f"crates/c{i % 79}/src/engine{i}.rs", text, f"Engine{i}", members, f"build_engine_{i}", 2
    )


def java(i: int) -> Source:
    members = tuple(f"execute{k}" for k in range(3))
    body = "".join(
        f"    public int {m}() {{\n        return {k};\n    }}\n\n" for k, m in enumerate(members)
    )
    text = f"package jobs;\n\npublic class Job{i} {{\n{body}    public static Job{i} createJob{i}() {{\n        return new Job{i}();\n    }}\n}}\n"
    return Source(
        f"src/main/java/jobs/j{i % 73}/Job{i}.java", text, f"Job{i}", members, f"createJob{i}", 3
    )


LANGUAGES: tuple[Callable[[int], Source], ...] = (python, typescript, golang, rust, java)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def build(root: Path, files: int, memories: int, seed: int = 5) -> None:
    rng = random.Random(seed)
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "bench")
    git(root, "config", "user.email", "bench@orch.invalid")
    layout = Layout(root)
    scaffold(layout)
    code = files * 9 // 10
    sources = [LANGUAGES[i % len(LANGUAGES)](i) for i in range(code)]
    for source in sources:
        path = root / source.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source.text)
    for i in range(files - code):
        folder = root / "docs" / f"d{i % 61}"
        folder.mkdir(parents=True, exist_ok=True)
        if i % 2:
            (folder / f"page{i}.md").write_text(f"# Page {i}\n\nSee Widget{i} and Handler{i}.\n")
        else:
            (folder / f"data{i}.json").write_text(f'{{"id": {i}, "name": "item_{i}"}}\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "code")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    written = [remember(n, rng.choice(sources), rng.choice(sources), head) for n in range(memories)]
    for memory in written:
        (layout.repo_memories / f"{memory.name}.md").write_text(serialize_memory(memory))
    layout.memory_index.write_text(render_index(written))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memories")


def remember(n: int, source: Source, other: Source, head: str) -> Memory:
    member = source.members[n % len(source.members)]
    function = f"{source.function}_gone" if n % 50 == 0 else source.function
    fact = (
        f"Fact {n}: `{function}()` builds one; `{source.owner}.{member}` does the work, "
        f"as `{other.owner}` does for its own files."
    )
    return Memory(
        name=f"memory-{n:04d}",
        description=fact[:90],
        type="reference",
        body=fact + "\n",
        subject=f"subject {n}",
        reason="later tasks need it",
        citations=(Citation(source.path, source.line, source.owner),),
        created="2026-10-01T10:00:00Z",
        updated="2026-10-01T10:00:00Z",
        verified={"commit": head, "at": "2026-10-01T10:00:00Z", "result": "ok"},
    )


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], root: Path, before: Callable[[], None]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of one run of `cmd`, after `before()`."""
    before()
    cpu, start = child_cpu(), time.perf_counter()
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.strip()}")
    return wall, child_cpu() - cpu, done.stdout


def facts_rows(root: Path) -> int:
    path = root / ".orch" / CACHE_FILE
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT count(*) FROM entries WHERE tab = ?", (FACTS_TABLE,)).fetchone()
    return int(row[0])


def measure(orch: Path, root: Path, files: int, runs: int) -> None:
    """Time `orch memory verify` cold, warm and after one code file changed."""
    verify = [str(orch), "memory", "verify"]
    cache = root / ".orch" / CACHE_FILE
    edits = iter(range(10**6))

    def cold() -> None:
        cache.unlink(missing_ok=True)

    def nothing() -> None:
        pass

    def edit() -> None:
        path = root / typescript(1).path
        path.write_text(path.read_text() + f"// edited {next(edits)}\n")

    def cold_edit() -> None:
        edit()
        cold()

    git(root, "checkout", "-q", "--", typescript(1).path)  # the clean tree, whoever ran before
    rows = []
    parsed = []
    last = ""
    scenarios = (
        ("cold", cold),
        ("warm", nothing),
        ("one code file changed", edit),
        ("cold, one file changed", cold_edit),
    )
    for label, before in scenarios:
        done = [timed(verify, root, before) for _ in range(runs)]
        if label == "cold":
            parsed.append(facts_rows(root))
            last = done[-1][2].strip().rsplit("\n", 1)[-1]
        rows.append(
            (label, statistics.median(r[0] for r in done), statistics.median(r[1] for r in done))
        )
    print(f"`orch memory verify`, median of {runs} runs ({orch}):")
    for label, wall, cpu in rows:
        print(f"  {label:<24} {wall:6.2f} s  ({cpu:5.2f} CPU-s)")
    print(
        f"  files whose facts the last cold run computed: {parsed[-1]} of {files}; it said: {last}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--memories", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--orch",
        type=Path,
        action="append",
        help="the `orch` to time (repeatable: each on the same repository; default: the one "
        "beside this Python)",
    )
    args = parser.parse_args()
    compile_package()
    tmp = Path(tempfile.mkdtemp(prefix="orch-bench-verify-"))
    try:
        root = tmp / "repo"
        start = time.perf_counter()
        build(root, args.files, args.memories)
        print(
            f"built a repository of {args.files} files and {args.memories} memories in "
            f"{time.perf_counter() - start:.1f} s"
        )
        for orch in args.orch or [Path(sys.executable).with_name("orch")]:
            measure(orch.absolute(), root, args.files, args.runs)
        print(
            f"command: python -m evals.bench_verify; cpu count {os.cpu_count()}, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
