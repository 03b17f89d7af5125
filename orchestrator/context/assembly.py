"""Prompt assembly within a budget: a stable, cacheable prefix, then the changing part.

    stable:   base prompt | MEMORY.md index (<= 200 lines) | L3 items (<= 20)   <- cache=True
    changing: L2 digest (<= 5 newest episodes) | related past experience | phase card

Tool definitions travel in `Request.tools`, which the Messages API places before the system
prompt inside the same cached prefix; they count against the budget here.

When the whole is over `budget_tokens`, parts are trimmed in this order: related past
experience (lowest ranked first), the L2 digest (oldest first), L3 (lowest ranked first),
then the index (from its end). The base prompt and the phase card are never trimmed. Each
trimmed part says in the prompt how much it left out, and `Assembly.trimmed` says it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from orchestrator.messages import SystemPart, ToolSpec
from orchestrator.tokens import estimate_text, estimate_tools

MAX_L3_ITEMS = 20
MAX_L2_EPISODES = 5
MAX_INDEX_LINES = 200


@dataclass(frozen=True)
class PromptParts:
    base: str
    phase_card: str = ""
    tools: tuple[ToolSpec, ...] = ()
    memory_index: str = ""
    l3: tuple[str, ...] = ()  # rendered L3 items, most useful first
    l2: tuple[str, ...] = ()  # rendered episode digests (or cascading summaries), oldest first
    related: tuple[str, ...] = ()  # related past experience, best first


@dataclass(frozen=True)
class Assembly:
    parts: list[SystemPart]
    tokens: int  # estimated tokens of the system prompt and the tool definitions
    budget: int
    trimmed: list[str] = field(default_factory=list)  # what was left out, one line each
    over_budget: bool = (
        False  # true only when the base prompt, tools and phase card alone do not fit
    )


@dataclass
class _Section:
    label: str
    title: str
    items: list[str]
    total: int  # items before any cap or trim
    keep_from: str  # "start" keeps the first items (drops from the end), "end" the last
    stable: bool
    unit: str
    capped: int = 0  # left out by the part's cap
    trimmed: int = 0  # left out for the budget

    def text(self) -> str:
        if not self.items:
            return ""
        body = "\n".join(self.items)
        left_out = self.capped + self.trimmed
        if left_out:
            body += f"\n({left_out} of {self.total} {self.unit} not shown here)"
        return f"{self.title}\n{body}" if self.title else body

    def drop_one(self) -> bool:
        if not self.items:
            return False
        if self.keep_from == "start":
            self.items.pop()
        else:
            self.items.pop(0)
        self.trimmed += 1
        return True


def _section(
    label: str,
    title: str,
    items: Sequence[str],
    cap: int,
    keep_from: str,
    stable: bool,
    unit: str,
) -> _Section:
    items = [i for i in items if i.strip()]
    if cap <= 0:
        kept = []
    elif keep_from == "start":
        kept = items[:cap]
    else:
        kept = items[-cap:]
    return _Section(label, title, kept, len(items), keep_from, stable, unit, len(items) - len(kept))


def _index_lines(index: str) -> list[str]:
    return index.rstrip("\n").splitlines() if index.strip() else []


def assemble(parts: PromptParts, budget_tokens: int) -> Assembly:
    """The system prompt for `parts`, trimmed to `budget_tokens` (see the module docstring)."""
    sections = [
        _section(
            "memory-index",
            "",
            _index_lines(parts.memory_index),
            MAX_INDEX_LINES,
            "start",
            True,
            "index lines",
        ),
        _section(
            "l3",
            "# What this task has learned so far (L3)",
            parts.l3,
            MAX_L3_ITEMS,
            "start",
            True,
            "items",
        ),
        _section(
            "l2",
            "# Recent episodes of this task (L2)",
            parts.l2,
            MAX_L2_EPISODES,
            "end",
            False,
            "episodes",
        ),
        _section(
            "related",
            "# Related past experience",
            parts.related,
            len(parts.related),
            "start",
            False,
            "results",
        ),
    ]
    by_label = {s.label: s for s in sections}
    tool_tokens = estimate_tools(list(parts.tools))

    def build() -> list[SystemPart]:
        out = [SystemPart(parts.base, label="base")]
        for s in sections:
            if s.stable and s.items:
                out.append(SystemPart(s.text(), label=s.label))
        out[-1] = SystemPart(out[-1].text, cache=True, label=out[-1].label)
        for s in sections:
            if not s.stable and s.items:
                out.append(SystemPart(s.text(), label=s.label))
        if parts.phase_card:
            out.append(SystemPart(parts.phase_card, label="phase-card"))
        return out

    def size(system: list[SystemPart]) -> int:
        return estimate_text("\n\n".join(p.text for p in system)) + tool_tokens

    system = build()
    for label in ("related", "l2", "l3", "memory-index"):
        section = by_label[label]
        while size(system) > budget_tokens and section.drop_one():
            system = build()
    tokens = size(system)
    trimmed = []
    for s in sections:
        if s.capped:
            trimmed.append(f"{s.label}: {s.capped} of {s.total} {s.unit} over the part's cap")
        if s.trimmed:
            trimmed.append(f"{s.label}: {s.trimmed} of {s.total} {s.unit} left out for the budget")
    over = tokens > budget_tokens
    if over:
        trimmed.append(
            f"the base prompt, tool definitions and phase card alone take {tokens} tokens, "
            f"over the budget of {budget_tokens}"
        )
    return Assembly(system, tokens, budget_tokens, trimmed, over)


def assemble_system(parts: PromptParts, budget_tokens: int) -> list[SystemPart]:
    """The system prompt parts for a Request (the seam; `assemble` also says what it trimmed)."""
    return assemble(parts, budget_tokens).parts
