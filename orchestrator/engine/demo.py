"""`orch demo`: the whole workflow on the bundled sample project, with the scripted model.

The sample (`orchestrator/sample/repo`) is a small Python project whose test suite has a
failing test; `orchestrator/sample/script.yaml` scripts the model. The demo copies the
sample to a folder of its own, makes it a git repository, and runs real `orch` processes
on it: `orch run` (plan, audit with one revision, stop for approval), `orch approve`
(which is killed with SIGKILL in the middle of phase 2, as a crash or a context reset
would stop it), then `orch resume`, which finishes the task from the event log.

With `executor="claude-code"` the phases are carried out by Claude Code's real CLI: the
demo starts the scripted Messages API server (`orchestrator.models.messages_server`, its
replies from `orchestrator/sample/claude_code.yaml`) on 127.0.0.1 and points the CLI at it
(`ANTHROPIC_BASE_URL`, a dummy key); the text roles keep the scripted model. The kill
comes after phase 2's third tool result, in the middle of the Claude Code session.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from orchestrator.engine.status import statuses
from orchestrator.models.claude_code import require_cli
from orchestrator.models.messages_server import Conversations, MessagesServer
from orchestrator.sandbox import bwrap_installed
from orchestrator.store.layout import Layout
from orchestrator.store.scaffold import scaffold

TASK = (
    "Count contractions and hyphenated words as one word (the failing test), then add "
    "a --top N option that prints the most frequent words"
)
# Killed in phase 2 after its 8th tool call (the task list was just updated), before
# that step was checkpointed.
KILL_AT = "tool.after@8#2"
KILL_CLAUDE_CODE_AT = "tool.after@3#2"  # after phase 2's third tool result, mid-session
GIT_IDENTITY = (("user.name", "orch demo"), ("user.email", "demo@orch.invalid"))


@contextlib.contextmanager
def sample_paths() -> Iterator[tuple[Path, Path]]:
    """(the sample repository, the model script) as real paths."""
    with sample_folder() as sample:
        yield sample / "repo", sample / "script.yaml"


@contextlib.contextmanager
def sample_folder() -> Iterator[Path]:
    with resources.as_file(resources.files("orchestrator").joinpath("sample")) as sample:
        yield sample


def orch_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "orchestrator.cli", *args]


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return out.stdout


# Where bubblewrap is missing the sample still runs, without the sandbox, and says so.
NO_SANDBOX = (
    "\n# bubblewrap (bwrap) is not installed here: the sample runs its commands unsandboxed.\n"
    '[policy]\nsandbox = "off"\n'
)


def prepare_repo(dest: Path, sample: Path, *, python: str = sys.executable) -> Path:
    """Copy the sample to `dest`, configure its gates, `orch init` it, commit it."""
    shutil.copytree(sample, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    py = shlex.quote(python)
    (dest / "orch.toml").write_text(
        "# The phase gates of this sample (the interpreter that runs orch runs them too).\n"
        f'test_command = "{py} -m unittest discover -s tests -t ."\n'
        f'lint_command = "{py} tools/lint.py"\n' + ("" if bwrap_installed() else NO_SANDBOX),
        encoding="utf-8",
    )
    git(dest, "init", "-q", "-b", "main")
    for key, value in GIT_IDENTITY:
        git(dest, "config", key, value)
    scaffold(Layout(dest))
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "Initial commit: the wordstats sample")
    return dest


@dataclass
class DemoResult:
    repo: Path
    slug: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    status: dict[str, Any] = field(default_factory=dict)
    commits: list[str] = field(default_factory=list)
    memories: list[str] = field(default_factory=list)


class Demo:
    def __init__(
        self,
        where: Path,
        *,
        say: Callable[[str], None],
        quiet: bool = False,
        executor: str = "orch",
    ) -> None:
        self.where = where
        self.say = say
        self.quiet = quiet  # capture the orch processes' output instead of showing it
        self.executor = executor
        self.api: dict[str, str] = {}  # where Claude Code finds the scripted server

    def orch(self, result: DemoResult, name: str, *args: str, fault: str | None = None) -> int:
        env = {k: v for k, v in os.environ.items() if k != "ORCH_FAULT"}
        env.update(self.api)
        if fault:
            env["ORCH_FAULT"] = fault
        self.say(f"\n$ orch {' '.join(shlex.quote(a) for a in args)}")
        proc = subprocess.run(
            orch_command(*args), cwd=result.repo, env=env, capture_output=self.quiet, text=True
        )
        result.steps.append({"step": name, "args": list(args), "exit_code": proc.returncode})
        return proc.returncode

    def run(self) -> DemoResult:
        if self.executor != "claude-code":
            return self._run()
        require_cli()
        with sample_folder() as folder:
            replies = Conversations.from_file(folder / "claude_code.yaml", self.where.resolve())
        server = MessagesServer(replies).start()
        self.api = {
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "dummy-key-for-the-local-server",
        }
        try:
            return self._run()
        finally:
            server.stop()

    def _run(self) -> DemoResult:
        claude = self.executor == "claude-code"
        with sample_paths() as (sample, script):
            self.say("orch demo: the whole workflow on a small sample project.")
            self.say(
                f"The model is SCRIPTED: its replies come from {script}; no API key "
                "and no network are used."
            )
            result = DemoResult(prepare_repo(self.where, sample))
            self.say(f"The sample is a git repository at {result.repo}; one of its tests fails.")
            if not bwrap_installed():
                self.say(
                    "bubblewrap (bwrap) is not installed: the sample runs without the sandbox "
                    "(see docs/security.md; `apt-get install bubblewrap` on Debian/Ubuntu)."
                )
            model = f"scripted:{script}"

            self.say(
                "\n1. Plan and audit: the auditor asks for one revision; the run stops "
                "for the plan's approval."
            )
            if claude:
                self.say(
                    "The phases are carried out by Claude Code's CLI, in orch's sandbox, "
                    "against a local scripted Messages API server (no key, no network)."
                )
            executor = ("--executor", self.executor) if claude else ()
            self.orch(result, "run", "run", TASK, "--model", model, "--quiet-tools", *executor)
            layout = Layout(result.repo)
            rows = statuses(layout)
            if not rows:
                raise DemoFailed("the run created no task")
            result.slug = rows[0]["task"]

            self.say(
                "\n2. Approve: phase 1 fails its real test gate once and is fixed on the "
                "retry; in the middle of phase 2 the orch process is killed (SIGKILL), "
                "as a crash or a context reset would stop it."
            )
            kill = KILL_CLAUDE_CODE_AT if claude else KILL_AT
            code = self.orch(result, "approve", "approve", result.slug, fault=kill)
            self.say(
                f"\nThe orch process ended with exit code {code}"
                + (
                    " (killed by SIGKILL): nothing is lost, the event log has every decision."
                    if code == -9
                    else "."
                )
            )

            self.say(
                "\n3. Resume: the state is rebuilt from the event log, phase 2 restarts "
                "from its last checkpoint, and the task completes."
            )
            self.orch(result, "resume", "resume", result.slug)

            result.status = next(r for r in statuses(layout) if r["task"] == result.slug)
            result.commits = git(result.repo, "log", "--format=%h %s").splitlines()
            result.memories = sorted(
                p.name for p in layout.repo_memories.glob("*.md") if p.name != "MEMORY.md"
            )
        return result


class DemoFailed(Exception):
    pass
