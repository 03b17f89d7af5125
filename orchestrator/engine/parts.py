"""The other parts of orch, as the engine meets them (docs/seams.md, "Engine").

Four small protocols, one per part: the model layer wraps each role's model
(`WrapModel`), context management opens one `PhaseContext` per phase (`ContextPart`),
memory discipline gives verified memory, the memory tool and Checklist C (`MemoryPart`),
retrieval finds related past work and indexes what the engine writes (`RetrievalPart`).

Each has a null implementation that does nothing or passes its input through, so the
engine runs (and is tested) on its own: `Parts()` is the engine alone. `default_parts()`
plugs in the real implementations below, which call the parts this build has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from orchestrator.config import Config, ContextConfig, MemoryConfig
from orchestrator.context import ContextManager, ExecutorRequest, PromptParts
from orchestrator.engine.tools import MemoryHandler
from orchestrator.events.log import EventLog
from orchestrator.memory.promotion import promote
from orchestrator.memory.usage import UsageLog
from orchestrator.memory.use import memories_for_prompt
from orchestrator.messages import Message, ToolSpec
from orchestrator.models.logging import LoggedModel
from orchestrator.models.memory_tool import MemoryToolHandler
from orchestrator.protocols import Model
from orchestrator.retrieval import SearchIndex, index_written
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder

# the protocols -------------------------------------------------------------------------------


class WrapModel(Protocol):
    """Model layer: wrap a role's model (e.g. `LoggedModel`, one `model_call` per call)."""

    def __call__(self, model: Model, log: EventLog, agent: str, phase: int | None, /) -> Model: ...


class PhaseContext(Protocol):
    """One phase's context policy (`orchestrator.context.ContextManager`)."""

    def prepare(
        self,
        messages: Sequence[Message],
        *,
        phase: int | None,
        last_instruction: str,
        system_tokens: int = 0,
        executor: ExecutorRequest | None = None,
    ) -> list[Message]: ...

    def compact(
        self,
        messages: Sequence[Message],
        *,
        phase: int | None,
        last_instruction: str,
        reason: str,
        kind: str = "tool",
        system_tokens: int = 0,
        executor: ExecutorRequest | None = None,
    ) -> list[Message]: ...

    def compact_tool_spec(self) -> ToolSpec: ...

    def close_phase(
        self, messages: Sequence[Message], *, phase: int | None
    ) -> Sequence[object]: ...

    def prompt_parts(
        self,
        *,
        base: str,
        tools: Sequence[ToolSpec] = (),
        memory_index: str = "",
        related: Sequence[str] = (),
        phase_card: str | None = None,
    ) -> PromptParts: ...


class ContextPart(Protocol):
    def open(
        self,
        task: TaskFolder,
        model: Model,
        log: EventLog,
        *,
        rules: str,
        phase_card: str,
        compactor: Model | None = None,
    ) -> PhaseContext | None:
        """A phase's context, or None: the conversation is sent as it is, no `compact` tool.

        `model` is the executor's; `compactor` summarises and folds turns (default: `model`).
        """
        ...


class MemoryPart(Protocol):
    def prompt(self, layout: Layout, log: EventLog, user_turn: str, phase: int | None) -> str:
        """Verified memory text for one prompt; none when `user_turn` asks for a fresh context."""
        ...

    def tool(self, layout: Layout, log: EventLog) -> MemoryHandler | None:
        """The executor's memory tool, or None: no memory tool."""
        ...

    def promote(
        self, layout: Layout, task: TaskFolder, log: EventLog, phase: int | None
    ) -> str | None:
        """Checklist C at a phase boundary (or at completion: phase None); its one-line
        summary, or None when this build has no promotion step."""
        ...


class RetrievalPart(Protocol):
    def related(self, layout: Layout, slug: str, text: str) -> list[str]:
        """Related past experience of other tasks, one line each."""
        ...

    def index_file(self, layout: Layout, path: Path) -> None:
        """A file the engine wrote that the search index covers."""
        ...


# the engine alone ----------------------------------------------------------------------------


def same_model(model: Model, log: EventLog, agent: str, phase: int | None, /) -> Model:
    return model


class NoContext:
    def open(
        self,
        task: TaskFolder,
        model: Model,
        log: EventLog,
        *,
        rules: str,
        phase_card: str,
        compactor: Model | None = None,
    ) -> PhaseContext | None:
        return None


class NoMemory:
    def prompt(self, layout: Layout, log: EventLog, user_turn: str, phase: int | None) -> str:
        return ""

    def tool(self, layout: Layout, log: EventLog) -> MemoryHandler | None:
        return None

    def promote(
        self, layout: Layout, task: TaskFolder, log: EventLog, phase: int | None
    ) -> str | None:
        return None


class NoRetrieval:
    def related(self, layout: Layout, slug: str, text: str) -> list[str]:
        return []

    def index_file(self, layout: Layout, path: Path) -> None:
        return None


@dataclass
class Parts:
    wrap_model: WrapModel = same_model
    context: ContextPart = field(default_factory=NoContext)
    memory: MemoryPart = field(default_factory=NoMemory)
    retrieval: RetrievalPart = field(default_factory=NoRetrieval)


# the parts this build has --------------------------------------------------------------------

RELATED_KINDS = {"report", "episode", "summary"}  # memory reaches prompts only verified
RELATED_CHARS = 300


def logged_model(model: Model, log: EventLog, agent: str, phase: int | None, /) -> Model:
    return LoggedModel(model, log, agent=agent, phase=phase)


@dataclass(frozen=True)
class ManagedContext:
    config: ContextConfig

    def open(
        self,
        task: TaskFolder,
        model: Model,
        log: EventLog,
        *,
        rules: str,
        phase_card: str,
        compactor: Model | None = None,
    ) -> PhaseContext | None:
        return ContextManager(
            task,
            model,
            self.config,
            log,
            rules=rules,
            phase_card=phase_card,
            compactor=compactor,
        )


@dataclass(frozen=True)
class RepoMemory:
    config: MemoryConfig

    def prompt(self, layout: Layout, log: EventLog, user_turn: str, phase: int | None) -> str:
        found = memories_for_prompt(layout, self.config, log, user_turn=user_turn, phase=phase)
        return found.index_text

    def tool(self, layout: Layout, log: EventLog) -> MemoryHandler | None:
        return MemoryToolHandler(layout, task=log.task)

    def promote(
        self, layout: Layout, task: TaskFolder, log: EventLog, phase: int | None
    ) -> str | None:
        if phase is not None:  # a phase is promoted once it passed its gates and is committed
            with UsageLog(layout) as usage:
                usage.record_outcome(task.slug, phase, passed=True)
        return promote(layout, task, log, phase=phase, config=self.config).summary()


@dataclass(frozen=True)
class IndexedRetrieval:
    results: int  # how many related items a prompt gets

    def related(self, layout: Layout, slug: str, text: str) -> list[str]:
        with SearchIndex(layout) as index:
            hits = index.search(text, k=self.results * 2, kinds=RELATED_KINDS)
        found = [h for h in hits if not h.ref.startswith(f"{slug}/")][: self.results]
        return [f"{h.kind} {h.ref}: {' '.join(h.text.split())[:RELATED_CHARS]}" for h in found]

    def index_file(self, layout: Layout, path: Path) -> None:
        index_written(layout, path)


def default_parts(config: Config | None = None) -> Parts:
    """The parts this build has, at their seams."""
    config = config or Config()
    return Parts(
        wrap_model=logged_model,
        context=ManagedContext(config.context),
        memory=RepoMemory(config.memory),
        retrieval=IndexedRetrieval(config.memory.related_results),
    )
