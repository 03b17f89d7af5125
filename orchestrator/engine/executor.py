"""What one executor attempt runs with: its tools, its prompt, its context policy.

`executor_loop()` builds the phase's `AgentLoop`: the executor tools (files, shell behind
the high-risk policy, task list, the memory tool), the system prompt (the executor rules,
the phase card, verified memory and related past work: the stable, cached prefix), what
changes every turn (the task list, its reminder, the session notes: `Request.volatile`,
sent after the last cache breakpoint in the newest user turn; docs/models.md, "Request
layout"), and the context policy at the
context seam (`ContextManager.prepare` every turn, `compact` when the model asks). Without
a context manager, the conversation is sent as it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from orchestrator.context import ExecutorRequest, assemble_system
from orchestrator.engine import tasklist
from orchestrator.engine.activity import Doing
from orchestrator.engine.agent import AgentLoop, Checkpoint
from orchestrator.engine.enums import PhaseStatus, Role
from orchestrator.engine.env import Env
from orchestrator.engine.parts import PhaseContext
from orchestrator.engine.progress import tool_text
from orchestrator.engine.prompts import load_prompt
from orchestrator.engine.shell import classify
from orchestrator.engine.tools import ExecutorTools
from orchestrator.messages import Message, SystemPart, ToolCall, ToolResult, ToolSpec
from orchestrator.protocols import ToolSet
from orchestrator.store.session import SessionNotes
from orchestrator.tokens import estimate_text, estimate_tools

INPUT_CHARS = 300  # per input value, in a tool_call event


def rounds_since_tasks_update(messages: list[Message]) -> int:
    """Assistant turns since the last `tasks` add/update call (all of them if none)."""
    rounds = 0
    for message in reversed(messages):
        if message.role != "assistant":
            continue
        if any(
            c.name == "tasks" and c.input.get("op") in ("add", "update") for c in message.tool_calls
        ):
            return rounds
        rounds += 1
    return rounds


def phase_card(env: Env, pid: int) -> str:
    plan = env.plan()
    phase = env.plan_phase(pid)
    done = [
        f"- phase {p['phase_id']} ({p['title']}) is committed"
        for p in plan["phases"]
        if env.state.phase(p["phase_id"]).status is PhaseStatus.CLOSED
    ]
    return load_prompt(Role.EXECUTOR).render(
        "card",
        task=env.state.spec.text,
        summary=plan["summary"],
        phase=pid,
        total=len(plan["phases"]),
        title=phase["title"],
        objective=phase["objective"],
        files="\n".join(f"- {f['path']} ({f['action']}): {f['reason']}" for f in phase["files"])
        or "- none named",
        steps="\n".join(f"- {x}" for x in phase["steps"]),
        tests="\n".join(f"- {x}" for x in phase["tests"]) or "- none named",
        criteria="\n".join(f"- {x}" for x in phase["acceptance_criteria"]),
        gates=", ".join(phase["quality_gates"]) or "none",
        done=("Earlier phases:\n" + "\n".join(done)) if done else "",
    )


def open_context(env: Env, pid: int) -> PhaseContext | None:
    """The phase's context (docs/seams.md, "Context"), or None in a build without one."""
    return env.parts.context.open(
        env.task,
        env.model(Role.EXECUTOR, pid),
        env.journal.as_log(),
        rules=load_prompt(Role.EXECUTOR).system,
        phase_card=phase_card(env, pid),
        compactor=env.model(Role.COMPACTOR, pid),
    )


class CompactTool:
    """Adds the context part's `compact` tool: the model asks, the next turn compacts."""

    def __init__(self, inner: ToolSet, spec: ToolSpec) -> None:
        self.inner = inner
        self.spec = spec
        self.requested: str | None = None

    def specs(self) -> list[ToolSpec]:
        return [*self.inner.specs(), self.spec]

    def run(self, call: ToolCall) -> ToolResult:
        if call.name != self.spec.name:
            return self.inner.run(call)
        self.requested = str(call.input.get("reason") or "the model asked for it")
        return ToolResult(
            call.id,
            "Compaction runs before your next turn: earlier turns are summarised and saved "
            "to the transcripts; the rules, the phase card and the last instruction stay.",
        )


