"""Instruction-file claims that hold where the file was written, read from a sweep of
instruction files at their own commits (the twentieth stop): a test file named for any
test file, a file named without its extension, names made a condition together with their
alternatives. Each is linted (`orchestrator.memory.lint`) in a real git repository, and
the same kind of claim is shown stale where nothing lets it hold."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import commit

from orchestrator.memory.lint import lint


@pytest.fixture
def repo(git_repo: Path) -> Path:
    root = git_repo
    (root / "app").mkdir()
    (root / "app" / "billing.py").write_text("def charge(amount):\n    return amount\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_billing.py").write_text("def test_charge():\n    pass\n")
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "title_check.yml").write_text("name: titles\n")
    (root / ".github" / "workflows" / "nightly.yml").write_text("name: nightly\n")
    (root / ".github" / "workflows" / "nightly.yaml").write_text("name: nightly old\n")
    commit(root, "code")
    return root


def statuses(root: Path, text: str) -> dict[int, tuple[str, str]]:
    (root / "AGENTS.md").write_text(text)
    return {f.line: (f.status, f.reason) for f in lint(root, "AGENTS.md", text)}


def test_a_test_file_named_for_any_specific_test_is_an_example(repo: Path) -> None:
    found = statuses(
        repo,
        "- Run one specific test file: `pytest tests/test_specific.py`.\n"
        "- Or one suite: `flutter test tests/specific_test.dart`.\n"
        "- A PRD per feature (e.g. `docs/feature-xyz-prd.txt`).\n"
        "- The invoices are tested in `tests/test_invoices.py`.\n",
    )
    assert 1 not in found and 2 not in found and 3 not in found  # any test's file
    assert found[4] == ("stale", "tests/test_invoices.py does not exist")


def test_a_file_named_without_its_extension_is_the_one_file_of_that_name(repo: Path) -> None:
    found = statuses(
        repo,
        "Titles follow the types in .github/workflows/title_check for pull requests.\n\n"
        "Releases are gated by .github/workflows/release_gate on every tag.\n\n"
        "Builds run .github/workflows/nightly each night.\n",
    )
    assert found[1] == ("ok", "")  # `title_check.yml`, the one file of that name
    assert found[3][0] == "stale"  # no file of that name at all
    assert found[5][0] == "stale"  # `nightly.yml` or `nightly.yaml`: which one is not said


def test_names_made_a_condition_with_their_alternatives_are_not_said_to_be_there(
    repo: Path,
) -> None:
    found = statuses(
        repo,
        "- Read the charter (`docs/charter.md` or `CHARTER.md`) if it exists.\n"
        "- Then the rules (`docs/rules.md` or `RULES.md`, if it exists).\n"
        "- If `docs/limits.md` (or `LIMITS.md`) exists, read it every session.\n"
        "- Always read `docs/roadmap.md` or `ROADMAP.md` first.\n",
    )
    assert found[1][0] == "ok" and found[2][0] == "ok" and found[3][0] == "ok"
    assert found[4][0] == "stale"


def test_a_path_of_the_machine_is_no_file_of_the_repository(repo: Path) -> None:
    found = statuses(
        repo,
        "```sh\n./build/run -p 'print($X)' /tmp/sample.js\n# Should output: /tmp/sample.js\n```\n\n"
        "The billing rules are in `/app/rules.py`.\n",
    )
    assert 3 not in found or found[3][0] == "ok"  # the machine's temporary folder
    assert found[6][0] == "stale"  # written from the repository's root, and gone


def test_the_name_of_a_naming_style_is_no_file(repo: Path) -> None:
    found = statuses(
        repo,
        "- Naming: `snake_case.py` modules, `kebab-case.ts` scripts.\n"
        "- The ledger lives in `app/ledger_book.py`.\n",
    )
    assert 1 not in found or found[1][0] == "ok"
    assert found[2][0] == "stale"


def test_a_name_the_words_give_as_a_former_one_is_expected_gone(repo: Path) -> None:
    found = statuses(
        repo,
        "- Task details (previously linked to `tasks.mdc`) are in the tracker.\n"
        "- Billing code is kept in `app/` now (was `billing_old/`).\n"
        "- Task details are linked from `steps.mdc`.\n",
    )
    assert found[1][0] == "ok" and found[2][0] == "ok"
    assert found[3][0] == "stale"


def test_a_span_the_word_branch_follows_is_a_branch(repo: Path) -> None:
    found = statuses(
        repo,
        "- Hotfixes follow the same flow using a `publish/` branch.\n"
        "- Branch names start with the version: `v2/` for the new line.\n"
        "- Hotfix notes go in the `publish/` folder.\n",
    )
    assert 1 not in found and 2 not in found
    assert found[3][0] == "stale"


def test_a_module_that_took_a_folders_place_leaves_the_folder_gone(repo: Path) -> None:
    (repo / "app" / "models.py").write_text("class Invoice:\n    pass\n")
    commit(repo, "models in one module")
    found = statuses(repo, "The models live in `app/models`, one file per table.\n")
    assert found[1][0] == "stale"  # `app/models.py` is source code, not the folder named
