"""Importing a Claude Code memory folder through validation and Checklist A."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from orchestrator.cli import cli
from orchestrator.memory.importer import import_claude_code, kebab
from orchestrator.store.layout import Layout
from orchestrator.store.repo import RepoMemoryStore


def topic(folder: Path, stem: str, front: str, body: str) -> None:
    (folder / f"{stem}.md").write_text(f"---\n{front}---\n{body}\n")


def claude_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "claude-memory"
    folder.mkdir()
    (folder / "MEMORY.md").write_text(
        "- [Testing](testing.md): how tests run\n- [Gone](gone.md): deleted topic\n"
    )
    topic(
        folder,
        "Testing_Policy",
        "name: Testing Policy\ndescription: Never mock the database\ntype: feedback\n",
        "Integration tests hit a real database, never a mock.\n\n**Why:** a mocked run hid a "
        "broken migration.\n**How to apply:** use the docker fixture.",
    )
    topic(
        folder,
        "entry",
        "name: EntryPoint\ndescription: Where the CLI starts\ntype: reference\n",
        "The command line starts in `app/main.py` at `main()`.\n\n**Why:** every command "
        "goes through it.",
    )
    topic(
        folder,
        "noreason",
        "name: role\ndescription: The user's role\ntype: user\n",
        "A data scientist.",
    )
    topic(
        folder,
        "nowhy",
        "name: deploys\ndescription: Deploys on Fridays\ntype: project\n",
        "Deploys happen on Fridays.",
    )
    topic(folder, "badtype", "name: x\ndescription: y\ntype: rumour\n", "Something.")
    topic(folder, "badyaml", "name: x\ndescription: a: b: c\ntype: user\n", "Something.")
    (folder / "broken.md").write_text("no frontmatter here\n")
    topic(
        folder,
        "dup",
        "name: testing policy copy\ndescription: Never mock the database\ntype: feedback\n"
        "subject: testing policy\n",
        "Integration tests hit a real database, never a mock.\n\n**Why:** a mocked run hid a "
        "broken migration.",
    )
    return folder


def test_kebab_names() -> None:
    assert kebab("Testing Policy") == "testing-policy"
    assert kebab("testing_policy") == "testing-policy"
    assert kebab("EntryPoint") == "entry-point"


def test_import_writes_what_is_complete_and_reports_the_rest(
    layout: Layout, tmp_path: Path
) -> None:
    report = import_claude_code(layout, claude_folder(tmp_path))
    items = {i.source: i for i in report.items}
    assert items["Testing_Policy.md"].action == "created"
    assert items["Testing_Policy.md"].name == "testing-policy"
    assert items["entry.md"].name == "entry-point"
    assert items["noreason.md"].action == "created"  # a user memory needs no stated why
    assert "reason is required" in (items["nowhy.md"].reason or "")  # a project one does
    bad = items["badyaml.md"].reason or ""
    assert "mapping values are not allowed in this context (frontmatter line 2, column 15)" in bad
    assert "<unicode" not in bad
    assert "rumour" in (items["badtype.md"].reason or "")
    assert "no YAML frontmatter" in (items["broken.md"].reason or "")
    assert "near-duplicate of testing-policy" in (items["dup.md"].reason or "")
    assert "missing" in (items["gone.md"].reason or "")
    assert items["gone.md"].action == "skipped"

    store = RepoMemoryStore(layout)
    policy = store.get("testing-policy")
    assert policy.reason == "a mocked run hid a broken migration."
    assert policy.subject == "testing policy" and policy.type == "feedback"
    entry = store.get("entry-point")
    assert [c.path for c in entry.citations] == ["app/main.py"]
    assert "Claude Code" in (store.get("role").reason or "")
    assert sorted(m.name for m in store.load_all().memories) == [
        "entry-point",
        "role",
        "testing-policy",
    ]
    assert "entry-point" in layout.memory_index.read_text()


def test_of_two_near_duplicates_the_one_memory_md_lists_is_kept(
    layout: Layout, tmp_path: Path
) -> None:
    folder = tmp_path / "claude-memory"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("- [Style](zz-listed.md): code style\n")
    fact = "Format Python with ruff format before every commit.\n\n**Why:** CI checks it."
    for stem in ("aa-unlisted", "zz-listed"):
        front = f"name: {stem}\ndescription: Format with ruff\ntype: feedback\nsubject: style\n"
        topic(folder, stem, front, fact)
    items = {i.source: i for i in import_claude_code(layout, folder).items}
    assert items["zz-listed.md"].action == "created"
    assert items["aa-unlisted.md"].action == "skipped"
    assert "near-duplicate of zz-listed" in (items["aa-unlisted.md"].reason or "")


def test_cli_import_json(layout: Layout, tmp_path: Path, put: Callable[..., Any]) -> None:
    folder = claude_folder(tmp_path)
    result = CliRunner().invoke(
        cli, ["memory", "import", "--from", "claude-code", str(folder), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["created"] == 3 and data["skipped"] == 7
    again = CliRunner().invoke(cli, ["memory", "import", "--from", "claude-code", str(folder)])
    assert again.exit_code == 0 and "0 created" in again.output
    bad = CliRunner().invoke(
        cli, ["memory", "import", "--from", "claude-code", str(tmp_path / "nope")]
    )
    assert bad.exit_code == 2 and "not a folder" in bad.output
