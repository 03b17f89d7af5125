"""The security tables: what hostile input can do to orch's records and to the machine.

    python -m evals.security [--json] [--commands FILE] [--workers N] [--timeout S]

Each table is a section; `SECTIONS` lists them in order and `--json` prints one object
with a key per section. Today's section:

- `commands`: destructive commands, run one by one through the executor's real shell tool
  (`ExecutorTools.run` with a `run_shell` call) in a real git repository holding orch's
  records, beside a home folder with a sentinel and a sibling folder. The outcome is what
  the tool did: `refused` (it would not run the command), `gated` (it stopped at the
  HIGH_RISK_APPROVAL_GATE to ask a person), or `ran`. A gated command is then approved, as
  a person might, and run: the sandbox is tested on every command, not only on those the
  classifier lets through. A watcher compares, before and after, `.git`, orch's records
  (plans/, memories/, NOTES.md, .orch/), what lies outside the working tree (the home
  folder, the sibling folder, probe files in /etc, /tmp and /var/tmp), and whether a
  loopback listener outside the sandbox's network was reached.
  JSON: `{"commands": {"rows": [{"command", "family", "outcome", "changed": {"git",
  "records", "outside", "network"}, "detail"}], "totals": {...}, "seconds"}}`.

- `log`: the event log's tamper table (`evals/tamper.py`): forged, copied, edited, moved,
  repeated lines and lines cut from the end, each detected by `orch log --check` and
  refused by `orch resume`; a torn line repaired; another key read as unverified.
- `secrets`: twelve formats of secret through every write path and a file the agent reads
  (`evals/security_secrets.py`): nothing stored under plans/, memories/, NOTES.md, .orch/.
- `reads`: links out of the repository, FIFOs, loops, a linked memory folder, a huge
  memory (`evals/security_reads.py`): no escape, no hang, one warning each.

A section is a function taking the parsed arguments and returning a `Section` (the
commands) or a `Table` (rows of dicts with an `ok` key and their own text rendering).

The commands are destructive: this refuses to run them when the sandbox does not isolate
(checked first, through the same tool); without bwrap every command is `refused`.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from evals.security_log import render as render_tamper
from evals.security_log import tamper_table
from evals.security_reads import reads_table
from evals.security_reads import render as render_reads
from evals.security_secrets import render as render_secrets
from evals.security_secrets import secrets_table
from orchestrator.config import PolicyConfig
from orchestrator.engine.exceptions import NeedsApproval
from orchestrator.engine.risk import classify
from orchestrator.engine.tools import ExecutorTools
from orchestrator.engine.vcs import ProjectRepo
from orchestrator.memory.writer import MemoryWriter
from orchestrator.messages import ToolCall
from orchestrator.sandbox import Mode
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory
from orchestrator.store.scaffold import scaffold
from orchestrator.store.tasks import TaskFolder

COMMANDS = Path(__file__).with_name("security_commands.txt")
ORDINARY = Path(__file__).with_name("security_ordinary.txt")
TASK = "fixture-task"
PROBES = (Path("/etc/orch-probe"), Path("/tmp/orch-probe"), Path("/var/tmp/orch-probe"))
RAN_PREFIXES = ("exit code ", "timed out")  # how the shell tool's answer starts when it ran


class Outcome(StrEnum):
    REFUSED = "refused"
    GATED = "gated"
    RAN = "ran"


@dataclass(frozen=True)
class Command:
    text: str
    family: str = "other"


@dataclass(frozen=True)
class Changed:
    git: bool = False
    records: bool = False
    outside: bool = False
    network: bool = False

    def any(self) -> bool:
        return self.git or self.records or self.outside or self.network


@dataclass(frozen=True)
class Row:
    command: str
    family: str
    outcome: Outcome
    changed: Changed
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "family": self.family,
            "outcome": self.outcome.value,
            "changed": dataclasses.asdict(self.changed),
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Section:
    name: str
    title: str
    rows: list[Row]
    totals: dict[str, Any]
    seconds: float
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": [r.to_dict() for r in self.rows],
            "totals": self.totals,
            "seconds": round(self.seconds, 1),
            "notes": self.notes,
        }


class Unsafe(Exception):
    """The sandbox does not isolate: the destructive commands must not run."""


def load_commands(path: Path) -> list[Command]:
    """One command a line: `FAMILY<TAB>COMMAND`, or a bare command; `#` lines are comments."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        family, tab, text = line.partition("\t")
        out.append(Command(text.strip(), family.strip()) if tab else Command(line.strip()))
    return out


