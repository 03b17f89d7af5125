"""Shell commands for the executor: the high-risk policy, and running with limits.

The policy reads a command line the way a careful reviewer would: split into simple
commands on `;`, `&&`, `||`, `|` and newlines, then each is checked against named rules.
A command that deletes files, force-pushes, rewrites history, runs as another user, or
names a path outside the repository is high risk: it waits at a HIGH_RISK_APPROVAL_GATE
unless a regex in `[tool.orch.policy] allow_high_risk` matches the whole command line.

This is a guard against accidents, not a sandbox: a shell can always hide what it does
(`eval`, a script file). Commands run in the repository root with a time limit and an
output cap; the process group is killed when the time runs out.
"""

from __future__ import annotations

import os
import re
import select
import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from orchestrator.config import PolicyConfig
from orchestrator.sandbox import RunRecords, Sandbox, kill_group, mode_of, start_time
from orchestrator.store.layout import Layout

EXIT_GRACE = 0.2  # seconds to read what is left once the command has exited
SAFE_OUTSIDE = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty")
_SPLIT = re.compile(r"\|\||&&|;|\||\n|(?<!>)&(?![>&])")


@dataclass(frozen=True)
class Risk:
    rule: str
    detail: str


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment, comments=True)
    except ValueError:
        return segment.split()


def _strip_prefixes(words: list[str]) -> list[str]:
    """Drop `env X=1`, `VAR=1`, `command`, `nohup`, `time` in front of the program."""
    while words:
        first = words[0]
        if (
            re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", first)
            or first in ("command", "nohup", "time")
            or first == "env"
        ):
            words = words[1:]
        else:
            break
    return words


def _git_risk(args: list[str]) -> str | None:
    sub = next((a for a in args if not a.startswith("-")), "")
    rest = args[args.index(sub) + 1 :] if sub in args else []
    flags = set(rest)
    if sub == "push" and (
        flags & {"-f", "--force", "--force-with-lease", "--mirror", "--delete", "-d"}
        or any(a.startswith(("+", "--force")) for a in rest)
        or any(a.startswith(":") for a in rest)
    ):
        return "force-push or remote delete"
    if sub == "reset" and "--hard" in flags:
        return "git reset --hard discards work"
    if sub in ("rebase", "filter-branch", "filter-repo", "replace"):
        return f"git {sub} rewrites history"
    if sub == "commit" and "--amend" in flags:
        return "git commit --amend rewrites history"
    if sub == "clean":
        return "git clean deletes untracked files"
    if sub == "rm":
        return "git rm deletes files"
    if sub in ("checkout", "restore") and ("--" in rest or "." in rest or "-f" in flags):
        return f"git {sub} discards changes"
    if sub == "branch" and flags & {"-D", "-d", "--delete", "-M", "-f", "--force"}:
        return "git branch deletes or moves a branch"
    if sub == "tag" and flags & {"-d", "--delete", "-f"}:
        return "git tag deletes a tag"
    if sub == "stash" and flags & {"drop", "clear"}:
        return "git stash drop/clear deletes stashed work"
    if sub in ("reflog", "gc", "prune") and ("expire" in flags or "--prune=now" in flags):
        return "git reflog expire / prune deletes history"
    if sub == "update-ref" and "-d" in flags:
        return "git update-ref -d deletes a ref"
    return None


DELETERS = {"rm", "rmdir", "unlink", "shred", "srm", "wipe"}
AS_ANOTHER_USER = {"sudo", "su", "doas", "pkexec"}


def classify(command: str, root: Path) -> Risk | None:
    """The first high-risk rule `command` breaks, or None when it is ordinary."""
    for segment in _SPLIT.split(command):
        words = _strip_prefixes(_words(segment.strip()))
        if not words:
            continue
        program = os.path.basename(words[0])
        args = words[1:]
        if program in AS_ANOTHER_USER:
            return Risk("privilege", f"`{program}` runs a command as another user")
        if program in DELETERS:
            return Risk("delete", f"`{program}` deletes files")
        if program == "find" and ("-delete" in args or ("-exec" in args and "rm" in args)):
            return Risk("delete", "`find -delete` deletes files")
        if program == "truncate" or (program == "dd" and any(a.startswith("of=") for a in args)):
            return Risk("delete", f"`{program}` overwrites file contents")
        if program == "git":
            reason = _git_risk(args)
            if reason:
                return Risk("history", reason)
        outside = _outside_paths(args, root)
        if outside:
            return Risk("outside", f"`{outside}` is outside the repository")
        if program == "cd" and args and _outside_paths(args[:1], root, cd=True):
            return Risk("outside", f"`cd {args[0]}` leaves the repository")
    if re.search(r">>?\s*(/(?!dev/(null|stdout|stderr)\b)|~)", command):
        return Risk("outside", "a redirection writes outside the repository")
    return None


