"""Names a memory's body gives that are no place of this tree, though a path-by-path
reading would call them stale: one number of a numbered series its folder keeps, markdown's
link syntax shown as text, another repository's `owner/name` beside its link, a Make target
of a submodule's build, a file the words make a condition of, a folder that went into a
submodule. Each is verified in a real git repository next to a claim of the
same shape that is really gone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conftest import commit, git, verify_all, write_files

from orchestrator.store.layout import Layout


def _results(
    layout: Layout,
    put: Callable[..., Any],
    facts: dict[str, str],
    files: dict[str, str] | None = None,
) -> dict[str, str]:
    """Each fact's result as a memory with no citations, once `files` are committed."""
    if files:
        write_files(layout.root, files)
        commit(layout.root, "files")
    for name, fact in facts.items():
        put(name, fact, citations=())
    return {name: v.result for name, v in verify_all(layout).items() if name in facts}


def test_one_number_of_a_numbered_series_is_an_example_of_it(
    layout: Layout, put: Callable[..., Any]
) -> None:
    fragments = {
        "newsfragments/4410.fix.md": "Fixed the parser.\n",
        "newsfragments/4413.feature.md": "Added a flag.\n",
        "notes/2031-04-02-review.md": "Review.\n",
    }
    found = _results(
        layout,
        put,
        {
            "fragment": "Name the fragment after the issue, as `newsfragments/982.fix.md`.",
            "bare": "For a second fragment append a number: `982.feature.2.md` beside it.",
            "elsewhere": "Old notes are in `notes/2031-01-09-review.md`.",
            "kind-gone": "Fragments of a removal go in `newsfragments/982.removal.md`.",
            "kind-gone-counted": "A second removal fragment is `982.removal.2.md`.",
            "no-series": "The schema is in `migrations/0007_accounts.sql`.",
        },
        fragments,
    )
    assert found["fragment"] == "ok"
    assert found["elsewhere"] == "ok"
    # a second fragment of one issue, numbered in turn: one of the `N.feature.md` series
    assert found["bare"] == "ok"
    # no `N.removal.md` in that folder: no series
    assert found["kind-gone"] == "stale"
    assert found["kind-gone-counted"] == "stale"
    assert found["no-series"] == "stale"


def test_markdown_link_syntax_in_a_code_span_shows_how_to_write_a_link(
    layout: Layout, put: Callable[..., Any]
) -> None:
    found = _results(
        layout,
        put,
        {
            "syntax": "Give images alt text: `![The checkout flow, step by step](web/img/checkout-flow.svg)`.",
            "plain": "The checkout flow is drawn in `web/img/checkout-flow.svg`.",
        },
    )
    assert found["syntax"] == "ok"
    assert found["plain"] == "stale"


def test_another_repositorys_name_beside_its_link_is_no_folder(
    layout: Layout, put: Callable[..., Any]
) -> None:
    found = _results(
        layout,
        put,
        {
            "linked": "Shared lint presets live in [the presets repo]"
            "(https://github.com/web/lint-presets) (`web/lint-presets`).",
            "unlinked": "Shared lint presets live in `web/lint-presets`.",
        },
    )
    assert found["linked"] == "ok"
    assert found["unlinked"] == "stale"


def test_a_make_target_of_a_submodules_build_is_not_judged(
    layout: Layout, put: Callable[..., Any]
) -> None:
    builds = {
        "Makefile": "test:\n\tpytest\n",
        ".gitmodules": '[submodule "third/parserlib"]\n\tpath = third/parserlib\n'
        "\turl = https://example.invalid/parserlib.git\n",
        "tools/Makefile": "lint:\n\truff check .\n",
    }
    found = _results(
        layout,
        put,
        {
            "submodule": "Regenerate the tables with `make -C third/parserlib tables`.",
            "ours": "Regenerate the tables with `make -C tools tables`.",
        },
        builds,
    )
    assert found["submodule"] == "ok"
    assert found["ours"] == "stale"


def test_a_folder_a_tool_makes_and_a_place_generated_files_appear_are_no_claims(
    layout: Layout, put: Callable[..., Any]
) -> None:
    found = _results(
        layout,
        put,
        {
            "cache": "Never commit `web/node_modules/` or `__pycache__/` folders.",
            "generated": "Generated API handlers appear in `web/handlers/rpc/` of the app.",
            "kept": "API handlers live in `web/handlers/rpc/`.",
        },
    )
    assert found["cache"] == "ok"
    assert found["generated"] == "ok"
    assert found["kept"] == "stale"


def test_the_projects_own_name_as_a_folder_is_the_root_of_a_drawn_tree(
    layout: Layout, put: Callable[..., Any]
) -> None:
    found = _results(
        layout,
        put,
        {"root": "`lumenboard/`", "other": "`docsite/`"},
        {"web/package.json": '{"name": "lumenboard", "version": "1.0.0"}\n'},
    )
    assert found["root"] == "ok"
    assert found["other"] == "stale"


def test_a_stray_folder_a_mistake_makes_is_expected_absent(
    layout: Layout, put: Callable[..., Any]
) -> None:
    found = _results(
        layout,
        put,
        {
            "stray": "A relative upload path creates stray `web/uploads/tmp/` folders.",
            "real": "Uploads are kept in `web/uploads/tmp/` until scanned.",
        },
    )
    assert found["stray"] == "ok"
    assert found["real"] == "stale"


