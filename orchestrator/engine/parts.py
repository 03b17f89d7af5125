"""The other parts of orch, as the engine meets them (docs/seams.md).

The engine composes the model layer, context management, memory discipline and retrieval
through these injection points. Each default does nothing or passes its input through,
so the engine runs (and is tested) on its own; `default_parts()` plugs in the parts this
build has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.config import Config
    from orchestrator.engine.tools import MemoryHandler
    from orchestrator.events.log import EventLog
    from orchestrator.messages import Message
    from orchestrator.protocols import Model
    from orchestrator.store.layout import Layout
    from orchestrator.store.tasks import TaskFolder

# prepare(messages, phase, last_instruction) -> the messages to send (ContextManager.prepare)
Prepare = Callable[["list[Message]", "int | None", str], "list[Message]"]


def _same_model(model: Model, log: EventLog, agent: str, phase: int | None) -> Model:
    return model


def _no_context(
    task: TaskFolder, model: Model, log: EventLog, rules: str, phase_card: str
) -> Prepare | None:
    return None


def _no_memory(layout: Layout, log: EventLog) -> str:
    return ""


def _never_fresh(text: str) -> bool:
    return False


def _nothing_related(layout: Layout, text: str) -> list[str]:
    return []


@dataclass
class Parts:
    # model layer: wrap a role's model (ResilientModel retries/fallback, LoggedModel events)
    wrap_model: Callable[[Model, EventLog, str, int | None], Model] = _same_model
    # context: a per-phase `prepare` (ContextManager(...).prepare), or None to send as is
    context: Callable[[TaskFolder, Model, EventLog, str, str], Prepare | None] = _no_context
    # memory discipline: the verified memory text for prompts (memories_for_prompt)
    memory_prompt: Callable[[Layout, EventLog], str] = _no_memory
    # memory discipline: "ignore memory" / "fresh context" in the task text
    wants_fresh_context: Callable[[str], bool] = _never_fresh
    # model layer: the memory tool handler (MemoryToolHandler), or None: no memory tool
    memory_tool: Callable[[Layout, EventLog], MemoryHandler] | None = None
    # memory discipline: Checklist C (promote) at phase boundaries and at completion
    promote: Callable[[Layout, TaskFolder, EventLog, int | None], Any] | None = None
    # retrieval: related past experience for a phase's prompt (SearchIndex.search)
    related: Callable[[Layout, str], list[str]] = _nothing_related
    # retrieval: index a phase report (SearchIndex.update)
    index_report: Callable[[Layout, str, str, dict[str, Any]], None] | None = None


def default_parts(config: Config | None = None) -> Parts:
    """The parts this build has, at their seams."""
    return Parts()
