"""The fast frontmatter path reads exactly what PyYAML reads, or leaves the text to it."""

from __future__ import annotations

import pytest

from orchestrator.store.memfile import (
    _RESOLVER,
    Citation,
    Memory,
    load_yaml,
    serialize_memory,
    split_frontmatter,
)
from orchestrator.store.plainfront import PlainReader, plain_mapping

WRITTEN = [
    Memory(
        name="api-limits",
        description="The API allows 100 requests: per minute, #1 rule",
        type="reference",
        subject="rate limit",
        reason="clients retry on 429",
        citations=(Citation("svc/api.py", 12, "limit"), Citation("docs/x.md")),
        supersedes=("old-one", "yes"),
        created="2026-10-01T10:00:00Z",
        source={"task": "t-1", "phase": 2},
        verified={"commit": "0123456", "at": "2026-10-01T10:00:00Z", "result": "ok"},
        body="The API allows 100 requests a minute.\n",
    ),
    Memory(name="it-s", description="It's 'quoted' and -dashed", type="user", body="x\n"),
    Memory(name="n", description="null", type="feedback", subject="true", reason="1.5"),
]

ODD = [
    "on: x\n",
    "key: yes\n",
    "key: 007\n",
    "key: 0x1F\n",
    "key: 1.5\n",
    "key: ~\n",
    "key: 'it''s'\n",
    "key: a: b\n",
    "key: a #c\n",
    "key: a#c\n",
    "key: -x\n",
    "key: [a, b]\n",
    "key: []\n",
    "key: {}\n",
    "key: {a: 1, b: 'x, y', c: plain words}\n",
    "key: {a: 1,b: 2}\n",
    "key: { a: 1 }\n",
    'key: "x"\n',
    "key: x \n",
    "key: x:\n",
    "key:\n",
    "key:\n- a\n- 'b'\n- 3\n",
    "key:\n- a: 1\n  b: two\n- c: x\n",
    "key:\n  - a\n",
    "key:\n- a\n  b\n",
    "a: 1\na: 2\n",
    "a: 1\n\nb: 2\n",
    "# note\na: 1\n",
    "a: \tb\n",
    "a: &x b\n",
    "a: !!str 1\n",
    "a: |\n  text\n",
    "a: b\n  c\n",
    "a: `b`\n",
    "a: b `c`\n",
    "a: café — naïve\n",
    "a: 10\n",
    "a: 0\n",
    "a: 1_000\n",
    "a: =\n",
    "a: <<\n",
    "a: 12:30\n",
    "a: .inf\n",
    "",
    "a: 1",
]


def _same(text: str) -> None:
    fast = plain_mapping(text, _RESOLVER)
    if fast is None:
        return
    slow = load_yaml(text)
    assert fast == slow
    assert list(fast) == list(slow)
    assert [type(v) for v in fast.values()] == [type(v) for v in slow.values()]


@pytest.mark.parametrize("memory", WRITTEN, ids=lambda m: m.name)
def test_what_orch_writes_is_read_by_the_fast_path_as_pyyaml_reads_it(memory: Memory) -> None:
    fm, _ = split_frontmatter(serialize_memory(memory))
    assert fm is not None
    assert plain_mapping(fm, _RESOLVER) is not None
    _same(fm)


@pytest.mark.parametrize("text", ODD)
def test_odd_yaml_is_read_the_same_or_left_to_pyyaml(text: str) -> None:
    _same(text)


def test_what_yaml_would_type_or_refuse_is_left_to_pyyaml() -> None:
    for text in ("on: x\n", "key: yes\n", "key: 007\n", "a: 1\na: 2\n", "key: a: b\n"):
        assert plain_mapping(text, _RESOLVER) is None


def test_a_character_yaml_refuses_or_reads_otherwise_is_left_to_pyyaml() -> None:
    """ASCII and other texts alike: control characters, tabs, carriage returns, other line
    breaks and a byte-order mark send the text to PyYAML."""
    for odd in ("\x00", "\x07", "\x1b", "\x7f", "\t", "\r", "\x85", "\u2028", "\ufeff", "\x9f"):
        for text in (f"a: b{odd}c\n", f"a: é{odd}\n"):
            assert plain_mapping(text, _RESOLVER) is None, repr(text)
    assert plain_mapping("a: b ~ c\n", _RESOLVER) == {"a": "b ~ c"}
    assert plain_mapping("a: é\n", _RESOLVER) == {"a": "é"}


def test_files_of_one_listing_sharing_a_flow_mapping_each_get_their_own() -> None:
    """A reader reads a flow mapping two files share once, and hands each file its own
    copy: changing one file's mapping leaves the other's as read."""
    reader = PlainReader(_RESOLVER)
    text = "name: a\nverified: {commit: 9f3e2d1, at: '2026-11-02T08:30:00Z', result: ok}\n"
    first = reader.mapping(text)
    second = reader.mapping(text.replace("name: a", "name: b"))
    assert first is not None and second is not None
    assert first["verified"] == second["verified"] == load_yaml(text)["verified"]
    first["verified"]["result"] = "stale"
    assert second["verified"]["result"] == "ok"
    assert reader.mapping(text) == load_yaml(text)
