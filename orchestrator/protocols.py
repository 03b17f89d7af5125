"""The seams of orch, in one place.

The workflow engine depends on these protocols, never on a concrete SDK or tool set:
`Model` (orchestrator.models) and `ToolSet` (orchestrator.engine.tools). The engine meets
the other parts (context, memory, retrieval) through the protocols of
`orchestrator/engine/parts.py`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from orchestrator.messages import Reply, Request, ToolCall, ToolResult, ToolSpec


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
