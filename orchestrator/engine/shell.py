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

import contextlib
import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from orchestrator.config import PolicyConfig

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


def cap_output(text: str, limit: int) -> str:
    """Keep the head and the tail of a long output; say how much was cut."""
    if len(text) <= limit:
        return text
    head = limit // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}"


def run_command(
    command: str,
    cwd: Path,
    *,
    timeout: float,
    output_cap: int,
    on_start: Callable[[], None] | None = None,
) -> ShellResult:
    """Run `command` with a shell in `cwd`; never raises for the command's own failure."""
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            command,
            shell=True,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return ShellResult(command, 127, f"cannot start the shell: {exc}", 0, not_found=True)
    if on_start is not None:
        on_start()
    timed_out = False
    try:
        raw, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        raw, _ = proc.communicate()
    elapsed = int((time.monotonic() - started) * 1000)
    text = raw.decode("utf-8", "replace")
    if timed_out:
        text += f"\n[killed after {timeout:g} s]"
    code = None if timed_out else proc.returncode
    not_found = code == 127
    return ShellResult(command, code, cap_output(text, output_cap), elapsed, timed_out, not_found)
