"""`orch memory verify --file`: an agent instruction file linted claim by claim, in a plain
git repository that never ran `orch init`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import lost

ORCH = Path(sys.executable).parent / "orch"

AGENTS = """\
# Working here

- Build with `npm run build`; the client bundle with `npm run build-client`.
- `cd client && npm run lint` lints the client.
- `make test` runs the tests; `make test-ci` is what CI runs.
- Python 3.9+ is required.
- Go tests live in files ending in `_test.go`; specs match `*.spec.ts`.
- Install the extras with `pip install -e ".[dev,docs]"`.
- The entry point is `src/app/main.py`.
- Helpers are in [the helpers](src/util/helpers.py).

```bash
pnpm vitest
pnpm lint:fix
```
"""


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def plain_repo(tmp_path: Path) -> Path:
    root = tmp_path / "plain"
    (root / "src" / "app").mkdir(parents=True)
    (root / "src" / "helpers.py").write_text("def helper():\n    return 1\n")
    (root / "src" / "app" / "main.py").write_text("print('hi')\n")
    (root / "server_test.go").write_text("package main\n")
    (root / "package.json").write_text(
        json.dumps(
            {
                "scripts": {"build": "tsc", "lint": "eslint .", "lint:fix": "eslint --fix ."},
                "devDependencies": {"vitest": "^1.0.0"},
            }
        )
    )
    (root / "Makefile").write_text("test:\n\tpytest\n\n.PHONY: test-ci\ntest-ci: test\n")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "x"\nrequires-python = ">=3.10"\n\n'
        '[project.optional-dependencies]\ndev = ["pytest"]\n'
    )
    (root / "src" / "util").mkdir()
    git(root, "init", "-q")
    git(root, "add", "-A")
    (root / "src" / "util" / "helpers.py").write_text("def helper():\n    return 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "code")
    git(root, "mv", "src/util/helpers.py", "src/util/tools.py")
    (root / "web").mkdir()
    (root / "web" / "app.spec.ts").write_text("test('app', () => {})\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "rename the helpers; a spec")
    git(root, "rm", "-q", "web/app.spec.ts")  # the last spec, deleted since that commit
    (root / "AGENTS.md").write_text(AGENTS)
    return root


def lint(root: Path, *args: str, path: str = "AGENTS.md") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORCH_")}
    return subprocess.run(
        [str(ORCH), "memory", "verify", "--file", path, *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
    )


def _findings(root: Path) -> dict[int, tuple[str, str]]:
    """Each finding of `orch memory verify --file AGENTS.md --json`: line -> (status, reason)."""
    done = lint(root, "--json")
    return {c["line"]: (c["status"], c["reason"]) for c in json.loads(done.stdout)["claims"]}


def test_each_claim_that_names_code_is_ok_moved_or_stale(plain_repo: Path) -> None:
    done = lint(plain_repo, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["file"] == "AGENTS.md"
    by_line = {c["line"]: c for c in report["claims"]}
    status = {line: c["status"] for line, c in by_line.items()}
    assert status == {
        3: "stale",  # build-client is no script
        4: "stale",  # client/ does not exist
        5: "ok",  # test and test-ci are Make targets
        6: "stale",  # requires-python says 3.10
        7: "stale",  # no file matches *.spec.ts; _test.go is an ending, not a file
        8: "stale",  # no group docs
        9: "ok",
        10: "moved",  # git renamed it to tools.py
        13: "ok",  # vitest: an installed program
        14: "ok",  # lint:fix: a script
    }
    assert "build-client" in by_line[3]["reason"]
    assert "3.9" in by_line[6]["reason"] and ">=3.10" in by_line[6]["reason"]
    assert "*.spec.ts" in by_line[7]["reason"] and "_test.go" not in by_line[7]["reason"]
    assert "docs" in by_line[8]["reason"]
    assert "src/util/tools.py" in by_line[10]["reason"]
    assert report["counts"] == {"ok": 4, "moved": 1, "stale": 5}
    assert not (plain_repo / ".orch").exists()


def test_check_fails_on_stale_and_passes_once_fixed(plain_repo: Path) -> None:
    done = lint(plain_repo, "--check")
    assert done.returncode == 1
    assert "AGENTS.md:3: STALE" in done.stdout and "build-client" in done.stdout
    (plain_repo / "AGENTS.md").write_text("- Build with `npm run build`, test with `make test`.\n")
    done = lint(plain_repo, "--check")
    assert done.returncode == 0, done.stdout
    assert "1 claims name code: 1 ok, 0 moved, 0 stale." in done.stdout


def test_a_missing_file_is_one_line(plain_repo: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORCH_")}
    done = subprocess.run(
        [str(ORCH), "memory", "verify", "--file", "NOPE.md"],
        cwd=plain_repo,
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1 and "NOPE.md" in done.stderr


def test_examples_and_replacements_are_not_stale(plain_repo: Path) -> None:
    (plain_repo / "src" / "ops.py").write_text("from lib import ops\n\nALL = [ops.AddIndex()]\n")
    git(plain_repo, "add", "-A")
    git(plain_repo, "commit", "-qm", "ops")
    lost(  # every name the words give, the project's then: none is excused for being foreign
        plain_repo,
        "class TypeName: ...\nclass MyClass: ...\nclass FooService: ...\n"
        "def method_name(): ...\ndef start_server(): ...\ndef AddConstraint(): ...\n"
        "legacy_helpers = 1\n",
    )
    (plain_repo / "AGENTS.md").write_text(
        "- PREFER [`TypeName`] references in doc comments, e.g. `MyClass` or `method_name()`.\n"
        "- ALWAYS use `src/helpers.py` instead of adding `legacy_helpers` modules.\n"
        "- The app starts in `start_server()`.\n"
        "- Name a test file `test_my_feature.py`, its class `FooService`.\n"
        "- Indexes are made with `AddIndex()`; constraints with `AddConstraint()`.\n"
    )
    done = lint(plain_repo, "--json")
    report = json.loads(done.stdout)
    status = {c["line"]: c["status"] for c in report["claims"]}
    # placeholders and examples name no code; the replaced name is expected gone; a real
    # name is checked; a library's class the code calls holds, one it never calls does not
    assert status == {2: "ok", 3: "stale", 5: "stale"}, report
    assert "start_server" in report["claims"][1]["reason"]
    assert report["claims"][2]["reason"] == "AddConstraint() is not defined in the code"


def test_a_claude_md_lints_the_files_it_imports(plain_repo: Path) -> None:
    (plain_repo / "CLAUDE.md").write_text(
        "@AGENTS.md\n\nAlso read @docs/more.md, not `@NOPE.md`; mail me@example.com.\n"
        "@~/.claude/personal.md\n"
    )
    (plain_repo / "docs").mkdir()
    (plain_repo / "docs" / "more.md").write_text("- Run `make lint` first. See @../AGENTS.md\n")
    report = json.loads(lint(plain_repo, "--json", path="CLAUDE.md").stdout)
    assert report["file"] == "CLAUDE.md" and report["claims"] == []
    # each imported file once, in the order met, outside the repository never read
    assert [r["file"] for r in report["imports"]] == ["AGENTS.md", "docs/more.md"]
    assert report["imports"][0]["counts"] == {"ok": 4, "moved": 1, "stale": 5}
    assert report["imports"][1]["claims"][0]["status"] == "stale"  # no Make target lint
    text = lint(plain_repo, "--check", path="CLAUDE.md")
    assert text.returncode == 1  # a stale claim in an imported file fails the check
    assert "AGENTS.md:3: STALE" in text.stdout and "docs/more.md:1: STALE" in text.stdout
    assert "CLAUDE.md: 0 claims name code" in text.stdout


def test_an_import_of_a_local_file_git_ignores_holds_and_one_of_no_file_is_stale(
    plain_repo: Path,
) -> None:
    """`@.claude/mine.md`, one's own instructions that git ignores, is no missing file; an
    import of a file never written is a path that does not exist, named without its `@`."""
    (plain_repo / ".gitignore").write_text(".claude/mine.md\n")
    (plain_repo / "CLAUDE.md").write_text(
        "# Notes\n\n- Personal settings: see @.claude/mine.md\n"
        "- The release steps: see @docs/releasing.md\n"
    )
    report = json.loads(lint(plain_repo, "--json", path="CLAUDE.md").stdout)
    by_line = {c["line"]: c for c in report["claims"]}
    assert 3 not in by_line or by_line[3]["status"] == "ok", report
    assert by_line[4]["status"] == "stale"
    assert by_line[4]["reason"].startswith("docs/releasing.md does not exist"), report

    # an npm scope's package is no import, from a file in a folder too (`.github/acme/widgets`)
    (plain_repo / ".github").mkdir()
    (plain_repo / ".github" / "copilot-instructions.md").write_text(
        "# Tests\n\n- Do not mock @acme/widgets in the tests.\n"
    )
    scoped = lint(plain_repo, "--json", path=".github/copilot-instructions.md")
    assert json.loads(scoped.stdout)["counts"]["stale"] == 0, scoped.stdout


def test_a_wrapped_bullet_is_one_claim_and_a_sentence_runs_across_lines(plain_repo: Path) -> None:
    (plain_repo / "AGENTS.md").write_text(
        "- ALWAYS keep helpers in `src/helpers.py` and call them from scripts\n"
        "  instead of the old `legacy_helpers` module\n"
        "- The entry point is\n"
        "  `src/app/gone.py`.\n"
        "\n"
        "Build with `npm run build`. The client is built\n"
        "with `npm run build-client`. Done.\n"
    )
    done = lint(plain_repo, "--json")
    claims = [(c["line"], c["end_line"], c["status"]) for c in json.loads(done.stdout)["claims"]]
    # the replacement is read on the bullet's second line; the stale path on the fourth
    # belongs to the bullet of the third; the sentence of line 6 ends on line 7
    assert claims == [(1, 2, "ok"), (3, 4, "stale"), (6, 6, "ok"), (6, 7, "stale")]


def test_a_name_a_rule_warns_against_and_a_route_are_not_stale(plain_repo: Path) -> None:
    (plain_repo / "AGENTS.md").write_text(
        "- Never name tests `TestBug4821`; give them a descriptive name.\n"
        "- Prefer `is_ready()`, not `ready_flag()`.\n"
        "- Use `make test` rather than `make all`.\n"
        "- Run `make test`, then `make all`.\n"
        "- The REST API lives at `/api/v1/`; run `tests/Feature/SomeTest.php` alone.\n"
    )
    lost(plain_repo, "def is_ready():\n    return True\n")
    status = _findings(plain_repo)
    assert status[1][0] == status[3][0] == "ok"
    assert status[2] == ("stale", "is_ready() is not defined in the code")  # the preferred one
    assert status[4][0] == "stale" and "all" in status[4][1]  # stated, not warned against
    assert status[5] == ("ok", "")  # a route and an example name no file


def test_stand_in_file_names_folder_globs_and_member_chains_read_as_such(
    plain_repo: Path,
) -> None:
    for path in ("crates/geo/src/point_ext.rs", "tests/Shop.Sqlite.Specification.Tests/a.cs"):
        (plain_repo / path).parent.mkdir(parents=True, exist_ok=True)
        (plain_repo / path).write_text("// code\n")
    (plain_repo / "gen" / "point_ext.py").parent.mkdir()
    (plain_repo / "gen" / "point_ext.py").write_text("# code\n")
    git(plain_repo, "add", "-A")
    git(plain_repo, "commit", "-qm", "more code")
    git(plain_repo, "rm", "-q", "gen/point_ext.py")  # the last `*_ext.py`, deleted since
    (plain_repo / "AGENTS.md").write_text(
        "- Rust: `filename_ext.rs` files are picked up by the generator.\n"
        "- Python: `filename_ext.py` files are mixed into the generated classes.\n"
        "- The shared tests live in `Shop.*Specification.Tests`.\n"
        "- Services come from `*Helpers.Instance.CreateServices`.\n"
        "- Future flags (`vX_*`) turn on the next major's changes.\n"
        "- Plugins register through `service.MustRegister*` at start.\n"
        "- A plugin is a project `Shop.*.PluginName` of its own.\n"
        "- The Sqlite tests are in `Sqlite.Specification.Tests/`.\n"
        "- The Redis tests are in `Redis.Specification.Tests/`.\n"
    )
    status = _findings(plain_repo)
    assert status[1] == ("ok", "")  # any file named so: `*_ext.rs`, and there is one
    assert status[2] == ("stale", "no file matches *_ext.py")  # a pattern, with no match left
    assert status[3] == ("ok", "")  # a folder's name matches the glob
    assert 4 not in status  # members of any such class: no claim
    assert 5 not in status  # X stands for a version's number: no claim
    assert 6 not in status  # a package's names that start so: no file pattern
    assert 7 not in status  # a template: any plugin's name fills `PluginName`
    assert status[8] == ("ok", "")  # the folder `Shop.Sqlite.Specification.Tests/`
    assert status[9][0] == "stale"  # no folder's name ends so


def test_a_script_a_command_runs_by_its_path_is_a_file(plain_repo: Path) -> None:
    (plain_repo / "AGENTS.md").write_text(
        "- Run one suite with `./scripts/suite.sh <name>`.\n"
        "- Say hello with `./src/app/main.py world`.\n"
    )
    status = _findings(plain_repo)
    assert status[1][0] == "stale" and "scripts/suite.sh" in status[1][1]
    assert status[2] == ("ok", "")
