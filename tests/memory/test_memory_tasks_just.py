"""`just X` claims: recipe headers read as just reads them (parameters with defaults,
variadic and exported parameters, attributes, quiet recipes, aliases, modules)."""

from __future__ import annotations

from pathlib import Path

from orchestrator.memory.kinds import Project, check, text_claims
from orchestrator.memory.tasksources import just_recipes

JUSTFILE = """\
set dotenv-load := true
export CARGO_TERM_COLOR := "always"
alias rel := release-notes
mod ops 'tools/ops.just'

default_target := 'wasm32'

@_default:
    just --list

[group('docs')]
[working-directory: 'site']
preview-site port='4000' *flags='': build-docs
    serve --port {{port}} {{flags}}

build-docs:
    mdbook build

compile target=default_target $PROFILE="dev" +crates: (prepare target)
    cargo build --target {{target}} {{crates}}

prepare target:
    rustup target add {{target}}

release-notes from=`git describe --tags --abbrev=0` to=("HEAD" + "~0"):
    git log {{from}}..{{to}}

@check-links url='https://docs.invalid/a:b':
    lychee {{url}}
"""


def _project(tmp_path: Path, files: dict[str, str]) -> Project:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return Project(tmp_path, sorted(files))


def test_recipe_headers_with_parameters_and_defaults_name_their_recipes(tmp_path: Path) -> None:
    (tmp_path / "justfile").write_text(JUSTFILE)
    recipes = just_recipes(["justfile"], lambda p: (tmp_path / p).read_text())
    assert recipes == {
        "_default",
        "preview-site",  # below two attribute lines, one with a colon in it
        "build-docs",
        "compile",  # a default naming a variable, an exported and a variadic parameter
        "prepare",
        "release-notes",  # a backtick default and a parenthesised one
        "check-links",  # a quiet recipe whose quoted default holds a colon
        "rel",
        "ops",
    }
    # settings, exports, assignments and aliases are not recipes
    assert not recipes & {"set", "export", "default_target", "CARGO_TERM_COLOR", "alias"}


def test_just_runs_with_arguments_overrides_and_modules_are_judged(tmp_path: Path) -> None:
    proj = _project(
        tmp_path,
        {"justfile": JUSTFILE, "tools/ops.just": "deploy-stage env *args='':\n    ./deploy\n"},
    )
    holds = (
        "`just preview-site 8080 --open`, `just compile`, `just rel`, "
        "`just check-links`, `just target=arm compile`, `just ops deploy-stage qa`, "
        "`just ops::deploy-stage`"
    )
    found = {c.symbol: check(c, proj) for c in text_claims(holds)}
    assert found == {
        "just:preview-site": None,
        "just:compile": None,
        "just:rel": None,
        "just:check-links": None,
        "just:ops": None,
        "just:ops::deploy-stage": None,
    }
    [gone] = text_claims("`just publish-site`")
    assert check(gone, proj) == "no just recipe publish-site"