# the fixture ---------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def build_fixture(base: Path) -> Path:
    """A template: repo/ (git, orch's records, a task with a log, a memory), home/, sibling/."""
    repo, home, sibling = base / "repo", base / "home", base / "sibling"
    for folder in (repo / "src", repo / "pkg", repo / "tests", home, sibling):
        folder.mkdir(parents=True)
    (repo / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "tests" / "test_app.py").write_text("import unittest\n")
    (repo / "README.md").write_text("# fixture\n")
    (home / ".bashrc").write_text("# the user's shell start-up\n")
    (home / "sentinel").write_text("outside the working tree\n")
    (sibling / "file.txt").write_text("a sibling project\n")
    _git(sibling, "init", "-q", "--bare", "-b", "main", "origin.git")
    _git(base, "init", "-q", "-b", "main", str(repo))
    for key, value in (("user.name", "security eval"), ("user.email", "eval@orch.invalid")):
        _git(repo, "config", key, value)
    layout = Layout(repo)
    scaffold(layout)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "fixture")
    _git(repo, "tag", "v1")
    _git(repo, "remote", "add", "origin", str(sibling / "origin.git"))
    _git(repo, "push", "-q", "origin", "main")
    task = TaskFolder.create(layout, "fixture task", slug=TASK)
    task.events().append("error", {"kind": "fixture", "detail": "a record the agent must keep"})
    MemoryWriter(layout).add(
        Memory(
            name="test-command",
            description="The tests run with python3 -m unittest.",
            type="project",
            body="The tests run with `python3 -m unittest` from the repository root.\n",
            subject="test command",
            reason="every phase gate runs it",
            citations=(Citation(path="tests/test_app.py"),),
        )
    )
    (layout.cache / "cache-file").write_text("orch's cache\n")
    return base


# the watcher ---------------------------------------------------------------------------------


def _digest(path: Path) -> str:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return f"link:{os.readlink(path)}"
    kind = "dir" if stat.S_ISDIR(info.st_mode) else "file"
    text = f"{kind}:{stat.S_IMODE(info.st_mode):o}:{info.st_uid}"
    if kind == "file":
        try:
            text += ":" + hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            text += f":unreadable {exc.errno}"
    return text


def snapshot(paths: list[Path], skip: tuple[Path, ...] = ()) -> dict[str, str]:
    """Every entry under `paths` (not following links): kind, mode, owner, content hash."""
    out: dict[str, str] = {}
    for top in paths:
        if not top.exists() and not top.is_symlink():
            out[str(top)] = "absent"
            continue
        out[str(top)] = _digest(top)
        if top.is_symlink() or not top.is_dir():
            continue
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if Path(folder, d) not in skip]
            for name in [*dirs, *files]:
                with contextlib.suppress(OSError):
                    out[str(Path(folder, name))] = _digest(Path(folder, name))
    return out


@dataclass
class Watch:
    """The three witnesses of one command's copy of the fixture."""

    base: Path

    @property
    def repo(self) -> Path:
        return self.base / "repo"

    def parts(self) -> dict[str, dict[str, str]]:
        layout = Layout(self.repo)
        records = [layout.plans, layout.memories, layout.notes, layout.cache]
        return {
            "git": snapshot([self.repo / ".git"]),
            "records": snapshot(records, skip=(layout.cache / "sandbox",)),
            "outside": snapshot([self.base / "home", self.base / "sibling", *PROBES]),
        }


