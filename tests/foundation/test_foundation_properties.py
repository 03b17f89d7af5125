"""Property-based tests: malformed frontmatter, names and log lines never make a parser raise,
and the memory model's own check agrees with the JSON Schema derived from it."""

from __future__ import annotations

import json
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.checks.schema import _value_problems, shapes
from orchestrator.errors import OrchError, UsageError
from orchestrator.events.log import Event, parse_events
from orchestrator.schemas import validator
from orchestrator.store.fs import confine
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import (
    Citation,
    Memory,
    frontmatter_problems,
    parse_memory,
    serialize_memory,
)
from orchestrator.store.notes import Notes, parse_notes, render_notes
from orchestrator.store.repo import RepoMemoryStore, cache_row, from_cache_row
from orchestrator.store.tasks import SLUG_RX, VerifiedItem, slugify

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def canon(value: Any) -> str:
    """Equality that tells True from 1 and 1.0 from 1."""
    return json.dumps(value, sort_keys=True, default=repr)


# -- frontmatter ----------------------------------------------------------------------------
ATOMS = [
    "a",
    "name",
    "x-y",
    "yes",
    "No",
    "null",
    "~",
    "12",
    "012",
    "0x1f",
    "1_000",
    "1.5",
    ".inf",
    "-3",
    "+4",
    "2026-01-01",
    "2026-11-21T10:00:00Z",
    "http://x.y/z",
    "a:b",
    "a: b",
    "a #b",
    "a#b",
    "'q''s'",
    "'x",
    '"dq"',
    '"a\\nb"',
    "[a, b]",
    "[]",
    "{}",
    "{t: x, p: 2}",
    "{t: a:b}",
    "[a:b]",
    "-x",
    "- x",
    "?x",
    ":x",
    "x:",
    "&a",
    "*a",
    "!t x",
    "|",
    ">",
    "%",
    "@x",
    "`x",
    "<<",
    "=",
    "on",
    "Off",
    "é",
    "\u2028",
    "\x85",
    "1:20",
    "[a, [b]]",
    "{a: {b: c}}",
    "[,]",
    "{a}",
    "'a' #c",
    "a,b",
    "x]",
    "y}",
    "",
    " ",
    "  lead",
    "trail  ",
    "\t",
    "ü: x",
    "99999999999",
]
KEYS = ["name", "description", "type", "yes", "null", "1", "a b", "k", "path", "x_y", "-k", "<<"]


@st.composite
def yaml_line(draw: st.DrawFn) -> str:
    indent = draw(st.sampled_from(["", " ", "  ", "    ", "   "]))
    atom = draw(st.sampled_from(ATOMS) | st.text(max_size=8))
    key = draw(st.sampled_from(KEYS))
    return draw(
        st.sampled_from(
            [
                f"{indent}{key}: {atom}",
                f"{indent}{key}:",
                f"{indent}- {atom}",
                f"{indent}- {key}: {atom}",
                f"{indent}{atom}",
                "",
                f"{indent}# comment",
            ]
        )
    )


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 200)
    | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
FIELD_VALUES = {
    "name": st.sampled_from(["a", "a-b", "A.b_c", "", "-x", "a/b", "x" * 121, "ok\n"]) | JSONISH,
    "description": st.sampled_from(["d", ""]) | JSONISH,
    "type": st.sampled_from(["user", "feedback", "project", "reference", "other"]) | JSONISH,
    "status": st.sampled_from(["active", "superseded", "stale", None, "x"]) | JSONISH,
    "citations": st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "path": st.sampled_from(["a.py", ""]) | JSONISH,
                "line": st.sampled_from([1, 0, -1, 2.0, True, None]) | JSONISH,
                "symbol": JSONISH,
            },
        )
        | JSONISH,
        max_size=3,
    )
    | JSONISH,
    "supersedes": st.lists(st.text(max_size=3) | JSONISH, max_size=3) | JSONISH,
}
OTHER = ["subject", "reason", "superseded_by", "created", "updated", "source", "verified", "x"]


@SETTINGS
@given(st.fixed_dictionaries({}, optional={**FIELD_VALUES, **{k: JSONISH for k in OTHER}}))
def test_the_models_check_accepts_exactly_what_the_schema_accepts(raw: dict[str, Any]) -> None:
    """`frontmatter_problems` is the check every read and write runs; jsonschema validates
    the shipped memory.schema.json. Both come from the one `Memory` declaration."""
    ours = frontmatter_problems(raw)
    theirs = list(validator("memory").iter_errors(raw))
    assert bool(ours) == bool(theirs), (raw, ours, [e.message for e in theirs])
    for problem in ours:
        assert "\n" not in problem


