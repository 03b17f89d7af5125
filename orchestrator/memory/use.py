"""Verify before use: the repo memory a prompt may see.

`memories_for_prompt` loads the active repo memories, verifies every one against the
working tree (cached by git blob, so this is cheap when nothing changed), and returns what
may reach a prompt: the MEMORY.md index and the usable memories. Stale memories are
withheld (`stale_policy = "withhold"`, the default) or kept in the index with a STALE mark
(`"mark"`); either way they are listed with the claim that failed, and one
`memory_verification` event records the check. A moved memory (its fact holds; a path
it names went elsewhere) reaches the prompt with `[MOVED: old moved to new]` after its
index entry. A user turn that asks for no memory
("ignore memory", "fresh context"...) gets an empty tier for that turn, also logged.

Each prompt's memories are recorded as used (`memory.usage`, with the task and phase of
the log), with their verification results. When the index would pass
`[memory] prompt_index_tokens`, the least important memories (`memory.importance`) leave
this prompt first, and the index says how many left and which.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orchestrator.config import MemoryConfig
from orchestrator.events.log import EventLog
from orchestrator.memory.fresh import wants_fresh_context
from orchestrator.memory.importance import importance
from orchestrator.memory.usage import UsageLog
from orchestrator.memory.verify import RESULTS, Verification, verify_store
from orchestrator.store.index import MAX_INDEX_LINES, index_entry, render_index
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.tokens import estimate_text

STALE_POLICIES = ("withhold", "mark")
MAX_LISTED = 50  # stale memories named in one event
INDEX_ROOM = MAX_INDEX_LINES - 20  # entries a prompt's index holds, headings and notes aside


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
    memories: list[Memory] = field(default_factory=list)  # usable (ok, changed or moved)
    stale: list[StaleMemory] = field(default_factory=list)
    policy: str = "withhold"
    fresh_context: bool = False  # the user asked for no memory this turn
    verifications: list[Verification] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # left out for the token cap, least first

    @property
    def withheld(self) -> list[StaleMemory]:
        """Stale memories kept out of the prompt (none when the policy marks them)."""
        return self.stale if self.policy == "withhold" else []

    def to_payload(self) -> dict[str, Any]:
        counts = dict.fromkeys(RESULTS, 0)
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
            **({"dropped": self.dropped[:MAX_LISTED]} if self.dropped else {}),
        }


def _mark(text: str, memories: list[Memory], marks: dict[str, str]) -> str:
    """`text` (an index) with `[mark]` after the entries of the memories `marks` names."""
    lines = {index_entry(m): m.name for m in memories if m.name in marks}
    out = []
    for line in text.splitlines():
        name = lines.get(line)
        out.append(f"{line} [{marks[name]}]" if name else line)
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
    verifications, stale = _checked(layout, active)
    usable = [m for m in active if m.name not in stale]
    shown, dropped = _within_budget(layout, config, active if policy == "mark" else usable)
    marks = {v.name: "MOVED: " + v.summary() for v in verifications if v.result == "moved"}
    if policy == "mark":
        marks.update({name: f"STALE: {s.reason}" for name, s in stale.items()})
    result = PromptMemory(
        index_text=_index_text(shown, marks, dropped),
        memories=[m for m in usable if m.name not in dropped],
        stale=list(stale.values()),
        policy=policy,
        verifications=verifications,
        dropped=dropped,
    )
    if log is not None:
        with UsageLog(layout) as usage:
            usage.record_use(
                [m.name for m in result.memories], via="prompt", task=log.task, phase=phase
            )
            usage.record_checks((v.name, v.result) for v in verifications)
        log.append("memory_verification", result.to_payload(), agent=agent, phase=phase)
    return result


def _checked(
    layout: Layout, active: list[Memory]
) -> tuple[list[Verification], dict[str, StaleMemory]]:
    """Each active memory's verification, and the stale ones with their first failure."""
    names = {m.name for m in active}
    verifications = [v for v in verify_store(layout)[0] if v.name in names] if active else []
    stale = {
        v.name: StaleMemory(v.name, v.failures[0].claim.text, v.failures[0].reason)
        for v in verifications
        if v.stale
    }
    return verifications, stale


def _index_text(shown: list[Memory], marks: dict[str, str], dropped: list[str]) -> str:
    """The index a prompt sees: moved entries marked with where their paths went, stale
    ones (policy "mark") with why, and what was left out."""
    text = render_index(shown)
    if marks:
        text = _mark(text, shown, marks)
    if dropped:
        text += (
            f"({len(dropped)} more memories left out of this prompt, least important first: "
            f"{', '.join(dropped[:MAX_LISTED])})\n"
        )
    return text


def _within_budget(
    layout: Layout, config: MemoryConfig, memories: list[Memory]
) -> tuple[list[Memory], list[str]]:
    """`memories` whose index fits `prompt_index_tokens`, and the names left out (the least
    important first); the index keeps its own order."""
    cap = config.prompt_index_tokens if config.prompt_index_tokens > 0 else None
    total = estimate_text(render_index(memories))
    kept = len([m for m in memories if m.active])
    if (cap is None or total <= cap) and kept <= INDEX_ROOM:
        return memories, []
    scores = importance(layout, memories, config)
    ranked = sorted((m for m in memories if m.active), key=lambda m: (scores[m.name].score, m.name))
    cost = {m.name: estimate_text(index_entry(m)) + 1 for m in ranked}
    dropped = []
    for m in ranked:
        if (cap is None or total <= cap) and kept <= INDEX_ROOM:
            break
        dropped.append(m.name)
        total -= cost[m.name]
        kept -= 1
    gone = set(dropped)
    return [m for m in memories if m.name not in gone], dropped
