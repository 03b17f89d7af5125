"""MEMORY.md: grouped by type, deterministic, at most 200 lines with an "N more" line."""

from __future__ import annotations

import random

from orchestrator.store.index import MAX_INDEX_LINES, render_index
from orchestrator.store.memfile import MEMORY_TYPES, Memory


def mem(name: str, kind: str = "project", status: str = "active", desc: str = "") -> Memory:
    return Memory(name=name, description=desc or f"About {name}", type=kind, status=status)


def test_groups_by_type_in_fixed_order_and_sorts_by_name() -> None:
    text = render_index(
        [
            mem("zeta", "reference"),
            mem("alpha", "user"),
            mem("beta", "reference"),
            mem("gamma", "feedback"),
        ]
    )
    lines = text.splitlines()
    headings = [line for line in lines if line.startswith("## ")]
    assert headings == ["## User", "## Feedback", "## Reference"]  # no empty Project group
    ref = lines.index("## Reference")
    assert lines[ref + 1 : ref + 3] == [
        "- [beta](beta.md): About beta",
        "- [zeta](zeta.md): About zeta",
    ]
    assert text.endswith("\n") and "more active memories" not in text


def test_inactive_memories_are_counted_not_listed() -> None:
    text = render_index([mem("a"), mem("b", status="superseded"), mem("c", status="stale")])
    assert "[b]" not in text and "[c]" not in text
    assert "2 superseded or stale memories are not listed: `orch memory list --all`." in text


def test_description_is_one_line() -> None:
    text = render_index([mem("a", desc="two\nlines   here")])
    assert "- [a](a.md): two lines here" in text.splitlines()


def test_same_memories_in_any_order_give_the_same_bytes() -> None:
    items = [mem(f"m-{i:04d}", MEMORY_TYPES[i % 4]) for i in range(500)]
    shuffled = items[:]
    random.Random(7).shuffle(shuffled)
    assert render_index(items) == render_index(shuffled)


def test_thousands_of_memories_stay_within_200_lines_and_say_how_many_are_left_out() -> None:
    items = [mem(f"m-{i:05d}", MEMORY_TYPES[i % 4]) for i in range(5000)]
    items += [mem(f"old-{i}", status="superseded") for i in range(30)]
    text = render_index(items)
    lines = text.splitlines()
    assert len(lines) == MAX_INDEX_LINES
    entries = [line for line in lines if line.startswith("- [")]
    more = [line for line in lines if "more active memories are not shown here" in line]
    assert len(more) == 1
    assert more[0] == (
        f"{5000 - len(entries)} more active memories are not shown here: "
        "`orch memory list` lists them all."
    )
    assert "30 superseded or stale memories are not listed" in text
    # every group keeps a fair share: none is starved by the others
    shares = {}
    current = ""
    for line in lines:
        if line.startswith("## "):
            current = line
            shares[current] = 0
        elif line.startswith("- ["):
            shares[current] += 1
    assert len(shares) == 4 and max(shares.values()) - min(shares.values()) <= 1


def test_small_groups_are_shown_whole_when_the_cap_bites() -> None:
    items = [mem(f"p-{i:05d}", "project") for i in range(3000)] + [
        mem("u-1", "user"),
        mem("u-2", "user"),
    ]
    lines = render_index(items).splitlines()
    assert "- [u-1](u-1.md): About u-1" in lines and "- [u-2](u-2.md): About u-2" in lines
    assert len(lines) == MAX_INDEX_LINES


def test_exactly_at_the_cap_needs_no_more_line() -> None:
    # header (3) + blank and heading (2) = 5 fixed lines: 195 entries fill 200 lines
    items = [mem(f"m-{i:03d}") for i in range(195)]
    lines = render_index(items).splitlines()
    assert len(lines) == 200 and not any("more active" in line for line in lines)
    lines = render_index([*items, mem("m-999")]).splitlines()
    assert len(lines) <= 200 and lines[-1].startswith("3 more active memories")
