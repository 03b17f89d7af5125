"""How real instruction files write names: a path in bold, a Make target's name before its
colon, a Go module cited by its last parts, a test name that stands for any test. Each
was a false alarm at the commit the words were written; real files in a real git
repository."""

from __future__ import annotations

from collections.abc import Callable

from conftest import commit, verify_all, write_files

from orchestrator.memory.claims import RepoShape, placeholder_name, prose_claims
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory

SHAPE = RepoShape(frozenset(["docs", "src"]), frozenset(), frozenset())


def test_a_path_in_bold_keeps_its_extension_and_a_glob_its_stars() -> None:
    said = prose_claims("Settings: see **docs/guide/02-settings.md** first.", SHAPE)
    assert [c.path for c in said] == ["docs/guide/02-settings.md"]
    assert prose_claims("Sources match src/**/*.ts and nothing else.", SHAPE) == []


def test_a_test_name_made_of_generic_words_stands_for_any_test() -> None:
    assert placeholder_name("TestSpecificFunction")
    assert placeholder_name("TestFunctionName")
    assert not placeholder_name("TestParseConfig")
    assert not placeholder_name("TestSpecificParser")


FILES = {
    "Makefile": "## server-run: runs the example server\nserver-run:\n\tgo run ./examples\n",
    "go.mod": "module example.org/ledger\n\nrequire (\n\tgithub.com/acme/flagset v1.8.0\n)\n",
    "package.json": '{"scripts": {"build-client:watch": "vite build -w"}}\n',
}


def test_a_make_target_and_a_module_path_are_found_as_written(
    layout: Layout, put: Callable[..., Memory]
) -> None:
    write_files(layout.root, FILES)
    cited = {
        "make-target": Citation("Makefile", 2, "server-run"),
        "module": Citation("go.mod", 4, "acme/flagset"),
        "script-prefix": Citation("package.json", 1, "build-client"),
        "module-part": Citation("go.mod", 4, "me/flagset"),
    }
    for name, citation in cited.items():
        put(name, "The build relies on it.", citations=(citation,))
    commit(layout.root, "build files")
    results = verify_all(layout)
    assert {name: results[name].result for name in cited} == {
        "make-target": "ok",
        "module": "ok",
        "script-prefix": "stale",  # `build-client` only starts `build-client:watch`
        "module-part": "stale",  # not a whole part of the path
    }
