"""The memory file format: round trip, byte-for-byte stability, tolerant parsing."""

from __future__ import annotations

import datetime
import difflib
import json

import pytest
from foundation_helpers import MEMORY_TEXT

from orchestrator.schemas import load_schema
from orchestrator.store.memfile import (
    SCHEMA_FILE,
    Citation,
    Memory,
    frontmatter_problems,
    load_yaml,
    memory_json_schema,
    parse_memory,
    serialize_memory,
    split_frontmatter,
)


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def full_memory(**changes: object) -> Memory:
    base = Memory(
        name="test-command",
        description="How to run the test suite",
        type="reference",
        body="The test command is `pytest -q`.\n",
        subject="test command",
        reason="Every phase gate runs it",
        citations=(Citation("pyproject.toml", 12), Citation("Makefile", None, "test")),
        created="2026-11-21T10:00:00Z",
        updated="2026-11-21T10:00:00Z",
        source={"task": "add-rate-limit", "phase": 2},
        verified={"commit": "3f2a", "at": "2026-11-21T10:00:00Z", "result": "ok"},
    )
    return base.with_changes(**changes)


def test_design_example_loads_with_every_field() -> None:
    parsed = parse_memory(MEMORY_TEXT, "test-command")
    assert parsed.problems == ()
    m = parsed.memory
    assert m is not None
    assert (m.name, m.type, m.status, m.subject) == (
        "test-command",
        "reference",
        "active",
        "test command",
    )
    assert m.citations == (Citation("pyproject.toml", 12, None),)
    assert m.created == "2026-11-21T10:00:00Z"  # a string, not a datetime
    assert m.source == {"task": "add-rate-limit", "phase": 2}
    assert m.verified == {"commit": "3f2a1b0", "at": "2026-11-21T10:00:00Z", "result": "ok"}
    assert m.fact == "The test command is `pytest -q`, run from the repository root."
    assert m.supersedes == () and m.superseded_by is None


def test_round_trip_of_a_written_memory_is_exact() -> None:
    memory = full_memory()
    text = serialize_memory(memory)
    again = parse_memory(text, memory.name)
    assert again.memory == memory
    assert serialize_memory(again.memory, text) == text  # saving again changes nothing


def test_unchanged_memory_keeps_every_byte_of_a_hand_written_file() -> None:
    odd = (
        "---\n# a comment kept above the keys\n"
        "name: odd\n"
        "description:   'Spaced, quoted'\n"
        "type: user\n"
        "tags: [a, b]\n"
        "subject: >-\n  folded\n  subject\n"
        "---\n\nBody after a blank line.\n"
    )
    memory = parse_memory(odd, "odd").memory
    assert memory is not None and memory.subject == "folded subject"
    assert memory.extra == {"tags": ["a", "b"]}
    assert serialize_memory(memory, odd) == odd


def test_supersede_changes_only_the_old_files_changed_keys() -> None:
    old = parse_memory(MEMORY_TEXT, "test-command").memory
    assert old is not None
    marked = old.with_changes(
        status="superseded", superseded_by="test-command-make", updated="2026-12-01T00:00:00Z"
    )
    out = serialize_memory(marked, MEMORY_TEXT)
    assert sorted(changed_lines(MEMORY_TEXT, out)) == [
        "+status: superseded",
        "+superseded_by: test-command-make",
        "+updated: 2026-12-01T00:00:00Z",
        "-status: active",
        "-superseded_by: null",
        "-updated: 2026-11-21T10:00:00Z",
    ]
    assert len(out.splitlines()) == len(MEMORY_TEXT.splitlines())
    assert parse_memory(out, "test-command").memory == marked


def test_minimal_file_gains_only_the_keys_that_change() -> None:
    minimal = "---\nname: user-role\ndescription: The user is a data scientist\ntype: user\n---\nShe works in R.\n"
    memory = parse_memory(minimal, "user-role").memory
    assert memory is not None and memory.status == "active"
    out = serialize_memory(memory.with_changes(verified={"result": "ok"}), minimal)
    assert changed_lines(minimal, out) == ["+verified: {result: ok}"]  # no `status: active`


def test_new_keys_land_in_canonical_order() -> None:
    minimal = "---\nname: a\ndescription: d\ntype: user\n---\nfact\n"
    memory = parse_memory(minimal, "a").memory
    assert memory is not None
    out = serialize_memory(memory.with_changes(subject="s", reason="r"), minimal)
    assert out.splitlines()[1:6] == [
        "name: a",
        "description: d",
        "type: user",
        "subject: s",
        "reason: r",
    ]


def test_body_is_kept_byte_for_byte_and_changes_alone() -> None:
    memory = parse_memory(MEMORY_TEXT, "test-command").memory
    assert memory is not None
    out = serialize_memory(memory.with_changes(body="A new fact.\n"), MEMORY_TEXT)
    fm_old, _ = split_frontmatter(MEMORY_TEXT)
    fm_new, body = split_frontmatter(out)
    assert fm_old == fm_new and body == "A new fact.\n"


def test_values_that_need_quoting_survive_a_round_trip() -> None:
    tricky = full_memory(
        description="yes: 'quoted' # not a comment",
        subject="null",
        reason="0123",
        extra={"note": "multi\nline", "flag": True},
    )
    again = parse_memory(serialize_memory(tricky), "test-command").memory
    assert again == tricky


def test_crlf_and_bom_files_load() -> None:
    text = "\ufeff" + MEMORY_TEXT.replace("\n", "\r\n")
    parsed = parse_memory(text, "test-command")
    assert parsed.memory is not None, parsed.problems
    assert parsed.memory.citations[0].line == 12


