"""Verify before use: the repo memory a prompt may see.

`memories_for_prompt` loads the active repo memories, verifies every one against the
working tree (cached by git blob, so this is cheap when nothing changed), and returns what
may reach a prompt: the MEMORY.md index and the usable memories. Stale memories are
withheld (`stale_policy = "withhold"`, the default) or kept in the index with a STALE mark
(`"mark"`); either way they are listed with the claim that failed, and one
`memory_verification` event records the check. A user turn that asks for no memory
("ignore memory", "fresh context"...) gets an empty tier for that turn, also logged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orchestrator.config import MemoryConfig
from orchestrator.events.log import EventLog
from orchestrator.memory.fresh import wants_fresh_context
from orchestrator.memory.verify import Verification, verify_store
from orchestrator.store.index import index_entry, render_index
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory
from orchestrator.store.repo import RepoMemoryStore

STALE_POLICIES = ("withhold", "mark")
MAX_LISTED = 50  # stale memories named in one event


@dataclass(frozen=True)
class StaleMemory:
    name: str
    claim: str  # the first claim that failed, as the memory wrote it
    reason: str  # why it failed

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "claim": self.claim, "reason": self.reason}


@dataclass
class PromptMemory:
    """What the repo memory tier contributes to one prompt."""

    index_text: str
    memories: list[Memory] = field(default_factory=list)  # usable (ok or changed)
    stale: list[StaleMemory] = field(default_factory=list)
    policy: str = "withhold"
    fresh_context: bool = False  # the user asked for no memory this turn
    verifications: list[Verification] = field(default_factory=list)

    @property
    def withheld(self) -> list[StaleMemory]:
        """Stale memories kept out of the prompt (none when the policy marks them)."""
        return self.stale if self.policy == "withhold" else []

    def to_payload(self) -> dict[str, Any]:
        counts = {r: 0 for r in ("ok", "changed", "stale")}
        for v in self.verifications:
            counts[v.result] += 1
        return {
            "purpose": "prompt",
            "policy": self.policy,
            "fresh_context": self.fresh_context,
            "checked": len(self.verifications),
            **counts,
            "withheld": [s.to_dict() for s in self.withheld[:MAX_LISTED]],
            "marked": [s.to_dict() for s in self.stale[:MAX_LISTED]]
            if self.policy == "mark"
            else [],
        }


def _mark_stale(text: str, memories: list[Memory], stale: dict[str, StaleMemory]) -> str:
    lines = {index_entry(m): m.name for m in memories if m.name in stale}
    out = []
    for line in text.splitlines():
        name = lines.get(line)
        out.append(f"{line} [STALE: {stale[name].reason}]" if name else line)
    return "\n".join(out) + "\n"


def memories_for_prompt(
    layout: Layout,
    config: MemoryConfig,
    log: EventLog | None = None,
    *,
    user_turn: str | None = None,
    phase: int | None = None,
    agent: str = "Orchestrator",
) -> PromptMemory:
    """The verified repo memory tier for one prompt (see the module docstring)."""
    policy = config.stale_policy if config.stale_policy in STALE_POLICIES else "withhold"
    if user_turn is not None and wants_fresh_context(user_turn):
        result = PromptMemory(index_text="", policy=policy, fresh_context=True)
        if log is not None:
            payload = result.to_payload()
            payload["reason"] = "the user turn asked for no memory"
            log.append("memory_verification", payload, agent=agent, phase=phase)
        return result

    active = RepoMemoryStore(layout).load_all().active if layout.initialised else []
    names = {m.name for m in active}
    verifications = [v for v in verify_store(layout)[0] if v.name in names] if active else []
    stale = {
        v.name: StaleMemory(v.name, v.failures[0].claim.text, v.failures[0].reason)
        for v in verifications
        if v.stale
    }
    usable = [m for m in active if m.name not in stale]
    if policy == "withhold":
        index_text = render_index(usable)
    else:
        index_text = _mark_stale(render_index(active), active, stale)
    result = PromptMemory(
        index_text=index_text,
        memories=usable,
        stale=list(stale.values()),
        policy=policy,
        verifications=verifications,
    )
    if log is not None:
        log.append("memory_verification", result.to_payload(), agent=agent, phase=phase)
    return result
