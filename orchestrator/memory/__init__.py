"""Memory discipline: the checklists, verification and audit that keep repo memory clean.

The workflow engine uses three names (docs/seams.md, "Memory discipline"):
`memories_for_prompt`, `wants_fresh_context`, `promote`. They are imported on first use,
so importing `orchestrator.memory.dedup` (what every store write does) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.memory.fresh import wants_fresh_context
    from orchestrator.memory.promotion import promote
    from orchestrator.memory.use import memories_for_prompt

__all__ = ["memories_for_prompt", "promote", "wants_fresh_context"]
_WHERE = {
    "memories_for_prompt": "orchestrator.memory.use",
    "wants_fresh_context": "orchestrator.memory.fresh",
    "promote": "orchestrator.memory.promotion",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
