"""Instruction-file claims about a folder that is gone: a file pattern below a folder
(`manual/intro/**`) names that folder, and a nested instruction file left in a folder
whose other files were deleted describes code that is gone. Each is linted
(`orchestrator.memory.lint`) in a real git repository at the commit that wrote it (ok)
and after the folder went (stale)."""

from __future__ import annotations

from pathlib import Path

from conftest import commit, git

from orchestrator.memory.claims import pattern_folder
from orchestrator.memory.lint import lint


def statuses(root: Path, path: str, text: str) -> dict[int, tuple[str, str]]:
    return {f.line: (f.status, f.reason) for f in lint(root, path, text)}


def test_the_folder_of_a_pattern_is_its_plain_parts_before_a_wildcard() -> None:
    assert pattern_folder("manual/intro/**") == "manual/intro"
    assert pattern_folder("src/*.py") == "src"
    assert pattern_folder("packages/*/lib") == "packages"
    assert pattern_folder("**/*.spec.ts") is None
    assert pattern_folder("*.lock") is None
    assert pattern_folder("manual/intro/") is None


def test_a_pattern_below_a_deleted_folder_is_stale(git_repo: Path) -> None:
    root = git_repo
    (root / "manual" / "intro").mkdir(parents=True)
    (root / "manual" / "intro" / "welcome.md").write_text("# Welcome\n")
    (root / "lib").mkdir()
    (root / "lib" / "shelf.py").write_text("SIZE = 3\n")
    text = "- The user guides are `manual/intro/**`.\n- Modules: `lib/*.py`.\n"
    (root / "AGENTS.md").write_text(text)
    commit(root, "guides")
    assert statuses(root, "AGENTS.md", text) == {1: ("ok", ""), 2: ("ok", "")}

    git(root, "rm", "-q", "-r", "manual/intro")
    (root / "manual" / "topics").mkdir(parents=True)
    (root / "manual" / "topics" / "shelves.md").write_text("# Shelves\n")
    commit(root, "guides by topic")
    found = statuses(root, "AGENTS.md", text)
    assert found[1] == ("stale", "manual/intro/ does not exist")
    assert found[2] == ("ok", "")


def test_a_pattern_below_an_ignored_output_folder_is_no_claim(git_repo: Path) -> None:
    root = git_repo
    (root / ".gitignore").write_text("out/\n")
    (root / "lib").mkdir()
    (root / "lib" / "shelf.py").write_text("SIZE = 3\n")
    text = "- Generated code lands in `out/gen/**`; never edit it.\n"
    (root / "AGENTS.md").write_text(text)
    commit(root, "ignore the output")
    assert statuses(root, "AGENTS.md", text) == {}


def test_a_nested_file_left_in_its_deleted_folder_is_stale(git_repo: Path) -> None:
    root = git_repo
    (root / "tools" / "mailer").mkdir(parents=True)
    (root / "tools" / "mailer" / "send.sh").write_text(
        '#!/bin/sh\n[ "$1" = --quiet ] || echo sent\n'
    )
    (root / "tools" / "mailer" / "TEMPLATE.sample").write_text("Dear reader\n")
    (root / "lib").mkdir()
    (root / "lib" / "shelf.py").write_text("SIZE = 3\n")
    text = "# Mailer\n\n- Start from `TEMPLATE.sample`.\n- Run `send.sh` with `--quiet`.\n"
    (root / "tools" / "mailer" / "AGENTS.md").write_text(text)
    commit(root, "mailer")
    written = git(root, "rev-parse", "HEAD").strip()
    assert all(s == "ok" for s, _ in statuses(root, "tools/mailer/AGENTS.md", text).values())

    git(root, "rm", "-q", "-r", "tools/mailer")
    commit(root, "mail through the hosted service")
    (root / "tools" / "mailer").mkdir(parents=True)
    (root / "tools" / "mailer" / "AGENTS.md").write_text(text)
    found = statuses(root, "tools/mailer/AGENTS.md", text)
    gone = f"its folder tools/mailer/ was deleted since {written[:12]}"
    assert found[3] == ("stale", gone) and found[4] == ("stale", gone)


def test_a_nested_file_alone_in_its_folder_from_the_start_is_judged_claim_by_claim(
    git_repo: Path,
) -> None:
    root = git_repo
    (root / "lib").mkdir()
    (root / "lib" / "shelf.py").write_text("SIZE = 3\n")
    (root / "notes").mkdir()
    text = "- Shelves live in `lib/shelf.py`.\n"
    (root / "notes" / "AGENTS.md").write_text(text)
    commit(root, "notes")
    assert statuses(root, "notes/AGENTS.md", text) == {1: ("ok", "")}


def test_a_rules_file_whose_sibling_rules_were_removed_is_judged_claim_by_claim(
    git_repo: Path,
) -> None:
    root = git_repo
    (root / "lib").mkdir()
    (root / "lib" / "shelf.py").write_text("SIZE = 3\n")
    (root / "rules").mkdir()
    (root / "rules" / "style.mdc").write_text("Keep lines short.\n")
    text = "- Shelves live in `lib/shelf.py`.\n"
    (root / "rules" / "layout.mdc").write_text(text)
    commit(root, "rules")
    git(root, "rm", "-q", "rules/style.mdc")
    commit(root, "one rules file")
    assert statuses(root, "rules/layout.mdc", text) == {1: ("ok", "")}
