"""Context management inside a phase.

Tier 1 masks old tool results every turn; tier 2 summarises older turns when the prompt
passes a token threshold; tier 3 compacts on request (the `compact` tool, `orch compact`).
Raw turns always reach `transcripts/` first. Folding turns transcribed turns into L2
episodes (or cascading summaries) and L3 semantic memory; `assemble_system` builds the
system prompt within a budget. See `docs/seams.md` ("Context") and `docs/context.md`.
"""

from __future__ import annotations

from orchestrator.context.assembly import Assembly, PromptParts, assemble, assemble_system
from orchestrator.context.compaction import ExecutorRequest
from orchestrator.context.manager import (
    COMPACT_TOOL,
    CompactionResult,
    CompactionStalled,
    ContextManager,
    compact_tool_spec,
)

__all__ = [
    "COMPACT_TOOL",
    "Assembly",
    "CompactionResult",
    "CompactionStalled",
    "ContextManager",
    "ExecutorRequest",
    "PromptParts",
    "assemble",
    "assemble_system",
    "compact_tool_spec",
]
