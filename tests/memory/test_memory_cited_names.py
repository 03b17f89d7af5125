"""A cited symbol the cited file does not define but names in its code: a parameter, a
name a lazy export lists, an environment variable read by name, a tool a Go directive
runs, the prefix of resource names, the name after a scope (`@plugin/rule`). Each holds at its own commit; a name only a comment
keeps does not. Real files in a real git repository."""

from __future__ import annotations

from collections.abc import Callable

from conftest import commit, verify_all, write_files

from orchestrator.memory.verify import verify_memories
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory
from orchestrator.store.repo import RepoMemoryStore

FILES = {
    "tools/deprecation.py": (
        "def deprecate(*, feature_name: str, reason: str) -> None:\n"
        "    # RetiredHelper used to format the message\n"
        "    print(feature_name, reason)\n"
    ),
    "engine/__init__.py": (
        "from tools.lazy import attach\n\n"
        '__getattr__, __all__ = attach(__name__, {"core": ["Engine", "Runner"]})\n'
    ),
    "engine/env.py": 'import os\n\nSHELL = os.environ.get("LEDGER_SHELL", "sh")\n',
    "gen/colors.go": (
        "package gen\n\n"
        "//go:generate go tool stringer -type=Color\n"
        "// formerly built by enumer\n"
        "type Color int\n"
    ),
    "res/values/strings.xml": (
        '<resources>\n  <string name="a11y_play">Play</string>\n'
        '  <string name="pause_button">Pause</string>\n</resources>\n'
    ),
    "lint/rules.js": (
        'import "./vendor/tools/pack-lite";\nexport default {\n  rules: {\n    "@lint-plugin/no-unused-vars": "error",\n'
        '    "other/prefer-const-x": "warn",\n  },\n};\n'
    ),
    "runner/package.json": '{\n  "name": "@acme/pool-runner",\n  "version": "1.0.0"\n}\n',
    ".gitignore": "/gen-docs\nnode_modules/\n",
}

CITED = {
    "parameter": ("tools/deprecation.py", 1, "feature_name", True),
    "lazy-export": ("engine/__init__.py", 3, "Engine", True),
    "env-read": ("engine/env.py", 3, "LEDGER_SHELL", True),
    "go-directive": ("gen/colors.go", 3, "stringer", True),
    "prefix": ("res/values/strings.xml", 2, "a11y_", True),
    "suffix": ("res/values/strings.xml", 3, "_button", True),
    "python-comment": ("tools/deprecation.py", 2, "RetiredHelper", False),
    "go-comment": ("gen/colors.go", 4, "enumer", False),
    "no-such-prefix": ("res/values/strings.xml", 2, "zz_", False),
    # a name after a scope: a plugin's rule, a scoped package's own name
    "scoped-rule": ("lint/rules.js", 4, "no-unused-vars", True),
    "scoped-package": ("runner/package.json", 2, "pool-runner", True),
    "plugin-rule": ("lint/rules.js", 5, "prefer-const-x", True),  # a quoted two-part rule id
    "anchored-ignore": (".gitignore", 1, "gen-docs", True),  # `/gen-docs`: from the root
    "path-inside": ("lint/rules.js", 1, "pack-lite", False),  # the end of a longer path
}


def test_a_cited_name_the_code_uses_holds_one_only_a_comment_keeps_does_not(
    layout: Layout, put: Callable[..., Memory]
) -> None:
    write_files(layout.root, FILES)
    for name, (path, line, symbol, _) in CITED.items():
        put(name, f"The code relies on {symbol}.", citations=(Citation(path, line, symbol),))
    commit(layout.root, "code and memories")
    results = verify_all(layout)
    assert {name: results[name].result for name in CITED} == {
        name: "ok" if holds else "stale" for name, (*_, holds) in CITED.items()
    }
    assert results["python-comment"].failures[0].reason == (
        "RetiredHelper is not defined in tools/deprecation.py"
    )


def test_a_parameter_renamed_away_is_stale(layout: Layout, put: Callable[..., Memory]) -> None:
    write_files(layout.root, FILES)
    put("parameter", "Pass the feature's name.", citations=(Citation(*CITED["parameter"][:3]),))
    commit(layout.root, "code")
    (layout.root / "tools" / "deprecation.py").write_text(
        "def deprecate(*, feature: str, reason: str) -> None:\n    print(feature, reason)\n"
    )
    commit(layout.root, "rename the parameter")
    memories = RepoMemoryStore(layout).load_all().memories
    (result,) = verify_memories(layout, memories)
    assert result.result == "stale"
    assert result.failures[0].reason == "feature_name is not defined in tools/deprecation.py"
