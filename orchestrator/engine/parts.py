"""The other parts of orch, as the engine meets them (docs/seams.md).

The engine composes the model layer, context management, memory discipline and retrieval
through these injection points. Each default does nothing or passes its input through,
so the engine runs (and is tested) on its own; `default_parts()` plugs in the parts this
build has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.config import Config
    from orchestrator.engine.tools import MemoryHandler
    from orchestrator.events.log import EventLog
    from orchestrator.messages import SystemPart
    from orchestrator.protocols import Model
    from orchestrator.store.layout import Layout
    from orchestrator.store.tasks import TaskFolder


def _same_model(model: Model, log: EventLog, agent: str, phase: int | None) -> Model:
    return model


def _no_context(task: TaskFolder, model: Model, log: EventLog, rules: str, phase_card: str) -> Any:
    return None


def _no_memory(layout: Layout, log: EventLog, user_turn: str, phase: int | None) -> str:
    return ""


def _nothing_related(layout: Layout, slug: str, text: str) -> list[str]:
    return []


@dataclass
class Parts:
    # model layer: wrap a role's model (ResilientModel retries/fallback, LoggedModel events)
    wrap_model: Callable[[Model, EventLog, str, int | None], Model] = _same_model
    # context: a phase's ContextManager(task, model, log, rules=, phase_card=), or None:
    # then the conversation is sent as it is and there is no `compact` tool
    context: Callable[[TaskFolder, Model, EventLog, str, str], Any] = _no_context
    # context: the system prompt within a budget (assemble_system), with `context`
    assemble_system: Callable[[Any, int], list[SystemPart]] | None = None
    # memory discipline: the verified memory text for one prompt (memories_for_prompt),
    # given the newest user turn: "ignore memory" / "fresh context" there means none
    memory_prompt: Callable[[Layout, EventLog, str, int | None], str] = _no_memory
    # model layer: the memory tool handler (MemoryToolHandler), or None: no memory tool
    memory_tool: Callable[[Layout, EventLog], MemoryHandler] | None = None
    # memory discipline: Checklist C (promote) at phase boundaries and at completion
    promote: Callable[[Layout, TaskFolder, EventLog, int | None], Any] | None = None
    # retrieval: related past experience of other tasks (SearchIndex.search)
    related: Callable[[Layout, str, str], list[str]] = _nothing_related
    # retrieval: a file the engine wrote that the index covers (index_written)
    index_file: Callable[[Layout, Path], None] | None = None


RELATED_KINDS = {"report", "episode", "summary"}  # memory reaches prompts only verified
RELATED_CHARS = 300


def default_parts(config: Config | None = None) -> Parts:
    """The parts this build has, at their seams."""
    from orchestrator.config import Config

    config = config or Config()

    def logged(model: Model, log: EventLog, agent: str, phase: int | None) -> Model:
        from orchestrator.models.logging import LoggedModel

        return LoggedModel(model, log, agent=agent, phase=phase)

    def memory_tool(layout: Layout, log: EventLog) -> MemoryHandler:
        from orchestrator.models.memory_tool import MemoryToolHandler

        return MemoryToolHandler(layout)

    def related(layout: Layout, slug: str, text: str) -> list[str]:
        from orchestrator.retrieval import SearchIndex

        k = config.memory.related_results
        with SearchIndex(layout) as index:
            hits = index.search(text, k=k * 2, kinds=RELATED_KINDS)
        found = [h for h in hits if not h.ref.startswith(f"{slug}/")][:k]
        return [f"{h.kind} {h.ref}: {' '.join(h.text.split())[:RELATED_CHARS]}" for h in found]

    def index_file(layout: Layout, path: Path) -> None:
        from orchestrator.retrieval import index_written

        index_written(layout, path)

    def memory_prompt(layout: Layout, log: EventLog, user_turn: str, phase: int | None) -> str:
        from orchestrator.memory.use import memories_for_prompt

        found = memories_for_prompt(layout, config.memory, log, user_turn=user_turn, phase=phase)
        return found.index_text

    def promote(layout: Layout, task: TaskFolder, log: EventLog, phase: int | None) -> Any:
        from orchestrator.memory.promotion import promote as checklist_c

        return checklist_c(layout, task, log, phase=phase, config=config.memory)

    def context(task: TaskFolder, model: Model, log: EventLog, rules: str, card: str) -> Any:
        from orchestrator.context import ContextManager

        return ContextManager(task, model, config.context, log, rules=rules, phase_card=card)

    def assemble(parts: Any, budget: int) -> list[SystemPart]:
        from orchestrator.context import assemble_system

        return assemble_system(parts, budget)

    return Parts(
        wrap_model=logged,
        context=context,
        assemble_system=assemble,
        memory_tool=memory_tool,
        memory_prompt=memory_prompt,
        promote=promote,
        related=related,
        index_file=index_file,
    )
