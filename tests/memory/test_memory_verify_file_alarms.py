"""Instruction-file claims that hold, though a name-by-name reading would call them stale:
name patterns, host patterns, a name standing for a family of names, a documented file
not written yet, standard environment variables, branch names, another program's flags.
Each is linted (`orchestrator.memory.lint`) in a real git repository, then the same claim
is shown stale where the thing it relies on is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import commit, git, lost

from orchestrator.memory.lint import lint


@pytest.fixture
def repo(git_repo: Path) -> Path:
    root = git_repo
    (root / "app" / "auth").mkdir(parents=True)
    (root / "app" / "auth" / "tokens.py").write_text(
        "def create_access_token_for_user(user):\n    return user\n\n\n"
        "def create_access_token_for_app(app):\n    return app\n"
    )
    (root / "app" / "lock_objects.py").write_text(
        "def order_qs_select_for_update():\n    return []\n\n\n"
        "def checkout_qs_select_for_update():\n    return []\n"
    )
    (root / "app" / "views").mkdir()
    (root / "app" / "views" / "chart.html").write_text(
        '<div data-controller="chart" data-chart-series-value="[]"></div>\n'
    )
    (root / "docs").mkdir()
    (root / "docs" / "domain.md").write_text(
        "# Domain docs\n\nThe glossary lives in `GLOSSARY.md` at the root, written when the\n"
        "first term is settled.\n"
    )
    (root / "tools").mkdir()
    (root / "tools" / "serve.py").write_text("import sys\n\nPORT = 8000\n")
    commit(root, "code")
    return root


def statuses(root: Path, text: str) -> dict[int, tuple[str, str]]:
    (root / "AGENTS.md").write_text(text)
    return {f.line: (f.status, f.reason) for f in lint(root, "AGENTS.md", text)}


def test_a_pattern_without_dot_or_slash_is_a_pattern_of_names(repo: Path) -> None:
    lost(repo, "def sign_payload_v1():\n    pass\n")
    found = statuses(
        repo,
        "- Make tokens with the real `create_access_token*` factories.\n"
        "- Hand values over in `data-*-value` attributes.\n"
        "- Sign with the `sign_payload_*` helpers.\n",
    )
    assert found[1][0] == "ok" and found[2][0] == "ok"
    assert found[3] == ("stale", "no file or name in the code matches sign_payload_*")


def test_a_host_pattern_in_a_sentence_about_domains_is_no_file_pattern(repo: Path) -> None:
    (repo / "fixtures.test").write_text("a fixture\n")
    commit(repo, "a fixture")
    (repo / "fixtures.test").unlink()
    found = statuses(
        repo,
        "- Point every test URL at a reserved domain (`example.com`, `*.test`).\n"
        "- Fixtures are the `*.test` files.\n",
    )
    assert 1 not in found or found[1][0] == "ok"
    assert found[2] == ("stale", "no file matches *.test")


def test_a_stand_in_first_word_names_a_family_the_code_defines(repo: Path) -> None:
    lost(repo, "def model_qs_lock_forever():\n    return []\n")
    found = statuses(
        repo,
        "```python\nmodel_qs_select_for_update()\nmodel_qs_lock_forever()\n```\n",
    )
    assert found[2][0] == "ok"
    assert found[3] == ("stale", "model_qs_lock_forever() is not defined in the code")


def test_a_file_the_documents_describe_but_no_commit_had_is_no_stale_path(repo: Path) -> None:
    found = statuses(
        repo,
        "- One `GLOSSARY.md` at the repo root.\n- Read `ROADMAP.md` first.\n",
    )
    assert found[1][0] == "ok"
    assert found[2] == ("stale", "no file named ROADMAP.md in the repository")
    # once committed and removed, the documented file is gone like any other
    (repo / "GLOSSARY.md").write_text("# Glossary\n")
    commit(repo, "glossary")
    git(repo, "rm", "-q", "GLOSSARY.md")
    commit(repo, "no glossary")
    assert statuses(repo, "- One `GLOSSARY.md` at the repo root.\n")[1][0] == "stale"


def test_standard_environment_variables_are_no_claims(repo: Path) -> None:
    lost(
        repo,
        'import os\n\nNAMES = [os.environ[n] for n in ("HTTP_PROXY", "NO_PROXY", "SERVE_TOKEN")]\n',
    )
    found = statuses(
        repo,
        "- Behind a proxy, set `$HTTP_PROXY` and `$NO_PROXY`.\n- Set `$SERVE_TOKEN` first.\n",
    )
    assert 1 not in found
    assert found[2] == ("stale", "environment variable SERVE_TOKEN appears nowhere in the code")


def test_a_branch_prefix_is_no_folder(repo: Path) -> None:
    found = statuses(
        repo,
        "- Feature branches should start with `claude/` for agent work.\n"
        "- Put agent notes in `claude/`.\n",
    )
    assert 1 not in found
    assert found[2][0] == "stale" and "claude/" in found[2][1]
    prefixes = statuses(repo, "- Branch naming: `feat/`, `fix/`, `chore/` prefixes.\n")
    assert 1 not in prefixes
    assert statuses(repo, "- Branch work lands in `fix/` and `chore/`.\n")[1][0] == "stale"


def test_flags_beside_another_programs_command_are_that_programs(repo: Path) -> None:
    lost(repo, 'FLAGS = ["--reload", "--except-vendor", "--options"]\n')
    found = statuses(
        repo,
        "- List the routes with `php artisan route:list`, narrowed by `--except-vendor`.\n"
        "- Give each command its own `--options`.\n"
        "- Serve with `--reload`.\n",
    )
    assert 1 not in found and 2 not in found  # not ours to check; a placeholder flag
    assert found[3] == ("stale", "flag --reload appears nowhere in the code")


def test_two_example_letters_make_a_placeholder_name(repo: Path) -> None:
    lost(repo, "def test_with_tokens_only():\n    pass\n\n\ndef test_with_x_y():\n    pass\n")
    found = statuses(
        repo,
        "- Do not prefix test names: not `test_tokens_with_x_y` but `test_with_x_y`.\n"
        "- Tests call `test_with_tokens_only`.\n",
    )
    assert 1 not in found
    assert found[2][0] == "stale"


def test_a_file_name_beside_an_ignored_build_folder_is_the_builds_output(repo: Path) -> None:
    (repo / ".gitignore").write_text("/.build-cache/\n")
    commit(repo, "ignore the build cache")
    found = statuses(
        repo,
        "- The generated bindings are in `widgets_gen.h` under the `.build-cache` folder.\n"
        "- The bindings are in `widgets_gen.h`.\n"
        "- The bindings are in `widgets_gen.h` under the `tools` folder.\n",
    )
    assert 1 not in found or found[1][0] == "ok"
    assert found[2] == ("stale", "no file named widgets_gen.h in the repository")
    assert found[3][0] == "stale"  # a tracked folder: the file would be tracked there


def test_a_negated_flag_holds_where_its_boolean_option_is_declared(repo: Path) -> None:
    (repo / "tools" / "run.py").write_text(
        "import argparse\n\nparser = argparse.ArgumentParser()\n"
        'parser.add_argument("--gather-stats", action=argparse.BooleanOptionalAction)\n'
    )
    commit(repo, "runner")
    lost(repo, 'FLAGS = ["--no-cache-x"]\n')
    found = statuses(
        repo,
        "- Skip the statistics with `--no-gather-stats`.\n- Skip the cache with `--no-cache-x`.\n",
    )
    assert found[1] == ("ok", "")  # argparse makes `--no-gather-stats` of `--gather-stats`
    assert found[2] == ("stale", "flag --no-cache-x appears nowhere in the code")


def test_a_file_named_for_any_file_is_an_example(repo: Path) -> None:
    found = statuses(
        repo,
        "- Run one file with `pytest app/auth/test_name.py`.\n"
        "- Name new suites like `docs/cases/test-file.md`.\n"
        "- The tokens are made in `app/auth/token_maker.py`.\n",
    )
    assert 1 not in found and 2 not in found  # any test's file, any file
    assert found[3][0] == "stale"


def test_a_name_the_build_makes_from_a_template_and_a_quoted_part_holds(repo: Path) -> None:
    (repo / "build.gradle.kts").write_text('storeTest("duckdb") {\n}\nstoreTest("h2_v2") {\n}\n')
    (repo / "buildSrc").mkdir()
    (repo / "buildSrc" / "StoreTests.kt").write_text(
        'fun Project.storeTest(name: String) {\n    tasks.register("check_${name}")\n}\n'
    )
    commit(repo, "a test task per store")
    lost(repo, 'TASKS = ["check_mongo"]\n')
    found = statuses(
        repo,
        "- Stores under test: `check_duckdb`, `check_h2_v2`.\n- Also `check_mongo`.\n",
    )
    assert found[1] == ("ok", "")  # `check_${name}` with "duckdb", "h2_v2"
    assert found[2] == ("stale", "check_mongo appears nowhere in the code")


def test_a_line_marked_as_the_wrong_way_names_what_not_to_write(repo: Path) -> None:
    text = (
        "```java\n"
        "// ❌ Tokens.mintLegacy() (removed API)\n"
        "// ✅ Tokens.mint()\n"
        "```\n"
        "- Bad: `Tokens.mintTwice()` in handlers.\n"
        "- Prefer `Tokens.mintOnce()`.\n"
    )
    tokens = repo / "app" / "Tokens.java"
    tokens.write_text("class Tokens {\n    void mint() {}\n    void mintOnce() {}\n}\n")
    commit(repo, "tokens")
    tokens.write_text("class Tokens {\n    void mint() {}\n}\n")  # mintOnce gone since
    found = statuses(repo, text)
    assert found[2] == found[5] == ("ok", "")  # what the marks say not to write
    assert found[3] == ("ok", "")
    assert found[6] == ("stale", "Tokens has no member mintOnce")


def test_a_constants_member_is_its_types_not_the_constants(repo: Path) -> None:
    code = (
        "import logging\n\nLOG = logging.getLogger(__name__)\n\n\nclass Ledger:\n"
        "    def post(self):\n        LOG.debug('posted')\n"
    )
    (repo / "app" / "log_setup.py").write_text(code + "\n    def void(self):\n        pass\n")
    commit(repo, "a logger")
    (repo / "app" / "log_setup.py").write_text(code)  # Ledger.void gone since
    found = statuses(repo, "- Log cleanup errors with `LOG.debug()`.\n- Call `Ledger.void()`.\n")
    assert found[1] == ("ok", "")  # the logger's method, not a member LOG defines
    assert found[2] == ("stale", "Ledger has no member void")


def test_a_word_the_code_never_had_where_the_file_was_written_is_not_stale(repo: Path) -> None:
    """Another tool's words (`LintRuleName`, `--watch-all`, `$CLOUD_REGION`) are no claims
    about this code: only a word the code had when the file was written, and lost, is."""
    (repo / "app" / "helpers.py").write_text("def old_helper():\n    return 1\n")
    text = (
        "- The linter's `LintRuleName` rule, run with `--watch-all` and `$CLOUD_REGION`.\n"
        "- Call `old_helper()` for the sum.\n"
    )
    (repo / "AGENTS.md").write_text(text)
    commit(repo, "instructions and the helper")
    assert statuses(repo, text)[1] == ("ok", "")
    (repo / "app" / "helpers.py").unlink()
    commit(repo, "no helper")
    found = statuses(repo, text)
    assert found[1] == ("ok", "")
    assert found[2] == ("stale", "old_helper() is not defined in the code")
    # words not committed yet were written against the last commit, which lacked them too
    assert statuses(repo, text + "- Wire `NeverWritten.wire()` up.\n")[3] == ("ok", "")


def test_lines_of_code_and_patches_and_stand_in_paths_name_no_files(repo: Path) -> None:
    (repo / ".gitmodules").write_text('[submodule "rules"]\n\tpath = vendor/rules\n')
    commit(repo, "a submodule declared")
    found = statuses(
        repo,
        "```ts\n"
        'import { makeToken } from "../../app/auth/helpers.ts";\n'
        '"extends": "@tsconfig/strictest/tsconfig.json"\n'
        "```\n"
        "```diff\n"
        "--- a/app/auth/old_tokens.py\n"
        "+++ b/app/auth/new_tokens.py\n"
        "```\n"
        "- Views live in `app/.../chart.html`; reach tools by `self.tools.git`.\n"
        "- Add `app/providers/PROVIDER_NAME.py` per provider.\n"
        "- The shared rules are in `vendor/rules/AGENTS.md`.\n"
        "- Run `python app/auth/minting.py` first.\n"
        "- Test each rule in `tests/rules/rule-name.py`.\n",
    )
    assert all(found[line] == ("ok", "") for line in found if line != 12), found
    assert found[12] == ("stale", "app/auth/minting.py does not exist")
    assert found.get(13, ("ok", "")) == ("ok", ""), found  # no claim, or one that holds


def test_a_file_pattern_that_matched_nothing_when_written_is_a_kind_of_file(repo: Path) -> None:
    (repo / "app" / "Gen.vb").write_text("Module Gen\nEnd Module\n")
    text = "- Save every `*.vbx` and `*.vb` file as UTF-8.\n"
    (repo / "AGENTS.md").write_text(text)
    commit(repo, "instructions and one Visual Basic file")
    assert statuses(repo, text)[1] == ("ok", "")
    git(repo, "rm", "-q", "app/Gen.vb")
    commit(repo, "no Visual Basic left")
    assert statuses(repo, text)[1] == ("stale", "no file matches *.vb")


def test_a_runtimes_environment_object_is_no_file(repo: Path) -> None:
    found = statuses(
        repo,
        "- Read settings from `process.env`; the client reads `import.meta.env`.\n"
        "- Local settings go in `serve.env`.\n",
    )
    assert found.get(1, ("ok", "")) == ("ok", ""), found
    assert found[2] == ("stale", "no file named serve.env in the repository")


def test_a_pinned_version_meets_a_stated_minimum_it_is_not_below(repo: Path) -> None:
    (repo / "package.json").write_text('{"name": "site", "packageManager": "pnpm@11.0.1"}\n')
    (repo / ".nvmrc").write_text("22.4.0\n")
    commit(repo, "a pinned package manager and Node")
    found = statuses(
        repo,
        "- Install with pnpm v10+.\n- Node 20+ is required.\n- Install with pnpm 12+.\n",
    )
    assert found[1] == ("ok", "") and found[2] == ("ok", "")
    assert found[3] == ("stale", "states pnpm 12+; package.json packageManager now says 11.0.1")


def test_a_declared_minimum_speaks_for_the_project_before_a_pin(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[project]\nname = "app"\nrequires-python = ">=3.13"\n')
    (repo / ".python-version").write_text("3.13.1\n")
    commit(repo, "a minimum and a pin")
    found = statuses(repo, "- Python 3.12+ is required.\n- Python 3.13+ is required.\n")
    assert found[1] == (
        "stale",
        "states Python 3.12+; pyproject.toml requires-python now says >=3.13",
    )
    assert found[2] == ("ok", "")
