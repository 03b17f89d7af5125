"""Claims beyond names (`orchestrator.memory.kinds`): how each kind is read and checked."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.memory.kinds import Project, check, text_claims


def project(tmp_path: Path, files: dict[str, str]) -> Project:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return Project(tmp_path, sorted(files))


def verdicts(text: str, proj: Project) -> dict[str, str | None]:
    return {f"{c.kind}:{c.symbol or c.path}": check(c, proj) for c in text_claims(text)}


def test_scripts_are_read_from_the_package_of_the_folder_a_command_enters(tmp_path: Path) -> None:
    proj = project(
        tmp_path,
        {
            "package.json": json.dumps({"scripts": {"build": "x"}}),
            "web/package.json": json.dumps(
                {"scripts": {"lint": "x"}, "devDependencies": {"vitest": "1"}}
            ),
        },
    )
    found = verdicts("`cd web && npm run lint`, then `cd web && npm run build`", proj)
    assert found["directory:web"] is None
    assert found["script:lint"] is None
    assert found["script:build"] == "no script build in web/package.json"
    assert verdicts("`pnpm vitest` and `pnpm tsc`", proj) == {
        "script:vitest?": None,  # an installed program
        "script:tsc?": None,  # perhaps a program: nothing says otherwise
    }
    assert verdicts("`pnpm lint:fix`", proj) == {
        "script:lint:fix?": "no script lint:fix in any package.json"
    }


def test_a_phony_name_counts_only_where_an_include_could_not_be_followed(
    tmp_path: Path,
) -> None:
    proj = project(
        tmp_path,
        {
            "Makefile": "include $(TOOLS)/rules.mk\n.PHONY: lint\ntest:\n\tpytest\n",
            "docs/Makefile": "include common.mk\n.PHONY: html serve\n",
            "docs/common.mk": "html:\n\tsphinx-build . _build\n",
        },
    )
    found = verdicts("`make lint`; `make -C docs html`; `make -C docs serve`", proj)
    assert found == {
        "task:make:lint": None,  # rules.mk, behind a variable, may define it
        "task:make:html": None,
        "task:make:serve": "no Make target serve",
    }


def test_tasks_extras_and_patterns(tmp_path: Path) -> None:
    proj = project(
        tmp_path,
        {
            "Makefile": "test:\n\tpytest\n\n.PHONY: test-ci\nbuild-%:\n\tgo build\n",
            "tox.ini": "[tox]\nenvlist = py312, lint\n\n[testenv:docs]\n",
            "pyproject.toml": '[project]\nname = "x"\n[project.optional-dependencies]\ndev = []\n'
            "[dependency-groups]\nlint = []\n",
            "pkg/server_test.go": "package pkg\n",
        },
    )
    found = verdicts(
        "`make test test-ci build-linux gone`; `tox -e lint,docs,py311,nope`; "
        '`pip install -e ".[dev,docs]"`; `uv sync --group lint`; files ending in `_test.go`, '
        "not `*.spec.ts`",
        proj,
    )
    assert found == {
        "task:make:test": None,
        "task:make:test-ci": "no Make target test-ci",  # only .PHONY names it: no recipe
        "task:make:build-linux": None,  # a pattern rule
        "task:make:gone": "no Make target gone",
        "task:tox:lint": None,
        "task:tox:docs": None,
        "task:tox:py311": None,
        "task:tox:nope": "no tox environment nope",
        "extra:dev": None,
        "extra:docs": "no optional-dependency or dependency group named docs",
        "extra:lint": None,
        "pattern:.spec.ts": "no file matches *.spec.ts",
        "pattern:*_test.go": None,
    }


def test_stated_values_against_the_config(tmp_path: Path) -> None:
    proj = project(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "x"\nrequires-python = ">=3.10"\n'
            "[tool.pytest.ini_options]\ntimeout = 5\n",
            "go.mod": "module example.com/x\n\ngo 1.24.0\n",
            "package.json": json.dumps({"dependencies": {"react": "^19.1.0"}}),
        },
    )
    found = verdicts(
        "Python 3.9+ is required. Go 1.25+ builds it. We use React 18. "
        "The pytest timeout is 3 seconds.",
        proj,
    )
    assert found["value:python"] == (
        "states Python 3.9+; pyproject.toml requires-python now says >=3.10"
    )
    assert found["value:go"] is None  # a 1.24 module builds with 1.25
    assert found["value:dep:react"] == "states react 18; the project now declares ^19.1.0"
    assert found["value:pytest-timeout"] is not None and "5" in found["value:pytest-timeout"]
    # a version without a sign of a minimum is not what requires-python says
    assert verdicts("Production runs Python 3.12.", proj) == {}


def test_a_minimum_after_a_bold_label_or_a_caret_is_the_configs_minimum(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": '[project]\nname = "x"\nrequires-python = ">=3.10"\n',
        "package.json": json.dumps({"name": "x", "engines": {"node": ">=22.12.0"}}),
    }
    proj = project(tmp_path, files)
    python = verdicts("**Python**: 3.9 minimum, 3.12 for development", proj)
    assert python == {
        "value:python": "states Python: 3.9; pyproject.toml requires-python now says >=3.10"
    }
    node = verdicts("**Node Version**: ^18.0.0 || >=20.0.0", proj)
    assert list(node) == ["value:node"] and ">=22.12.0" in (node["value:node"] or "")
    assert verdicts("**Python**: 3.10 minimum", proj) == {"value:python": None}
    assert verdicts("**Node Version**: ^22.12.0", proj) == {"value:node": None}
    assert verdicts("**Python**: 3.12 in production", proj) == {}  # no minimum stated


def test_the_package_folders_a_go_command_names(tmp_path: Path) -> None:
    proj = project(
        tmp_path,
        {"go.mod": "module example.org/x\n", "internal/http/client.go": "package http\n"},
    )
    found = verdicts(
        "`go test ./internal/http/` `go vet ./internal/ws/...` `go test ./...` "
        "`cd internal && go build ./http` `go test -run TestParse ./path/to/package`",
        proj,
    )
    assert found == {
        "directory:internal/http": None,
        "directory:internal/ws": "no folder internal/ws in the repository",
        "directory:internal": None,
        "identifier:TestParse": None,  # judged by the code index, not here
    }  # `./path/to/package` stands for any package


def test_a_package_list_states_versions_of_its_dependencies(tmp_path: Path) -> None:
    """A list of packages and versions ("symfony/console (SYMFONY) - v7"), a product of
    two words ("Tailwind CSS v3" is `tailwindcss`), a stated minimum ("4.1+"), a version
    within the manifest's lower bound (php 8.3.28 against `>=8.2`)."""
    proj = project(
        tmp_path,
        {
            "composer.json": json.dumps(
                {"require": {"php": ">=8.2", "symfony/console": "^8.0", "symfony/mailer": "^7"}}
            ),
            "package.json": json.dumps({"devDependencies": {"tailwindcss": "^4.3.0"}}),
        },
    )
    found = verdicts(
        "- php - 8.2.19\n- symfony/console (SYMFONY) - v7\n- symfony/mailer (MAILER) - v7\n"
        "- Keep Tailwind CSS v3 on every page.\n- Since Symfony 6 the layout is flat.\n",
        proj,
    )
    assert found == {
        "value:dep:php": None,
        "value:dep:symfony/console": ("states symfony/console 7; the project now declares ^8.0"),
        "value:dep:symfony/mailer": None,
        "value:dep:tailwind css": "states tailwind css 3; the project now declares ^4.3.0",
        "value:dep:since symfony": None,  # no dependency of that name
    }
    assert verdicts("Tailwind CSS 4.2+ for new pages.", proj) == {"value:dep:tailwind css": None}
    # a caret range admits the later minors of its major, not an earlier major
    assert verdicts("- symfony/console (SYMFONY) - v8.3", proj) == {
        "value:dep:symfony/console": None
    }
    scoped = project(
        tmp_path / "scoped",
        {"package.json": json.dumps({"dependencies": {"grid": "^4.6.0", "@grid/core": "^6.1.0"}})},
    )
    assert verdicts("- Grid 6 draws the tables.", scoped) == {"value:dep:grid": None}
    assert verdicts("- Grid 5 draws the tables.", scoped) == {
        "value:dep:grid": "states grid 5; the project now declares ^4.6.0, ^6.1.0"
    }
    mailer = verdicts("- symfony/mailer (MAILER) - v6.4", proj)
    assert mailer == {
        "value:dep:symfony/mailer": "states symfony/mailer 6.4; the project now declares ^7"
    }