@SETTINGS
@given(st.fixed_dictionaries({}, optional={**FIELD_VALUES, **{k: JSONISH for k in OTHER}}))
def test_a_value_that_passes_on_sight_has_no_problem(raw: dict[str, Any]) -> None:
    """The check's quick look (`Shape.plainly_accepts`) never lets through a value the
    full check would complain about."""
    for name, shape in shapes(Memory).items():
        if name in raw and shape.plainly_accepts(raw[name]):
            assert list(_value_problems(shape, raw[name], name)) == [], (name, raw[name])


@SETTINGS
@given(st.text(max_size=400), st.text(alphabet=string.ascii_letters + "-._/", max_size=12))
def test_parse_memory_never_raises_on_any_text(text: str, stem: str) -> None:
    parse_memory(text, stem)
    parse_memory("---\n" + text, stem)
    parse_memory("---\n" + text + "\n---\nbody\n", stem)


@SETTINGS
@given(st.lists(yaml_line(), max_size=10), st.text(max_size=40))
def test_parse_memory_never_raises_on_malformed_frontmatter(lines: list[str], body: str) -> None:
    text = "---\nname: x\ndescription: d\ntype: user\n" + "\n".join(lines) + "\n---\n" + body
    parsed = parse_memory(text, "x")
    assert parsed.memory is not None or parsed.problems
    for problem in parsed.problems:
        assert "\n" not in problem.line()


TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
)
NAMES = st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}", fullmatch=True)


@st.composite
def memories(draw: st.DrawFn) -> Memory:
    name = draw(NAMES)
    return Memory(
        name=name,
        description=draw(TEXT.filter(lambda t: t.strip() != "")),
        type=draw(st.sampled_from(["user", "feedback", "project", "reference"])),
        body=draw(TEXT),
        subject=draw(st.none() | TEXT),
        reason=draw(st.none() | TEXT),
        citations=tuple(
            draw(
                st.lists(
                    st.builds(
                        Citation,
                        TEXT.filter(bool),
                        st.none() | st.integers(1, 10_000),
                        st.none() | TEXT,
                    ),
                    max_size=3,
                )
            )
        ),
        status=draw(st.sampled_from(["active", "superseded", "stale"])),
        supersedes=tuple(draw(st.lists(NAMES, max_size=2))),
        superseded_by=draw(st.none() | NAMES),
        created=draw(st.none() | st.just("2026-11-21T10:00:00Z")),
        source=draw(st.none() | st.fixed_dictionaries({"task": NAMES, "phase": st.integers(1, 9)})),
        extra=draw(
            st.dictionaries(st.sampled_from(["tags", "origin"]), st.lists(NAMES, max_size=2))
        ),
    )


def normal_body(body: str) -> str:
    return body + "\n" if body and not body.endswith("\n") else body


@settings(SETTINGS, max_examples=100)
@given(memories(), memories())
def test_serialize_then_parse_gives_the_memory_back(memory: Memory, other: Memory) -> None:
    assert Memory.from_dict(memory.to_dict()) == memory  # the `--json` round trip
    text = serialize_memory(memory)
    parsed = parse_memory(text, memory.name)
    assert parsed.memory == memory.with_changes(body=normal_body(memory.body)), text
    row = json.loads(json.dumps(cache_row(parsed), ensure_ascii=False))
    assert from_cache_row(row).memory == parsed.memory  # the parse cache's round trip
    # rewriting over another file's text still says exactly `memory`
    changed = other.with_changes(name=memory.name)
    over = serialize_memory(changed, text)
    assert parse_memory(over, memory.name).memory == changed.with_changes(
        body=normal_body(changed.body)
    )


# -- names and paths ------------------------------------------------------------------------


@SETTINGS
@given(st.text(max_size=40))
def test_memory_names_never_leave_the_memory_folder(tmp_path_factory: Any, name: str) -> None:
    root = tmp_path_factory.getbasetemp() / "names"
    (root / "memories" / "repo").mkdir(parents=True, exist_ok=True)
    store = RepoMemoryStore(Layout(root))
    try:
        path = store.path_of(name)
    except UsageError:
        return
    assert path.parent == root / "memories" / "repo"
    assert path.name == f"{name}.md"


