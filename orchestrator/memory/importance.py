"""What a memory is worth: an importance score from its use, its checks and its type.

The score of an active memory, between 0 and 1 (weights in `[memory.importance]`,
docs/memory.md, "Importance"), is its value scaled by its type's prior and two quality
factors:

    value = (use_w * use * (1 - outcome_w + outcome_w * outcome) + recency_w * recency)
            / (use_w + recency_w)
    score = value * (1 - type_w + type_w * type) * verification * uniqueness

- `use`: how much it was used, counted with a half-life, against the most used memory of
  the store: u / u_max (u_max at least 3), u the sum over the tasks it was read in (viewed through the memory tool, or served whole by the MCP
  server: outside tasks each day counts as one) and the newer memories that cite it, of
  0.5 ** (age of that use / `half_life_days`). Its index line reaching a prompt does not
  count: every active memory's does (`memory.usage`);
- `recency`: 0.5 ** (age of its last use / `half_life_days`), 0 if never used;
- `outcome`: of the phases whose prompts it reached and whose outcome is known, the share
  that passed their gates (0.5 when none is known);
- `type`: the type's prior (user and feedback memories say how people want the work done
  and age slowly; references point at code that can be read again);
- `verification`: 1 verified ok (its cited code stands), `changed_factor` when the cited
  code changed since, `moved_factor` when a path it names went elsewhere (until `orch
  memory verify --fix` repairs it), `stale_factor` when a claim failed, `unknown_factor`
  not verified yet;
- `uniqueness`: 1, or `duplicate_factor` when another active memory near-duplicates it
  (token Jaccard of subject and fact >= 0.7).

A memory never read scores 0 (it ranks last), one read in most recent tasks close to 1.
What decays is decided from this score in `memory.decay`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from orchestrator.config import MemoryConfig
from orchestrator.memory.dedup import dedup_key, similar_pairs
from orchestrator.memory.usage import UsageLog, Use
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory

UNIQUE_BELOW = 0.7  # token Jaccard of subject|fact at which a memory is not unique
MIN_MOST = 3.0  # below three recent tasks of use, the most used memory is not yet "full"


@dataclass(frozen=True)
class Importance:
    name: str
    score: float
    parts: dict[str, float]
    use: Use

    def to_dict(self) -> dict[str, object]:
        return {
            "importance": round(self.score, 4),
            "parts": {k: round(v, 4) for k, v in self.parts.items()},
            "uses": self.use.count,
            "tasks": len(self.use.tasks),
            "last_used": iso(self.use.last),
        }


def iso(at: float | None) -> str | None:
    return None if at is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def not_unique(memories: Sequence[Memory]) -> set[str]:
    """Active memories that another active memory near-duplicates (no all-pairs scan)."""
    pairs = similar_pairs([(m.name, dedup_key(m)) for m in memories if m.active], UNIQUE_BELOW)
    return {name for a, b, _ in pairs for name in (a, b)}


def score(
    memory: Memory, use: Use, config: MemoryConfig, *, duplicated: bool, most: float = 1.0
) -> Importance:
    """`memory`'s importance; `most` is the use weight of the store's most used memory."""
    w = config.importance
    parts = {
        "use": min(1.0, use.weight / max(most, MIN_MOST)),
        "recency": use.recency,
        "outcome": use.phases_passed / use.phases_used if use.phases_used else 0.5,
        "type": getattr(w, f"type_{memory.type}", 0.5),
        "verification": {
            "ok": 1.0,
            "changed": w.changed_factor,
            "moved": w.moved_factor,
            "stale": w.stale_factor,
        }.get(use.check or "", w.unknown_factor),
        "uniqueness": w.duplicate_factor if duplicated else 1.0,
    }
    used = parts["use"] * (1.0 - w.outcome + w.outcome * parts["outcome"])
    total = w.use + w.recency
    value = (w.use * used + w.recency * parts["recency"]) / total if total else 0.0
    prior = 1.0 - w.type + w.type * parts["type"]
    worth = value * prior * parts["verification"] * parts["uniqueness"]
    return Importance(memory.name, worth, parts, use)


def importance(
    layout: Layout,
    memories: Sequence[Memory],
    config: MemoryConfig,
    *,
    now: float | None = None,
) -> dict[str, Importance]:
    """The importance of every active memory in `memories`, by name."""
    active = [m for m in memories if m.active]
    with UsageLog(layout) as log:
        uses = log.summary(now=now, half_life_days=config.half_life_days)
    duplicated = not_unique(active)
    most = max((uses[m.name].weight for m in active if m.name in uses), default=0.0)
    return {
        m.name: score(
            m, uses.get(m.name) or Use(), config, duplicated=m.name in duplicated, most=most
        )
        for m in active
    }