def test_a_file_the_words_make_a_condition_of_is_not_said_to_be_there(
    layout: Layout, put: Callable[..., Any]
) -> None:
    found = _results(
        layout,
        put,
        {
            "if-it-exists": "Load `config/local.toml` (if it exists) before the defaults.",
            "if-present": "The launcher reads `deploy/overrides.env` if present.",
            "if-exists": "If `CHANGES.rst` exists, add a line to it for each fix.",
            "if-there-is": "If there is a `Procfile.dev`, start the app with foreman.",
            "optional": "Site settings: `config/site.toml` (optional).",
            "stated": "The local settings are in `config/local.toml`.",
            "condition-not-existence": "If `config/local.toml` is malformed, the app exits.",
        },
    )
    for name in ("if-it-exists", "if-present", "if-exists", "if-there-is", "optional"):
        assert found[name] == "ok", name
    assert found["stated"] == "stale"
    assert found["condition-not-existence"] == "stale"


def test_a_folder_that_went_into_a_submodule_is_not_judged_from_this_clone(
    layout: Layout, put: Callable[..., Any]
) -> None:
    root = layout.root
    write_files(root, {"docs/guide.md": "# Guide\n", "notes/plan.md": "# Plan\n"})
    commit(root, "docs and notes")
    git(root, "rm", "-r", "-q", "docs")
    write_files(
        root,
        {
            ".gitmodules": '[submodule "website"]\n\tpath = website\n'
            "\turl = https://example.invalid/website.git\n"
        },
    )
    head = git(root, "rev-parse", "HEAD").strip()
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{head},website")
    (root / "website").mkdir()  # an unpopulated submodule, as a clone without it has
    commit(root, "the docs move to the website repository")
    git(root, "rm", "-r", "-q", "notes")
    commit(root, "drop the plan")
    found = _results(
        layout,
        put,
        {
            "into-submodule": "How to deploy is written up in `docs/guide.md`.",
            "removed": "The release plan is in `notes/plan.md`.",
        },
    )
    assert found["into-submodule"] == "ok"
    assert found["removed"] == "stale"


def test_a_numbered_series_a_release_consumed_is_still_the_projects(
    layout: Layout, put: Callable[..., Any]
) -> None:
    # fragments were kept, then a release gathered them and deleted every one; the
    # folder stays (its README), ready for the next
    write_files(
        layout.root,
        {
            "changes/README.md": "One file per change.\n",
            "changes/3301.fix.md": "Fixed the importer.\n",
            "changes/3307.fix.md": "Fixed the exporter.\n",
            "changes/3302.feature.md": "Added a report.\n",
            "changes/3310.feature.md": "Added a chart.\n",
            "journal/0041.entry.md": "Kept for a while.\n",
            "journal/0043.entry.md": "Kept for a while too.\n",
            "db/migrations/0001_start.sql": "create table t (id int);\n",
            "db/migrations/0007_add_index.sql": "create index i on t (id);\n",
        },
    )
    commit(layout.root, "fragments")
    for gone in (
        "changes/3301.fix.md",
        "changes/3307.fix.md",
        "changes/3302.feature.md",
        "changes/3310.feature.md",
        "journal/0041.entry.md",
        "journal/0043.entry.md",
        "db/migrations/0007_add_index.sql",
    ):
        (layout.root / gone).unlink()
    (layout.root / "journal").rmdir()
    commit(layout.root, "release: fragments gathered into the changelog")
    found = _results(
        layout,
        put,
        {
            "fragment": "Name a fragment after its issue: `changes/5120.fix.md`.",
            "bare": "A feature gets `5120.feature.md` in the fragments folder.",
            "kind-never": "Removals go in `changes/5120.removal.md`.",
            "folder-gone": "Entries are numbered: `journal/0042.entry.md`.",
            "one-file": "The index is added by `db/migrations/0007_add_index.sql`.",
        },
    )
    assert found["fragment"] == "ok"
    assert found["bare"] == "ok"
    # no fragment of that kind was ever kept there; the folder that kept entries is gone;
    # one file of its shape, never a series (a migration squashed away), is just gone
    assert found["kind-never"] == "stale"
    assert found["folder-gone"] == "stale"
    assert found["one-file"] == "stale"


def test_link_syntax_inside_a_code_span_is_text_not_a_link(
    layout: Layout, put: Callable[..., Any]
) -> None:
    found = _results(
        layout,
        put,
        {
            "pattern": "Type names must match `^(T|Of)([A-Z]([a-zA-Z]+))?[0-9]*$`.",
            "link": "Naming is explained in [the guide](docs/naming-guide.md).",
        },
    )
    assert found["pattern"] == "ok"
    assert found["link"] == "stale"


def test_a_file_the_word_no_leads_is_said_to_be_absent(
    layout: Layout, put: Callable[..., Any]
) -> None:
    found = _results(
        layout,
        put,
        {
            "none": "Mark the row N/A when there is no `AUTHORS.rst` in the checkout.",
            "there": "Add yourself to `AUTHORS.rst` when there is no entry for you.",
        },
    )
    assert found["none"] == "ok"
    assert found["there"] == "stale"
