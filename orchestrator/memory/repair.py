"""`orch memory verify --fix`: supersede moved memories with repaired citations.

A memory verified `moved` states a fact that holds, with a path that is gone. Its repair
is a copy whose citations (and the paths its body names in code spans or links) point
where the things live now (`moves.repaired`), written through `MemoryWriter.supersede_all`:
the store's validation, Checklist A against every other active memory, one transaction
for all of them (the store's intent file undoes a write cut short), the old memory kept
and marked superseded, the link recorded for the importance score. Each copy is checked
before anything is written: one that would not verify ok is not written, and says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.errors import OrchError
from orchestrator.memory.moves import Move, next_name, repaired
from orchestrator.memory.verify import Verification, Verifier, head_commit
from orchestrator.memory.writer import MemoryWriter, NearDuplicateFound
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory


@dataclass(frozen=True)
class Repair:
    old: str
    new: Memory | None  # None: it cannot be repaired (`why`)
    moves: tuple[Move, ...]
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "memory": self.old,
            "moves": [m.to_dict() for m in self.moves],
        }
        if self.new is None:
            out["error"] = self.why
        else:
            out["new"] = self.new.name
            out["citations"] = [c.to_dict() for c in self.new.citations]
        return out

    def describe(self) -> str:
        moved = "; ".join(m.describe() for m in self.moves)
        if self.new is None:
            return f"{self.old}: cannot repair ({self.why})"
        cites = ", ".join(_cite(c.path, c.line, c.symbol) for c in self.new.citations)
        return f"{self.old} -> {self.new.name} ({moved}; cites {cites or 'nothing'})"


def _cite(path: str, line: int | None, symbol: str | None) -> str:
    return path + (f":{line}" if line else "") + (f"#{symbol}" if symbol else "")


def plan(
    layout: Layout, memories: dict[str, Memory], results: Sequence[Verification]
) -> list[Repair]:
    """The repair of each active memory verified `moved` (nothing is written)."""
    moved = [v for v in results if v.result == "moved" and v.name in memories]
    if not moved:
        return []
    writer = MemoryWriter(layout)
    head = head_commit(layout)
    planned: set[str] = set()

    def taken(name: str) -> bool:
        return name in memories or name in planned or writer.store.path_of(name).exists()

    out = []
    with Verifier(layout) as verifier:
        for v in moved:
            memory = memories[v.name]
            if not memory.active:
                continue
            name = next_name(v.name, taken)
            planned.add(name)
            new = repaired(memory, v.moved, name, head)
            check = verifier.check(new)
            if check.result in ("ok", "changed"):
                out.append(Repair(v.name, new, v.moved))
            else:
                why = f"the repaired copy would be {check.result}: {check.summary()}"
                out.append(Repair(v.name, None, v.moved, why))
    return out


def apply(layout: Layout, repairs: Sequence[Repair]) -> list[Repair]:
    """Write the repairs that can be made, all in one transaction of the store; returns
    them. A near-duplicate (Checklist A) or a failed write writes none of them."""
    chosen = [r for r in repairs if r.new is not None]
    if not chosen:
        return []
    pairs = [(r.old, r.new) for r in chosen if r.new is not None]
    try:
        MemoryWriter(layout).supersede_all(pairs, refuse_duplicates=True)
    except NearDuplicateFound as exc:
        old = next((r.old for r in chosen if r.new is not None and r.new.name == exc.name), "")
        listed = ", ".join(f"{n} ({s:.2f})" for n, s in exc.others)
        raise OrchError(
            f"cannot repair {old or 'a moved memory'}: its repaired copy near-duplicates "
            f"{listed} (Checklist A); nothing was written. Supersede or drop the duplicate "
            "first, or name the memories to repair"
        ) from None
    return chosen