@dataclass
class ExecutorSetup:
    env: Env
    pid: int
    checkpoint: Checkpoint

    def loop(self, turns_so_far: int) -> AgentLoop:
        env, pid = self.env, self.pid
        model = env.model(Role.EXECUTOR, pid)
        base = load_prompt(Role.EXECUTOR).system
        card = phase_card(env, pid)
        self.checkpoint.extra = {"rules": base, "phase_card": card}
        context = env.parts.context.open(
            env.task,
            model,
            env.journal.as_log(),
            rules=base,
            phase_card=card,
            compactor=env.model(Role.COMPACTOR, pid),
        )
        tools: ExecutorTools | CompactTool = self._tools()
        compact = None
        if context is not None:
            compact = CompactTool(tools, context.compact_tool_spec())
            tools = compact
        memory_text = env.memory_context(pid)
        related = env.parts.retrieval.related(
            env.layout, env.slug, f"{env.state.spec.text} {env.plan_phase(pid)['title']}"
        )
        specs = tools.specs()

        def system(messages: list[Message]) -> list[SystemPart]:
            if context is not None:
                parts = context.prompt_parts(
                    base=base,
                    tools=specs,
                    memory_index=memory_text,
                    related=related,
                    phase_card=card,
                )
                stable = assemble_system(parts, env.config.context.prompt_budget_tokens)
            else:
                stable = [
                    SystemPart(base, label="base"),
                    SystemPart(card, cache=not (memory_text or related), label="phase-card"),
                ]
                if memory_text or related:
                    extra = memory_text + (
                        "\n\nRelated past experience:\n" + "\n".join(f"- {r}" for r in related)
                        if related
                        else ""
                    )
                    stable.append(SystemPart(extra.strip(), cache=True, label="memory"))
            if not any(part.cache for part in stable):
                stable[-1] = SystemPart(stable[-1].text, cache=True, label=stable[-1].label)
            return stable

        prepare = None
        if context is not None:

            def prepare(messages: list[Message]) -> list[Message]:
                parts, volatile = system(messages), self._volatile(messages)
                sys_tokens = estimate_text("\n\n".join(p.text for p in parts))
                sys_tokens += estimate_tools(specs) + estimate_text(volatile)
                # a compaction on this model sends this turn's request with a summary turn
                executor = ExecutorRequest(model.name, tuple(parts), tuple(specs), volatile)
                instruction = self.checkpoint.last_instruction
                if compact is not None and compact.requested:
                    reason, compact.requested = compact.requested, None
                    return context.compact(
                        messages,
                        phase=pid,
                        last_instruction=instruction,
                        reason=reason,
                        kind="tool",
                        system_tokens=sys_tokens,
                        executor=executor,
                    )
                return context.prepare(
                    messages,
                    phase=pid,
                    last_instruction=instruction,
                    system_tokens=sys_tokens,
                    executor=executor,
                )

        return AgentLoop(
            model,
            tools,
            system=system,
            purpose=Role.EXECUTOR,
            phase=pid,
            max_turns=turns_so_far + env.config.max_turns_per_phase,
            max_tokens=env.config.max_tokens,
            prepare=prepare,
            checkpoint=self.checkpoint,
            observe=self._observe,
            announce=self._announce,
            volatile=self._volatile,
        )

    def _tools(self) -> ExecutorTools:
        env = self.env
        memory = env.parts.memory.tool(env.layout, env.journal.as_log())
        return ExecutorTools(
            env.repo,
            phase=self.pid,
            trace_id=env.journal.log.trace_id,
            policy=env.config.policy,
            approvals=env.state.phase(self.pid).approvals,
            tasklist_path=env.task.tasklist,
            memory=memory,
            record_gate=env.journal.gate,
        )

    def _volatile(self, messages: list[Message]) -> str:
        """The task list, and a reminder when it has not been touched for a while."""
        prompt = load_prompt(Role.EXECUTOR)
        parts = [
            prompt.render("tasklist", tasks=tasklist.load(self.env.task.tasklist).render(self.pid))
        ]
        rounds = rounds_since_tasks_update(messages)
        if rounds >= tasklist.REMIND_AFTER_ROUNDS:
            parts.append(prompt.render("reminder", rounds=rounds))
        notes = SessionNotes(self.env.layout, self.env.slug)
        if notes.exists():
            parts.append(prompt.render("notes", notes=notes.text().strip()))
        return "\n\n".join(parts)

    def _announce(self, call: ToolCall) -> None:
        self.env.journal.activity.begin(Doing.TOOL, tool_text(call.name, call.input))

    def _observe(self, call: ToolCall, result: ToolResult, turn: int, ms: int) -> None:
        env = self.env
        high = (
            call.name == "run_shell"
            and classify(str(call.input.get("command", "")), env.layout.root) is not None
        )
        env.journal.record(
            "tool_call",
            {
                "tool": call.name,
                "ok": not result.is_error,
                "input": _cut(call.input),
                "summary": first_line(result.content)[:200],
                "turn": turn,
                "call_id": call.id,
                "duration_ms": ms,
                "attempt": env.state.phase(self.pid).attempt,
                "risk": "high" if high else "normal",
            },
            agent="Executor",
            phase=self.pid,
        )


def _cut(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        out[key] = text if len(text) <= INPUT_CHARS else text[:INPUT_CHARS] + "..."
    return out


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return text.strip()