@SETTINGS
@given(st.text(max_size=40))
def test_confine_refuses_or_stays_inside(tmp_path_factory: Any, rel: str) -> None:
    root = tmp_path_factory.getbasetemp() / "confine"
    root.mkdir(exist_ok=True)
    try:
        path = confine(root, rel)
    except OrchError:
        return
    assert path.resolve().is_relative_to(root.resolve())


@SETTINGS
@given(st.text(max_size=60))
def test_slugify_gives_a_slug_or_a_usage_error(title: str) -> None:
    try:
        slug = slugify(title)
    except UsageError:
        return
    assert SLUG_RX.match(slug) and len(slug) <= 48


# -- tables and notes -----------------------------------------------------------------------
CELL = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=20
).map(lambda t: " ".join(t.split()))


@SETTINGS
@given(st.lists(st.builds(VerifiedItem, CELL, CELL, CELL, CELL, CELL), max_size=6))
def test_verified_items_table_round_trips(tmp_path_factory: Any, items: list[VerifiedItem]) -> None:
    from orchestrator.store.tasks import TaskFolder

    root = tmp_path_factory.mktemp("vi")
    (root / "plans" / "artifacts" / "t").mkdir(parents=True)
    task = TaskFolder(Layout(root), "t")
    task.save_verified(items)
    assert task.load_verified() == items


@SETTINGS
@given(
    st.lists(CELL.filter(lambda c: c.strip() and c.lower() != "none"), max_size=4),
    st.lists(CELL.filter(lambda c: c.strip() and c.lower() != "none"), max_size=4),
)
def test_notes_render_then_parse_round_trips(objective: list[str], pending: list[str]) -> None:
    notes = Notes(objective=objective, pending=pending)
    again = parse_notes(render_notes(notes))
    assert again.objective == [o.strip() for o in objective]
    assert again.pending == [p.strip() for p in pending]
    assert again.other == []


# -- log lines ------------------------------------------------------------------------------
def event_line(n: int) -> bytes:
    return (
        Event(
            ts="2026-11-21T10:00:00.000Z",
            trace_id="0b0e7a52-7d4c-4b8e-9a3f-2f0e6b7c9d10",
            task="t",
            agent="Orchestrator",
            phase=n,
            event_type="state_change",
            payload={"from": "A", "to": "B", "n": n},
        )
        .to_line()
        .encode()
    )


JUNK_LINE = st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"")) | st.sampled_from(
    [
        b"{}",
        b"[]",
        b"null",
        b'{"v": 1}',
        b"[" * 5000,
        b"1" * 5000,
        b'{"payload": []}',
        b'{"v":1,"ts":"x","trace_id":"t","task":"t","agent":"a","phase":"2","event_type":"e","payload":{}}',
        b'{"v":1,"ts":1,"trace_id":"t","task":"t","agent":"a","phase":null,"event_type":"e","payload":{}}',
        b"\xff\xfe",
        b'"just a string"',
    ]
)


@SETTINGS
@given(st.lists(st.integers(0, 5) | JUNK_LINE, max_size=12), st.binary(max_size=30), st.booleans())
def test_log_reader_keeps_every_good_line_and_never_raises(
    lines: list[int | bytes], tail: bytes, check: bool
) -> None:
    data = b"".join((event_line(x) if isinstance(x, int) else x + b"\n") for x in lines)
    data += tail.replace(b"\n", b"")
    result = parse_events(data, where="log.ndjson", check=check)
    good = [x for x in lines if isinstance(x, int)]
    assert [e.phase for e in result.events] == good
    junk = [x for x in lines if isinstance(x, bytes) and x.strip()]
    assert len(result.problems) == len(junk) + (1 if tail.replace(b"\n", b"").strip() else 0)
    for problem in result.problems:
        assert problem.startswith("log.ndjson: line ") and "\n" not in problem


@pytest.mark.parametrize("check", [False, True])
def test_log_reader_on_deep_nesting_and_huge_numbers(check: bool) -> None:
    data = b"[" * 100_000 + b"\n" + b"9" * 10_000 + b"\n" + event_line(1)
    result = parse_events(data, check=check)
    assert [e.phase for e in result.events] == [1]
    assert len(result.problems) == 2


def test_format_event_never_raises_on_odd_payloads() -> None:
    from orchestrator.commands.log import format_event

    for payload in ({}, {"reason": 3}, {"from": None}, {"x": "y" * 500}, {"event_type": []}):
        for kind in ("gate_event", "state_change", "error", "unknown"):
            event = Event("t", "i", "t", "a", None, kind, payload)
            assert "\n" not in format_event(event)
