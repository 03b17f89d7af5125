"""The fast frontmatter reader says what PyYAML says, or leaves the text to PyYAML.

Whenever `quickyaml.read` answers, the answer must equal PyYAML's (through the loader memory
files use), types included; text PyYAML refuses must never get an answer. And the files orch
writes must take the fast path, or the reader is dead weight.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_foundation_properties import ATOMS, KEYS, canon, memories
from test_foundation_properties import SETTINGS as BASE_SETTINGS

from orchestrator.store import quickyaml
from orchestrator.store.memfile import (
    Citation,
    Memory,
    load_yaml,
    serialize_memory,
    split_frontmatter,
)

SETTINGS = settings(BASE_SETTINGS, max_examples=400)


def agrees(text: str) -> dict[str, Any] | None:
    quick = quickyaml.read(text)
    if quick is None:
        return None
    try:
        slow = load_yaml(text)
    except Exception as exc:  # PyYAML refuses it: the fast reader must not have answered
        pytest.fail(f"quickyaml read text PyYAML refuses ({exc}): {text!r} -> {quick!r}")
    assert canon(quick) == canon(slow), text
    return quick


def frontmatter(memory: Memory) -> str:
    fm, _ = split_frontmatter(serialize_memory(memory))
    assert fm is not None
    return fm


@SETTINGS
@given(memories())
def test_any_written_memory_reads_the_same(memory: Memory) -> None:
    agrees(frontmatter(memory))


WORD = st.from_regex(r"[A-Za-z][A-Za-z0-9_./()'`-]{0,9}", fullmatch=True).filter(
    lambda w: quickyaml._resolver()(w) == quickyaml.STR
)
PROSE = st.lists(
    WORD | st.sampled_from(["a,", "b;", "x: y", "n #1", "3.11", "12"]), min_size=1, max_size=6
).map(" ".join)


@SETTINGS
@given(
    memories(),
    PROSE,
    PROSE,
    PROSE,
    st.lists(
        st.builds(Citation, WORD, st.none() | st.integers(1, 9999), st.none() | WORD), max_size=3
    ),
)
def test_memories_in_everyday_words_take_the_fast_path(
    memory: Memory, description: str, subject: str, reason: str, citations: list[Citation]
) -> None:
    memory = memory.with_changes(
        description=description,
        subject=subject,
        reason=reason,
        citations=tuple(citations),
        extra={},
    )
    fm = frontmatter(memory)
    assert agrees(fm) is not None, fm


def test_orchs_own_shape_is_read_fast() -> None:
    memory = Memory(
        name="test-command",
        description="How to run the tests: `make test`",
        type="project",
        body="Run `make test`.\n",
        subject="test command",
        reason="Every phase gate runs it; it's the one the CI calls",
        citations=(Citation("Makefile", 12, "test"), Citation("pyproject.toml")),
        supersedes=("old-test-command",),
        created="2026-11-21T10:00:00Z",
        updated="2026-11-21T10:00:00Z",
        source={"task": "add-rate-limit", "phase": 2},
    )
    fm = frontmatter(memory)
    quick = agrees(fm)
    assert quick is not None, fm
    assert quick["citations"] == [
        {"path": "Makefile", "line": 12, "symbol": "test"},
        {"path": "pyproject.toml"},
    ]
    assert quick["source"] == {"task": "add-rate-limit", "phase": 2}
    assert quick["supersedes"] == ["old-test-command"]
    assert quick["reason"] == "Every phase gate runs it; it's the one the CI calls"


@pytest.mark.parametrize(
    "text",
    [
        "name: x\nflag: yes\n",  # a bool
        "name: x\nline: 012\n",  # an octal int in YAML 1.1
        "name: x\nv: 1.5\n",
        "name: x\nv: ~\n",
        "name: x\nv:\n",  # null
        "name: x # comment\n",
        "name: &a x\n",
        "name: !!str 1\n",
        "name: |\n  x\n",
        "name: x\n  continued\n",
        "name: x\nname: y\n",  # a duplicate key
        "name: 'x\n  y'\n",
        'name: "a\\tb"\n',
        "name: x\r\n",
        "name:\tx\n",
        "citations:\n  - path: a.py\n",  # indented list
        "source: {task: a, phase: 1.5}\n",
        "yes: x\n",  # a key YAML reads as a bool
        "",
    ],
)
def test_text_outside_the_shape_goes_to_pyyaml(text: str) -> None:
    assert quickyaml.read(text) is None


@st.composite
def yaml_text(draw: st.DrawFn) -> str:
    """Lines in and around orch's shape: keys, scalars of every YAML flavour, list items."""
    key = st.sampled_from([*KEYS, "citations", "source", "line"])
    atom = st.sampled_from(ATOMS) | st.text(max_size=10)
    line = st.one_of(
        st.builds(lambda k, a: f"{k}: {a}", key, atom),
        st.builds(lambda k: f"{k}:", key),
        st.builds(lambda a: f"- {a}", atom),
        st.builds(lambda k, a: f"- {k}: {a}", key, atom),
        st.builds(lambda k, a: f"  {k}: {a}", key, atom),
        st.builds(lambda k, a, b: f"{k}: {{t: {a}, p: {b}}}", key, atom, atom),
        st.sampled_from(["", "---", "# c", "  x", "-", "- ", "...", "key:  x"]),
    )
    return "\n".join(draw(st.lists(line, min_size=1, max_size=8))) + draw(
        st.sampled_from(["\n", ""])
    )


@SETTINGS
@given(yaml_text())
@example("name: 'it''s'\nline: 0\n")
@example("name:\n- \n")
@example("k: a, b [c] {d}\n")
def test_any_answer_equals_pyyamls(text: str) -> None:
    agrees(text)


@settings(SETTINGS, max_examples=300)
@given(
    st.dictionaries(
        st.text(max_size=6),
        st.recursive(
            st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats() | st.text(max_size=12),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=4), inner, max_size=3)
            ),
            max_leaves=6,
        ),
        max_size=6,
    ),
    st.booleans(),
)
def test_whatever_pyyaml_dumps_reads_back_the_same(data: dict[str, Any], flow: bool) -> None:
    from orchestrator.store.memfile import dump_yaml

    agrees(dump_yaml(data, flow=flow))
