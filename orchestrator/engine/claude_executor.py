"""The claude-code executor: one phase attempt carried out by one Claude Code session.

`executor = "claude-code"` (or `orch run --executor claude-code`) is recorded with the
task; each phase attempt then runs `claude -p` headless in the project's folder instead of
orch's own agent loop. What orch gives the session:

- the prompt: the attempt's instructions (the phase's start, and a failed gate's fix hint
  on a retry), on stdin;
- appended to Claude Code's system prompt: the rules for working under orch, the phase
  card, verified memory and related past work;
- tools: Claude Code's file tools and `Bash` (`--tools`, `--allowedTools`, permission mode
  `acceptEdits`; no web, no sub-agents), and orch's MCP server (`orch mcp`) for reading
  memory, notes and the task brief (`--mcp-config`, `--strict-mcp-config`); no setting
  source of the user's or the project's is read (`--setting-sources ""`);
- the sandbox: the `claude` process runs inside orch's bubblewrap jail (the working tree
  writable; `.git`, `plans/`, `memories/`, `NOTES.md` and `.orch/` read-only, except its
  own configuration folder `.orch/claude/`), so its Bash tool is confined too; it keeps the
  network, as it must reach its API. Its process group is recorded and killed at the end,
  and a later orch kills what a dead one left;
- `CLAUDE_CONFIG_DIR` is `.orch/claude/`: its sessions and settings never touch the home
  folder.

Its stream-json events become orch's events (a `tool_call` for every tool result, one
`model_call` with the session's usage and cost) and every event, secrets redacted, goes to
the task folder's `transcripts/claude-code/` file of the attempt. The session id is chosen
by orch (`--session-id`), recorded in the checkpoint and in the `delegation` event.

Resume: the phase's checkpoint holds the tree the attempt started from. A session cut off
by a crash is not continued: the tree is put back to that checkpoint and a new session
starts the attempt again, so nothing it did is done twice and the phase commits once
(orch commits; the session cannot, `.git` is read-only). A session that ended is
checkpointed with its final text, so a resume goes straight to the gates.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orchestrator
from orchestrator.checks.secrets import redact, redact_data
from orchestrator.engine import faults
from orchestrator.engine.agent import Checkpoint
from orchestrator.engine.enums import Role
from orchestrator.engine.env import Env
from orchestrator.engine.executor import _cut, first_line, phase_card
from orchestrator.engine.prompts import load_prompt
from orchestrator.engine.shell import sandbox_for
from orchestrator.errors import ModelError
from orchestrator.messages import Message
from orchestrator.models.claude_code import (
    CONFIG_FOLDER,
    QUIET,
    StreamOutcome,
    require_cli,
    result_cost,
    result_model,
    result_usage,
    run_stream,
)
from orchestrator.sandbox import Mode, Sandbox

EXECUTORS = ("orch", "claude-code")
CLAUDE_CODE = "claude-code"
BUILT_IN_TOOLS = ("Read", "Write", "Edit", "Glob", "Grep", "Bash")
MCP_TOOLS = ("memory_search", "memory_get", "notes_get", "task_brief", "task_status")
# memory is written through orch's promotion checklists, never by the session
DENIED = (
    "mcp__orch__memory_add",
    "mcp__orch__memory_supersede",
    "mcp__orch__memory_verify",
    "mcp__orch__memory_audit",
    "Bash(git commit:*)",
    "Bash(git push:*)",
    "Bash(git reset:*)",
)
# what the CLI needs to reach its API; the sandbox leaves out every other secret
PASSED_THROUGH = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_OAUTH_TOKEN",
)
SESSION_TIMEOUT = 3600.0


@dataclass
class ClaudeCodeSession:
    env: Env
    pid: int
    checkpoint: Checkpoint
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    denied: dict[str, str] = field(default_factory=dict)  # tool_use_id -> Claude Code's reason
    messages: set[Any] = field(default_factory=set)  # ids of the assistant messages seen
    turn: int = 0

    @property
    def config_dir(self) -> Path:
        return self.env.layout.root / CONFIG_FOLDER

    def delegation(self) -> dict[str, Any]:
        """What the `delegation` event says of this session."""
        out: dict[str, Any] = {"executor": CLAUDE_CODE, "session_id": self.session_id}
        previous = self.checkpoint.data.get("session_id")
        if previous:
            out["resumed_session"] = previous
        return out

    def run(self, messages: list[Message]) -> tuple[str, int]:
        """Carry out the attempt; (the session's final text, its turns). A session that
        fails raises ModelError."""
        env = self.env
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.checkpoint.data["session_id"] = self.session_id
        self.checkpoint.save()
        prompt = "\n\n".join(m.text for m in messages if m.role == "user" and m.text)
        started = time.perf_counter()
        transcript = self._transcript()
        sandbox = self._sandbox()
        runs = sandbox.runs
        record: list[Path | None] = []
        with transcript.open("a", encoding="utf-8") as out:

            def on_event(event: dict[str, Any]) -> None:
                out.write(json.dumps(redact_data(event), ensure_ascii=False) + "\n")
                out.flush()
                self._observe(event)

            outcome = run_stream(
                sandbox.argv(shlex.join(self._argv())),
                cwd=env.layout.root,
                env=self._environment(sandbox),
                stdin_text=prompt,
                timeout=SESSION_TIMEOUT,
                on_event=on_event,
                on_start=lambda pid: record.append(
                    runs.add(pid, "claude-code session") if runs else None
                ),
            )
        if runs is not None and record:
            runs.remove(record[0])
        self._record_usage(outcome, started)
        if not outcome.ok:
            raise ModelError(outcome.problem(), "escalate" if outcome.result else "transient")
        text = outcome.text or "(no summary)"
        self.checkpoint.mark([*messages, Message.assistant(text)])
        self.checkpoint.data["session_id"] = self.session_id
        self.checkpoint.save()
        return text, int((outcome.result or {}).get("num_turns") or self.turn)

    # the command ---------------------------------------------------------------------------
    def _argv(self) -> list[str]:
        env = self.env
        system = self.config_dir / f"phase-{self.pid}.md"
        system.write_text(self._system_text(), encoding="utf-8")
        mcp = self.config_dir / "mcp.json"
        server = {"command": sys.executable, "args": ["-m", "orchestrator.cli", "mcp"]}
        mcp.write_text(json.dumps({"mcpServers": {"orch": server}}), encoding="utf-8")
        allowed = [*BUILT_IN_TOOLS, *(f"mcp__orch__{t}" for t in MCP_TOOLS)]
        argv = [
            str(require_cli().resolve()),  # the program itself: its folder is shown read-only
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--session-id",
            self.session_id,
            "--append-system-prompt-file",
            str(system),
            "--tools",
            ",".join(BUILT_IN_TOOLS),
            "--allowedTools",
            ",".join(allowed),
            "--disallowedTools",
            ",".join(DENIED),
            "--permission-mode",
            "acceptEdits",
            "--mcp-config",
            str(mcp),
            "--strict-mcp-config",
            "--setting-sources",
            "",
        ]
        model = env.model(Role.EXECUTOR, self.pid).name
        if model.startswith("claude-code:") or model.startswith("anthropic:"):
            argv += ["--model", model.partition(":")[2]]
        return argv

    def _system_text(self) -> str:
        env, pid = self.env, self.pid
        parts = [load_prompt(Role.EXECUTOR).render("claude_code"), phase_card(env, pid)]
        memory = env.memory_context(pid)
        if memory:
            parts.append(memory)
        related = env.parts.retrieval.related(
            env.layout, env.slug, f"{env.state.spec.text} {env.plan_phase(pid)['title']}"
        )
        if related:
            parts.append("Related past experience:\n" + "\n".join(f"- {r}" for r in related))
        return "\n\n".join(parts)

    def _sandbox(self) -> Sandbox:
        base = sandbox_for(self.env.layout, self.env.config.policy)
        cli = require_cli().resolve()
        shown = [str(cli.parent.parent.parent), str(Path(orchestrator.__file__).parent)]
        if base.mode is Mode.BWRAP:
            base.check()
        return Sandbox(
            root=base.root,
            read_only=base.read_only,
            mode=base.mode,
            network=True,  # Claude Code reaches its API
            extra_read_only=(*base.extra_read_only, *shown),
            cache=base.cache,
            writable=(self.config_dir,),
        )

    def _environment(self, sandbox: Sandbox) -> dict[str, str]:
        env = sandbox.environment()
        env.update({k: os.environ[k] for k in PASSED_THROUGH if k in os.environ})
        env.update(QUIET)
        env["CLAUDE_CONFIG_DIR"] = str(self.config_dir.resolve())
        return env

    def _transcript(self) -> Path:
        folder = self.env.task.transcripts / CLAUDE_CODE
        folder.mkdir(parents=True, exist_ok=True)
        attempt = self.env.state.phase(self.pid).attempt
        return folder / f"phase-{self.pid}-attempt-{attempt}.jsonl"

    # its events as orch's --------------------------------------------------------------------
    def _observe(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "permission_denied":
            reason = str(event.get("decision_reason") or event.get("message") or "denied")
            self.denied[str(event.get("tool_use_id"))] = reason
            return
        message = event.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list) or not isinstance(message, dict):
            return
        if kind == "assistant":
            # one event a content block: a turn is a new message id
            if message.get("id") not in self.messages:
                self.messages.add(message.get("id"))
                self.turn += 1
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    self.calls[str(block.get("id"))] = {
                        "tool": str(block.get("name") or "?"),
                        "input": block.get("input") if isinstance(block.get("input"), dict) else {},
                        "at": time.perf_counter(),
                    }
        elif kind == "user":
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self._tool_done(block)

    def _tool_done(self, block: dict[str, Any]) -> None:
        call_id = str(block.get("tool_use_id"))
        call = self.calls.pop(call_id, {"tool": "?", "input": {}, "at": time.perf_counter()})
        result = block.get("content")
        if isinstance(result, list):
            result = "\n".join(str(b.get("text", "")) for b in result if isinstance(b, dict))
        self.env.journal.record(
            "tool_call",
            {
                "tool": call["tool"],
                "ok": not block.get("is_error"),
                "input": _cut(self._shown_input(call["input"])),
                "summary": redact(first_line(str(result or "")))[:200],
                "turn": self.turn,
                "call_id": call_id,
                "duration_ms": max(0, int((time.perf_counter() - call["at"]) * 1000)),
                "attempt": self.env.state.phase(self.pid).attempt,
                "risk": "normal",
                "executor": CLAUDE_CODE,
                **({"denied": self.denied.pop(call_id)[:300]} if call_id in self.denied else {}),
            },
            agent="Executor",
            phase=self.pid,
        )
        faults.point("tool.after")

    def _shown_input(self, data: dict[str, Any]) -> dict[str, Any]:
        """The call's input, with `path`: its `file_path` relative to the project."""
        target = data.get("file_path")
        if not isinstance(target, str):
            return data
        root = self.env.layout.root.resolve()
        with contextlib.suppress(ValueError):
            return {"path": Path(target).relative_to(root).as_posix(), **data}
        return data

    def _record_usage(self, outcome: StreamOutcome, started: float) -> None:
        result = outcome.result
        name = self.env.model(Role.EXECUTOR, self.pid).name
        payload: dict[str, Any] = {
            "purpose": Role.EXECUTOR,
            "model": f"claude-code:{result_model(result, name)}",
            "turn": self.turn,
            "latency_ms": max(0, int((time.perf_counter() - started) * 1000)),
            "attempts": 1,
        }
        if outcome.ok:
            payload.update(
                stop_reason=str((result or {}).get("stop_reason") or "end_turn"),
                usage=result_usage(result).to_dict(),
                cost_usd=result_cost(result),
                tool_calls=[],
            )
        else:
            payload.update(failure_class="transient", message=outcome.problem()[:500])
        self.env.journal.record("model_call", payload, agent="Executor", phase=self.pid)
