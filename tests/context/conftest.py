"""Fixtures for context management: a real initialised repository, a task folder, scripted
summariser replies and conversation builders."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from orchestrator.config import ContextConfig
from orchestrator.context import ContextManager, ExecutorRequest
from orchestrator.messages import Message, SystemPart, TextBlock, ToolCall, ToolResult, ToolSpec
from orchestrator.models.scripted import ScriptedModel
from orchestrator.store.layout import Layout
from orchestrator.store.scaffold import scaffold
from orchestrator.store.tasks import TaskFolder

SUMMARY = """## Task overview
Add rate limiting to the API.
## Current state
The limiter module is written; the middleware is not wired yet.
## Important discoveries
Settings load once at start-up.
## Next steps
Wire the middleware and test the 429 response.
## Context to preserve
The user wants the public signatures unchanged.
"""

FOLD = {
    "summary": "Read the settings module and wrote the limiter.",
    "decisions": [
        {"subject": "limiter algorithm", "decision": "token bucket", "reason": "bursts allowed"}
    ],
    "eliminated": [
        {"subject": "limiter storage", "approach": "a dict per process", "why": "many workers"}
    ],
    "open_questions": ["Which header names the client?"],
    "tool_results": [{"tool": "run_shell", "input": "pytest -q", "result": "3 passed"}],
    "facts": [
        {
            "subject": "test command",
            "fact": "pytest -q from the repository root",
            "reason": "every gate runs it",
            "citations": [{"path": "pyproject.toml", "line": 3}],
        }
    ],
    "patterns": [],
}

RULES = "Repository rules:\n- run `pytest -q` before every commit\n- never edit generated files\n"
PHASE_CARD = (
    "Phase 1: add the limiter\nObjective: limit each client.\nAcceptance: a 429 past the limit."
)


@pytest.fixture
def layout(git_repo: Path) -> Layout:
    layout = Layout(git_repo)
    scaffold(layout)
    return layout


@pytest.fixture
def task(layout: Layout) -> TaskFolder:
    return TaskFolder.create(layout, "add rate limiting")


def script(
    summary: str | list[dict[str, Any]] = SUMMARY,
    fold: dict[str, Any] | list[dict[str, Any]] | str = FOLD,
    long: str = "Long-term: the limiter is a token bucket.",
) -> dict[str, Any]:
    """A script whose compactor, folding and long-term calls each get their own reply.

    A list gives replies in order (each summariser request holds no assistant turn, so a
    list is a queue of errors followed by one reply, see ScriptedModel)."""

    def replies(value: Any) -> list[dict[str, Any]]:
        if isinstance(value, list):
            return value
        return [{"text": value if isinstance(value, str) else json.dumps(value)}]

    return {
        "conversations": [
            {
                "when": {"purpose": "compactor", "contains": "Conversation to summarise"},
                "replies": replies(summary),
            },
            {
                "when": {"purpose": "compactor", "contains": "Turns to fold"},
                "replies": replies(fold),
            },
            {
                "when": {"purpose": "compactor", "contains": "Fold into the long-term summary"},
                "replies": replies(long),
            },
        ]
    }


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel(script())


def exchange(
    turn: int, *, calls: int = 1, size: int = 800, text: str | None = None
) -> list[Message]:
    """One tool round: an assistant message calling `calls` tools, then their results."""
    tool_calls = [
        ToolCall(f"toolu_{turn}_{c}", "read_file", {"path": f"src/mod_{turn}_{c}.py"})
        for c in range(calls)
    ]
    results = [
        ToolResult(call.id, (text or f"contents of mod_{turn}_{c} ") + "x" * size)
        for c, call in enumerate(tool_calls)
    ]
    return [
        Message("assistant", [TextBlock(f"step {turn}"), *tool_calls]),
        Message("user", list(results)),
    ]


def conversation(rounds: int, **kw: Any) -> list[Message]:
    """The first user message and `rounds` tool rounds. A round of size 12,000 is past the
    tests' usual threshold (3,000 tokens) on its own: masking cannot get the prompt under
    it, so `prepare` compacts."""
    messages = [Message.user("add rate limiting to the API")]
    for turn in range(rounds):
        messages += exchange(turn, **kw)
    return messages


def executor_request(
    model: ScriptedModel, volatile: str = "Your task list: 1 of 3 done"
) -> ExecutorRequest:
    """The rest of an executor's request on `model`: a large cached system prompt, a tool."""
    return ExecutorRequest(
        model.name,
        (SystemPart("executor rules " * 400, cache=True, label="base"),),
        (ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}}),),
        volatile,
    )


@pytest.fixture
def make_manager(task: TaskFolder, model: ScriptedModel) -> Callable[..., ContextManager]:
    def make(
        *,
        model_: Any = None,
        rules: str = RULES,
        phase_card: str = PHASE_CARD,
        **config: Any,
    ) -> ContextManager:
        # masking every round (batches of 1): the tests follow single rounds
        defaults: dict[str, Any] = {
            "compact_threshold_tokens": 3000,
            "keep_recent_turns": 6,
            "mask_batch_rounds": 1,
        }
        cfg = ContextConfig(**{**defaults, **config})
        return ContextManager(
            task, model_ or model, cfg, task.events(), rules=rules, phase_card=phase_card
        )

    return make


@pytest.fixture
def kit() -> SimpleNamespace:
    """The builders and constants above, for test modules (conftest is not importable)."""
    return SimpleNamespace(
        script=script,
        exchange=exchange,
        conversation=conversation,
        executor_request=executor_request,
        SUMMARY=SUMMARY,
        FOLD=FOLD,
        RULES=RULES,
        PHASE_CARD=PHASE_CARD,
    )