def test_a_pre_release_stated_is_stale_once_the_pin_is_a_release(tmp_path: Path) -> None:
    """ ".NET 11.0 RC": global.json pins the .NET SDK; a stated pre-release holds while the
    pin is one of that version, and a stated minimum is no pin's to judge."""
    text = ".NET 11.0 RC (see global.json). Python 3.12 beta in CI."
    for version, expected in (("11.0.100-rc.2.26112.104", None), ("11.0.201", "11.0.201")):
        sdk = json.dumps({"sdk": {"version": version, "rollForward": "major"}})
        proj = project(tmp_path, {"global.json": sdk})
        found = verdicts(text, proj)
        reason = found.pop("value:.net")
        assert (
            reason is None
            if expected is None
            else reason == (f"states .NET 11.0 RC; now global.json sdk.version says {expected}")
        )
        assert found == {"value:python": None}  # nothing pins Python here
        assert verdicts("Requires .NET 9+ to build.", proj) == {"value:.net": None}


def test_tasks_are_read_wherever_the_tools_define_them(tmp_path: Path) -> None:
    proj = project(
        tmp_path,
        {
            "Makefile": "include build/common.mak\n-include $(LOCAL)\nsinclude mk/*.inc\n"
            "all: test\n",
            "build/common.mak": "test-ci:\n\tgo test ./...\n",
            "mk/docs.inc": "docs-serve:\n\thugo serve\n",
            "justfile": "import 'just/release.just'\nmod db\nalias b := build\n"
            "build:\n    cargo build\n",
            "just/release.just": "publish version:\n    cargo publish\n",
            "db.just": "migrate:\n    sqlx migrate run\n",
            "mise.toml": '[tasks.lint]\nrun = "cargo clippy"\nalias = ["l", "check"]\n\n'
            '[task_config]\nincludes = ["xtasks", "tasks.toml"]\n',
            "tasks.toml": '[render]\nrun = "x"\n',
            "xtasks/test/unit.sh": '#!/bin/sh\n#MISE alias="tu"\ncargo test\n',
            "xtasks/release/_default": "#!/bin/sh\n",
            "mise-tasks/ignored": "#!/bin/sh\n",  # includes replace the default folders
            "web/.config/mise/config.toml": '[tasks."web:dev"]\nrun = "pnpm dev"\n',
            "web/.mise/tasks/bundle": "#!/bin/sh\n",
        },
    )
    holds = (
        "`make test-ci`, `make docs-serve`, `make all`, `just build`, `just b`, "
        "`just publish 1.2`, `just db migrate`, `just db::migrate`, `mise run lint`, "
        "`mise run l`, `mise run check`, `mise run render`, `mise run test:unit`, "
        "`mise run tu`, `mise run release`, `mise run web:dev`, `mise run bundle`"
    )
    assert {k: v for k, v in verdicts(holds, proj).items() if v is not None} == {}
    assert verdicts("`make deploy`, `just deploy`, `mise run ignored`", proj) == {
        "task:make:deploy": "no Make target deploy",
        "task:just:deploy": "no just recipe deploy",
        "task:mise:ignored": "no mise task ignored",
    }


