"""Facts that went stale while every name they give is still somewhere in the tree, judged
against the commit the memory was verified at: an environment variable no code reads any
more (no test, for a fact about tests), an instance's member its class no longer defines,
a mechanism switched off by commenting its line out, a dependency given a version that no
manifest declares any more. Real git repositories, no network."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import commit, committed, git, verify_all, write_files

from orchestrator.memory.lint import lint
from orchestrator.memory.verify import commented_out
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation

PGX = 'package sqltest\n\nimport "os"\n\nfunc Host() string {\n\treturn os.Getenv("PG_HOST")\n}\n'
GEN = 'package main\n\nimport "os"\n\nfunc main() {\n\t_ = os.Getenv("PG_HOST")\n}\n'
ACCOUNT = "class Account\n  def series(period)\n    []\n  end\n\n  def name\n    'a'\n  end\nend\n"
AUTO_REFRESH = (
    "module AutoRefresh\n  included do\n    before_action :refresh_ledger, if: :needs_auto_refresh?\n"
    "  end\n\n  def refresh_ledger\n    Current.ledger.refresh_later\n  end\nend\n"
)
METER = (
    "package core\n\nfunc read(remote int) error {\n\tif remote != meter.Enabled {\n"
    "\t\treturn nil\n\t}\n\treturn retry.Permanent(errRead)\n}\n"
)


def test_a_variable_no_test_reads_any_more_is_stale_for_a_fact_about_tests(
    layout: Layout, put: Callable[..., Any]
) -> None:
    verified = committed(
        layout,
        {"internal/sqltest/pgx.go": PGX, "tools/gen/main.go": GEN, "docs/dev.md": "PG_HOST\n"},
        "tests and a tool read PG_HOST",
    )
    put("tests", "`PG_HOST=127.0.0.1`", subject="Test settings", verified=verified)
    put("tool", "`PG_HOST=127.0.0.1`", subject="Generating the catalog", verified=verified)
    put("later", "`PG_HOST=127.0.0.1`", subject="Test settings")
    put("secret", "Set `API_KEY=<your-key>` in `.env`.")
    git(layout.root, "rm", "-q", "internal/sqltest/pgx.go")
    commit(layout.root, "the tests start their own database")

    results = verify_all(layout)
    assert results["tests"].result == "stale"
    [failure] = results["tests"].failures
    assert failure.reason == (
        f"no test code reads PG_HOST now; internal/sqltest/pgx.go did at {verified['commit'][:10]}"
    )
    assert results["tool"].result == "ok"  # the tool still reads it
    assert results["later"].result == "ok"  # no record: nothing to judge against
    assert results["secret"].result == "ok"  # a local setting: no claim on the tree alone
    git(layout.root, "rm", "-q", "tools/gen/main.go")
    commit(layout.root, "no tool")
    assert verify_all(layout)["tool"].result == "stale"


def test_an_instance_member_its_class_no_longer_defines_is_stale(
    layout: Layout, put: Callable[..., Any]
) -> None:
    verified = committed(layout, {"app/models/account.rb": ACCOUNT}, "accounts")
    put(
        "series",
        "Models answer for themselves: `account.series` gives balances.",
        verified=verified,
    )
    put("name", "`account.name` is shown in the header.", verified=verified)
    put("other", "`record.series` is never called.", verified=verified)
    write_files(
        layout.root,
        {
            "app/models/account.rb": ACCOUNT.replace("def series(period)", "def balances(period)"),
            "app/components/chart.rb": "class Chart\n  def series\n    []\n  end\nend\n",
        },
    )
    commit(layout.root, "the chart computes the series")

    results = verify_all(layout)
    assert results["series"].result == "stale"
    assert results["series"].failures[0].reason == (
        f"Account defined series at {verified['commit'][:10]}; no Account defines it now"
    )
    assert results["name"].result in ("ok", "changed")
    assert results["other"].result in ("ok", "changed")  # no Record then either


def test_a_line_commented_out_switches_the_mechanism_off(
    layout: Layout, put: Callable[..., Any]
) -> None:
    path = "app/controllers/concerns/auto_refresh.rb"
    verified = committed(layout, {path: AUTO_REFRESH}, "auto refresh")
    put(
        "cited",
        "The ledger refreshes daily.",
        citations=(Citation(path, 6, "refresh_ledger"),),
        verified=verified,
    )
    put("linked", f"It refreshes daily through [auto_refresh.rb](mdc:{path}).", verified=verified)
    put("elsewhere", "The models live in `app/models/`.", verified=verified)
    put(
        "other",
        "Reports run nightly.",
        citations=(Citation(path, 1, "AutoRefresh"),),
        verified=verified,
    )
    switched = AUTO_REFRESH.replace("  included do", "  # included do").replace(
        "    before_action", "  #   before_action"
    )
    write_files(layout.root, {path: switched.replace("  end\n\n", "  # end\n\n", 1)})
    commit(layout.root, "no auto refresh for now")

    results = verify_all(layout)
    for name in ("cited", "linked"):
        assert results[name].result == "stale", name
        reason = results[name].failures[0].reason
        line = "before_action :refresh_ledger, if: :needs_auto_refresh?"
        assert reason == f"{path}: `{line}` is commented out since {verified['commit'][:10]}"
    assert results["elsewhere"].result != "stale"
    assert results["other"].result != "stale"  # no line about AutoRefresh or auto_refresh went


def test_a_commented_out_line_about_something_else_of_the_cited_file_leaves_the_fact_alone(
    layout: Layout, put: Callable[..., Any]
) -> None:
    path = "core/meter.go"
    verified = committed(layout, {path: METER}, "meter")
    put(
        "named",
        "Wrap errors not worth retrying in `retry.Permanent(err)`.",
        citations=(Citation(path, 7),),
        verified=verified,
    )
    put("bare", "Readings are retried.", citations=(Citation(path, 7),), verified=verified)
    write_files(
        layout.root,
        {
            path: METER.replace(
                "\tif remote != meter.Enabled {", "\t// if remote != meter.Enabled {"
            )
        },
    )
    commit(layout.root, "remote switch off for now")

    results = verify_all(layout)
    # the fact names code of its own, still live: the line naming the file's name is not it
    assert results["named"].result != "stale"
    # naming nothing, the fact is about the file's own thing, and that line went
    assert results["bare"].result == "stale"
    assert "`if remote != meter.Enabled {` is commented out" in results["bare"].failures[0].reason


def test_commented_out_asks_for_a_line_about_the_thing_gone_from_the_live_code() -> None:
    then = "run_nightly_sync(db)\nconfigure(cache_size)\nend\n"
    now = "# run_nightly_sync(db)\n# configure(cache_size)\n"
    assert commented_out(then, now, ["nightly_sync"]) == "run_nightly_sync(db)"
    assert commented_out(then, now, ["Nightly"]) == "run_nightly_sync(db)"  # within a word
    # a line about something else, still live elsewhere, or a short line: nothing off
    assert commented_out(then, now, ["reports"]) is None
    assert commented_out(then, now + "run_nightly_sync(db)\n", ["nightly_sync"]) is None
    assert commented_out(then, "# end\n", ["end"]) is None
    # a short name only as a whole word: the target `check` is not `ruff format checks/`
    recipe, off = "lint:\n\truff format checks/\n", "lint:\n\t# ruff format checks/\n"
    assert commented_out(recipe, off, ["check"]) is None
    assert commented_out(recipe, off, ["ruff"]) == "ruff format checks/"


def test_the_file_lint_reads_a_heading_about_tests_for_a_variable(git_repo: Path) -> None:
    write_files(git_repo, {"internal/sqltest/pgx.go": PGX, "tools/gen/main.go": GEN})
    text = "# Dev\n\n## Variables for tests\n\n```bash\nPG_HOST=127.0.0.1\n```\n"
    write_files(git_repo, {"AGENTS.md": text})
    commit(git_repo, "agents file")
    git(git_repo, "rm", "-q", "internal/sqltest/pgx.go")
    commit(git_repo, "no test reads it")
    [finding] = lint(git_repo, "AGENTS.md", text)
    assert finding.line == 6 and finding.status == "stale"
    assert finding.reason.startswith("no test code reads PG_HOST now")


def test_a_dependency_given_a_version_and_dropped_since_the_record_is_stale(
    layout: Layout, put: Callable[..., Any]
) -> None:
    package = {"devDependencies": {"eslint": "^9.30.0", "tailwindcss": "^3.4.17"}}
    verified = committed(layout, {"package.json": json.dumps(package)}, "eslint and tailwind")
    put("eslint", "- eslint (ESLINT) - v9", verified=verified)
    put("tailwind", "- tailwindcss (TAILWINDCSS) - v3", verified=verified)
    put("never", "- prettier (PRETTIER) - v3", verified=verified)
    put("unrecorded", "- eslint (ESLINT) - v9")
    write_files(
        layout.root, {"package.json": json.dumps({"devDependencies": {"tailwindcss": "^3.4"}})}
    )
    commit(layout.root, "lint with another tool")

    results = verify_all(layout)
    # prettier was never a dependency here; the unrecorded memory has nothing to judge against
    assert {name: v.result for name, v in results.items()} == {
        "eslint": "stale",
        "tailwind": "ok",
        "never": "ok",
        "unrecorded": "ok",
    }
    reasons = [f.reason for f in results["eslint"].failures]
    assert reasons == [
        f"eslint (ESLINT) - v9: a dependency at {verified['commit'][:10]}, no manifest declares it now"
    ]


def test_a_full_version_a_named_file_pinned_and_pins_no_more_is_stale(
    layout: Layout, put: Callable[..., Any]
) -> None:
    sdk = {"sdk": {"version": "11.0.100-rc.2.26112.104", "rollForward": "major"}}
    verified = committed(
        layout,
        {"global.json": json.dumps(sdk), "CHANGELOG.md": "## 2.4.1\n"},
        "a release candidate SDK",
    )
    put("sdk", "`global.json` pins the SDK (11.0.100-rc.2.26112.104).", verified=verified)
    put(
        "cited",
        "The SDK is 11.0.100-rc.2.26112.104.",
        verified=verified,
        citations=(Citation("global.json"),),
    )
    put("history", "`CHANGELOG.md` lists 2.4.1.", verified=verified)
    put("unnamed", "Builds need the SDK 11.0.100-rc.2.26112.104 installed.", verified=verified)
    put("unrecorded", "`global.json` pins the SDK (11.0.100-rc.2.26112.104).")
    sdk["sdk"]["rollForward"] = "latestFeature"
    write_files(layout.root, {"global.json": json.dumps(sdk)})
    commit(layout.root, "roll forward to the latest feature band")
    # the file changed (`changed`), the pin did not
    assert [v.name for v in verify_all(layout).values() if v.result == "stale"] == []

    sdk["sdk"]["version"] = "11.0.201"
    write_files(
        layout.root, {"global.json": json.dumps(sdk), "CHANGELOG.md": "## 2.5.0\n## 2.4.1\n"}
    )
    commit(layout.root, "the released SDK")
    results = verify_all(layout)
    # CHANGELOG.md still has its version; the unrecorded memory has nothing to judge against
    # a version no file of the words holds is judged against the files that pin versions
    assert [v.name for v in results.values() if v.result == "stale"] == ["cited", "sdk", "unnamed"]
    assert [f.reason for f in results["sdk"].failures] == [
        f"global.json had 11.0.100-rc.2.26112.104 at {verified['commit'][:10]}; it no longer does"
    ]


def test_a_function_the_code_no_longer_defines_is_stale_though_a_test_still_calls_it(
    layout: Layout, put: Callable[..., Any]
) -> None:
    """In Python an undefined name fails on its own; in other languages a call counts as
    naming code, so the definition the code had at the recorded commit decides."""
    verified = committed(
        layout,
        {
            "src/extra.ts": (
                "export function loadRules(path: string) {\n  return path;\n}\n\n"
                "export class RuleSet {}\n"
            ),
            "src/moving.ts": "export function renderRules(r: string[]) {\n  return r;\n}\n",
            "app/Jobs/CheckJob.php": "<?php\nclass CheckJob\n{\n}\n",
            "test/extra.test.ts": (
                'import { loadRules, RuleSet } from "../src/extra";\n'
                'import { readFileSync } from "fs";\n\n'
                'loadRules(String(readFileSync("x")));\nnew RuleSet();\n'
            ),
        },
        "rules",
    )
    put("gone", "`loadRules()` reads the rules file.", verified=verified)
    put("class", "Rules live in `RuleSet`.", verified=verified)
    put("moved", "`renderRules()` prints them.", verified=verified)
    put("library", "`readFileSync()` reads the payload.", verified=verified)
    put("patterns", "`CheckJob` runs the checks.", verified=verified)
    git(layout.root, "rm", "-q", "src/extra.ts", "src/moving.ts")
    write_files(
        layout.root,
        {
            "src/render.ts": "export function renderRules(r: string[]) {\n  return [...r];\n}\n",
            "app/Jobs/CheckJob.php": "<?php\nclass CheckJob\n{\n    public $tries = 3;\n}\n",
        },
    )
    commit(layout.root, "the rules are built in; rendering has its own module")

    results = verify_all(layout)
    assert results["gone"].result == "stale"
    assert results["gone"].failures[0].reason == (
        f"loadRules was defined in src/extra.ts at {verified['commit'][:10]}; "
        "nothing defines it now"
    )
    assert results["class"].result == "stale"
    assert results["moved"].result in ("ok", "changed")  # defined elsewhere now
    assert results["library"].result in ("ok", "changed")  # never the code's own
    assert results["patterns"].result in ("ok", "changed")  # still defined, read by patterns


def test_a_name_in_prose_the_code_defined_then_and_defines_nowhere_now_is_stale(
    layout: Layout, put: Callable[..., Any]
) -> None:
    verified = committed(
        layout,
        {
            "src/legend.ts": "export class ChartLegendRenderer {\n  draw(): void {}\n}\n",
            "src/axis.ts": "export class AxisTickPainter {\n  paint(): void {}\n}\n",
            "package.json": '{"name": "@acme/chartkit"}\n',
            "legacy/index.ts": "export class ChartKit {}\n",
        },
        "legend and axis",
    )
    put("legend", "The ChartLegendRenderer draws the legend.", verified=verified)
    put("own", "ChartKit draws charts in the browser.", verified=verified)
    put("axis", "Ticks are drawn by the AxisTickPainter.", verified=verified)
    put("product", "Releases go out through GitHub Actions.", verified=verified)
    put("denied", "The ChartLegendRenderer is no longer used.", verified=verified)
    write_files(
        layout.root,
        {"src/legend.ts": "// was ChartLegendRenderer\nexport class LegendPainter {}\n"},
    )
    (layout.root / "legacy" / "index.ts").unlink()
    commit(layout.root, "legend painter")

    results = verify_all(layout)
    assert results["legend"].result == "stale"
    assert results["legend"].failures[0].reason == (
        f"ChartLegendRenderer was defined in src/legend.ts at {verified['commit'][:10]}; "
        "nothing defines it now"
    )
    assert results["axis"].result == "ok"  # still defined
    assert results["product"].result == "ok"  # never defined here: a product's name
    assert results["own"].result == "ok"  # the project's own name, not one class of it
    assert results["denied"].result == "ok"  # the words say it went


def test_a_kind_of_file_named_by_its_extension_with_none_left_is_stale(
    layout: Layout, put: Callable[..., Any]
) -> None:
    schema = "table Point { x: float; }\n"
    verified = committed(
        layout,
        {"schema/point.fbs": schema, "schema/line.fbs": schema, "a.md": "A\n"},
        "flatbuffers schemas",
    )
    put("schemas", "Types are declared in `.fbs` files under `schema/`.", verified=verified)
    put("docs", "Notes are plain .md files.", verified=verified)
    put("local", "Secrets stay in .env files nobody commits.", verified=verified)
    git(layout.root, "rm", "-q", "schema/point.fbs", "schema/line.fbs")
    write_files(layout.root, {"schema/types.proto": 'syntax = "proto3";\n'})
    commit(layout.root, "protobuf instead")

    results = verify_all(layout)
    assert results["schemas"].result == "stale"
    assert f"no .fbs file is left (2 at {verified['commit'][:10]})" in [
        f.reason for f in results["schemas"].failures
    ]
    assert results["docs"].result == "ok"  # still tracked
    assert results["local"].result == "ok"  # never tracked: nothing to compare


def test_a_name_in_capitals_no_code_names_any_more_is_stale(
    layout: Layout, put: Callable[..., Any]
) -> None:
    script = "export SDK_ROOT=/opt/sdk\nexport SDK_MULTILEVEL_LOOKUP=0\n"
    verified = committed(
        layout,
        {"activate.sh": script, "docs/setup.md": "Set SDK_MULTILEVEL_LOOKUP.\n"},
        "activate script",
    )
    put("sets", "The script sets `SDK_ROOT` and `SDK_MULTILEVEL_LOOKUP`.", verified=verified)
    put("secret", "CI reads `RELEASE_SIGNING_KEY` from its settings.", verified=verified)
    write_files(layout.root, {"activate.sh": "export SDK_ROOT=/opt/sdk\n"})
    commit(layout.root, "no multilevel lookup")

    results = verify_all(layout)
    assert results["sets"].result == "stale"
    assert [f.reason for f in results["sets"].failures] == [
        f"SDK_MULTILEVEL_LOOKUP was named in activate.sh at {verified['commit'][:10]}; "
        "no code names it now"
    ]  # the setup notes still name it: prose is no code
    assert results["secret"].result == "ok"  # no code named it then either


def test_a_ruby_method_ending_in_a_bang_no_code_names_any_more_is_stale(
    layout: Layout, put: Callable[..., Any]
) -> None:
    helper = "module AuthHelpers\n  def stub_sign_in!(user) = user\n  def admin_user?(u) = u\nend\n"
    spec = "it 'lists' do\n  stub_sign_in!(admin)\nend\n"
    verified = committed(
        layout, {"spec/support/auth.rb": helper, "spec/list_spec.rb": spec}, "helpers"
    )
    put("bang", "Specs sign in with `stub_sign_in!`.", verified=verified)
    put("predicate", "Check roles with `admin_user?`.", verified=verified)
    put("library", "Records are saved with `save_all!`.", verified=verified)
    write_files(
        layout.root,
        {"spec/support/auth.rb": "module AuthHelpers\n  def admin_user?(u) = u\nend\n"},
    )
    (layout.root / "spec" / "list_spec.rb").write_text("it 'lists' do\nend\n")
    commit(layout.root, "sign-in helpers from the engine's gem")

    results = verify_all(layout)
    assert results["bang"].result == "stale"
    assert results["bang"].failures[0].reason == (
        f"stub_sign_in! was named in spec/list_spec.rb at {verified['commit'][:10]}; "
        "no code names it now"
    )
    assert results["predicate"].result == "ok"  # still defined
    assert results["library"].result == "ok"  # no code named it then either


def test_a_linter_rule_named_with_its_plugin_no_config_names_any_more_is_stale(
    layout: Layout, put: Callable[..., Any]
) -> None:
    config = (
        'export default [{\n  rules: {\n    "hooks-plus/stable-deps": "error",\n'
        '    "layout/brace-spacing": "warn",\n  },\n}];\n'
    )
    verified = committed(
        layout, {"lint.config.js": config, "web/ui-kit/index.ts": "export {};\n"}, "lint"
    )
    put(
        "dropped",
        "Keep `hooks-plus/stable-deps` on: effects list what they read.",
        verified=verified,
    )
    put("kept", "Braces follow `layout/brace-spacing`.", verified=verified)
    put("path", "Shared widgets live in `web/ui-kit`.", verified=verified)
    put("never", "Prefer `query-lint/no-raw-sql` for new code.", verified=verified)
    write_files(layout.root, {"lint.config.js": config.replace('"hooks-plus/stable-deps"', '"x"')})
    commit(layout.root, "the hooks plugin left")

    results = verify_all(layout)
    assert results["dropped"].result == "stale"
    assert results["dropped"].failures[0].reason == (
        f"hooks-plus/stable-deps was named in lint.config.js at {verified['commit'][:10]}; "
        "no code names it now"
    )
    assert results["kept"].result == "ok"
    assert results["path"].result == "ok"  # a path of the tree, no rule
    assert results["never"].result == "ok"  # no code named it then either


def test_a_count_of_a_folders_folders_that_was_right_and_is_not_is_stale(
    layout: Layout, put: Callable[..., Any]
) -> None:
    packages = {f"packages/p{i}/package.json": "{}\n" for i in range(5)}
    verified = committed(layout, {**packages, "crates/one/Cargo.toml": ""}, "packages")
    put("plus", "There are 5+ packages in `packages/`.", verified=verified)
    put("exact", "The 4 packages under `packages` build with tsc.", verified=verified)
    put(
        "crates",
        "The 1 crate lives under `crates/` (2 crates in `crates/` soon).",
        verified=verified,
    )
    git(layout.root, "rm", "-q", "-r", "packages/p4", "packages/p3")
    commit(layout.root, "two packages inlined")

    results = verify_all(layout)
    assert results["plus"].result == "stale"
    assert results["plus"].failures[0].reason == (
        f"packages/ holds 3 folders now (5 at {verified['commit'][:10]})"
    )
    assert results["exact"].result == "ok"  # wrong then too: nothing to compare
    assert results["crates"].result == "ok"  # a plan, wrong then and now alike


def test_a_lower_camel_name_the_code_had_and_has_no_more_is_stale(
    layout: Layout, put: Callable[..., Any]
) -> None:
    code = "package cfg\n\nfunc (c *Cmd) configureBroker() error {\n\treturn nil\n}\n"
    verified = committed(layout, {"cmd/setup.go": code}, "setup")
    put("broker", "`configureBroker` asks for the broker's address.", verified=verified)
    put("style", "Name functions in `camelCase`.", verified=verified)
    write_files(
        layout.root, {"cmd/setup.go": "package cfg\n\nfunc setup() error {\n\treturn nil\n}\n"}
    )
    commit(layout.root, "no broker set-up")

    results = verify_all(layout)
    assert results["broker"].result == "stale"
    assert results["broker"].failures[0].reason == "configureBroker appears nowhere in the code"
    assert results["style"].result == "ok"  # no code named it then either