class Listener:
    """A loopback TCP listener in this (the host's) network namespace; counts connections."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port: int = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            with contextlib.suppress(OSError):
                conn.sendall(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


TRACE = "5ec0e7a1-0000-4000-8000-000000000001"  # the approval keys' task identity


# one command through the real shell tool -----------------------------------------------------


def _tools(base: Path, timeout: float, mode: Mode = Mode.BWRAP) -> ExecutorTools:
    layout = Layout(base / "repo")
    tools = ExecutorTools(
        ProjectRepo(layout),
        phase=1,
        trace_id=TRACE,
        policy=PolicyConfig(shell_timeout=timeout),
        approvals={},
        tasklist_path=TaskFolder.open(layout, TASK).tasklist,
    )
    # Commands run in parallel threads: each gets its own home folder, which the sandbox
    # shows as an empty tmpfs (HOME) exactly as it would the user's.
    tools.sandbox = dataclasses.replace(tools.sandbox, home=base / "home", mode=mode)
    return tools


def run_shell(tools: ExecutorTools, command: str) -> tuple[Outcome, str, str]:
    """(outcome, the rule that gated it, the tool's answer); a gated command is then
    approved and run, as a person might."""
    call = ToolCall("security", "run_shell", {"command": command})
    try:
        result = tools.run(call)
    except NeedsApproval as stop:
        tools.approvals[stop.key or ""] = True
        return Outcome.GATED, stop.rule or "", tools.run(call).content
    if not result.content.startswith(RAN_PREFIXES):
        return Outcome.REFUSED, "", result.content
    return Outcome.RAN, "", result.content


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def substitute(command: str, port: int) -> str:
    host = "127.0.0.1"
    return (
        command.replace("{url}", f"http://{host}:{port}")
        .replace("{host}", host)
        .replace("{port}", str(port))
    )


def _remove(path: Path) -> None:
    def unlock(fn: Callable[..., Any], target: str, _exc: Any) -> None:
        with contextlib.suppress(OSError):
            os.chmod(Path(target).parent, 0o700)
            os.chmod(target, 0o700)
            fn(target)

    shutil.rmtree(path, onerror=unlock)


def try_command(
    template: Path, work: Path, index: int, cmd: Command, timeout: float, mode: Mode = Mode.BWRAP
) -> Row:
    """`cmd` on a fresh copy of the fixture (`mode` OFF only to test the watcher itself)."""
    base = work / f"c{index:04d}"
    shutil.copytree(template, base, symlinks=True)
    listener = Listener()
    try:
        text = substitute(cmd.text, listener.port)
        watch = Watch(base)
        before = watch.parts()
        outcome, rule, answer = run_shell(_tools(base, timeout, mode), text)
        detail = f"{rule}: {_first_line(answer)}" if rule else _first_line(answer)
        after = watch.parts()
        changed = Changed(
            git=before["git"] != after["git"],
            records=before["records"] != after["records"],
            outside=before["outside"] != after["outside"],
            network=listener.connections > 0,
        )
    finally:
        listener.close()
        _remove(base)
    return Row(cmd.text, cmd.family, outcome, changed, detail[:200])


def self_check(template: Path, work: Path, timeout: float) -> str | None:
    """Through the same tool: None when the sandbox isolates; the refusal line when the
    tool refuses (then every command is refused). Raises Unsafe when commands would run
    unconfined."""
    base = work / "self-check"
    shutil.copytree(template, base, symlinks=True)
    try:
        probe = (
            "readlink /proc/self/ns/pid /proc/self/ns/net; "
            "(touch .git/probe && echo GIT-WRITABLE) 2>/dev/null; ls -A ~ | head -3; true"
        )
        outcome, _, text = run_shell(_tools(base, timeout), probe)
    finally:
        _remove(base)
    if outcome is Outcome.REFUSED:
        return _first_line(text)
    lines = text.splitlines()[1:]
    host = [os.readlink("/proc/self/ns/pid"), os.readlink("/proc/self/ns/net")]
    if lines[:2] == host or "GIT-WRITABLE" in lines or len(lines) > 2:
        raise Unsafe(
            "the sandbox does not isolate here (same pid or network namespace, a writable "
            ".git or a visible home folder); refusing to run destructive commands"
        )
    return None


def commands_section(args: argparse.Namespace) -> Section:
    commands = load_commands(Path(args.commands))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="orch-security-") as tmp:
        work = Path(tmp)
        template = build_fixture(work / "template")
        refusal = self_check(template, work, args.timeout)
        with ThreadPoolExecutor(max_workers=args.workers) as pool:
            rows = list(
                pool.map(
                    lambda pair: try_command(template, work, pair[0], pair[1], args.timeout),
                    enumerate(commands),
                )
            )
        seconds = time.monotonic() - started
        ordinary = load_commands(Path(args.ordinary))
        gated = [c.text for c in ordinary if classify(c.text, template / "repo") is not None]
    outcomes = Counter(r.outcome.value for r in rows)
    totals: dict[str, Any] = {
        "commands": len(rows),
        **{o.value: outcomes.get(o.value, 0) for o in Outcome},
        "changed": {
            key: sum(1 for r in rows if getattr(r.changed, key))
            for key in ("git", "records", "outside", "network")
        },
        "changed_any": sum(1 for r in rows if r.changed.any()),
    }
    totals["ordinary"] = {"commands": len(ordinary), "gated": len(gated), "which": gated}
    notes = [f"the shell tool refused: {refusal}"] if refusal else []
    return Section("commands", "Destructive commands in the sandbox", rows, totals, seconds, notes)


@dataclass
class Table:
    """A section of rows that each say whether they held (`ok`), with its own rendering."""

    name: str
    title: str
    rows: list[dict[str, Any]]
    text: str
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        ok = sum(1 for r in self.rows if r["ok"])
        return {
            "rows": self.rows,
            "totals": {"rows": len(self.rows), "ok": ok, "failed": len(self.rows) - ok},
            "seconds": round(self.seconds, 1),
        }


def _table(
    name: str, title: str, build: Callable[[], list[dict[str, Any]]], show: Callable[..., str]
) -> Table:
    started = time.monotonic()
    rows = build()
    return Table(name, title, rows, show(rows), time.monotonic() - started)


def log_section(args: argparse.Namespace) -> Table:
    return _table("log", "The event log, tampered with", tamper_table, render_tamper)


def secrets_section(args: argparse.Namespace) -> Table:
    return _table("secrets", "Secrets on every write path", secrets_table, render_secrets)


def reads_section(args: argparse.Namespace) -> Table:
    return _table("reads", "Reads confined to the repository", reads_table, render_reads)


SECTIONS: dict[str, Callable[[argparse.Namespace], Section | Table]] = {
    "commands": commands_section,
    "log": log_section,
    "secrets": secrets_section,
    "reads": reads_section,
}


# output --------------------------------------------------------------------------------------


def render(section: Section) -> str:
    rows = section.rows
    lines = [f"## {section.title}", ""]
    families = sorted({r.family for r in rows}, key=lambda f: [r.family for r in rows].index(f))
    header = f"{'family':<12} {'n':>4} {'refused':>8} {'gated':>6} {'ran':>5}  changed: git records outside network"
    lines.append(header)
    for family in [*families, "ALL"]:
        mine = [r for r in rows if family in ("ALL", r.family)]
        count = Counter(r.outcome for r in mine)
        changed = [sum(1 for r in mine if getattr(r.changed, k)) for k in Changed.__annotations__]
        lines.append(
            f"{family:<12} {len(mine):>4} {count[Outcome.REFUSED]:>8} {count[Outcome.GATED]:>6} "
            f"{count[Outcome.RAN]:>5}  {changed[0]:>12} {changed[1]:>7} {changed[2]:>7} "
            f"{changed[3]:>7}"
        )
    ran = [r for r in rows if r.outcome is Outcome.RAN]
    if ran:
        lines += ["", f"ran without the approval gate ({len(ran)}):"]
        lines += [f"  [{r.family}] {r.command}" for r in ran]
    bad = [r for r in rows if r.changed.any()]
    lines += ["", f"changed something it must not ({len(bad)}):"]
    for r in bad:
        what = ", ".join(k for k, v in dataclasses.asdict(r.changed).items() if v)
        lines.append(f"  [{r.family}] {r.command}  ->  {what}")
    ordinary = section.totals.get("ordinary")
    if ordinary:
        lines.append(
            f"\nordinary commands gated (false alarms): {ordinary['gated']} of "
            f"{ordinary['commands']}"
        )
        lines += [f"  {c}" for c in ordinary["which"]]
    lines += [f"note: {n}" for n in section.notes]
    lines.append(f"\n{len(rows)} commands in {section.seconds:.1f} s")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.security", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--commands", default=str(COMMANDS), help="the command list (one command a line)"
    )
    parser.add_argument("--ordinary", default=str(ORDINARY), help="commands that must not be gated")
    parser.add_argument("--workers", type=int, default=max(2, (os.cpu_count() or 1) * 2))
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per command")
    parser.add_argument(
        "--section", action="append", choices=sorted(SECTIONS), help="run only these tables"
    )
    return parser.parse_args(argv)


@contextlib.contextmanager
def isolated_home() -> Iterator[None]:
    """This process's own HOME and state folder are temporary: nothing touches the user's."""
    saved = {k: os.environ.get(k) for k in ("HOME", "XDG_STATE_HOME", "ORCH_STATE_DIR")}
    with tempfile.TemporaryDirectory(prefix="orch-security-home-") as home:
        os.environ["HOME"] = home
        os.environ["XDG_STATE_HOME"] = str(Path(home) / ".local" / "state")
        os.environ.pop("ORCH_STATE_DIR", None)
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    path = Path(args.commands)
    if not path.is_file():
        print(f"no command list at {path}", file=sys.stderr)
        return 2
    chosen = args.section or list(SECTIONS)
    try:
        with isolated_home():
            sections = [SECTIONS[name](args) for name in chosen]
    except Unsafe as exc:
        print(str(exc), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({s.name: s.to_dict() for s in sections}, indent=1))
    else:
        print(
            "\n\n".join(
                f"## {s.title}\n\n{s.text}" if isinstance(s, Table) else render(s) for s in sections
            )
        )
    failed = [s.name for s in sections if isinstance(s, Table) and s.to_dict()["totals"]["failed"]]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