# -- tolerant parsing: every bad file gives one problem with its file and reason ------------


@pytest.mark.parametrize(
    ("text", "stem", "reason"),
    [
        ("no frontmatter at all\n", "x", "no YAML frontmatter"),
        ("---\nname: x\ndescription: d\ntype: user\n", "x", "no YAML frontmatter"),
        ("---\nname: [unclosed\n---\nbody\n", "x", "broken YAML frontmatter"),
        ("---\nname: x\n  bad: indent\n---\n", "x", "broken YAML frontmatter"),
        ("---\n- a list\n---\n", "x", "not a mapping"),
        ("---\n---\nbody\n", "x", "not a mapping"),
        ("---\nname: x\ntype: user\n---\nbody\n", "x", "missing required field 'description'"),
        ("---\ndescription: d\ntype: user\n---\n", "x", "missing required field 'name'"),
        ("---\nname: x\ndescription: d\ntype: opinion\n---\n", "x", "unknown type 'opinion'"),
        ("---\nname: other\ndescription: d\ntype: user\n---\n", "x", "is not the file's stem 'x'"),
        ("---\nname: x\ndescription: d\ntype: user\nstatus: gone\n---\n", "x", "status"),
        ("---\nname: x\ndescription: d\ntype: user\ncitations: [{line: 2}]\n---\n", "x", "path"),
        (
            "---\nname: x\ndescription: d\ntype: user\ncreated: !!timestamp 2026-01-01\n---\n",
            "x",
            "created",
        ),
        ("---\nname: x\ndescription: d\ntype: user\nn: !!int nope\n---\n", "x", "broken YAML"),
        ("---\n1: x\n---\n", "x", "keys must be text"),
    ],
)
def test_bad_files_give_one_reason_and_no_memory(text: str, stem: str, reason: str) -> None:
    parsed = parse_memory(text, stem, path=f"memories/repo/{stem}.md")
    assert parsed.memory is None
    errors = [p for p in parsed.problems if p.severity == "error"]
    assert errors, parsed.problems
    assert errors[0].line().startswith(f"memories/repo/{stem}.md: ")
    assert reason in errors[0].detail
    assert "\n" not in errors[0].line()


def test_minimal_claude_code_file_loads_with_warnings_only() -> None:
    text = "---\nname: prefers-tabs\ndescription: The user prefers tabs\ntype: feedback\n---\nUse tabs.\n"
    parsed = parse_memory(text, "prefers-tabs")
    assert parsed.memory is not None
    assert {p.severity for p in parsed.problems} == {"warning"}
    assert {p.detail for p in parsed.problems} == {
        "missing field 'subject'",
        "missing field 'reason'",
    }


def test_reference_without_citations_is_flagged_but_loads() -> None:
    text = "---\nname: r\ndescription: d\ntype: reference\n---\nFact.\n"
    parsed = parse_memory(text, "r")
    assert parsed.memory is not None
    assert any("citations" in p.detail for p in parsed.problems)


def test_unknown_keys_are_kept_as_extra() -> None:
    text = "---\nname: x\ndescription: d\ntype: user\ndistinct_from: [{name: y, reason: why}]\n---\nf\n"
    memory = parse_memory(text, "x").memory
    assert memory is not None
    assert memory.extra == {"distinct_from": [{"name": "y", "reason": "why"}]}
    assert load_yaml(split_frontmatter(serialize_memory(memory))[0])["distinct_from"] == [
        {"name": "y", "reason": "why"}
    ]


def test_the_shipped_json_schema_is_the_one_derived_from_the_model() -> None:
    shipped = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert shipped == memory_json_schema(), "run `python -m evals.schemas`"
    assert load_schema("memory") == shipped  # what the package's validators read


def test_the_models_check_names_the_field_and_what_is_wrong() -> None:
    problems = frontmatter_problems(
        {
            "name": "a b",
            "description": "",
            "type": "opinion",
            "status": None,
            "citations": [{"line": 0}, "x"],
            "supersedes": "old",
            "created": datetime.date(2026, 1, 1),
        }
    )
    assert problems == [
        "name 'a b' does not match ^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        "description must not be empty",
        "unknown type 'opinion' (one of user, feedback, project, reference)",
        "citations.0: missing required field 'path'",
        "citations.0.line must be at least 1",
        "citations.1 must be a mapping, not 'x'",
        "supersedes must be a list, not 'old'",
        "created must be text, not a date (2026-01-01)",
    ]
    assert frontmatter_problems({"name": "x", "description": "d", "type": "user"}) == []
    assert frontmatter_problems(["not", "a", "mapping"]) == ["must be a mapping, not a list"]


def test_a_whole_float_line_is_read_as_the_integer() -> None:
    text = (
        "---\nname: x\ndescription: d\ntype: user\ncitations: [{path: a.py, line: 3.0}]\n---\nf\n"
    )
    memory = parse_memory(text, "x").memory
    assert memory is not None and memory.citations == (Citation("a.py", 3),)
    assert type(memory.citations[0].line) is int


def test_a_loosely_written_citation_keeps_the_fields_the_model_takes() -> None:
    assert Citation.loosely({"path": "a.py", "line": "x", "symbol": 3}) == Citation("a.py")
    assert Citation.loosely({"path": "a.py", "line": 2.0, "note": 1}) == Citation("a.py", 2)
    assert Citation.loosely({"path": "a.py", "line": 0, "symbol": "f"}) == Citation(
        "a.py", None, "f"
    )
    assert Citation.loosely({"line": 2}) is None
    assert Citation.loosely({"path": "", "line": 3}) is None