def test_a_vendored_projects_makefile_defines_no_target_of_ours(tmp_path: Path) -> None:
    proj = project(
        tmp_path,
        {
            "Makefile": "lint:\n\tgolangci-lint run\n",
            "vendor/github.com/acme/ui/Makefile": "build:\n\tnpm run build\n",
        },
    )
    assert verdicts("`make lint`, `make build`", proj) == {
        "task:make:lint": None,
        "task:make:build": "no Make target build",
    }


def test_zig_build_steps_are_the_ones_build_zig_declares(tmp_path: Path) -> None:
    proj = project(
        tmp_path,
        {
            "build.zig": 'const docs = b.step("docs", "Build the docs");\n'
            'const check = b.step(\n    "test-docs",\n    "Check the docs",\n);\n',
            "examples/demo/build.zig": 'const run = b.step("run", "Run the demo");\n',
        },
    )
    holds = (
        "`zig build docs`, `zig build -Doptimize=ReleaseFast test-docs`, `zig build install`, "
        "`cd examples/demo && zig build run -- --help`"  # what follows `--` goes to the run
    )
    assert {k: v for k, v in verdicts(holds, proj).items() if v is not None} == {}
    # a word inside another step's name is no step; each build.zig declares its own steps
    assert verdicts("`zig build test`, `zig build run`", proj) == {
        "task:zig:test": "no zig build step test",
        "task:zig:run": "no zig build step run",
    }
    computed = project(tmp_path / "c", {"build.zig": "const s = b.step(name, desc);\n"})
    assert verdicts("`zig build anything`", computed) == {"task:zig:anything": None}


