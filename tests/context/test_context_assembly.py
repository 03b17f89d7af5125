"""Prompt assembly: a stable cached prefix, then the changing part; caps and the budget."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

from orchestrator.context import ContextManager, PromptParts, assemble, assemble_system
from orchestrator.context.folding import episodes
from orchestrator.messages import Message, Request, ToolSpec
from orchestrator.store.tasks import TaskFolder
from orchestrator.tokens import estimate_request

TOOL = ToolSpec(
    "read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
)


def parts(**kw: object) -> PromptParts:
    defaults: dict[str, object] = {
        "base": "BASE PROMPT " * 20,
        "phase_card": "PHASE CARD: wire the limiter",
        "tools": (TOOL,),
        "memory_index": "# Memory index\n\n## Project\n"
        + "".join(f"- [m{i}](m{i}.md): fact {i}\n" for i in range(10)),
        "l3": tuple(f"- [fact] subject {i}: text {i}" for i in range(5)),
        "l2": tuple(f"Episode ep-{i:04d}: summary {i}" for i in range(3)),
        "related": tuple(f"related experience {i}: " + "detail " * 30 for i in range(3)),
    }
    return PromptParts(**{**defaults, **kw})  # type: ignore[arg-type]


def labels(system: list) -> list[str]:  # type: ignore[type-arg]
    return [p.label for p in system]


def test_stable_prefix_first_and_the_cache_mark_on_its_last_part() -> None:
    system = assemble_system(parts(), 100_000)
    assert labels(system) == ["base", "memory-index", "l3", "l2", "related", "phase-card"]
    assert [p.cache for p in system] == [False, False, True, False, False, False]
    assert system[0].text == parts().base and system[-1].text == parts().phase_card
    # without index and L3 the base prompt is the cached prefix
    bare = assemble_system(parts(memory_index="", l3=()), 100_000)
    assert labels(bare)[0] == "base" and bare[0].cache and sum(p.cache for p in bare) == 1


def test_each_part_is_capped_and_says_so() -> None:
    assembly = assemble(
        parts(
            memory_index="\n".join(f"line {i}" for i in range(260)),
            l3=tuple(f"item {i}" for i in range(35)),
            l2=tuple(f"episode {i}" for i in range(9)),
        ),
        1_000_000,
    )
    by = {p.label: p.text for p in assembly.parts}
    assert by["memory-index"].count("\nline ") == 199 and "line 199" in by["memory-index"]
    assert "line 200" not in by["memory-index"]
    assert "(60 of 260 index lines not shown here)" in by["memory-index"]
    assert "item 19" in by["l3"] and "item 20" not in by["l3"]
    assert "(15 of 35 items not shown here)" in by["l3"]
    shown = [f"episode {i}" in by["l2"] for i in range(9)]
    assert shown == [False] * 4 + [True] * 5  # the five most recent
    assert assembly.trimmed == [
        "memory-index: 60 of 260 index lines over the part's cap",
        "l3: 15 of 35 items over the part's cap",
        "l2: 4 of 9 episodes over the part's cap",
    ]
    assert not assembly.over_budget


def _size(system: list) -> int:  # type: ignore[type-arg]
    return estimate_request(Request(system, [], [TOOL]))


def test_the_budget_trims_the_changing_part_first_then_l3_never_base_or_card() -> None:
    full = assemble(parts(), 100_000)
    assert full.trimmed == [] and full.tokens == _size(full.parts)
    # a little over: related experience goes first, lowest ranked first
    small = assemble(parts(), full.tokens - 5)
    assert small.tokens <= full.tokens - 5 and small.tokens == _size(small.parts)
    related = next(p.text for p in small.parts if p.label == "related")
    assert "related experience 0" in related and "related experience 2" not in related
    assert "(1 of 3 results not shown here)" in related
    assert small.trimmed == ["related: 1 of 3 results left out for the budget"]
    # much tighter: related and L2 are gone, L3 is trimmed, base and card intact
    base_only = assemble(parts(memory_index="", l3=(), l2=(), related=()), 100_000).tokens
    tight = assemble(parts(), base_only + 40)
    got = {p.label: p.text for p in tight.parts}
    assert "related" not in got and "l2" not in got
    assert got["base"] == parts().base and got["phase-card"] == parts().phase_card
    assert tight.tokens <= base_only + 40
    assert any(t.startswith("l3: ") for t in tight.trimmed)
    assert "related: 3 of 3 results left out for the budget" in tight.trimmed
    assert "l2: 3 of 3 episodes left out for the budget" in tight.trimmed
    # impossible: the base prompt and the card alone do not fit; they are still whole
    over = assemble(parts(), 10)
    assert over.over_budget and labels(over.parts) == ["base", "phase-card"]
    assert over.parts[0].text == parts().base and "over the budget of 10" in over.trimmed[-1]


def test_the_manager_fills_l3_and_the_l2_digest_from_the_task_folder(
    make_manager: Callable[..., ContextManager], kit: SimpleNamespace, task: TaskFolder
) -> None:
    manager = make_manager(fold_every_turns=20)
    messages = [Message.user("go")]
    for turn in range(60):
        messages = manager.prepare(
            [*messages, *kit.exchange(turn, size=900)], phase=1, last_instruction="go"
        )
    made = episodes(task)
    assert made
    got = manager.prompt_parts(base="BASE", tools=[TOOL], memory_index="# Memory index\n")
    assert got.phase_card == kit.PHASE_CARD
    assert any("[decision] limiter algorithm: token bucket" in item for item in got.l3)
    assert len(got.l2) == min(5, len(made))
    assert got.l2[-1].startswith(f"Episode {made[-1]['id']} (phase 1, turns ")
    system = assemble_system(got, 50_000)
    assert labels(system) == ["base", "memory-index", "l3", "l2", "phase-card"]
