"""The seams of orch, in one place.

The workflow engine depends on these protocols, never on a concrete SDK, tool set or
folder: `Model` (orchestrator.models), `ToolSet` (orchestrator.engine.tools) and
`MemoryStore` (orchestrator.memory.writer.MemoryWriter).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from orchestrator.memory.writer import WriteResult
    from orchestrator.messages import Reply, Request, ToolCall, ToolResult, ToolSpec
    from orchestrator.store.memfile import Memory
    from orchestrator.store.repo import LoadResult


@runtime_checkable
class Model(Protocol):
    """A language model. `complete` raises `orchestrator.errors.ModelError` on failure,
    already classified; an empty reply or a tool call cut by max_tokens is a failure."""

    @property
    def name(self) -> str: ...

    def complete(self, request: Request) -> Reply: ...

    def count_tokens(self, request: Request) -> int: ...


@runtime_checkable
class ToolSet(Protocol):
    """Tools an agent loop may call. `run` never raises for a tool's own failure: it
    returns a ToolResult with is_error set, which the model sees."""

    def specs(self) -> list[ToolSpec]: ...

    def run(self, call: ToolCall) -> ToolResult: ...


@runtime_checkable
class MemoryStore(Protocol):
    """Repo-persistent memory (tier 3). Every write validates and runs Checklist A."""

    def load_all(self) -> LoadResult: ...

    def get(self, name: str) -> Memory: ...

    def add(self, memory: Memory) -> WriteResult: ...

    def supersede(self, old_name: str, new: Memory) -> WriteResult: ...
