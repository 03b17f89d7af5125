"""`orch memory verify --record`: write each memory's verification into its file.

Verification reads only (`verify`); recording is a write, so it goes through
`MemoryWriter` like every other: one transaction of the store, only the `verified` key
rewritten, every other byte of each file kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.memory.verify import Verification, head_commit
from orchestrator.memory.writer import MemoryWriter
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory, now_iso
from orchestrator.store.repo import InvalidMemory


def record(
    layout: Layout, memories: Sequence[Memory], results: Sequence[Verification]
) -> list[str]:
    """Write `verified: {commit, at, result}` into memories whose record would change.

    A memory is rewritten when it has no record, when its recorded result differs, or when
    it was `changed` (the record moves to HEAD). Only the `verified` line changes (so
    MEMORY.md, which does not show it, is left alone). Returns the names written.
    """
    head = head_commit(layout)
    if head is None:
        return []
    by_name = {m.name: m for m in memories}
    writer = MemoryWriter(layout)
    written = []
    with writer.store.transaction() as tx:
        for result in results:
            memory = by_name.get(result.name)
            if memory is None or not writer.store.path_of(memory.name).is_file():
                continue
            outcome = result.result if result.result in ("stale", "moved") else "ok"
            old = memory.verified if isinstance(memory.verified, dict) else {}
            if old.get("result") == outcome and result.result != "changed" and old.get("commit"):
                continue
            try:
                tx.update(
                    memory.name, verified={"commit": head, "at": now_iso(), "result": outcome}
                )
            except InvalidMemory:
                continue  # the file says something the model does not take: leave it
            written.append(memory.name)
    return written
