"""Claude Code's CLI, headless: where it is, how it runs, what its stream-json says.

`claude-code:<model>` is a model for orch's text roles (planner, auditor, reviewer,
compactor): one `claude -p` call a request, with no tools, its own system prompt replaced
by the request's, the conversation sent on stdin as one prompt; the reply is the final
text, with the usage and the cost the CLI reports. The claude-code executor
(`orchestrator.engine.claude_executor`) runs whole phases with the same `run_stream`.

The CLI is found at `ORCH_CLAUDE_CODE` (a path), else beside orch in its Python environment,
where `make claude-cli` installs the pinned version (`CLAUDE_CODE_VERSION`), else on the
PATH.
Its configuration and sessions live in `CLAUDE_CONFIG_DIR`, which orch points at
`.orch/claude/` in the project, never at the home folder; its non-essential traffic
(telemetry, update checks) is turned off.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.errors import ModelError, UsageError
from orchestrator.messages import Message, Reply, Request, TextBlock, ToolCall, ToolResult, Usage
from orchestrator.models.failures import check_reply, one_line
from orchestrator.sandbox import kill_group, start_time
from orchestrator.tokens import estimate_request

CLAUDE_CODE_VERSION = "2.1.332"  # the version `make claude-cli` installs and tests run
CONFIG_FOLDER = Path(".orch") / "claude"  # CLAUDE_CONFIG_DIR, under the project's root
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
}
MODEL_TIMEOUT = 600.0
Event = dict[str, Any]


class ClaudeCodeMissing(UsageError):
    pass


def installed_cli(version: str = CLAUDE_CODE_VERSION) -> Path:
    """Where `make claude-cli` installs `version`: beside orch, in the Python environment
    orch runs from (`.venv/claude-code/<version>` in a checkout)."""
    return Path(sys.prefix) / "claude-code" / version / "node_modules" / ".bin" / "claude"


def find_cli() -> Path | None:
    """The `claude` program to run, or None when there is none."""
    named = os.environ.get("ORCH_CLAUDE_CODE")
    if named:
        return Path(named) if os.access(named, os.X_OK) else None
    installed = installed_cli()
    if os.access(installed, os.X_OK):
        return installed
    found = shutil.which("claude")
    return Path(found) if found else None


def require_cli() -> Path:
    cli = find_cli()
    if cli is None:
        raise ClaudeCodeMissing(
            "Claude Code's CLI (claude) is not installed: `make claude-cli` installs "
            f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION} beside orch (.venv/claude-code), or "
            "set ORCH_CLAUDE_CODE to a claude program"
        )
    return cli


def cli_environment(config_dir: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env.update(QUIET)
    env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    return env


# running it ----------------------------------------------------------------------------------


@dataclass
class StreamOutcome:
    """What one `claude -p --output-format stream-json` run said."""

    session_id: str = ""
    result: Event | None = None  # the final `result` event
    exit_code: int | None = None
    stderr: str = ""
    timed_out: bool = False
    events: int = 0

    @property
    def text(self) -> str:
        return str((self.result or {}).get("result") or "")

    @property
    def ok(self) -> bool:
        return (
            self.result is not None
            and not self.result.get("is_error")
            and self.result.get("subtype") == "success"
        )

    def problem(self) -> str:
        """One line on why the run failed."""
        if self.timed_out:
            return "Claude Code ran out of time and was stopped"
        if self.result is not None:
            detail = self.result.get("result") or self.result.get("subtype") or "an error"
            return f"Claude Code ended with {one_line(str(detail))[:300]}"
        tail = one_line(self.stderr.strip()[-300:]) if self.stderr.strip() else "no result"
        return f"Claude Code exited with code {self.exit_code}: {tail}"


def run_stream(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    stdin_text: str,
    timeout: float,
    on_event: Callable[[Event], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> StreamOutcome:
    """Run `argv` (a `claude -p ... --output-format stream-json` command line, maybe inside
    the sandbox) as a new process group; every JSON line goes to `on_event`. The whole group
    is killed when the run ends or its time runs out."""
    outcome = StreamOutcome()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    leader = start_time(proc.pid)
    if on_start is not None:
        on_start(proc.pid)

    def expire() -> None:
        outcome.timed_out = True
        kill_group(proc.pid, leader)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    errors: list[str] = []
    reader = threading.Thread(
        target=lambda: errors.append(proc.stderr.read() if proc.stderr else "")
    )
    reader.daemon = True
    reader.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(stdin_text)
            proc.stdin.close()
        for line in proc.stdout:
            event = _parse(line)
            if event is None:
                continue
            outcome.events += 1
            if event.get("session_id") and not outcome.session_id:
                outcome.session_id = str(event["session_id"])
            if event.get("type") == "result":
                outcome.result = event
            if on_event is not None:
                on_event(event)
        proc.wait()
    finally:
        timer.cancel()
        kill_group(proc.pid, leader)  # whatever it left running
        proc.wait()
        reader.join(timeout=5)
    outcome.exit_code = proc.returncode
    outcome.stderr = "".join(errors)
    return outcome


def _parse(line: str) -> Event | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def result_usage(result: Event | None) -> Usage:
    usage = (result or {}).get("usage") or {}
    return Usage(
        int(usage.get("input_tokens") or 0),
        int(usage.get("output_tokens") or 0),
        int(usage.get("cache_read_input_tokens") or 0),
        int(usage.get("cache_creation_input_tokens") or 0),
    )


def result_cost(result: Event | None) -> float | None:
    cost = (result or {}).get("total_cost_usd")
    return round(float(cost), 6) if isinstance(cost, int | float) else None


def result_model(result: Event | None, default: str) -> str:
    models = (result or {}).get("modelUsage") or {}
    return next(iter(models), default) if isinstance(models, dict) else default


# the text model -------------------------------------------------------------------------------


def prompt_of(messages: list[Message]) -> str:
    """The conversation as one prompt: a lone user message as it is, else every turn
    marked with who spoke (tool calls and results as text: the model has no tools here)."""
    if len(messages) == 1 and messages[0].role == "user":
        return messages[0].text
    turns: list[str] = []
    for message in messages:
        parts: list[str] = []
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolCall):
                parts.append(f"[tool call {block.name}: {json.dumps(block.input)}]")
            elif isinstance(block, ToolResult):
                parts.append(f"[tool result]\n{block.content}")
        turns.append(f"<{message.role}>\n" + "\n".join(parts) + f"\n</{message.role}>")
    return "\n\n".join(turns) + "\n\nAnswer as the assistant's next turn."


@dataclass
class ClaudeCodeModel:
    """`claude-code:<model>`: one headless Claude Code call a request, with no tools."""

    model_id: str
    root: Path = field(default_factory=Path.cwd)
    timeout: float = MODEL_TIMEOUT

    @property
    def name(self) -> str:
        return f"claude-code:{self.model_id}"

    def complete(self, request: Request) -> Reply:
        cli = require_cli()
        config_dir = self.root / CONFIG_FOLDER
        config_dir.mkdir(parents=True, exist_ok=True)
        system = config_dir / f"system-{os.getpid()}-{threading.get_ident()}.md"
        system.write_text(request.system_text(), encoding="utf-8")
        argv = [
            str(cli),
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            self.model_id,
            "--tools",
            "",
            "--system-prompt-file",
            str(system),
            "--setting-sources",
            "",
            "--strict-mcp-config",
            "--no-session-persistence",
        ]
        try:
            outcome = run_stream(
                argv,
                cwd=self.root,
                env=cli_environment(config_dir),
                stdin_text=prompt_of(request.messages),
                timeout=self.timeout,
            )
        except OSError as exc:
            raise ModelError(f"cannot start Claude Code: {exc}", "escalate") from None
        finally:
            system.unlink(missing_ok=True)
        if not outcome.ok:
            raise ModelError(outcome.problem(), _failure_class(outcome))
        reply = Reply(
            [TextBlock(outcome.text)],
            str((outcome.result or {}).get("stop_reason") or "end_turn"),
            result_usage(outcome.result),
            result_model(outcome.result, self.model_id),
            cost_usd=result_cost(outcome.result),
        )
        return check_reply(reply, request)

    def count_tokens(self, request: Request) -> int:
        return estimate_request(request)


def _failure_class(outcome: StreamOutcome) -> str:
    text = (outcome.text + outcome.stderr).lower()
    if outcome.timed_out or any(w in text for w in ("overloaded", "529", "429", "rate limit")):
        return "transient"
    if any(w in text for w in ("api key", "auth", "login", "401", "403")):
        return "escalate"
    return "transient" if outcome.result is None else "escalate"
