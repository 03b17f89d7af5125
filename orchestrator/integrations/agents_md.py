"""AGENTS.md kept true: one section of it, between two markers, from verified repo memory.

Nearly every coding agent reads AGENTS.md, so orch maintains one section of it:

    <!-- orch:memory:start -->
    ...one line a memory...
    <!-- orch:memory:end -->

The section holds the active memories that verify against the code now (a stale one is
left out), one line each: the fact and the memory's name. It stays short: at most
`MAX_LINES` lines and `MAX_TOKENS` tokens, the most cited memories first (cited by other
memories, then by the number of their own citations), then by name. How often a memory is
used lives in `.orch/`, which is not committed: the section depends only on what is, so it
reads the same in every clone and `--check` in CI agrees with the machine that wrote it.
Text outside the markers is never touched; the section is appended when missing (and the
file created when there is none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from orchestrator.config import MemoryConfig
from orchestrator.memory.use import memories_for_prompt
from orchestrator.store.fs import atomic_write
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory
from orchestrator.tokens import estimate_text

START = "<!-- orch:memory:start -->"
END = "<!-- orch:memory:end -->"
MAX_LINES = 30
MAX_TOKENS = 1200
LINE_CHARS = 220
HEADER = (
    "## What this repository's memory holds (kept by orch)\n\n"
    "Verified against the code when this section was written; `orch memory show NAME` "
    "has each one's reason and citations. Do not edit between the markers: "
    "`orch memory export --agents-md` rewrites it."
)


@dataclass
class Export:
    path: Path
    text: str  # the whole file as it should be
    changed: bool  # the file differs from that
    lines: int  # memory lines in the section
    left_out: int  # verified memories that did not fit


def agents_md(layout: Layout) -> Path:
    return layout.root / "AGENTS.md"


def _line(memory: Memory) -> str:
    fact = " ".join(memory.fact.split())
    if len(fact) > LINE_CHARS:
        fact = fact[: LINE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return f"- {fact} (`{memory.name}`)"


def _order(memories: list[Memory]) -> list[Memory]:
    """Most cited first: by other memories (their text names it), then by its citations."""
    names = {m.name for m in memories}
    cited = dict.fromkeys(names, 0)
    for m in memories:
        for word in set(re.findall(r"[a-z0-9][a-z0-9-]*[a-z0-9]", m.body)):
            if word in cited and word != m.name and "-" in word:
                cited[word] += 1
    return sorted(memories, key=lambda m: (-cited[m.name], -len(m.citations), m.name))


def section(layout: Layout, config: MemoryConfig) -> tuple[str, int, int]:
    """The section's text (markers included), the memory lines in it, those left out."""
    usable = memories_for_prompt(layout, config).memories
    lines: list[str] = []
    used = estimate_text(HEADER)
    left_out = 0
    for m in _order(usable):
        line = _line(m)
        cost = estimate_text(line) + 1
        if len(lines) >= MAX_LINES or used + cost > MAX_TOKENS:
            left_out += 1
            continue
        lines.append(line)
        used += cost
    body = lines or ["- (no verified repo memory yet)"]
    if left_out:
        body.append(f"- ({left_out} more: `orch memory list`)")
    return "\n".join([START, HEADER, "", *body, END]), len(lines), left_out


def export(layout: Layout, config: MemoryConfig) -> Export:
    """What AGENTS.md should be (nothing written: see `write`)."""
    path = agents_md(layout)
    current = path.read_text(encoding="utf-8") if path.is_file() else ""
    block, count, left = section(layout, config)
    if START in current and END in current.split(START, 1)[1]:
        before, rest = current.split(START, 1)
        after = rest.split(END, 1)[1]
        text = before + block + after
    else:
        text = current.rstrip("\n") + ("\n\n" if current.strip() else "") + block + "\n"
    return Export(path, text, text != current, count, left)


def write(result: Export) -> None:
    if result.changed:
        atomic_write(result.path, result.text)
