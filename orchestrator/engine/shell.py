"""Shell commands for the executor and the gates: the policy, and running in the sandbox.

The policy (`classify`, `allowed`; `orchestrator.engine.risk`) names the commands that must
wait at the HIGH_RISK_APPROVAL_GATE. `run_command` runs a command line with `/bin/sh` in
the project's sandbox (`orchestrator.sandbox`; `sandbox_for` builds it from the layout and
`[policy]`), with a time limit and an output cap: the command is its own session, and its
whole process group is killed when it ends or when the time runs out. While it runs it is
recorded under orch's cache folder, so that a later orch process kills it if this one
dies first (`kill_leftovers`, at the start of every run and at every phase's end).
"""

from __future__ import annotations

import codecs
import os
import select
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from orchestrator.config import PolicyConfig
from orchestrator.engine.risk import Risk, allowed, classify
from orchestrator.sandbox import RunRecords, Sandbox, kill_group, mode_of, start_time
from orchestrator.store.layout import Layout

EXIT_GRACE = 0.2  # seconds to read what is left once the command has exited
__all__ = ["Risk", "ShellResult", "allowed", "classify", "run_command", "sandbox_for"]


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


def _read_until(
    proc: subprocess.Popen[bytes],
    out: _Output,
    deadline: float,
    on_output: Callable[[str], None] | None,
) -> bool:
    """Read the command's output until it closes or `deadline`; False at the deadline.
    Once the command itself has exited, whatever it left holding the pipe is not waited for.
    Each piece read is also given, decoded, to `on_output`."""
    assert proc.stdout is not None
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
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
            if on_output is not None:
                on_output(decoder.decode(chunk))


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
    on_output: Callable[[str], None] | None = None,
) -> ShellResult:
    """Run `command` with a shell in `cwd`, inside `sandbox`; never raises for the
    command's own failure (SandboxUnavailable when the sandbox cannot run here).

    The command runs as a new session; its whole process group is killed when it ends or
    when the time runs out, and it is recorded under orch's cache folder while it runs, so
    that a later orch process kills it if this one dies first. `on_output` is given what the
    command prints as it prints it (a live display)."""
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
        finished = _read_until(proc, out, started + timeout, on_output)
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
