"""`orch memory ...` through click's CliRunner, on a real repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from foundation_helpers import MEMORY_TEXT

from orchestrator.store.layout import Layout
from orchestrator.store.memfile import parse_memory
from orchestrator.store.repo import RepoMemoryStore


@pytest.fixture
def cited(layout: Layout) -> Layout:
    (layout.root / "pyproject.toml").write_text("[project]\nname = 'x'\n" + "\n" * 20)
    (layout.root / "Makefile").write_text("test:\n\tpytest -q\n")
    return layout


def add(
    orch: Any,
    *extra: str,
    subject: str = "test command",
    fact: str = "The test command is `pytest -q`.",
) -> Any:
    return orch(
        "memory",
        "add",
        "--type",
        "reference",
        "--subject",
        subject,
        "--reason",
        "every phase gate runs it",
        "--cite",
        "pyproject.toml:12",
        "--fact",
        fact,
        *extra,
    )


def test_add_writes_a_full_memory_and_the_index(cited: Layout, orch: Any) -> None:
    run = add(orch, "--cite", "Makefile#test")
    assert run.code == 0, run.err
    assert run.out == "Wrote memories/repo/test-command.md and regenerated MEMORY.md.\n"
    text = (cited.repo_memories / "test-command.md").read_text()
    memory = parse_memory(text, "test-command").memory
    assert memory is not None
    assert memory.description == "The test command is `pytest -q`."
    assert memory.subject == "test command" and memory.status == "active"
    assert [c.to_dict() for c in memory.citations] == [
        {"path": "pyproject.toml", "line": 12},
        {"path": "Makefile", "symbol": "test"},
    ]
    assert memory.created and memory.created == memory.updated
    index = cited.memory_index.read_text()
    assert (
        "## Reference\n- [test-command](test-command.md): The test command is `pytest -q`.\n"
        in index
    )


def test_list_show_and_json(cited: Layout, orch: Any) -> None:
    add(orch)
    orch(
        "memory",
        "add",
        "--type",
        "user",
        "--subject",
        "editor",
        "--reason",
        "r",
        "--fact",
        "Uses vim.",
    )
    listed = orch("memory", "list")
    assert listed.code == 0
    assert listed.out.splitlines() == [
        "editor        user       Uses vim.",
        "test-command  reference  The test command is `pytest -q`.",
    ]
    data = json.loads(orch("memory", "list", "--json").out)
    assert data["v"] == 1 and data["problems"] == []
    assert [m["name"] for m in data["memories"]] == ["editor", "test-command"]
    assert data["memories"][1]["fact"] == "The test command is `pytest -q`."
    assert "body" not in data["memories"][0]
    only = json.loads(orch("memory", "list", "--json", "--type", "user").out)
    assert [m["name"] for m in only["memories"]] == ["editor"]
    shown = orch("memory", "show", "editor")
    text = (cited.repo_memories / "editor.md").read_text()
    assert shown.out.startswith(text) and "\nimportance 0.00 (use 0.00" in shown.out[len(text) :]
    assert json.loads(orch("memory", "show", "editor", "--json").out)["body"] == "Uses vim.\n"


def test_near_duplicate_policies(cited: Layout, orch: Any) -> None:
    add(orch)
    again = add(orch, "--name", "test-command-2")
    assert again.code == 1 and "near-duplicates test-command (1.00)" in again.err
    skipped = add(orch, "--name", "test-command-2", "--on-duplicate", "skip")
    assert skipped.code == 0 and skipped.out.startswith("Skipped test-command-2")
    assert not (cited.repo_memories / "test-command-2.md").exists()
    refused = add(orch, "--name", "test-command-2", "--on-duplicate", "create")
    assert refused.code == 2 and "stated reason" in refused.err
    made = add(
        orch,
        "--name",
        "test-command-2",
        "--on-duplicate",
        "create",
        "--duplicate-reason",
        "one is for CI, one for local runs",
        "--json",
    )
    assert made.code == 0 and json.loads(made.out)["action"] == "created"
    extra = parse_memory((cited.repo_memories / "test-command-2.md").read_text(), "test-command-2")
    assert extra.memory is not None
    assert extra.memory.extra["distinct_from"] == [
        {"name": "test-command", "reason": "one is for CI, one for local runs"}
    ]
    listed = json.loads(orch("memory", "list", "--json").out)["memories"]
    assert [m["extra"] for m in listed if m["name"] == "test-command-2"] == [extra.memory.extra]
    sup = add(orch, "--name", "test-command-3", "--on-duplicate", "supersede", "--json")
    assert json.loads(sup.out)["superseded"] == ["test-command"]


def test_supersede_keeps_the_old_file_and_changes_only_its_status_keys(
    cited: Layout, orch: Any
) -> None:
    old_path = cited.repo_memories / "test-command.md"
    old_path.write_text(MEMORY_TEXT)
    run = orch(
        "memory",
        "supersede",
        "test-command",
        "--name",
        "test-command-make",
        "--fact",
        "The test command is `make test`.",
    )
    assert run.code == 0, run.err
    after = old_path.read_text()
    changed = sorted(set(after.splitlines()) ^ set(MEMORY_TEXT.splitlines()))
    assert [c.split(":")[0] for c in changed] == [
        "status",
        "status",
        "superseded_by",
        "superseded_by",
        "updated",
        "updated",
    ]
    new = RepoMemoryStore(cited).get("test-command-make")
    assert new.supersedes == ("test-command",) and new.subject == "test command"
    assert new.citations == parse_memory(MEMORY_TEXT, "test-command").memory.citations  # type: ignore[union-attr]
    listed = orch("memory", "list", "--all").out
    assert "test-command       reference  How to run the test suite [superseded]" in listed
    assert "[test-command](" not in cited.memory_index.read_text()
    twice = orch("memory", "supersede", "test-command", "--name", "x-y", "--fact", "f")
    assert twice.code == 2 and "already superseded" in twice.err


def test_index_regenerates_and_checks(cited: Layout, orch: Any) -> None:
    (cited.repo_memories / "hand.md").write_text(
        "---\nname: hand\ndescription: Written by hand\ntype: user\n---\nA fact.\n"
    )
    check = orch("memory", "index", "--check")
    assert check.code == 1 and "out of step" in check.err
    assert orch("memory", "index").out == "Regenerated MEMORY.md.\n"
    assert "- [hand](hand.md): Written by hand" in cited.memory_index.read_text()
    assert orch("memory", "index", "--check").code == 0
    assert orch("memory", "index").out == "MEMORY.md was already up to date.\n"


def test_body_from_stdin(cited: Layout, orch: Any) -> None:
    body = "First paragraph is the fact.\n\n**Why:** because.\n"
    run = orch(
        "memory",
        "add",
        "--type",
        "feedback",
        "--subject",
        "style",
        "--reason",
        "r",
        "--body-file",
        "-",
        input=body,
    )
    assert run.code == 0, run.err
    memory = RepoMemoryStore(cited).get("style")
    assert memory.body == body and memory.fact == "First paragraph is the fact."


def test_minimal_files_load_and_list_without_errors(cited: Layout, orch: Any) -> None:
    (cited.repo_memories / "user-role.md").write_text(
        "---\nname: user-role\ndescription: The user is a data scientist\ntype: user\n---\nR.\n"
    )
    run = orch("memory", "list")
    assert run.code == 0 and "user-role" in run.out and run.err == ""


def test_help_pages_separate_add_and_supersede_options(orch: Any) -> None:
    assert "--on-duplicate" in orch("memory", "add", "--help").out
    assert "--on-duplicate" not in orch("memory", "supersede", "--help").out


def test_store_load_all_reports_every_bad_file_and_loads_the_rest(cited: Layout) -> None:
    d = cited.repo_memories
    (d / "good.md").write_text("---\nname: good\ndescription: d\ntype: user\n---\nf\n")
    (d / "broken.md").write_text("---\nname: [x\n---\n")
    (d / "latin.md").write_bytes(b"---\nname: latin\ndescription: caf\xe9\ntype: user\n---\n")
    result = RepoMemoryStore(cited).load_all()
    assert [m.name for m in result.memories] == ["good"]
    assert [(p.path, p.detail.split(":")[0]) for p in result.problems if p.severity == "error"] == [
        ("memories/repo/broken.md", "broken YAML frontmatter"),
        ("memories/repo/latin.md", "not UTF-8 text"),
    ]


def test_cache_serves_unchanged_files_and_sees_every_change(
    cited: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from orchestrator.store import repo as repo_module

    monkeypatch.setattr(repo_module, "RACY_NS", 0)  # files just written may be cached

    path = cited.repo_memories / "a.md"
    path.write_text("---\nname: a\ndescription: one\ntype: user\n---\nf\n")
    old = 1_600_000_000
    os.utime(path, (old, old))  # older than the racy window, so the parse is cached
    store = RepoMemoryStore(cited)
    assert [m.description for m in store.load_all().memories] == ["one"]
    parsed: list[str] = []
    real = repo_module.parse_file
    monkeypatch.setattr(
        repo_module, "parse_file", lambda p, *rest: parsed.append(p) or real(p, *rest)
    )
    assert [m.description for m in store.load_all().memories] == ["one"]
    assert parsed == []  # served from .orch/cache.sqlite
    path.write_text("---\nname: a\ndescription: two\ntype: user\n---\nf\n")
    os.utime(path, (old, old))  # same mtime as before: the change still shows (ctime, size)
    assert [m.description for m in store.load_all().memories] == ["two"]
    assert parsed == [str(path)]
    (cited.cache / "cache.sqlite").write_bytes(b"garbage, not a database")
    assert [m.description for m in store.load_all().memories] == ["two"]


def test_memory_folder_symlinked_out_of_the_repository_is_refused(
    cited: Layout, tmp_path: Path, orch: Any
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: leak\ndescription: secret\ntype: user\n---\nsecret\n")
    (cited.repo_memories / "leak.md").symlink_to(outside)
    listed = orch("memory", "list")
    assert listed.code == 1
    assert "secret" not in listed.out
    assert (
        "memories/repo/leak.md: a symlink to a file outside the repository; not read" in listed.err
    )
    shown = orch("memory", "show", "leak")
    assert shown.code == 2 and "outside the repository" in shown.err


def test_files_younger_than_the_clock_resolution_are_not_cached(
    cited: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.store import repo as repo_module

    (cited.repo_memories / "a.md").write_text("---\nname: a\ndescription: d\ntype: user\n---\nf\n")
    store = RepoMemoryStore(cited)
    store.load_all()
    parsed: list[str] = []
    real = repo_module.parse_file
    monkeypatch.setattr(
        repo_module, "parse_file", lambda p, *rest: parsed.append(p) or real(p, *rest)
    )
    store.load_all()
    assert len(parsed) == 1  # just written: parsed again until its timestamps are 2 s old


def test_a_corrupt_cache_row_is_parsed_again(
    cited: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from orchestrator.store import repo as repo_module

    monkeypatch.setattr(repo_module, "RACY_NS", 0)
    for name in ("a", "b"):
        (cited.repo_memories / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: about {name}\ntype: user\n---\nf\n"
        )
    store = RepoMemoryStore(cited)
    store.load_all()
    db = sqlite3.connect(cited.cache / "cache.sqlite")
    with db:
        db.execute(  # the stat key stays: the row is read, and does not decode
            "UPDATE entries SET value = substr(value, 1, instr(value, char(9))) || '{broken'"
            " WHERE tab = 'memory-files' AND key LIKE '%a.md'"
        )
    db.close()
    assert [m.description for m in store.load_all().memories] == ["about a", "about b"]


def test_a_fresh_clone_gets_its_parse_cache_from_the_first_listing(
    cited: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`.orch/` is git-ignored, so a clone has none: the first command that fills a cache
    creates it, and the second listing parses nothing."""
    import shutil

    from orchestrator.store import repo as repo_module

    monkeypatch.setattr(repo_module, "RACY_NS", 0)
    (cited.repo_memories / "a.md").write_text("---\nname: a\ndescription: d\ntype: user\n---\nf\n")
    shutil.rmtree(cited.cache)
    store = RepoMemoryStore(cited)
    assert [m.name for m in store.load_all().memories] == ["a"]
    assert (cited.cache / "cache.sqlite").is_file()
    parsed: list[str] = []
    real = repo_module.parse_file
    monkeypatch.setattr(
        repo_module, "parse_file", lambda p, *rest: parsed.append(p) or real(p, *rest)
    )
    assert [m.name for m in store.load_all().memories] == ["a"]
    assert parsed == []


def test_reading_an_uninitialised_repository_creates_no_cache(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert RepoMemoryStore(layout).load_all().memories == []
    assert not layout.cache.exists()
