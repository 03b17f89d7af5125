"""What the tree alone cannot judge, judged against the commit a memory was verified at (or
an instruction file was written at): a dependency named in prose that no manifest declares
any more, a tracked source folder that became a build output; and a rename followed
through a second rename. Real git repositories, no network."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import commit, file_statuses, git, recorded_ok, verify_all, write_files

from orchestrator.memory import kinds
from orchestrator.memory.verify import states_change
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation

GEMFILE = (
    'source "https://rubygems.org"\n\ngem "rails"\ngem "good_job"\ngem "pg"\ngem "safe_columns"\n'
)


def _planted(
    layout: Layout,
    put: Callable[..., Any],
    commit_all: Callable[..., str],
    files: dict[str, str],
    memories: dict[str, str],
) -> dict[str, str]:
    """The files committed, then each memory written as verified ok at that commit."""
    write_files(layout.root, files)
    commit_all(layout.root, "before")
    verified = recorded_ok(layout)
    for name, fact in memories.items():
        put(name, fact, verified=verified)
    return verified


def test_product_names_are_capitalised_or_hyphenated_words_outside_code_and_denials() -> None:
    found = kinds.product_claims(
        "- Jobs: GoodJob\n- MySQL queries are parsed with TiDB.\n- Do not add SideKiq.\n"
        "- `McpServer` and https://GitHub.com/x and README and Parser\n"
        "- Lint with Ruff, test with Pytest.js and apply the code-size-budget plugin.\n"
        "- Formatting was moved to Biome instead of Prettier; a built-in and front-end view.\n"
    )
    assert [(c.text, c.symbol) for c in found] == [
        ("GoodJob", "goodjob"),
        ("MySQL", "mysql"),
        ("TiDB", "tidb"),
        ("Parser", "parser"),  # judged against the manifests: no claim unless declared then
        ("Ruff", "ruff"),
        ("Pytest", "pytest"),
        ("code-size-budget", "codesizebudget"),
    ]


def test_a_plugin_left_behind_does_not_keep_its_tool_declared(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    deps = {"prettier": "^3.4.2", "prettier-plugin-tailwindcss": "^0.5.11", "vitest": "^3"}
    _planted(
        layout,
        put,
        commit_all,
        {"package.json": json.dumps({"devDependencies": deps})},
        {
            "format": "**Tooling:** Prettier, Vitest",
            "tests": "**Testing:** Vitest",
        },
    )
    del deps["prettier"]
    (layout.root / "package.json").write_text(json.dumps({"devDependencies": deps}))
    commit_all(layout.root, "formatting by another tool; the tailwind plugin stays behind")

    results = verify_all(layout)
    assert [f.claim.text for f in results["format"].failures] == ["Prettier"]
    assert results["tests"].result == "ok"


def test_a_dependency_named_in_prose_and_dropped_since_the_record_is_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    go_mod = (
        "module example.com/x\n\ngo 1.22\n\nrequire (\n"
        "\tgithub.com/pingcap/tidb/pkg/parser v0.0.1\n\tmodernc.org/sqlite v1.2.0\n)\n"
    )
    verified = _planted(
        layout,
        put,
        commit_all,
        {"Gemfile": GEMFILE, "go.mod": go_mod},
        {
            "jobs": "Jobs: GoodJob runs the background work.",
            "parser": "MySQL queries are parsed with TiDB.",
            "engine": "SQLite is an engine here.",
            "schema": "Schema changes are checked by Safe Columns before they run.",
            "words": "Schema changes are checked by Review Board before they run.",
        },
    )
    put("unrecorded", "Jobs: GoodJob runs the background work.")
    put("never", "Queues: SolidQueue runs the background work.", verified=verified)
    gems = GEMFILE.replace('gem "good_job"\n', 'gem "sidekiq"\n')
    (layout.root / "Gemfile").write_text(gems.replace('gem "safe_columns"\n', ""))
    (layout.root / "go.mod").write_text(
        "module example.com/x\n\ngo 1.22\n\nrequire github.com/ncruces/go-sqlite3 v0.3.0\n"
    )
    commit_all(layout.root, "sidekiq, no tidb, another sqlite driver")

    results = verify_all(layout)
    assert results["jobs"].result == "stale"
    [failure] = results["jobs"].failures
    assert failure.claim.text == "GoodJob" and "no manifest declares it now" in failure.reason
    assert verified["commit"][:10] in failure.reason
    assert results["parser"].result == "stale"
    assert [f.claim.text for f in results["parser"].failures] == ["TiDB"]
    assert results["engine"].result == "ok"  # go-sqlite3 still names it
    # two capitalised words are the gem their words joined name
    assert [f.claim.text for f in results["schema"].failures] == ["Safe Columns"]
    assert results["words"].result == "ok"  # no manifest ever declared such a name
    assert results["unrecorded"].result == "ok"  # no record: nothing to judge against
    assert results["never"].result == "ok"  # never a dependency


def test_a_tool_named_mid_sentence_and_dropped_from_every_manifest_is_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    package = {
        "name": "web",
        "devDependencies": {"karma": "^6.4.0", "stylelint": "^16.0.0", "ts-karma": "^1.0.0"},
    }
    catalog = (
        '[versions]\nsizer = "1.2"\n\n[plugins]\n'
        'size-budget = { id = "org.example.code-size-budget", version.ref = "sizer" }\n'
    )
    verified = _planted(
        layout,
        put,
        commit_all,
        {"package.json": json.dumps(package), "gradle/libs.versions.toml": catalog},
        {
            "tests": "Browser tests run with Karma in a headless browser.",
            "styles": "Style sheets are checked by Stylelint before a commit.",
            "budget": "Release builds apply the code-size-budget plugin.",
            "denied": "Never go back to Karma for the browser tests.",
            "bridge": "Specs are compiled by ts-karma before they run.",
            "words": "Specs run in a real-time browser.",
        },
    )
    package["devDependencies"] = {"stylelint": "^16.2.0", "vitest": "^3.0.0"}
    (layout.root / "package.json").write_text(json.dumps(package))
    (layout.root / "gradle" / "libs.versions.toml").write_text("[versions]\n")
    commit_all(layout.root, "vitest for the browser tests, no size budget")

    results = verify_all(layout)
    assert results["tests"].result == "stale"
    assert "Karma: a dependency at" in results["tests"].failures[0].reason
    assert verified["commit"][:10] in results["tests"].failures[0].reason
    assert results["budget"].result == "stale"  # the catalog's plugin, by its id's last part
    assert [f.claim.text for f in results["bridge"].failures] == ["ts-karma"]
    assert results["words"].result == "ok"  # a hyphenated word no manifest ever declared
    assert results["styles"].result == "ok"  # still declared
    assert results["denied"].result == "ok"  # a line that denies names no dependency


def test_python_tools_a_requirement_file_or_a_hook_dropped_and_a_bold_tool_are_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    hooks = "repos:\n- repo: local\n  hooks:\n  - id: flake8\n  - id: isort\n"
    package = {"name": "web", "devDependencies": {"tinypool": "^1.0.0", "prettier": "^3.0.0"}}
    _planted(
        layout,
        put,
        commit_all,
        {
            "requirements/dev.txt": "black==24.1.0\npytest>=8\n",
            ".pre-commit-config.yaml": hooks,
            "package.json": json.dumps(package),
        },
        {
            "python": "Style: Black formats, Flake8 lints, Isort sorts imports.",
            "linting": "**Linting:** Ruff + Flake8",
            "command": "Format with `black src/ tests/`, test with `uv run pytest -q`.",
            "pool": "- **Tinypool** runs the test workers",
            "format": "**Formatting**: Prettier, with the default options",
        },
    )
    (layout.root / "requirements" / "dev.txt").write_text("pytest>=8\nruff\n")
    (layout.root / ".pre-commit-config.yaml").write_text(hooks.replace("flake8", "ruff"))
    package["devDependencies"] = {"prettier": "^3.1.0"}
    (layout.root / "package.json").write_text(json.dumps(package))
    commit_all(layout.root, "ruff for black and flake8; no worker pool")

    results = verify_all(layout)
    reasons = {f.reason.split(":")[0] for f in results["python"].failures}
    assert reasons == {"Black", "Flake8"}  # isort is still a hook
    assert [f.reason.split(":")[0] for f in results["linting"].failures] == ["Flake8"]
    assert [f.claim.text for f in results["command"].failures] == ["black src/ tests/"]
    assert results["pool"].result == "stale"
    assert results["format"].result == "ok"  # still declared


def test_npm_commands_go_stale_once_package_json_names_another_manager(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """The npm lock file may stay behind; `"packageManager": "pnpm@..."`, named since the
    record, says the project runs pnpm now."""
    package = {"name": "bindings", "scripts": {"build": "tsc", "test": "vitest"}}
    verified = _planted(
        layout,
        put,
        commit_all,
        {
            "bindings/package.json": json.dumps(package),
            "bindings/package-lock.json": "{}\n",
        },
        {
            "build": "Build the bindings with `npm run build`.",
            "yarn": "Never `yarn add` here.",
        },
    )
    package["packageManager"] = "pnpm@11.1.0"
    write_files(layout.root, {"bindings/package.json": json.dumps(package)})
    commit_all(layout.root, "pnpm for the bindings")

    results = verify_all(layout)
    assert results["build"].result == "stale"
    assert results["build"].failures[0].reason == (
        f"npm: the lock file at {verified['commit'][:10]}; package.json now names pnpm "
        "as its package manager"
    )
    assert results["yarn"].result == "ok"  # yarn never locked it: nothing switched away


def test_commands_of_a_package_manager_the_project_left_are_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    package = json.dumps({"name": "ext", "scripts": {"lint": "eslint .", "test": "vitest"}})
    verified = _planted(
        layout,
        put,
        commit_all,
        {
            "ext/package.json": package,
            "ext/yarn.lock": "# yarn lockfile v1\n",
            "pyproject.toml": "[project]\nname = 'tool'\n",
            "poetry.lock": "# poetry lock\n",
            "docs/Pipfile.lock": "{}\n",
        },
        {
            "lint": "Lint the extension with `cd ext && yarn run lint`.",
            "npx": "One-off tools run through `npx`, never installed.",
            "poetry": "Set up with `poetry install --with dev`.",
            "pipenv": "The docs build in `pipenv run mkdocs build`.",
            "global": "Install the CLI with `yarn global add ext-cli` before `yarn lint`.",
        },
    )
    (layout.root / "ext" / "yarn.lock").unlink()
    (layout.root / "ext" / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    (layout.root / "poetry.lock").unlink()
    (layout.root / "uv.lock").write_text("version = 1\n")
    (layout.root / "docs" / "Pipfile.lock").unlink()
    commit_all(layout.root, "pnpm for the extension")
    put("pnpm", "Lint the extension with `pnpm lint`.", verified=verified)

    results = verify_all(layout)
    assert results["lint"].result == "stale"
    assert results["lint"].failures[0].reason == (
        f"yarn: yarn.lock was the lock file at {verified['commit'][:10]}; "
        "the project now locks with pnpm"
    )
    assert results["npx"].result == "ok"  # `npx` runs a tool, it names no manager
    assert results["global"].result == "stale"  # `yarn lint` names yarn; the global add not
    assert results["poetry"].failures[0].reason == (
        f"poetry: poetry.lock was the lock file at {verified['commit'][:10]}; "
        "the project now locks with uv"
    )
    assert results["pipenv"].result == "stale"  # the docs' lock went too; uv locks now
    (layout.root / "uv.lock").unlink()
    commit_all(layout.root, "no lock file for the Python side")
    # no Python manager locks the project now: a lock file gone tells no switch (the
    # pnpm lock left is another language's)
    assert verify_all(layout)["poetry"].result == "ok"
    assert results["pnpm"].result == "ok"


def test_a_tool_installed_globally_names_no_manager_of_the_project(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """`npm install -g pnpm@9` puts a tool on the machine: the project moving from npm's
    lock to pnpm's leaves it true, while `npm ci` is stale."""
    _planted(
        layout,
        put,
        commit_all,
        {"package.json": json.dumps({"name": "owl"}), "package-lock.json": "{}\n"},
        {
            "tool": "Get the manager itself with `npm install -g pnpm@9`.",
            "global": "Or `npm i --global pnpm` once per machine.",
            "ci": "Install exactly what is locked with `npm ci`.",
        },
    )
    (layout.root / "package-lock.json").unlink()
    (layout.root / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    commit_all(layout.root, "pnpm locks the project")

    results = verify_all(layout)
    assert results["tool"].result == "ok"
    assert results["global"].result == "ok"
    assert results["ci"].result == "stale"


def test_a_ruby_constant_whose_conventional_file_is_gone_is_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    admin = "admin/app/controllers/shop/admin/base_controller.rb"
    verified = _planted(
        layout,
        put,
        commit_all,
        {
            admin: "module Shop\n  module Admin\n    class BaseController; end\n  end\nend\n",
            "core/lib/shop/roles.rb": "module Shop\n  module Roles\n    def self.for(u) = []\n  end\nend\n",
            "core/lib/shop/api_key.rb": "module Shop\n  class APIKey; end\nend\n",
        },
        {
            "admin": "Admin pages inherit `Shop::Admin::BaseController`.",
            "roles": "Roles come from `Shop::Roles.for`.",
            "key": "Keys are `Shop::APIKey` records.",
            "variant": "A missing row raises `Error::NotFound`.",
        },
    )
    git(layout.root, "rm", "-q", "-r", "admin")
    (layout.root / "core" / "app" / "models").mkdir(parents=True)
    git(layout.root, "mv", "core/lib/shop/api_key.rb", "core/app/models/shop_api_key.rb")
    git(layout.root, "mv", "core/lib/shop/roles.rb", "core/app/models/roles.rb")
    write_files(layout.root, {"engine/lib/shop/roles.rb": "module Shop; module Roles; end; end\n"})
    commit_all(layout.root, "the admin engine removed; roles kept in an engine")

    results = verify_all(layout)
    assert results["admin"].result == "stale"
    assert results["admin"].failures[0].reason == (
        f"Shop::Admin::BaseController: {admin} held it at {verified['commit'][:10]}; "
        "no shop/admin/base_controller.rb now"
    )
    assert results["roles"].result == "ok"  # engine/lib/shop/roles.rb holds it by the convention
    # shop/api_key.rb went elsewhere by git's rename detection: the class went with it,
    # so the constant is not judged stale (its new path is no claim of the words)
    assert results["key"].result == "ok"
    assert results["variant"].result == "ok"  # no file held it by the convention: not judged


def test_a_package_name_in_a_code_span_gone_from_the_workspace_and_the_manifests_is_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    root = {
        "name": "shop",
        "workspaces": ["packages/*"],
        "dependencies": {"left-pad-lite": "1.0", "@clicks/simulate": "2.0"},
    }
    verified = _planted(
        layout,
        put,
        commit_all,
        {
            "package.json": json.dumps(root),
            "packages/ui-kit/package.json": json.dumps({"name": "@shop/ui-kit"}),
            "packages/forms-legacy/package.json": json.dumps({"name": "forms-legacy"}),
            "packages/amp/package.json": json.dumps({"name": "@shop/amp"}),
        },
        {
            "kit": "Components come from `@shop/ui-kit`.",
            "forms": "Old screens import `forms-legacy` (v1→v2 bridge) for their inputs.",
            "pad": "Codes are padded with `left-pad-lite`.",
            "flag": "The `dark-mode-beta` flag hides the new theme.",
            "denied": "New screens never import `forms-legacy`.",
            "prose": 'For clicks, import simulate from "@clicks/simulate" in each test.',
            "mail": "Ask ops@shop.example/desk or @shop/ui-kit owners.",
            "bold": "**@shop/amp** - pages for AMP readers",
        },
    )
    for path in ("packages/forms-legacy/package.json", "packages/amp/package.json"):
        (layout.root / path).unlink()
    root["dependencies"] = {}
    (layout.root / "package.json").write_text(json.dumps(root))
    commit_all(layout.root, "the legacy forms and the padding library went")

    results = verify_all(layout)
    assert results["forms"].result == "stale"
    short = verified["commit"][:10]
    assert results["forms"].failures[0].reason == (
        f"forms-legacy: a package of the project at {short}, none is named so now"
    )
    assert results["pad"].result == "stale"
    assert results["pad"].failures[0].reason == (
        f"left-pad-lite: a dependency at {short}, no manifest declares it now"
    )
    assert results["kit"].result == "ok"  # still a package of the workspace
    assert results["flag"].result == "ok"  # never a package: no claim on a package
    assert results["denied"].result == "ok"  # a line that denies names no package
    # a scoped name needs no code span: no other word of prose is written so
    assert results["prose"].result == "stale"
    assert results["prose"].failures[0].reason == (
        f"@clicks/simulate: a dependency at {short}, no manifest declares it now"
    )
    assert results["mail"].result == "ok"  # an address is no package; ui-kit is still one
    assert results["bold"].result == "stale"  # in bold, the workspace package that went


def test_a_tracked_folder_that_became_ignored_is_gone_or_moved(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    (layout.root / "js").mkdir()
    (layout.root / "js" / "index.js").write_text("module.exports = { run() {} };\n")
    (layout.root / "js" / "index.d.ts").write_text("export function run(): void;\n")
    (layout.root / "site").mkdir()
    commit_all(layout.root, "the wrapper in js/")
    verified = recorded_ok(layout)
    put("wrapper", "The npm wrapper lives in `js/`.", verified=verified)
    put("types", "Types are kept by hand in `js/index.d.ts`.", verified=verified)
    put("output", "The docs build into `site/html/`.", verified=verified)
    (layout.root / "lib").mkdir()
    git(layout.root, "mv", "js/index.js", "lib/index.js")
    git(layout.root, "rm", "-q", "js/index.d.ts")
    (layout.root / ".gitignore").write_text("js/\nsite/\n")
    commit_all(layout.root, "the wrapper is built into js/ from lib/")

    results = verify_all(layout)
    assert results["wrapper"].result == "moved"
    assert [(m.path, m.to) for m in results["wrapper"].moved] == [("js/", "lib")]
    assert results["types"].result == "stale"
    assert "git ignores it now" in results["types"].failures[0].reason
    assert results["output"].result == "ok"  # never tracked: a build output by design


def test_a_citation_renamed_twice_is_followed_to_where_it_is_now(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    (layout.root / "js").mkdir()
    (layout.root / "js" / "index.js").write_text("function run() {\n  return 1;\n}\n")
    commit_all(layout.root, "index")
    put("runner", "run() starts it.", citations=(Citation("js/index.js", 1, "run"),))
    commit_all(layout.root, "memory")
    (layout.root / "lib").mkdir()
    git(layout.root, "mv", "js/index.js", "lib/index.js")
    commit_all(layout.root, "js/ -> lib/")
    git(layout.root, "mv", "lib/index.js", "lib/index.ts")
    commit_all(layout.root, "TypeScript")

    result = verify_all(layout)["runner"]
    assert result.result == "moved"
    assert [(m.path, m.to) for m in result.moved] == [("js/index.js", "lib/index.ts")]


def test_an_instruction_file_is_judged_against_the_commit_that_wrote_it(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "Gemfile").write_text(GEMFILE)
    (root / "AGENTS.md").write_text("# Stack\n\n- Jobs: GoodJob\n- Database: PostgreSQL\n")
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    commit(root, "stack")
    (root / "Gemfile").write_text(GEMFILE.replace('gem "good_job"\n', ""))
    commit(root, "no more good_job")

    assert file_statuses(root) == {3: "stale"}


def test_a_command_ci_ran_word_for_word_and_runs_no_more_is_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    workflows = layout.root / ".github" / "workflows"
    ci = "jobs:\n  test:\n    steps:\n      - run: pytest -q --maxfail=1 tests\n"
    _planted(
        layout,
        put,
        commit_all,
        {".github/workflows/ci.yml": ci},
        {
            "ci-command": "CI runs `pytest -q --maxfail=1 tests`.",
            "local": "Run `pytest -q tests/unit` locally.",
            "short": "CI runs `pytest -q`.",
        },
    )
    (workflows / "ci.yml").write_text(ci.replace("--maxfail=1", "--maxfail=1 -x"))
    commit_all(layout.root, "ci stops at the first failure")

    results = verify_all(layout)
    assert results["ci-command"].result == "stale"
    [failure] = results["ci-command"].failures
    assert failure.reason.startswith(".github/workflows/ci.yml ran `pytest -q --maxfail=1 tests`")
    assert results["local"].result == "ok"  # never a CI command
    assert results["short"].result == "ok"  # two words: too short to tell a quoted command


def test_a_command_ci_ran_no_more_holds_while_the_script_it_runs_is_defined(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """CI building through turbo now, `pnpm bundle --filter "@kite/*"` still runs the
    script `bundle` the project defines; one whose script went is stale."""
    package = json.dumps({"name": "kite", "scripts": {"bundle": "tsc -b", "e2e": "vitest"}})
    ci = (
        'jobs:\n  build:\n    steps:\n      - run: pnpm bundle --filter "@kite/*"\n'
        '      - run: pnpm e2e --filter "@kite/*"\n'
    )
    verified = _planted(
        layout,
        put,
        commit_all,
        {"package.json": package, ".github/workflows/ci.yml": ci, "pnpm-lock.yaml": "x: 1\n"},
        {"bundle": 'Build the packages with `pnpm bundle --filter "@kite/*"`.'},
    )
    put("e2e", 'End-to-end: `pnpm e2e --filter "@kite/*"`.', verified=verified)
    (layout.root / ".github" / "workflows" / "ci.yml").write_text(
        "jobs:\n  build:\n    steps:\n      - run: pnpm turbo run bundle\n"
    )
    (layout.root / "package.json").write_text(
        json.dumps({"name": "kite", "scripts": {"bundle": "tsc -b"}})
    )
    commit_all(layout.root, "ci builds through turbo; no e2e script")

    results = verify_all(layout)
    assert results["bundle"].result == "ok"
    assert results["e2e"].result == "stale"


def test_notes_written_since_the_record_leave_commands_as_they_were_judged(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """Only memory notes committed since the recorded commit: nothing a lapse compares
    changed, the command holds. A CI file edited in the working tree since is a change."""
    ci = "jobs:\n  lint:\n    steps:\n      - run: ruff check --select=E9 src\n"
    verified = _planted(layout, put, commit_all, {".github/workflows/lint.yml": ci}, {})
    put("a-first", "The app module starts the service.", verified=verified)
    put("ci-lint", "CI runs `ruff check --select=E9 src`.", verified=verified)
    commit_all(layout.root, "notes only")

    assert verify_all(layout)["ci-lint"].result == "ok"

    (layout.root / ".github" / "workflows" / "lint.yml").write_text(ci.replace("E9", "F"))
    results = verify_all(layout)
    assert results["ci-lint"].result == "stale"
    [failure] = results["ci-lint"].failures
    assert "ran `ruff check --select=E9 src`" in failure.reason
    assert results["a-first"].result == "ok"


def test_a_subcommand_the_script_named_and_names_no_more_is_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    run = layout.root / "run.py"
    subcommands = (
        "import argparse\n\nparser = argparse.ArgumentParser()\n"
        "sub = parser.add_subparsers()\nsub.add_parser('pipeline')\nsub.add_parser('fetch')\n"
    )
    _planted(
        layout,
        put,
        commit_all,
        {"run.py": subcommands},
        {
            "pipeline": "Run it all with `python run.py pipeline --force`.",
            "fetch": "Fetch with `python run.py fetch --force`.",
            "never": "Report with `python run.py report`.",
        },
    )
    (layout.root / "app" / "phases.py").write_text("PHASES = ['fetch', 'extract']\n")
    run.write_text(
        "import argparse\n\nfrom app.phases import PHASES\n\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('phase', choices=PHASES)\n"
    )
    commit_all(layout.root, "phases as a positional argument")

    results = verify_all(layout)
    assert results["pipeline"].result == "stale"
    assert "run.py names no subcommand pipeline now" in results["pipeline"].failures[0].reason
    assert results["fetch"].result == "ok"  # named by a module run.py imports
    assert results["never"].result == "ok"  # not named at the record either


def test_a_cited_setting_whose_value_moved_on_in_a_shrunk_file_is_not_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    header = "".join(f'  "note-{i}": "{i}",\n' for i in range(20))
    (layout.root / "deps.json").write_text("{\n" + header + '  "zustand": "5.0.1"\n}\n')
    commit_all(layout.root, "deps")
    verified = recorded_ok(layout)
    put(
        "store",
        "The store uses zustand.",
        citations=(Citation("deps.json", 22),),
        verified=verified,
    )
    put(
        "gone", "The store uses note 19.", citations=(Citation("deps.json", 21),), verified=verified
    )
    (layout.root / "deps.json").write_text('{\n  "zustand": "5.0.8"\n}\n')
    commit_all(layout.root, "fewer entries, zustand bumped")

    results = verify_all(layout)
    # the key the cited line set is set still, to a new value: changed, not stale
    assert results["store"].result == "changed"
    assert "deps.json" in results["store"].changed
    assert results["gone"].result == "stale"  # its key is set nowhere now
    assert "past the end of deps.json" in results["gone"].failures[0].reason


def test_a_cited_line_the_shrunk_file_still_holds_higher_up_is_not_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    header = "".join(f"# note {i}\n" for i in range(20))
    body = "RETRY_LIMIT = 5\nBACKOFF_SECONDS = 2\n"
    (layout.root / "limits.py").write_text(header + body)
    commit_all(layout.root, "limits")
    verified = recorded_ok(layout)
    for name, line in (("retry", 21), ("backoff", 22)):
        put(
            name,
            "Retries are capped in limits.py.",
            citations=(Citation("limits.py", line),),
            verified=verified,
        )
    put("unrecorded", "Retries are capped.", citations=(Citation("limits.py", 21),))
    # a cited line that held the cited symbol moved up with it
    named = Citation("limits.py", 21, "RETRY_LIMIT")
    put("named", "Retries are capped.", citations=(named,), verified=verified)
    put("named-unrecorded", "Retries are capped.", citations=(named,))
    (layout.root / "limits.py").write_text("# limits\nRETRY_LIMIT = 5\n")  # backoff dropped
    commit_all(layout.root, "fewer notes, no backoff")

    results = verify_all(layout)
    assert results["retry"].result == "ok"  # its words are line 2 now, unchanged
    assert results["backoff"].result == "stale"
    assert "past the end of limits.py" in results["backoff"].failures[0].reason
    assert results["unrecorded"].result == "stale"  # no record: nothing to compare with
    assert results["named"].result == "ok"  # RETRY_LIMIT is still there, higher up
    assert results["named-unrecorded"].result == "stale"  # no record: nothing to compare with


def test_a_change_is_told_by_the_prose_not_by_an_arrow_in_code_or_between_versions() -> None:
    assert states_change("`parse_v1()` → `parse()`")
    assert states_change("The loader was renamed; use `load()` instead of `read()`.")
    assert not states_change("`forms-legacy`: re-exports `forms` (v6→v7 compat)")
    assert not states_change("Handlers return `fn handle() -> Result<()>`.")
    assert not states_change("Python 3.9 -> 3.12 is supported.")


def test_an_arrow_from_an_expression_to_a_call_is_a_rewrite_the_named_code_makes(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """A fact "`fold_consts`: ADD(x, CONST) → ADD(x)" says what the rule does, not that the name
    was replaced: the name is checked, and is stale once no code has it."""
    assert not states_change("`fold_consts`: ADD(x, CONST) → ADD(x) for the cache key")
    assert not states_change("`flatten`: LIST[a, b] -> concat(a, b)")
    assert states_change("`fold_consts()` → `fold()`")
    assert states_change("ADD(x) → `fold()`")  # a span after the arrow: a replacement
    write_files(layout.root, {"rules.py": "fold_consts = Rules([])\nunfold_all = Rules([])\n"})
    commit_all(layout.root, "the rules")
    verified = recorded_ok(layout)
    put("rule", "`fold_consts`: ADD(x, CONST) → ADD(x) for the cache key", verified=verified)
    put("kept", "`unfold_all`: ADD(x) → ADD(x, CONST) when the key is read", verified=verified)
    write_files(layout.root, {"rules.py": "unfold_all = Rules([])\n"})
    commit_all(layout.root, "constants are no longer folded")

    results = verify_all(layout)
    assert results["rule"].result == "stale"
    assert "fold_consts" in results["rule"].failures[0].reason
    assert results["kept"].result == "ok"


def test_a_task_a_list_names_under_a_heading_of_make_targets_or_scripts_must_still_be_one(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    makefile = "lint:\n\tgolint ./...\n\nvendorize:\n\tgo mod vendor\n"
    package = {"scripts": {"dev": "vite", "storybook": "storybook dev"}}
    write_files(layout.root, {"Makefile": makefile, "web/package.json": json.dumps(package)})
    commit_all(layout.root, "the targets and scripts")
    verified = recorded_ok(layout)
    listed = {
        "vendor": ("Makefile commands", "**vendorize**: copy the modules into vendor/"),
        "lint": ("Makefile commands", "**lint**: run the linters"),
        "book": ("Available scripts", "`storybook` - the component gallery"),
        "plain": ("Workflow", "**vendorize**: copy the modules into vendor/"),
        "named": ("Tooling", "**fmt**: format the code with the Makefile's settings"),
    }
    for name, (subject, fact) in listed.items():
        put(name, fact, subject=subject, verified=verified)
    write_files(layout.root, {"Makefile": "lint:\n\tgolint ./...\n"})
    package["scripts"] = {"dev": "vite"}
    write_files(layout.root, {"web/package.json": json.dumps(package)})
    commit_all(layout.root, "vendoring and the gallery went")

    results = verify_all(layout)
    short = verified["commit"][:10]
    assert results["vendor"].result == "stale"
    assert results["vendor"].failures[0].reason == (
        f"vendorize: a Make target at {short}, none is named so now"
    )
    assert results["book"].result == "stale"
    assert results["book"].failures[0].reason == (
        f"storybook: a package script at {short}, none is named so now"
    )
    assert results["lint"].result == "ok"  # still a target
    assert results["plain"].result == "ok"  # nothing says the list holds Make targets
    assert results["named"].result == "ok"  # never a target: the list may name anything


def test_a_local_port_no_file_names_any_more_is_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    package = {"scripts": {"dev": "next dev -p 3001", "start": "next start"}}
    compose = "services:\n  db:\n    ports:\n      - '5433:5432'\n"
    verified = _planted(
        layout,
        put,
        commit_all,
        {"package.json": json.dumps(package), "compose.yaml": compose},
        {
            "dev": "The app runs at **http://localhost:3001** in development.",
            "db": "Postgres listens on `localhost:5433`.",
            "default": "Docs preview at http://localhost:4000.",
        },
    )
    package["scripts"]["dev"] = "next dev"
    (layout.root / "package.json").write_text(json.dumps(package))
    commit_all(layout.root, "the dev server on its default port")

    results = verify_all(layout)
    assert results["dev"].result == "stale"
    assert results["dev"].failures[0].reason == (
        f"port 3001: package.json named it at {verified['commit'][:10]}; no file names it now"
    )
    assert results["db"].result == "ok"  # the compose file still maps it
    assert results["default"].result == "ok"  # no file named it then: no claim


def test_a_cited_flag_is_found_as_its_option_parser_declares_it(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    write_files(
        layout.root,
        {
            "cmd/tests.rb": 'flag "--only=", description: "Run only this test file"\n',
            "tools/run.py": "parser.add_argument('--verbose', '-v', action='store_true')\n",
        },
    )
    commit_all(layout.root, "the tests command")
    put("only", "Run one file's tests.", citations=(Citation("cmd/tests.rb", None, "--only="),))
    put("gone", "Skip slow tests.", citations=(Citation("cmd/tests.rb", None, "--skip-slow"),))
    put("short", "Say more with -v.", citations=(Citation("tools/run.py", 1, "-v"),))
    put("no-short", "Quiet with -q.", citations=(Citation("tools/run.py", 1, "-q"),))
    results = verify_all(layout)
    assert results["only"].result == "ok"  # the `=` says it takes a value
    assert results["short"].result == "ok"  # a short flag, quoted where it is declared
    assert results["no-short"].result == "stale"
    assert results["gone"].result == "stale"
    assert "flag --skip-slow does not appear in cmd/tests.rb" in results["gone"].failures[0].reason


def test_a_cited_file_name_a_script_writes_at_the_end_of_a_path_is_named_there(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    write_files(layout.root, {"eng/env.sh": 'script="$out_dir/dev-env.sh"\necho "$script"\n'})
    commit_all(layout.root, "the env script")
    put(
        "env", "Restore writes an env script.", citations=(Citation("eng/env.sh", 1, "dev-env.sh"),)
    )
    put(
        "word", "Restore writes the out dir.", citations=(Citation("eng/env.sh", 1, "dir/dev-env"),)
    )
    results = verify_all(layout)
    assert results["env"].result == "ok"  # a file's name may end the path it is written in
    assert results["word"].result == "stale"  # no name of its own: inside a longer one


def test_one_names_endings_given_several_ways_are_each_an_entry(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    write_files(
        layout.root,
        {f"core-java-{v}/build.gradle": "// module\n" for v in ("8", "11", "17")},
    )
    commit_all(layout.root, "three java modules")
    put("all", "Language levels live in `core-java-8/11/17`.")
    put("one-gone", "Language levels live in `core-java-8/11/21`.")
    results = verify_all(layout)
    assert results["all"].result == "ok"
    assert results["one-gone"].result == "stale"  # core-java-21 is no module


def test_a_path_below_a_top_level_folder_that_went_is_stale_or_moved(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    verified = _planted(
        layout,
        put,
        commit_all,
        {
            "tools/grammar-builder/main.go": "package main\n",
            "scripts/release/run": "#!/bin/sh\necho release\n",
        },
        {
            "builder": "The parsers are generated by `tools/grammar-builder`.",
            "release": "Cut a release with `scripts/release`.",
            "never": "Fixtures live in `samples/inputs`.",
            "bold": "**tools/grammar-builder**: generates the parsers.",
            "prose": "Regenerate the parsers after changing tools/ (the grammar).",
            "kept": "Release notes go through scripts/ and then ops.",
            "row": "`├── tools/` (the parser generators)",
            "deep": "`│   └── tools/` (a folder of some package)",
        },
    )
    git(layout.root, "rm", "-q", "-r", "tools")
    git(layout.root, "mv", "scripts", "ops")
    commit_all(layout.root, "no grammar builder; scripts are ops now")

    results = verify_all(layout)
    assert results["builder"].result == "stale"
    assert results["builder"].failures[0].reason == (
        f"tools/grammar-builder was in the tree at {verified['commit'][:10]}; no tools/ now"
    )
    assert results["bold"].result == "stale"  # a path in bold, as in a code span
    assert results["prose"].result == "stale"  # a root folder in prose, none of its name now
    assert results["row"].result == "stale"  # a first-level row of a drawn tree, quoted
    assert results["deep"].result == "ok"  # a deeper row: its folder is not the root's
    assert results["kept"].result == "moved"  # git followed scripts/ to ops/
    assert results["release"].result == "moved"  # git followed the folder to ops/
    assert results["never"].result == "ok"  # never in the tree: no path of ours


def test_a_deeper_row_of_a_drawn_tree_is_stale_when_every_folder_of_its_name_went(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """`│   └── rollups/`: the drawing is of some package, so the row names every folder of
    that name below the root; stale once all of those the recorded commit had are gone."""
    _planted(
        layout,
        put,
        commit_all,
        {
            "svc/ledger/rollups/daily.py": "DAYS = 1\n",
            "svc/ledger/fixtures/a.json": "{}\n",
            "web/fixtures/b.json": "{}\n",
            "svc/ledger/queue/worker.py": "def work():\n    return 1\n",
            "tools/gen.py": "X = 1\n",
            "svc/ledger/report/a.py": "A = 1\n",
        },
        {
            "rollups": "`│   └── rollups/` (daily summaries)",
            "rollups-top": "`├── rollups/` (daily summaries)",
            "fixtures": "`│   ├── fixtures/` (sample data)",
            "queue": "`│   │   └── queue/` (background work)",
            "never": "`│   └── exports/` (what users download)",
            "root": "`│   └── tools/` (a package's own tools)",
            "plural": "`│   └── report/` (the reports)",
        },
    )
    git(layout.root, "rm", "-q", "-r", "svc/ledger/rollups", "svc/ledger/fixtures")
    git(layout.root, "mv", "svc/ledger/queue", "svc/jobs")
    git(layout.root, "rm", "-q", "-r", "svc/ledger/report")
    write_files(
        layout.root,
        {"docs/rollups/index.md": "# later\n", "svc/ledger/reports/b.py": "def b():\n    pass\n"},
    )
    commit_all(layout.root, "no rollups; queue is jobs now")

    results = verify_all(layout)
    assert results["rollups"].result == "stale"
    assert "svc/ledger/rollups/ was in the tree" in results["rollups"].failures[0].reason
    assert results["rollups-top"].result == "stale"  # the drawing's first level, not the root
    assert results["fixtures"].result == "ok"  # web/fixtures is left: maybe the one meant
    assert results["queue"].result == "moved"  # git followed the folder
    assert results["never"].result == "ok"  # no folder of that name then: no claim
    assert results["root"].result == "ok"  # only the root had it, and still has it
    assert results["plural"].result == "ok"  # report/ rewritten as reports/: not judged


def test_a_class_a_quoted_line_of_code_names_is_stale_once_no_file_defines_it(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """A line of code in a code span makes no claim on the tree alone; a class of several
    capitalised parts it names that the code defined then and defines nowhere now went."""
    _planted(
        layout,
        put,
        commit_all,
        {
            "shop/reports.py": "class ReportBuilder:\n    def __init__(self, kind):\n"
            "        self.kind = kind\n\n\nclass TestName:\n    pass\n",
            "shop/errors.py": "class AppError(Exception):\n    pass\n\n\n"
            "class ParseFailure(AppError):\n    pass\n",
        },
        {
            "builder": '`mgr = ReportBuilder(kind="pdf")`',
            "failure": "`class ParseFailure(AppError):`",
            "kept": "`class AppError(Exception):`",
            "example": "`class QuotaExceeded(AppError):`",
            "placeholder": "`pytest -k TestName shop/`",
            "alone": "`ReportBuilder`",
        },
    )
    write_files(
        layout.root,
        {
            "shop/reports.py": "def build_report(kind):\n    return kind\n",
            "shop/errors.py": "class AppError(Exception):\n    pass\n",
        },
    )
    commit_all(layout.root, "reports are a function; one error class")

    results = verify_all(layout)
    assert results["builder"].result == "stale"
    assert results["builder"].failures[0].claim.text == "ReportBuilder"
    assert results["failure"].result == "stale"
    assert results["kept"].result != "stale"  # still defined
    assert results["example"].result != "stale"  # never defined: an example's name
    assert results["placeholder"].result != "stale"  # stands for any test's name
    assert results["alone"].result == "stale"  # a class claim of its own, as before
    assert len(results["alone"].failures) == 1


def test_a_dotted_project_name_is_stale_once_no_folder_is_named_so(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """`Ledger.Replication`, as .NET names a project: stale when the recorded commit had a
    folder of that name and no path has one now; a dotted name no folder had is no claim."""
    _planted(
        layout,
        put,
        commit_all,
        {
            "src/Ledger.Core/Ledger.Core.csproj": "<Project />\n",
            "src/Ledger.Replication/Ledger.Replication.csproj": "<Project />\n",
            "src/Ledger.Web/Ledger.Web.csproj": "<Project />\n",
        },
        {
            "gone": "**Projects**: Ledger.Core, Ledger.Replication",
            "kept": "**Projects**: Ledger.Core (the engine)",
            "moved": "The UI is Ledger.Web.",
            "namespace": "Types live in Ledger.Contracts.Events.",
        },
    )
    git(layout.root, "rm", "-q", "-r", "src/Ledger.Replication")
    git(layout.root, "mv", "src/Ledger.Web", "web/Ledger.Web")
    commit_all(layout.root, "no replication project; the UI at web/")

    results = verify_all(layout)
    assert results["gone"].result == "stale"
    assert "src/Ledger.Replication/ was in the tree" in results["gone"].failures[0].reason
    assert results["kept"].result == "ok"
    assert results["moved"].result == "ok"  # a folder of that name is still there
    assert results["namespace"].result == "ok"  # no folder was named so: no claim


def test_a_listed_hyphenated_name_that_was_a_folder_or_note_is_stale_once_gone(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """ "- **release-notes** - ...": a list item headed by a hyphenated name that the
    recorded commit had as a folder or a markdown note, none of which is left now."""
    write_files(
        layout.root,
        {
            ".agent/skills/release-notes/GUIDE.md": "# notes\n",
            ".agent/skills/schema-review/GUIDE.md": "# review\n",
            ".agent/roles/ledger-keeper.md": "# keeper\n",
            ".github/workflows/type-check.yml": "on: push\n",
        },
    )
    commit_all(layout.root, "before")
    verified = recorded_ok(layout)
    for name, fact in {
        "skill": "- **release-notes** - writing the changelog",
        "role": "- `ledger-keeper`: owns the books",
        "kept": "- **schema-review** - checking migrations",
        "workflow": "- **type-check** - the types",
        "never": "- **cache-warmer** - fills the cache",
    }.items():
        put(name, fact, verified=verified, subject="Helpers")
    git(layout.root, "rm", "-q", "-r", ".agent/skills/release-notes", ".agent/roles")
    git(layout.root, "rm", "-q", ".github/workflows/type-check.yml")
    commit_all(layout.root, "fewer helpers")

    results = verify_all(layout)
    assert results["skill"].result == "stale"
    assert (
        results["skill"]
        .failures[0]
        .reason.startswith(".agent/skills/release-notes was in the tree")
    )
    assert results["role"].result == "stale"
    assert results["kept"].result == "ok"
    assert results["workflow"].result == "ok"  # a workflow file, not a folder or a note
    assert results["never"].result == "ok"  # nothing of that name then: no claim


def test_a_product_in_a_code_span_or_named_by_its_scope_is_a_dependency_claim(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """`Vitest` alone in a code span is judged as a product the prose names; a product
    declared then as a scope's packages (`@tabkit/core` for Tabkit) is a claim too."""
    deps = {"@tabkit/core": "^2", "@tabkit/react": "^2", "vitest": "^3", "zustand": "^5"}
    _planted(
        layout,
        put,
        commit_all,
        {
            "package.json": json.dumps({"devDependencies": deps}),
            "src/legacy.ts": 'export const formerTables = "Tabkit";\n',
        },
        {
            "scope": "**Tables**: built with Tabkit and Zustand",
            "span": "Tables use `Tabkit` widgets",
            "two": "State lives in `Zustand Store` slices",
            "kept": "Tests run with `Vitest`",
            "denied": "Do not add `Tabkit` widgets any more",
            "never": "Charts use `Plotkit`",
        },
    )
    for gone in ("@tabkit/core", "@tabkit/react", "zustand"):
        del deps[gone]
    (layout.root / "package.json").write_text(json.dumps({"devDependencies": deps}))
    commit_all(layout.root, "tables and state by hand")

    results = verify_all(layout)
    assert results["scope"].result == "stale"
    assert sorted(f.claim.text for f in results["scope"].failures) == ["Tabkit", "Zustand"]
    assert results["span"].result == "stale"  # the word is left in code, the package is not
    assert results["two"].result != "stale"  # `zustandstore` was no dependency
    assert results["kept"].result != "stale"
    assert results["denied"].result != "stale"
    assert results["never"].result != "stale"  # no dependency then: no claim


def test_two_bare_parts_in_prose_that_were_a_folder_are_stale_once_it_is_gone(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """ "changes to engines/legacy": two parts in prose are as often words, so only a
    folder of the recorded commit's tree is a claim, stale once no folder is there."""
    _planted(
        layout,
        put,
        commit_all,
        {
            "engines/legacy/run.py": "def run():\n    return 0\n",
            "engines/modern/run.py": "def run():\n    return 1\n",
            "engines/batch/run.py": "def run():\n    return 2\n",
        },
        {
            "gone": "Label the PR when it only changes engines/legacy code.",
            "kept": "Label the PR when it only changes engines/modern code.",
            "words": "Keep the input/output shapes stable.",
            "moved": "Jobs of engines/batch run at night.",
        },
    )
    git(layout.root, "rm", "-q", "-r", "engines/legacy")
    git(layout.root, "mv", "engines/batch", "jobs")
    commit_all(layout.root, "one engine; batch is its own folder")

    results = verify_all(layout)
    assert results["gone"].result == "stale"
    assert results["gone"].failures[0].reason.startswith("engines/legacy/ was in the tree")
    assert results["kept"].result == "ok"
    assert results["words"].result == "ok"  # never a folder: words
    assert results["moved"].result == "moved"  # git followed the folder


def test_a_name_listed_under_a_heading_that_names_its_folder_is_an_entry_there(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """A heading "### Ledger service (`svc/ledger/`)" then "- **journal**: ...": the entry of
    that folder the recorded commit had by that name must still be there."""
    write_files(
        layout.root,
        {
            "svc/ledger/journal/Cargo.toml": "[package]\nname = 'journal'\n",
            "svc/ledger/audit.md": "# audit\n",
            "svc/ledger/api/Cargo.toml": "[package]\nname = 'api'\n",
        },
    )
    commit_all(layout.root, "before")
    verified = recorded_ok(layout)
    heading = "Ledger service (`svc/ledger/`)"
    for name, fact in {
        "journal": "- **journal**: the append-only log of entries",
        "audit": "- **audit**: how entries are checked",
        "api": "- **api**: the service's calls",
        "never": "- **replicas**: copies of the ledger",
    }.items():
        put(name, fact, subject=heading, verified=verified)
    put("other", "- **api**: the service's calls", subject="Ledger service", verified=verified)
    git(layout.root, "rm", "-q", "-r", "svc/ledger/journal", "svc/ledger/audit.md")
    commit_all(layout.root, "the journal and the audit notes left")

    results = verify_all(layout)
    assert results["journal"].result == "stale"
    assert results["journal"].failures[0].reason == (
        f"svc/ledger/journal/ was in the tree at {verified['commit'][:10]}; it is gone now"
    )
    assert results["audit"].result == "stale"  # a file of that name and an extension
    assert results["api"].result == "ok"  # still there
    assert results["never"].result == "ok"  # no entry of that name then: no claim
    assert results["other"].result == "ok"  # a heading naming no folder lists nothing


def test_a_tool_whose_configuration_the_tree_keeps_is_still_in_use(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """A product dropped from every manifest while the tree keeps its own configuration
    (`.changeset/` for Changesets, `quillfmt.config.ts`) is still used: run with `npx`,
    installed globally or by a parent project."""
    deps = {"@changesets/cli": "^2", "quillfmt": "^1", "tablekit": "^3"}
    _planted(
        layout,
        put,
        commit_all,
        {
            "package.json": json.dumps({"devDependencies": deps}),
            ".changeset/config.json": "{}\n",
            "quillfmt.config.ts": "export default {};\n",
        },
        {
            "scope": "Releases are versioned with Changesets",
            "named": "Code is formatted with Quillfmt",
            "dropped": "Tables are drawn with Tablekit",
        },
    )
    (layout.root / "package.json").write_text(json.dumps({"devDependencies": {}}))
    commit_all(layout.root, "tools from the parent workspace")

    results = verify_all(layout)
    assert results["scope"].result == "ok"
    assert results["named"].result == "ok"
    assert results["dropped"].result == "stale"  # no configuration of its own kept
