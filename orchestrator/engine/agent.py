"""One agent loop: `run() -> step() -> query() + execute_actions()`.

The loop asks the model, runs the tools it calls, and repeats until the model ends a turn
without a tool call (`Submitted`). It saves its conversation in a `finally:` after every
step, so a crash loses at most the step under way. A step's messages join the
conversation only when the whole step is done; the checkpoint then also snapshots the
project's files and the task list, so that a resumed phase finds files, task list and
conversation as they were at the same moment.

Everything else (which prompt, compaction, gates, retries) is decided beside the loop
and handed in.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.checks.secrets import redact_data
from orchestrator.engine import faults, tasklist
from orchestrator.engine.exceptions import LimitsExceeded, Submitted
from orchestrator.engine.vcs import ProjectRepo
from orchestrator.errors import FailureClass, ModelError
from orchestrator.messages import Message, Reply, Request, SystemPart, ToolCall, ToolResult
from orchestrator.protocols import Model, ToolSet
from orchestrator.store.fs import atomic_write

Prepare = Callable[[list[Message]], list[Message]]
Observe = Callable[[ToolCall, ToolResult, int, int], None]  # call, result, turn, ms


@dataclass
class Checkpoint:
    """The saved conversation of a phase (`TaskFolder.conversation(phase)`; docs/seams.md).

    Besides the seam's keys it stores `attempt`, `generation`, `tree` (the project's files
    as a git tree) and `tasks` (the task list) of the same moment, and `rules` and
    `phase_card` (what the context part re-injects after a compaction).
    """

    path: Path
    repo: ProjectRepo
    tasklist_path: Path
    phase: int
    attempt: int
    generation: int
    last_instruction: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # more keys to save (rules, phase_card)
    data: dict[str, Any] = field(default_factory=dict)

    def load(self) -> list[Message] | None:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError:
            return None  # a checkpoint is written atomically; unreadable means foreign
        if raw.get("generation", 0) != self.generation:
            return None  # the phase was replanned: its old conversation is void
        self.data = raw
        self.last_instruction = raw.get("last_instruction", self.last_instruction)
        return [Message.from_dict(m) for m in raw.get("messages", [])]

    def restore_files(self) -> list[str]:
        """Put the project's files and the task list back as they were at this checkpoint."""
        if "tasks" in self.data:
            tasklist.save(self.tasklist_path, tasklist.TaskList.from_dict(self.data["tasks"]))
        tree = self.data.get("tree")
        return self.repo.restore(tree) if tree else []

    def mark(self, messages: list[Message]) -> None:
        self.data = {
            "v": 1,
            "phase": self.phase,
            "turn": sum(1 for m in messages if m.role == "assistant"),
            "messages": [m.to_dict() for m in messages],
            "last_instruction": self.last_instruction,
            "attempt": self.attempt,
            "generation": self.generation,
            "tree": self.repo.snapshot(),
            "tasks": tasklist.load(self.tasklist_path).to_dict(),
            **self.extra,
        }

    def save(self) -> None:
        if self.data:
            atomic_write(self.path, json.dumps(redact_data(self.data), ensure_ascii=False) + "\n")
            faults.point("checkpoint.after")


class AgentLoop:
    def __init__(
        self,
        model: Model,
        tools: ToolSet,
        *,
        system: Callable[[list[Message]], list[SystemPart]],
        purpose: str,
        phase: int | None,
        max_turns: int,
        max_tokens: int,
        prepare: Prepare | None = None,
        checkpoint: Checkpoint | None = None,
        observe: Observe | None = None,
        announce: Callable[[ToolCall], None] | None = None,
        volatile: Callable[[list[Message]], str] | None = None,
    ) -> None:
        self.model = model
        self.tools = tools
        self.system = system
        self.purpose = purpose
        self.phase = phase
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self.prepare = prepare or (lambda messages: messages)
        self.checkpoint = checkpoint
        self.observe = observe
        self.announce = announce
        self.volatile = volatile
        self.messages: list[Message] = []

    @property
    def turn(self) -> int:
        return sum(1 for m in self.messages if m.role == "assistant")

    def run(self, messages: list[Message]) -> str:
        """Loop until the model submits; returns its final text."""
        self.messages = list(messages)
        while True:
            try:
                self.step()
            except Submitted as done:
                return done.text
            finally:
                self.save()

    def step(self) -> None:
        reply = self.query()
        if not reply.tool_calls:
            self.commit([reply.message()])
            raise Submitted(reply.text)
        results = self.execute_actions(reply.tool_calls)
        self.commit([reply.message(), Message("user", list(results))])

    def query(self) -> Reply:
        if self.turn >= self.max_turns:
            raise LimitsExceeded(self.max_turns)
        self.messages = self.prepare(self.messages)
        request = Request(
            system=self.system(self.messages),
            messages=list(self.messages),
            tools=self.tools.specs(),
            max_tokens=self.max_tokens,
            purpose=self.purpose,
            phase=self.phase,
            volatile=self.volatile(self.messages) if self.volatile else "",
        )
        reply = self.model.complete(request)
        if not reply.content or not (reply.text.strip() or reply.tool_calls):
            raise ModelError(
                f"{self.model.name}: the model returned an empty reply", FailureClass.TRANSIENT
            )
        return reply

    def execute_actions(self, calls: list[ToolCall]) -> list[ToolResult]:
        results = []
        for call in calls:
            faults.point("tool.before")
            if self.announce is not None:
                self.announce(call)
            started = time.monotonic()
            result = self.tools.run(call)
            if self.observe is not None:
                self.observe(call, result, self.turn, int((time.monotonic() - started) * 1000))
            faults.point("tool.after")
            results.append(result)
        return results

    def commit(self, new: list[Message]) -> None:
        self.messages.extend(new)
        if self.checkpoint is not None:
            self.checkpoint.mark(self.messages)

    def save(self) -> None:
        if self.checkpoint is not None:
            self.checkpoint.save()
