"""Decay: the memories worth least, which the audit reports as `low_value`.

A memory is a decay candidate when it is older than the window, was not used in the
window, and its importance (`memory.importance`) is below `[memory] decay_below`. The
window is the newer of: the last `decay_after_tasks` tasks, or the last
`decay_after_days` days; so a repository with few tasks decays by days and a busy one by
tasks, and a memory younger than the window is never a candidate, used or not.
`orch memory decay --apply` marks candidates stale; nothing is deleted.

Unused means unused while orch was watching: until `.orch/usage.sqlite` holds a history
as old as the window (a fresh clone has none), nothing is a candidate.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator.config import MemoryConfig
from orchestrator.memory.importance import Importance, epoch, importance, iso
from orchestrator.memory.usage import UsageLog
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory
from orchestrator.store.tasks import list_tasks


@dataclass(frozen=True)
class DecayCandidate:
    name: str
    score: float
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "importance": round(self.score, 4), "reason": self.reason}


def _task_start(path: object) -> float | None:
    """When a task began: the timestamp of its event log's first line."""
    try:
        with open(str(path), "rb") as f:
            first = f.readline()
        return epoch(json.loads(first).get("ts"))
    except (OSError, ValueError, AttributeError):
        return None


def window_start(layout: Layout, config: MemoryConfig, *, now: float | None = None) -> float:
    """When the decay window opens: the newer of N tasks ago and D days ago."""
    now = time.time() if now is None else now
    by_days = now - config.decay_after_days * 86400.0
    starts = sorted(
        (s for t in list_tasks(layout) if (s := _task_start(t.event_log_path)) is not None),
        reverse=True,
    )
    n = config.decay_after_tasks
    by_tasks = starts[n - 1] if n > 0 and len(starts) >= n else None
    return by_days if by_tasks is None else max(by_days, by_tasks)


def decay_candidates(
    layout: Layout,
    memories: Sequence[Memory],
    config: MemoryConfig,
    *,
    now: float | None = None,
    scores: dict[str, Importance] | None = None,
) -> list[DecayCandidate]:
    """Active memories older than the window, unused within it, and of low importance."""
    opens = window_start(layout, config, now=now)
    with UsageLog(layout) as usage:
        watched = usage.since()
    if watched is None or watched > opens:
        return []  # use was not watched for the whole window: nothing can be called unused
    scores = scores if scores is not None else importance(layout, memories, config, now=now)
    out = []
    for m in memories:
        found = scores.get(m.name)
        if found is None or found.score >= config.decay_below:
            continue
        born = epoch(m.created)
        if born is None or born >= opens:
            continue  # younger than the window (or of unknown age): too soon to tell
        last = found.use.last
        if last is not None and last >= opens:
            continue
        used = "never used" if last is None else f"last used {iso(last)}"
        out.append(
            DecayCandidate(
                m.name,
                found.score,
                f"{used}, not within the last {config.decay_after_tasks} tasks or "
                f"{config.decay_after_days:g} days; importance {found.score:.2f} < "
                f"{config.decay_below:g}",
            )
        )
    return sorted(out, key=lambda c: (c.score, c.name))
