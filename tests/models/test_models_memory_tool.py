"""The memory tool on real files in a real git repository: every command, every refusal."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.models.memory_tool import MemoryToolHandler, ToolInputError
from orchestrator.store.layout import Layout
from orchestrator.store.repo import RepoMemoryStore

TEST_COMMAND = """---
description: How to run the test suite
type: reference
subject: test command
reason: Every phase gate runs it
citations:
  - path: pyproject.toml
    line: 4
---
The test command is `pytest -q`, run from the repository root.
"""

HANDLER_STYLE = """---
type: project
subject: request handler
reason: Every endpoint goes through it
citations:
  - path: app.py
    symbol: handler
---
All requests pass through `handler` in app.py, which returns 1.
"""


@pytest.fixture
def events() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def tool(layout: Layout, events: list[dict[str, Any]]) -> MemoryToolHandler:
    return MemoryToolHandler(layout, on_event=events.append)


def create(tool: MemoryToolHandler, name: str, text: str) -> str:
    return tool.execute({"command": "create", "path": f"/memories/{name}.md", "file_text": text})


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts and ".orch" not in p.parts
    }


def refused(tool: MemoryToolHandler, command: dict[str, Any]) -> str:
    with pytest.raises(ToolInputError) as caught:
        tool.execute(command)
    assert caught.value.failure_class == "fixable"
    return caught.value.message


# create -------------------------------------------------------------------------------


def test_create_writes_a_validated_memory_and_regenerates_the_index(
    tool: MemoryToolHandler, layout: Layout, events: list[dict[str, Any]]
) -> None:
    out = create(tool, "test-command", TEST_COMMAND)
    assert "Created memory test-command" in out
    memory = RepoMemoryStore(layout).get("test-command")
    assert memory.fact == "The test command is `pytest -q`, run from the repository root."
    assert memory.status == "active"
    assert memory.created and memory.updated
    index = layout.memory_index.read_text(encoding="utf-8")
    assert "- [test-command](test-command.md): How to run the test suite" in index
    assert events[-1] == {
        "command": "create",
        "ok": True,
        "path": "/memories/test-command.md",
        "memory": "test-command",
        "action": "created",
    }
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=layout.root, capture_output=True, text=True
    ).stdout
    assert "memories/repo/test-command.md" in status


def test_create_without_description_takes_the_facts_first_sentence(
    tool: MemoryToolHandler, layout: Layout
) -> None:
    create(tool, "request-handler", HANDLER_STYLE)
    memory = RepoMemoryStore(layout).get("request-handler")
    assert memory.description == "All requests pass through `handler` in app.py, which returns 1."


def test_create_refuses_plain_text_with_the_format(tool: MemoryToolHandler, layout: Layout) -> None:
    before = snapshot(layout.root)
    message = refused(
        tool,
        {"command": "create", "path": "/memories/note.md", "file_text": "remember: pytest -q"},
    )
    assert "YAML frontmatter" in message
    assert snapshot(layout.root) == before


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            TEST_COMMAND.replace("citations:\n  - path: pyproject.toml\n    line: 4\n", ""),
            "citation",
        ),
        (TEST_COMMAND.replace("pyproject.toml", "missing.toml"), "does not exist"),
        (TEST_COMMAND.replace("pyproject.toml", "../outside.toml"), "outside the repository"),
        (TEST_COMMAND.replace("reason: Every phase gate runs it\n", ""), "reason is required"),
        (TEST_COMMAND.replace("type: reference", "type: trivia"), "type"),
        (TEST_COMMAND.replace("description:", "description: [unclosed"), "broken YAML"),
        (TEST_COMMAND.replace("description:", "name: other\ndescription:"), "the file's stem"),
    ],
)
def test_create_applies_the_stores_validation(
    tool: MemoryToolHandler, layout: Layout, text: str, reason: str
) -> None:
    before = snapshot(layout.root)
    assert reason in refused(
        tool, {"command": "create", "path": "/memories/test-command.md", "file_text": text}
    )
    assert snapshot(layout.root) == before


def test_a_near_duplicate_is_refused_with_the_choices(
    tool: MemoryToolHandler, layout: Layout, events: list[dict[str, Any]]
) -> None:
    create(tool, "test-command", TEST_COMMAND)
    before = snapshot(layout.root)
    message = refused(
        tool,
        {
            "command": "create",
            "path": "/memories/how-to-test.md",
            "file_text": TEST_COMMAND.replace("root.", "root!"),
        },
    )
    assert "near-duplicates test-command" in message
    assert "supersedes: [test-command]" in message
    assert "duplicate_reason" in message
    assert "skip" in message
    assert snapshot(layout.root) == before
    assert events[-1]["ok"] is False and "near-duplicates" in events[-1]["detail"]


def test_a_near_duplicate_with_a_stated_reason_is_kept_beside_the_other(
    tool: MemoryToolHandler, layout: Layout
) -> None:
    create(tool, "test-command", TEST_COMMAND)
    text = TEST_COMMAND.replace(
        "---\nThe", "duplicate_reason: the CI runner reads this one\n---\nThe"
    ).replace("root.", "root!")
    out = create(tool, "how-to-test", text)
    assert "kept next to test-command" in out
    memory = RepoMemoryStore(layout).get("how-to-test")
    assert memory.extra["distinct_from"] == [
        {"name": "test-command", "reason": "the CI runner reads this one"}
    ]
    assert "duplicate_reason" not in memory.extra


def test_create_with_supersedes_supersedes_the_old_memory(
    tool: MemoryToolHandler, layout: Layout
) -> None:
    create(tool, "test-command", TEST_COMMAND)
    corrected = TEST_COMMAND.replace("`pytest -q`", "`make test`").replace(
        "---\nThe", "supersedes: [test-command]\n---\nThe"
    )
    out = create(tool, "test-command-make", corrected)
    assert "supersedes test-command" in out
    store = RepoMemoryStore(layout)
    old, new = store.get("test-command"), store.get("test-command-make")
    assert (old.status, old.superseded_by) == ("superseded", "test-command-make")
    assert new.supersedes == ("test-command",)
    assert old.fact == "The test command is `pytest -q`, run from the repository root."
    index = layout.memory_index.read_text(encoding="utf-8")
    assert "[test-command-make]" in index and "[test-command]" not in index


def test_the_model_cannot_set_status_or_verification(
    tool: MemoryToolHandler, layout: Layout
) -> None:
    text = TEST_COMMAND.replace("---\nThe", "status: superseded\nverified: {result: ok}\n---\nThe")
    create(tool, "test-command", text)
    memory = RepoMemoryStore(layout).get("test-command")
    assert memory.status == "active"
    assert memory.verified is None


def test_create_never_overwrites(tool: MemoryToolHandler, layout: Layout) -> None:
    create(tool, "test-command", TEST_COMMAND)
    before = snapshot(layout.root)
    message = refused(
        tool,
        {
            "command": "create",
            "path": "/memories/test-command.md",
            "file_text": TEST_COMMAND.replace("pytest -q", "tox"),
        },
    )
    assert "superseded, not overwritten" in message
    assert snapshot(layout.root) == before


# edits, delete, rename ----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        {"command": "str_replace", "old_str": "pytest -q", "new_str": "tox"},
        {"command": "insert", "insert_line": 1, "insert_text": "extra"},
    ],
)
def test_edits_in_place_are_refused_with_the_supersede_route(
    tool: MemoryToolHandler, layout: Layout, command: dict[str, Any]
) -> None:
    create(tool, "test-command", TEST_COMMAND)
    before = snapshot(layout.root)
    message = refused(tool, {**command, "path": "/memories/test-command.md"})
    assert "superseded, not edited in place" in message
    assert "supersedes: [test-command]" in message
    assert snapshot(layout.root) == before


def test_delete_marks_the_memory_stale_and_keeps_the_file(
    tool: MemoryToolHandler, layout: Layout
) -> None:
    create(tool, "test-command", TEST_COMMAND)
    out = tool.execute({"command": "delete", "path": "/memories/test-command.md"})
    assert "Marked test-command stale" in out
    path = layout.repo_memories / "test-command.md"
    assert path.is_file()
    assert RepoMemoryStore(layout).get("test-command").status == "stale"
    assert "[test-command]" not in layout.memory_index.read_text(encoding="utf-8")
    again = refused(tool, {"command": "delete", "path": "/memories/test-command.md"})
    assert "already stale" in again


def test_rename_supersedes_under_the_new_name(tool: MemoryToolHandler, layout: Layout) -> None:
    create(tool, "test-command", TEST_COMMAND)
    out = tool.execute(
        {
            "command": "rename",
            "old_path": "/memories/test-command.md",
            "new_path": "/memories/how-to-run-tests.md",
        }
    )
    assert "Renamed test-command to how-to-run-tests" in out
    store = RepoMemoryStore(layout)
    assert store.get("test-command").superseded_by == "how-to-run-tests"
    new = store.get("how-to-run-tests")
    assert new.fact == store.get("test-command").fact
    assert new.supersedes == ("test-command",)


def test_the_index_is_read_only(tool: MemoryToolHandler, layout: Layout) -> None:
    before = snapshot(layout.root)
    for command in (
        {"command": "create", "path": "/memories/MEMORY.md", "file_text": TEST_COMMAND},
        {"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "#", "new_str": ""},
        {"command": "delete", "path": "/memories/MEMORY.md"},
        {
            "command": "rename",
            "old_path": "/memories/MEMORY.md",
            "new_path": "/memories/index.md",
        },
    ):
        assert "read-only" in refused(tool, command)
    assert "/memories itself cannot be deleted" in refused(
        tool, {"command": "delete", "path": "/memories"}
    )
    assert snapshot(layout.root) == before


# view ---------------------------------------------------------------------------------


def test_view_of_the_folder_lists_the_files_with_their_status(tool: MemoryToolHandler) -> None:
    create(tool, "test-command", TEST_COMMAND)
    create(tool, "request-handler", HANDLER_STYLE)
    tool.execute({"command": "delete", "path": "/memories/request-handler.md"})
    listing = tool.execute({"command": "view", "path": "/memories"})
    lines = listing.splitlines()
    assert lines[0].startswith("Here're the files and directories")
    assert lines[1].endswith("\t/memories")
    names = [line.split("\t")[1] for line in lines[2:]]
    assert names == [
        "/memories/MEMORY.md  [generated index, read-only]",
        "/memories/request-handler.md  [stale]",
        "/memories/test-command.md",
    ]
    assert tool.execute({"command": "view", "path": "/memories/"}) == listing


def test_view_of_a_file_numbers_its_lines_and_honours_the_range(tool: MemoryToolHandler) -> None:
    create(tool, "test-command", TEST_COMMAND)
    whole = tool.execute({"command": "view", "path": "/memories/test-command.md"})
    assert (
        whole.splitlines()[0]
        == "Here's the content of /memories/test-command.md with line numbers:"
    )
    assert whole.splitlines()[1] == "     1\t---"
    part = tool.execute(
        {"command": "view", "path": "/memories/test-command.md", "view_range": [2, 3]}
    )
    assert part.splitlines()[1:] == [
        "     2\tname: test-command",
        "     3\tdescription: How to run the test suite",
    ]
    tail = tool.execute(
        {"command": "view", "path": "/memories/test-command.md", "view_range": [3, -1]}
    )
    assert tail.splitlines()[-1].endswith(
        "The test command is `pytest -q`, run from the repository root."
    )
    assert "not a range" in refused(
        tool, {"command": "view", "path": "/memories/test-command.md", "view_range": [3, 2]}
    )
    assert "does not exist" in refused(tool, {"command": "view", "path": "/memories/nope.md"})


# paths --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/memories/../pyproject.toml",
        "/memories/../../../../etc/passwd",
        "/memories/./test-command.md",
        "/memories//test-command.md",
        "/etc/passwd",
        "memories/test-command.md",
        "/memoriesx/a.md",
        "/memories/sub/a.md",
        "/memories/..",
        "/memories/a\\..\\..\\b.md",
        "/memories/a\x00.md",
        "/memories/Upper-Case.md",
        "/memories/notes.txt",
        "/memories/%2e%2e/a.md",
    ],
)
def test_paths_outside_the_memory_files_are_refused(
    tool: MemoryToolHandler, layout: Layout, path: str
) -> None:
    before = snapshot(layout.root)
    for command in (
        {"command": "view", "path": path},
        {"command": "create", "path": path, "file_text": TEST_COMMAND},
        {"command": "delete", "path": path},
        {"command": "rename", "old_path": path, "new_path": "/memories/x.md"},
    ):
        message = refused(tool, command)
        assert "refused" in message or "outside" in message
    assert snapshot(layout.root) == before


def test_symlinks_are_never_followed(
    tool: MemoryToolHandler, layout: Layout, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.md"
    secret.write_text("---\nname: secret\ndescription: s\ntype: user\n---\nsecret\n")
    os.symlink(secret, layout.repo_memories / "leak.md")
    inside = layout.repo_memories / "inside.md"
    inside.write_text("---\nname: inside\ndescription: i\ntype: user\n---\ninside\n")
    os.symlink(inside, layout.repo_memories / "alias.md")
    for name in ("leak", "alias"):
        path = f"/memories/{name}.md"
        assert "link" in refused(tool, {"command": "view", "path": path})
        assert "link" in refused(
            tool, {"command": "create", "path": path, "file_text": TEST_COMMAND}
        )
        assert "link" in refused(tool, {"command": "delete", "path": path})
        assert "link" in refused(
            tool, {"command": "rename", "old_path": path, "new_path": "/memories/other.md"}
        )
    assert "symbolic link" in refused(tool, {"command": "view", "path": "/memories/alias.md"})
    listing = tool.execute({"command": "view", "path": "/memories"})
    assert "leak.md" not in listing and "alias.md" not in listing
    assert "inside.md" in listing
    assert secret.read_text().endswith("secret\n")


def test_a_memory_folder_linked_outside_the_repository_is_refused(
    layout: Layout, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    real = layout.repo_memories
    real.rename(layout.root / "memories" / "repo-real")
    os.symlink(outside, real)
    tool = MemoryToolHandler(layout)
    for command in (
        {"command": "view", "path": "/memories"},
        {"command": "create", "path": "/memories/test-command.md", "file_text": TEST_COMMAND},
    ):
        assert "outside the repository" in refused(tool, command)
    assert list(outside.iterdir()) == []


# bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ({"command": "format_disk"}, "unknown memory command"),
        ({"path": "/memories"}, "unknown memory command"),
        ({"command": "view"}, "needs `path`"),
        ({"command": "create", "path": "/memories/a.md"}, "needs `file_text`"),
        ({"command": "insert", "path": "/memories/a.md", "insert_text": "x"}, "insert_line"),
        (
            {
                "command": "insert",
                "path": "/memories/a.md",
                "insert_line": True,
                "insert_text": "x",
            },
            "insert_line",
        ),
        ({"command": "rename", "old_path": "/memories/a.md"}, "needs `new_path`"),
    ],
)
def test_malformed_commands_are_refused(
    tool: MemoryToolHandler, command: dict[str, Any], expected: str
) -> None:
    assert expected in refused(tool, command)


def test_an_uninitialised_repository_says_how_to_set_up(git_repo: Path) -> None:
    tool = MemoryToolHandler(Layout(git_repo))
    assert "orch init" in refused(tool, {"command": "view", "path": "/memories"})
    assert "orch init" in refused(
        tool, {"command": "create", "path": "/memories/test-command.md", "file_text": TEST_COMMAND}
    )


def test_spec_is_a_plain_memory_tool(tool: MemoryToolHandler) -> None:
    spec = tool.spec()
    assert spec.name == "memory"
    assert spec.input_schema["properties"]["command"]["enum"] == [
        "view",
        "create",
        "str_replace",
        "insert",
        "delete",
        "rename",
    ]
    assert "supersedes" in spec.description


def test_a_supersede_that_duplicates_a_third_memory_is_refused(
    tool: MemoryToolHandler, layout: Layout
) -> None:
    create(tool, "test-command", TEST_COMMAND)
    create(tool, "request-handler", HANDLER_STYLE)
    before = snapshot(layout.root)
    copy = TEST_COMMAND.replace("---\nThe", "supersedes: [request-handler]\n---\nThe").replace(
        "root.", "root!"
    )
    message = refused(
        tool, {"command": "create", "path": "/memories/tests-again.md", "file_text": copy}
    )
    assert "near-duplicates test-command" in message
    assert snapshot(layout.root) == before
    assert "no memory named 'ghost' to supersede" in refused(
        tool,
        {
            "command": "create",
            "path": "/memories/new-fact.md",
            "file_text": HANDLER_STYLE.replace("---\nAll", "supersedes: [ghost]\n---\nAll"),
        },
    )


def test_an_unreadable_memory_file_is_a_refusal_not_a_crash(
    tool: MemoryToolHandler, layout: Layout
) -> None:
    (layout.repo_memories / "binary.md").write_bytes(b"\xff\xfe\x00 not text")
    assert "memory view failed" in refused(tool, {"command": "view", "path": "/memories/binary.md"})