def _outside_paths(args: list[str], root: Path, *, cd: bool = False) -> str | None:
    real_root = root.resolve()
    for arg in args:
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if value in SAFE_OUTSIDE or value.startswith("-"):
            continue
        if not (value.startswith(("/", "~")) or ".." in Path(value).parts or (cd and value)):
            continue
        candidate = Path(os.path.expanduser(value))
        if value.startswith("/") and not Path("/", *candidate.parts[1:2]).exists():
            continue  # "/api/v1" in a grep pattern is not a path on this machine
        resolved = (candidate if candidate.is_absolute() else real_root / candidate).resolve()
        if resolved != real_root and not resolved.is_relative_to(real_root):
            return value
    return None


def allowed(command: str, policy: PolicyConfig) -> bool:
    return any(re.fullmatch(rx, command.strip()) for rx in policy.allow_high_risk)


@dataclass(frozen=True)
class ShellResult:
    command: str
    exit_code: int | None  # None: killed at the time limit
    output: str  # stdout and stderr interleaved, capped
    duration_ms: int
    timed_out: bool = False
    not_found: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def cap_output(text: str, limit: int, *, cut: int = 0) -> str:
    """Keep the head and the tail of a long output; say how much was cut (`cut`: characters
    dropped before `text` was put together)."""
    if len(text) <= limit and not cut:
        return text
    head = min(limit // 3, len(text))
    tail = min(limit - head, len(text) - head)
    cut += len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[len(text) - tail :]}"


def sandbox_for(layout: Layout, policy: PolicyConfig) -> Sandbox:
    """The sandbox for commands run in `layout`'s tree: orch's records and .git read-only."""
    root = layout.root
    records = (layout.plans, layout.memories, layout.notes, layout.cache, root / ".git")
    return Sandbox(
        root=root,
        read_only=records,
        mode=mode_of(policy.sandbox),
        network=policy.network,
        extra_read_only=policy.sandbox_paths,
        cache=layout.cache,
    )


def kill_leftovers(layout: Layout) -> list[int]:
    """Kill the process groups that commands in `layout`'s tree left running: those of a
    dead orch process (a crash before a resume), and this process's own (a phase's end)."""
    return RunRecords.of(layout.cache).sweep()


class _Output:
    """What a command prints, kept as a head and a tail of at most `keep` bytes each."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > self.keep:
            extra = len(self.tail) - self.keep
            del self.tail[:extra]
            self.dropped += extra

    def text(self, limit: int) -> str:
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if not self.dropped:
            return cap_output(head + tail, limit)
        return cap_output(head + tail, limit, cut=self.dropped)


def _read_until(proc: subprocess.Popen[bytes], out: _Output, deadline: float) -> bool:
    """Read the command's output until it closes or `deadline`; False at the deadline.
    Once the command itself has exited, whatever it left holding the pipe is not waited for."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    exited_at: float | None = None
    while True:
        now = time.monotonic()
        if now >= deadline:
            return False
        if exited_at is None and proc.poll() is not None:
            exited_at = now
        if exited_at is not None and now - exited_at > EXIT_GRACE:
            return True
        ready, _, _ = select.select([fd], [], [], min(deadline - now, 0.05))
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                return True
            out.add(chunk)


def _drain(proc: subprocess.Popen[bytes], out: _Output) -> None:
    """Read what is left in the pipe after the group was killed (briefly: an escaped
    process may still hold it)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    deadline = time.monotonic() + EXIT_GRACE
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            continue
        if not chunk:
            return
        out.add(chunk)


def run_command(
    command: str,
    cwd: Path,
    *,
    timeout: float,
    output_cap: int,
    sandbox: Sandbox,
    on_start: Callable[[], None] | None = None,
) -> ShellResult:
    """Run `command` with a shell in `cwd`, inside `sandbox`; never raises for the
    command's own failure (SandboxUnavailable when the sandbox cannot run here).

    The command runs as a new session; its whole process group is killed when it ends or
    when the time runs out, and it is recorded under orch's cache folder while it runs, so
    that a later orch process kills it if this one dies first."""
    sandbox.check()
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            sandbox.argv(command),
            cwd=cwd,
            env=sandbox.environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return ShellResult(command, 127, f"cannot start the shell: {exc}", 0, not_found=True)
    leader = start_time(proc.pid)
    runs = sandbox.runs
    record = runs.add(proc.pid, command) if runs is not None else None
    out = _Output(max(output_cap, 1) * 2)
    try:
        if on_start is not None:
            on_start()
        finished = _read_until(proc, out, started + timeout)
    finally:
        kill_group(proc.pid, leader)  # what the command left running, or all of it at the limit
        _drain(proc, out)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        if runs is not None:
            runs.remove(record)
    elapsed = int((time.monotonic() - started) * 1000)
    text = out.text(output_cap)
    if not finished:
        text += f"\n[killed after {timeout:g} s]"
    code = proc.returncode if finished else None
    return ShellResult(command, code, text, elapsed, not finished, code == 127)