def test_a_go_task_is_one_a_taskfile_or_an_include_of_it_defines(tmp_path: Path) -> None:
    proj = project(
        tmp_path,
        {
            "Taskfile.yml": "version: '3'\nincludes:\n  tools: ./taskfiles/tools.yml\n"
            "  docs:\n    taskfile: ./docs\n    aliases: [d]\n"
            "  shared:\n    taskfile: ./taskfiles/shared.yml\n    flatten: true\n"
            "tasks:\n  build:\n    aliases: [b]\n    cmds: [go build ./...]\n"
            "  'test:*':\n    cmds: ['go test ./{{.MATCH}}']\n",
            "taskfiles/tools.yml": "version: '3'\ntasks:\n  vuln:\n    cmds: [govulncheck]\n",
            "taskfiles/shared.yml": "version: '3'\ntasks:\n  fmt:\n    cmds: [gofmt]\n",
            "docs/Taskfile.yml": "version: '3'\ntasks:\n  serve:\n    cmds: [hugo serve]\n",
        },
    )
    holds = (
        "`task build`, `task b`, `task tools:vuln`, `task docs:serve`, `task d:serve`, "
        "`task fmt`, `task shared:fmt`, `task test:unit`, `task build PKG=./cmd`, `task --list`"
    )
    assert {k: v for k, v in verdicts(holds, proj).items() if v is not None} == {}
    assert verdicts("`task vuln`, `task tools:lint`", proj) == {
        "task:task:vuln": "no task vuln in the Taskfiles",  # only under its namespace
        "task:task:tools:lint": "no task tools:lint in the Taskfiles",
    }
    remote = project(
        tmp_path / "r",
        {"Taskfile.yml": "includes:\n  ci: https://example.com/Taskfile.yml\ntasks: {a: {}}\n"},
    )
    assert verdicts("`task anything`", remote) == {"task:task:anything": None}  # unknowable


def test_a_cargo_package_is_one_some_cargo_toml_of_the_workspace_names(tmp_path: Path) -> None:
    proj = project(
        tmp_path,
        {
            "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
            "crates/tide_parser/Cargo.toml": '[package]\nname = "tide_parser"\n',
            "crates/tide-cli/Cargo.toml": '[package]\nname = "tide-cli"\nversion = "0.1.0"\n',
        },
    )
    holds = (
        "`cargo test -p tide_parser`, `cargo run --package=tide-cli -- --help`, "
        "`cargo build -p tide_cli`, `cargo test --workspace`"  # `-` and `_` are one to cargo
    )
    assert {k: v for k, v in verdicts(holds, proj).items() if v is not None} == {}
    assert verdicts("`cargo run -p tide_formatter_conformance`", proj) == {
        "task:cargo:tide_formatter_conformance": "no Cargo package tide_formatter_conformance "
        "in the workspace"
    }
    assert verdicts("`cargo test -p <crate>`, `cargo test -p your_crate`", proj) == {}
    none = project(tmp_path / "n", {"pyproject.toml": "[project]\nname = 'x'\n"})
    assert verdicts("`cargo test -p tide_parser`", none) == {"task:cargo:tide_parser": None}


def test_a_minimum_is_the_root_configs_and_a_named_version_is_any_pin(tmp_path: Path) -> None:
    proj = project(
        tmp_path,
        {
            "go.mod": "module example.com/x\n\ngo 1.26.0\n",
            "testdata/go.mod": "module example.com/fixture\n\ngo 1.24.0\n",  # a fixture's
            ".github/workflows/ci.yml": "steps:\n  - uses: actions/setup-go@v5\n"
            "    with:\n      go-version: '1.26.5'\n",
            ".tool-versions": "nodejs 20.11.0\n",
        },
    )
    found = verdicts("**Go 1.25.2+** is required.", proj)
    assert found == {"value:go": "states Go 1.25.2+; go.mod go now says 1.26.0"}
    named = verdicts("- **Go Version:** 1.24.3", proj)["value:go"]
    assert named is not None and "Go Version: 1.24.3" in named and "1.26.5" in named
    assert verdicts("CI: Go version 1.26", proj) == {"value:go": None}  # the workflow's pin
    assert verdicts("Node version 20", proj) == {"value:node": None}  # .tool-versions
    assert verdicts("Node version 18", proj)["value:node"] is not None
    # what is pinned, then another version that also works: the first is the claim
    assert verdicts("Node version 20 is pinned; Node version 18 works too.", proj) == {
        "value:node": None
    }
    pinned = project(
        tmp_path / "js", {"package.json": json.dumps({"packageManager": "pnpm@9.1.0"})}
    )
    assert verdicts("We use pnpm 9.", pinned) == {"value:pnpm": None}
    assert verdicts("We use pnpm 8.", pinned)["value:pnpm"] is not None


