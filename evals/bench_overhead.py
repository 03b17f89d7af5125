"""orch's own overhead: the executor's snapshot a step, and `orch status` / `orch log`.

    python -m evals.bench_overhead [--files 50000] [--runs 11] [--json]
    python -m evals.bench_overhead --only snapshot     # or: --only cli

Every figure is the median of several runs, as wall-clock time and CPU time (user +
system, of this process and its children): on a machine shared with other work, CPU time
is the steadier of the two.

- snapshot: a git repository of `--files` files (100 a folder, committed, orch's folders
  scaffolded) in a temp folder. Before each timed run one project file is rewritten, as an
  executor step would; then `ProjectRepo.snapshot()` (in this process, its git commands as
  subprocesses) is timed against `git status --porcelain` on the same tree. "first" is the
  first snapshot a process takes with no kept index (after a crash that lost it, or on a
  new clone). Target: a step's snapshot <= 2 x `git status`.
- cli: `orch demo` builds a finished task; `orch status` and `orch log SLUG` are timed as
  subprocesses of the installed console script against `python -c pass`. Target: < 150 ms.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from evals.bench_store import ENV, ORCH, median_time, run_cmd
from orchestrator.engine.vcs import ProjectRepo
from orchestrator.store.layout import Layout
from orchestrator.store.scaffold import scaffold

PER_FOLDER = 100


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, stdout=subprocess.DEVNULL)


def make_repo(where: Path, files: int) -> Layout:
    """`files` small source files, 100 a folder, committed; then a few changes, as a task
    under way has: modified, added and deleted files."""
    where.mkdir(parents=True)
    git(where, "init", "-q")
    git(where, "config", "user.email", "bench@example.com")
    git(where, "config", "user.name", "bench")
    layout = Layout(where)
    scaffold(layout)
    for i in range(files):
        folder = where / "src" / f"pkg{i // PER_FOLDER:04d}"
        if i % PER_FOLDER == 0:
            folder.mkdir(parents=True)
        (folder / f"mod{i % PER_FOLDER:03d}.py").write_text(
            f'"""Module {i}."""\n\n\ndef f{i}(x: int) -> int:\n    return x + {i}\n'
        )
    git(where, "add", "-A")
    git(where, "commit", "-q", "-m", "bench")
    for i in range(0, files, max(1, files // 20)):  # 20 modified
        path = where / "src" / f"pkg{i // PER_FOLDER:04d}" / f"mod{i % PER_FOLDER:03d}.py"
        path.write_text(path.read_text() + "# changed\n")
    for i in range(10):
        (where / "src" / f"new{i}.py").write_text(f"NEW = {i}\n")
    (where / "src" / "pkg0000" / "mod001.py").unlink()
    git(where, "status", "--porcelain")  # the user's index refreshed once, as after any status
    return layout


def snapshot_figures(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    print(f"writing {args.files:,} files...", flush=True)
    layout = make_repo(tmp / "snap", args.files)
    root = layout.root
    step_file = root / "src" / "pkg0000" / "mod000.py"
    counter = iter(range(10**9))

    def step() -> None:  # what an executor step does between two snapshots
        step_file.write_text(f"STEP = {next(counter)}\n")

    status = median_time(run_cmd(["git", "status", "--porcelain"], root), args.runs, step)
    repo = ProjectRepo(layout)
    repo.snapshot()  # the index kept between steps exists from here on
    warm = median_time(repo.snapshot, args.runs, step)
    kept = getattr(repo, "snapshot_index", None)

    def lose_index() -> None:
        step()
        if kept is not None:
            Path(kept).unlink(missing_ok=True)

    first = median_time(lambda: ProjectRepo(layout).snapshot(), max(3, args.runs // 3), lose_index)
    figures = {
        "files": args.files,
        "git_status_ms": round(status[0] * 1000, 1),
        "git_status_cpu_ms": round(status[1] * 1000, 1),
        "snapshot_ms": round(warm[0] * 1000, 1),
        "snapshot_cpu_ms": round(warm[1] * 1000, 1),
        "snapshot_first_ms": round(first[0] * 1000, 1),
        "snapshot_first_cpu_ms": round(first[1] * 1000, 1),
        "ratio": round(warm[0] / status[0], 2),
        "ratio_cpu": round(warm[1] / status[1], 2),
        "target_ratio": 2.0,
    }
    figures["met"] = figures["ratio"] <= 2.0
    return figures


def cli_figures(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    demo = tmp / "demo"
    print("running orch demo for a finished task...", flush=True)
    out = subprocess.run(
        [str(ORCH), "demo", "--dir", str(demo), "--json"],
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    slug = json.loads(out.stdout)["task"]
    python = median_time(run_cmd([sys.executable, "-c", "pass"], demo), args.runs)
    figures: dict[str, Any] = {
        "python_ms": round(python[0] * 1000, 1),
        "python_cpu_ms": round(python[1] * 1000, 1),
        "target_ms": 150,
    }
    for name, cmd in (("status", ["status"]), ("log", ["log", slug])):
        run = run_cmd([str(ORCH), *cmd], demo)
        run()  # byte-code and caches as a user has them
        t = median_time(run, args.runs)
        figures[name] = {
            "command": f"orch {' '.join(cmd)}",
            "ms": round(t[0] * 1000, 1),
            "cpu_ms": round(t[1] * 1000, 1),
            "ratio": round(t[0] / python[0], 1),
            "ratio_cpu": round(t[1] / python[1], 1),
            "met": t[0] < 0.150,
        }
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="orch's own overhead")
    parser.add_argument("--files", type=int, default=50_000, help="files in the snapshot repo")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--only", choices=("all", "snapshot", "cli"), default="all")
    parser.add_argument("--json", action="store_true", help="one JSON object, nothing else")
    args = parser.parse_args(argv)
    if not ORCH.exists():
        print(f"no console script at {ORCH}: run `make test` (it installs the package) first")
        return 2
    import orchestrator

    compileall.compile_dir(Path(orchestrator.__file__).parent, quiet=1)  # the .pyc a user has
    tmp = Path(tempfile.mkdtemp(prefix="orch-overhead-"))
    result: dict[str, Any] = {"load_before": round(os.getloadavg()[0], 2)}
    say = (lambda *a, **k: None) if args.json else print
    try:
        os.environ["ORCH_STATE_DIR"] = str(tmp / "state")
        ENV["ORCH_STATE_DIR"] = str(tmp / "state")
        if args.only in ("all", "snapshot"):
            result["snapshot"] = snapshot_figures(args, tmp)
        if args.only in ("all", "cli"):
            result["cli"] = cli_figures(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result["load_after"] = round(os.getloadavg()[0], 2)
    if args.json:
        print(json.dumps(result))
        return 0
    say(f"\nmedians of {args.runs} runs; load {result['load_before']} -> {result['load_after']}")
    if "snapshot" in result:
        s = result["snapshot"]
        say(f"snapshot, {s['files']:,} files (target: <= 2 x git status)")
        say(
            f"  git status --porcelain  {s['git_status_ms']:>8} ms  {s['git_status_cpu_ms']:>8} CPU"
        )
        say(f"  snapshot, a step        {s['snapshot_ms']:>8} ms  {s['snapshot_cpu_ms']:>8} CPU")
        say(
            f"  snapshot, first         {s['snapshot_first_ms']:>8} ms  "
            f"{s['snapshot_first_cpu_ms']:>8} CPU"
        )
        say(
            f"  ratio {s['ratio']} x git status ({s['ratio_cpu']} x in CPU): "
            + ("met" if s["met"] else "MISSED")
        )
    if "cli" in result:
        c = result["cli"]
        say("orch status / orch log on a finished demo task (target: < 150 ms)")
        say(f"  python -c pass          {c['python_ms']:>8} ms  {c['python_cpu_ms']:>8} CPU")
        for name in ("status", "log"):
            f = c[name]
            say(
                f"  {f['command'][:22]:<22}  {f['ms']:>8} ms  {f['cpu_ms']:>8} CPU  "
                f"{f['ratio']} x python ({f['ratio_cpu']} x CPU): "
                + ("met" if f["met"] else "MISSED")
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
