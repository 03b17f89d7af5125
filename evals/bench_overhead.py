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
- cli: `orch demo` builds a finished task; `orch status`, `orch log SLUG`, `orch --help`
  and `orch memory list` are timed as subprocesses of a console script against `python -c
  pass` run by the same interpreter. Target: < 150 ms. Two installs are timed, and each is
  named in the output: this environment's (`make` installs it with `pip install -e`, whose
  import hook every start of Python pays, `python -c pass` included), and a normal `pip
  install .` of the checkout into a virtual environment of its own, as a user has it
  (`--venv DIR` keeps that environment between runs; `--no-install` skips it: its first
  build fetches the dependencies from the package index or pip's cache).
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals.bench_store import ENV, ORCH, median_time, run_cmd
from evals.bytecode import compile_package
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


CHECKOUT = Path(__file__).resolve().parent.parent


def _install_kind(python: Path, cwd: Path) -> str:
    """`editable` when `python` imports orch from this checkout (`pip install -e`, the
    development install), `installed` when from its own site-packages (`pip install .`)."""
    out = subprocess.run(
        [str(python), "-c", "import orchestrator; print(orchestrator.__file__)"],
        cwd=cwd,  # not the checkout, whose folder `python -c` would import from
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return "editable" if Path(out).resolve().is_relative_to(CHECKOUT) else "installed"


def normal_install(where: Path, say: Callable[..., None]) -> Path:
    """A virtual environment at `where` with orch installed as a user installs it:
    `pip install <checkout>` (a built wheel, the dependencies from the package index or
    pip's cache). An environment already there is reused, with orch reinstalled from
    the checkout as it is now. Returns its Python."""
    python = where / "bin" / "python"
    if not python.exists():
        say(f"creating {where} and running pip install {CHECKOUT} (a minute or two)...")
        subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
        pip = [str(python), "-m", "pip", "install", "--quiet", str(CHECKOUT)]
    else:
        say(f"reinstalling orch from {CHECKOUT} into {where}...")
        pip = [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall"]
        pip.append(str(CHECKOUT))
    subprocess.run(pip, check=True, stdout=subprocess.DEVNULL, env=ENV)
    return python


# the commands timed, with their target: `orch --help` and `orch memory list` must stay fast
CLI_COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("status", ("status",)),
    ("log", ("log", "SLUG")),
    ("help", ("--help",)),
    ("memory_list", ("memory", "list")),
)


def install_figures(python: Path, demo: Path, slug: str, runs: int) -> dict[str, Any]:
    """`python -c pass` and each command, run by the console script beside `python`."""
    orch = python.with_name("orch")
    base = median_time(run_cmd([str(python), "-c", "pass"], demo), runs)
    figures: dict[str, Any] = {
        "install": _install_kind(python, demo),
        "python": str(python),
        "python_ms": round(base[0] * 1000, 1),
        "python_cpu_ms": round(base[1] * 1000, 1),
    }
    for name, args in CLI_COMMANDS:
        cmd = [slug if a == "SLUG" else a for a in args]
        run = run_cmd([str(orch), *cmd], demo)
        run()  # byte-code and caches as a user has them
        t = median_time(run, runs)
        figures[name] = {
            "command": f"orch {' '.join(args)}",
            "ms": round(t[0] * 1000, 1),
            "cpu_ms": round(t[1] * 1000, 1),
            "ratio": round(t[0] / base[0], 1),
            "ratio_cpu": round(t[1] / base[1], 1),
            "met": t[0] < 0.150,
        }
    return figures


def cli_figures(args: argparse.Namespace, tmp: Path, say: Callable[..., None]) -> dict[str, Any]:
    demo = tmp / "demo"
    say("running orch demo for a finished task...", flush=True)
    out = subprocess.run(
        [str(ORCH), "demo", "--dir", str(demo), "--json"],
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    slug = json.loads(out.stdout)["task"]
    figures: dict[str, Any] = {"target_ms": 150}
    installs = [("this", Path(sys.executable))]
    if not args.no_install:
        venv = Path(args.venv) if args.venv else tmp / "venv"
        installs.append(("normal", normal_install(venv, say)))
    for key, python in installs:
        figures[key] = install_figures(python, demo, slug, args.runs)
    return figures


def say_cli(c: dict[str, Any], say: Callable[..., None]) -> None:
    say("orch's start-up on a finished demo task (target: < 150 ms)")
    for key in ("this", "normal"):
        if key not in c:
            continue
        f = c[key]
        how = "development, pip install -e" if f["install"] == "editable" else "pip install ."
        say(f"  {f['install']} ({how}): {f['python']}")
        say(f"    python -c pass          {f['python_ms']:>8} ms  {f['python_cpu_ms']:>8} CPU")
        for name, _ in CLI_COMMANDS:
            g = f[name]
            say(
                f"    {g['command'][:22]:<22}  {g['ms']:>8} ms  {g['cpu_ms']:>8} CPU  "
                f"{g['ratio']} x python ({g['ratio_cpu']} x CPU): "
                + ("met" if g["met"] else "MISSED")
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="orch's own overhead")
    parser.add_argument("--files", type=int, default=50_000, help="files in the snapshot repo")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--only", choices=("all", "snapshot", "cli"), default="all")
    parser.add_argument("--json", action="store_true", help="one JSON object, nothing else")
    parser.add_argument(
        "--venv", help="cli: the environment for the normal install (made if missing, kept)"
    )
    parser.add_argument(
        "--no-install", action="store_true", help="cli: time this environment's orch only"
    )
    args = parser.parse_args(argv)
    compile_package()
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
            result["cli"] = cli_figures(args, tmp, say)
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
        say_cli(result["cli"], say)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