def test_a_test_class_maven_or_gradle_selects_is_a_source_file_below_its_package(
    tmp_path: Path,
) -> None:
    proj = project(
        tmp_path,
        {
            "shop/src/test/java/org/acme/cart/CartTotalsTest.java": "class CartTotalsTest {}\n",
            "shop/src/test/kotlin/org/acme/cart/CouponRulesTest.kt": "class CouponRulesTest\n",
        },
    )
    found = verdicts(
        "`mvn -T4 test -Dtest=org.acme.cart.CartTotalsTest#rounding`, "
        "`./gradlew test --tests org.acme.cart.CouponRulesTest.expired`, "
        "`mvn test -Dtest=org.acme.CartTotalsTest`, `mvn test -Dtest='*Totals*'`",
        proj,
    )
    assert found == {
        "test-class:org/acme/cart/CartTotalsTest": None,
        "test-class:org/acme/cart/CouponRulesTest": None,
        "test-class:org/acme/CartTotalsTest": "no class org.acme.CartTotalsTest in the code",
        "task:gradle:test": None,  # judged against the recorded commit only
    }
    assert [c.kind for c in text_claims("`mvn test -Dtest=CartTotalsTest`")] == ["class"]


def test_a_folder_below_a_variables_folder_is_some_folder_of_the_repository(
    tmp_path: Path,
) -> None:
    proj = project(tmp_path, {"bench/rust_suite/Cargo.toml": "[package]\n"})
    found = verdicts(
        "`cd $bench_root/bench/rust_suite && cargo bench`, `cd ${ROOT}/bench/go_suite`, "
        "`cd $suite_dir/rust_suite`",
        proj,
    )
    assert found == {
        "directory:bench/rust_suite": None,
        "directory:bench/go_suite": "no folder bench/go_suite in the repository",
    }  # one name alone below a variable is not checked


def test_members_of_a_namespace_and_placeholder_tests_are_no_claims() -> None:
    claims = {
        (c.kind, c.symbol)
        for c in text_claims(
            "Validators (`v.iso.*`, `v.email()`) are narrow; releases are `*.4.*`; tests live "
            "in `*_test.go`, images in `Containerfile*`; run `go test -run TestFoo ./...` "
            "or `go test -run TestParser ./...`; one test: `go test -run TestName ./pkg/path`."
        )
    }
    assert ("pattern", "_test.go") in claims and ("pattern", "Containerfile*") in claims
    assert ("identifier", "TestParser") in claims
    assert not any(s in ("v.iso.*", ".4.*", "TestFoo", "TestName") for _, s in claims)
    assert not any(kind == "directory" for kind, _ in claims)  # `./pkg/path`: any package


def test_tox_factor_groups_name_every_environment_they_make(tmp_path: Path) -> None:
    tox = "[tox]\nenvlist =\n    {py3.9,py3.14}-common\n    lint\n\n[testenv:{docs,site}-build]\n"
    proj = project(tmp_path, {"tox.ini": tox})
    found = verdicts(
        "`tox -e py3.14-common`; `tox -e site-build,lint`; `tox -e py3.10-common`", proj
    )
    assert found["task:tox:py3.14-common"] is None
    assert found["task:tox:site-build"] is None
    assert found["task:tox:lint"] is None
    assert found["task:tox:py3.10-common"] is not None  # no factor makes it


def test_a_stated_msrv_is_the_workspace_rust_version(tmp_path: Path) -> None:
    proj = project(
        tmp_path,
        {"Cargo.toml": '[workspace]\nmembers = []\n\n[workspace.package]\nrust-version = "1.89"\n'},
    )
    assert verdicts("Prerequisites: Rust (MSRV: 1.89), just, pnpm", proj) == {"value:rust": None}
    found = verdicts("The MSRV is 1.87.", proj)
    assert list(found) == ["value:rust"]
    assert found["value:rust"] is not None and "1.87" in found["value:rust"]
    assert "1.89" in found["value:rust"]
    assert verdicts("MSRV bumps need a minor release.", proj) == {}
