"""Claims and verification on real files in a real git repository."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import commit, verify_all

from orchestrator.cli import cli
from orchestrator.memory import codeindex
from orchestrator.memory.claims import RepoShape, body_claims, span_claims
from orchestrator.memory.record import record
from orchestrator.memory.verify import Verifier, verify_memories
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation
from orchestrator.store.repo import RepoMemoryStore

SHAPE = RepoShape(
    top_level=frozenset({"app", "web", "pyproject.toml"}),
    modules=frozenset({"app"}),
    programs=frozenset({"app"}),
)


@pytest.mark.parametrize(
    ("span", "kind"),
    [
        ("app/main.py", "path"),
        ("web/", "path"),
        ("pyproject.toml", "path"),
        ("parse_config()", "function"),
        ("Loader.load", "member"),
        ("Loader.load()", "member"),
        ("app.main.parse_config", "module"),
        ("--dry-run", "flag"),
        ("RateLimiter", "class"),
        ("max_retries", "identifier"),
        ("configureMqtt", "identifier"),
        ("useSession", "identifier"),
        ("self.sys_addons", "identifier"),  # a member some class of ours has
        ("this.userStore.load()", "identifier"),
    ],
)
def test_spans_that_are_claims(span: str, kind: str) -> None:
    claims = span_claims(span, SHAPE)
    assert [c.kind for c in claims] == [kind]


@pytest.mark.parametrize(
    "span",
    [
        "pytest -q",
        "os.path.join",
        "self.store.add()",  # one plain word: any class may have it
        "cls.registry",
        "git log --oneline",
        "x = 1",
        "application/json",
        "true",
        "/api/v1/",  # a route: no top-level entry of that name
        "TypeName",  # placeholders and examples
        "test_my_mutation",
        "FooService()",
        "iOS",  # one lower-case letter, then capitals: a product's name
        "myValue",  # a placeholder
        "camelCase",  # a naming style
        "snake_case",
        "macOS",
    ],
)
def test_spans_that_are_not_claims(span: str) -> None:
    assert span_claims(span, SHAPE) == []


def test_flags_of_the_repositorys_own_program_are_claims() -> None:
    assert [c.symbol for c in span_claims("app --dry-run --limit 3", SHAPE)] == [
        "--dry-run",
        "--limit",
    ]


def _move_on(root: Path) -> None:
    """The code changes after the memories were written: a rename, a deletion, a flag."""
    main = root / "app" / "main.py"
    text = main.read_text().replace("def parse_config(", "def read_config(")
    text = text.replace("def load(self, path)", "def fetch(self, path)")
    text = text.replace('"--dry-run"', '"--preview"')
    main.write_text(text)
    (root / "web" / "cart.js").unlink()


def test_each_kind_of_claim_goes_stale_when_the_code_moves(
    layout: Layout, put: Callable[..., Any]
) -> None:
    root = layout.root
    cases = {
        "cited-symbol": dict(
            fact="Config goes through one function.",
            citations=(Citation("app/main.py", 16, "parse_config"),),
        ),
        "body-function": dict(fact="Config is read by `parse_config()`."),
        "member": dict(fact="`Loader.load` returns None for unknown paths."),
        "cited-method": dict(
            fact="The loader caches.", citations=(Citation("app/main.py", None, "Loader.load"),)
        ),
        "flag": dict(fact="Pass `--dry-run` to skip writes."),
        "deleted-file": dict(
            fact="The cart renders in the browser.",
            citations=(Citation("web/cart.js", 1, "renderCart"),),
        ),
        "body-path": dict(fact="Cart code is in `web/cart.js`."),
        "line-past-end": dict(
            fact="The timeout is set near the top.", citations=(Citation("app/main.py", 400),)
        ),
        "module-path": dict(fact="Use `app.main.parse_config` from scripts."),
    }
    for name, kw in cases.items():
        put(name, **kw)
    put(
        "still-true",
        "`DEFAULT_TIMEOUT` is 30; `Loader` keeps a cache.",
        citations=(Citation("app/main.py", 5, "DEFAULT_TIMEOUT"),),
    )
    memories = RepoMemoryStore(layout).load_all().memories
    assert {v.name: v.result for v in verify_memories(layout, memories)} == {
        **dict.fromkeys(cases, "ok"), "line-past-end": "stale", "still-true": "ok",
    }  # fmt: skip

    _move_on(root)
    results = {v.name: v for v in verify_memories(layout, memories)}
    assert {n for n, v in results.items() if v.stale} == set(cases)
    assert results["still-true"].result == "ok"
    reasons = {n: results[n].failures[0].reason for n in cases}
    assert reasons["cited-symbol"] == "parse_config is not defined in app/main.py"
    assert reasons["body-function"] == "parse_config() is not defined in the code"
    assert reasons["member"] == "Loader has no member load"
    assert reasons["flag"] == "flag --dry-run appears nowhere in the code"
    assert reasons["deleted-file"] == "web/cart.js does not exist"
    assert "past the end" in reasons["line-past-end"]
    assert reasons["module-path"] == "app.main does not define parse_config"


def test_missing_paths_git_ignores_are_outputs_not_stale_claims(
    layout: Layout, put: Callable[..., Any]
) -> None:
    with (layout.root / ".gitignore").open("a") as fh:
        fh.write("site/\n.gen-cache/\n")
    put("docs", "`make docs` builds the documentation into `site/`.")
    put("legacy", "The old importer lives in `legacy/`.")
    # a file name beside a folder git ignores is what a build writes there
    put("bindings", "The generated `cart_bindings.h` is in the `.gen-cache` folder.")
    put("bindings-here", "The generated `cart_bindings.h` is in the `app` folder.")
    results = {n: v.result for n, v in verify_all(layout).items()}
    assert results == {"docs": "ok", "legacy": "stale", "bindings": "ok", "bindings-here": "stale"}


def test_a_dotted_name_a_tracked_file_has_is_a_file_not_a_member(
    layout: Layout, put: Callable[..., Any]
) -> None:
    (layout.root / "app" / "host.py").write_text(
        "class Aspire:\n    def start(self):\n        pass\n"
    )
    (layout.root / "Aspire.slnx").write_text("<Solution />\n")
    commit(layout.root, "a host class and a solution file named after it")
    put("solution", "`Aspire.slnx` is the main solution file.")
    put("member", "`Aspire.Launch` starts the host.")
    results = verify_all(layout)
    assert results["solution"].result == "ok"
    assert [f.reason for f in results["member"].failures] == ["Aspire has no member Launch"]


def test_a_name_the_fact_warns_against_is_expected_absent(
    layout: Layout, put: Callable[..., Any]
) -> None:
    put("naming", "Never name tests `TestBug4821`; describe what they test.")
    put("prefer", "Prefer `legacy_setup()`, not `old_setup()`.")
    results = verify_all(layout)
    assert results["naming"].result == "ok"
    # the name the fact recommends is checked; the one it warns against is not
    assert [f.claim.text for f in results["prefer"].failures] == ["legacy_setup()"]


def test_a_fact_marked_as_the_wrong_way_names_what_not_to_write(
    layout: Layout, put: Callable[..., Any]
) -> None:
    (layout.root / "app" / "Ledger.java").write_text("class Ledger {\n    void post() {}\n}\n")
    commit(layout.root, "a ledger")
    put("wrong", "❌ Ledger.postTwice() (an old habit)")
    put("plain", "Ledger.postTwice() posts twice.")
    results = verify_all(layout)
    assert results["wrong"].result == "ok"
    assert [f.reason for f in results["plain"].failures] == ["Ledger has no member postTwice"]


def test_a_word_boundary_search_checks_other_languages(
    layout: Layout, put: Callable[..., Any]
) -> None:
    put(
        "cart",
        "The cart is drawn by `renderCart()`.",
        citations=(Citation("web/cart.js", None, "renderCart"),),
    )
    put(
        "cart-prefix",
        "Totals are drawn by `renderCartTotals()`.",
        citations=(Citation("web/cart.js"),),
    )
    results = {n: v.result for n, v in verify_all(layout).items()}
    assert results == {"cart": "ok", "cart-prefix": "stale"}


def test_changed_means_the_cited_code_moved_on_but_the_claims_hold(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    put(
        "timeout",
        "`DEFAULT_TIMEOUT` is 30.",
        citations=(Citation("app/main.py", 5, "DEFAULT_TIMEOUT"),),
    )
    put("cart", "Carts render in `web/cart.js`.", citations=(Citation("web/cart.js"),))
    commit_all(layout.root, "memories")
    memories = RepoMemoryStore(layout).load_all().memories
    written = record(layout, memories, verify_memories(layout, memories))
    assert sorted(written) == ["cart", "timeout"]
    text = (layout.repo_memories / "timeout.md").read_text()
    assert text.count("verified: {commit: ") == 1 and "result: ok}" in text
    commit_all(layout.root, "record")

    main = layout.root / "app" / "main.py"
    main.write_text(main.read_text() + "\n# a comment\n")
    commit_all(layout.root, "touch")
    memories = RepoMemoryStore(layout).load_all().memories
    results = {v.name: v for v in verify_memories(layout, memories)}
    assert results["timeout"].result == "ok"  # the file changed, not DEFAULT_TIMEOUT

    # the cited symbol's own source changes, the value the memory states does not (a new
    # value would make it stale: test_a_value_stated_for_a_name_is_what_the_code_sets_it_to)
    main.write_text(main.read_text().replace("DEFAULT_TIMEOUT = 30", "DEFAULT_TIMEOUT = 30.0"))
    commit_all(layout.root, "touch the cited symbol")
    results = {v.name: v for v in verify_memories(layout, memories)}
    assert results["timeout"].result == "changed"
    assert results["timeout"].changed == ("app/main.py",)
    assert results["cart"].result == "ok"

    assert record(layout, memories, list(results.values())) == ["timeout"]
    memories = RepoMemoryStore(layout).load_all().memories
    assert {v.name: v.result for v in verify_memories(layout, memories)} == {
        "cart": "ok",
        "timeout": "ok",
    }


def test_record_changes_only_the_verified_line(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    put("timeout", "`DEFAULT_TIMEOUT` is 30.", citations=(Citation("app/main.py", 5),))
    commit_all(layout.root, "memories")
    path = layout.repo_memories / "timeout.md"
    before = path.read_text().splitlines()
    memories = RepoMemoryStore(layout).load_all().memories
    record(layout, memories, verify_memories(layout, memories))
    after = path.read_text().splitlines()
    added = [line for line in after if line not in before]
    assert len(after) == len(before) + 1 and len(added) == 1
    assert added[0].startswith("verified: {commit: ")


def test_a_warm_run_over_an_unchanged_tree_parses_nothing(
    layout: Layout, put: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    put(
        "cited",
        "Config goes through `parse_config()`.",
        citations=(Citation("app/main.py", 16, "parse_config"),),
    )
    memories = RepoMemoryStore(layout).load_all().memories
    cold = verify_memories(layout, memories)
    assert (layout.cache / "cache.sqlite").is_file()

    def no_parsing(data: bytes, path: str) -> None:
        raise AssertionError(f"{path} was parsed again")

    monkeypatch.setattr(codeindex, "file_facts", no_parsing)
    assert verify_memories(layout, memories) == cold

    (layout.root / "app" / "main.py").write_text("def other():\n    pass\n")
    with pytest.raises(AssertionError, match="parsed again"):
        verify_memories(layout, memories)


def test_uncached_verification_agrees_with_cached(layout: Layout, put: Callable[..., Any]) -> None:
    put("cited", "Config goes through `parse_config()` and `Loader.load`.")
    memories = RepoMemoryStore(layout).load_all().memories
    assert verify_memories(layout, memories, use_cache=False) == verify_memories(layout, memories)


def test_cli_verify_reports_and_exits_1_on_stale(layout: Layout, put: Callable[..., Any]) -> None:
    put("fine", "`DEFAULT_TIMEOUT` is 30.")
    put("gone", "Use `vanished()`.")
    result = CliRunner().invoke(cli, ["memory", "verify"])
    assert result.exit_code == 1
    assert "STALE    gone: vanished() is not defined in the code" in result.output
    assert "2 memories: 1 ok, 0 changed, 0 moved, 1 stale." in result.output

    as_json = CliRunner().invoke(cli, ["memory", "verify", "fine", "--json"])
    assert as_json.exit_code == 0
    data = json.loads(as_json.output)
    assert data["ok"] == 1 and data["results"][0]["name"] == "fine"

    unknown = CliRunner().invoke(cli, ["memory", "verify", "nope"])
    assert unknown.exit_code == 2 and "no memory named 'nope'" in unknown.output


def test_cli_verify_record_writes_the_verification(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    put("fine", "`DEFAULT_TIMEOUT` is 30.")
    commit_all(layout.root, "memories")
    result = CliRunner().invoke(cli, ["memory", "verify", "--record"])
    assert result.exit_code == 0, result.output
    assert "Recorded the verification in 1 memory files." in result.output
    assert RepoMemoryStore(layout).get("fine").verified["result"] == "ok"  # type: ignore[index]


def test_verifier_sees_untracked_files_and_escapes(layout: Layout) -> None:
    (layout.root / "notes.py").write_text("def fresh():\n    pass\n")
    with Verifier(layout) as verifier:
        from orchestrator.memory.claims import Claim

        assert (
            verifier.check_claim(Claim("symbol", "x", "citation", path="notes.py", symbol="fresh"))
            is None
        )
        assert verifier.check_claim(Claim("path", "x", "citation", path="../outside")) is not None


def test_verify_store_reads_results_back_until_a_file_or_the_tree_changes(
    layout: Layout, put: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.memory import verify as verify_module
    from orchestrator.store import repo as repo_module

    put("parser", "Config is parsed by `parse_config()`.")
    put("untracked", "Scratch notes live in `scratch/notes.py`.")
    (layout.root / "scratch").mkdir()
    (layout.root / "scratch" / "notes.py").write_text("X = 1\n")
    first, active = verify_module.verify_store(layout)
    assert {v.name: v.result for v in first} == {"parser": "ok", "untracked": "ok"}
    assert active == {"parser": True, "untracked": True}

    (layout.root / "scratch" / "notes.py").unlink()  # untracked: its result was not cached
    second, _ = verify_module.verify_store(layout)
    assert {v.name: v.result for v in second} == {"parser": "ok", "untracked": "stale"}

    (layout.repo_memories / "untracked.md").unlink()
    warm_input, _ = verify_module.verify_store(layout)  # fills the cache for this state

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed on a warm run")

    monkeypatch.setattr(repo_module.RepoMemoryStore, "load_all", fail)
    monkeypatch.setattr(codeindex, "file_facts", fail)
    warm, _ = verify_module.verify_store(layout)
    assert warm == warm_input

    main = layout.root / "app" / "main.py"
    main.write_text(main.read_text().replace("parse_config", "read_config"))
    with pytest.raises(AssertionError, match="parsed on a warm run"):
        verify_module.verify_store(layout)
    monkeypatch.undo()
    (stale,) = verify_module.verify_store(layout)[0]
    assert stale.stale and stale.failures[0].reason == "parse_config() is not defined in the code"


def test_only_changed_memories_are_checked_again(
    layout: Layout, put: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.memory import verify as verify_module

    put("one", "`DEFAULT_TIMEOUT` is 30.")
    put("two", "Config is parsed by `parse_config()`.")
    verify_module.verify_store(layout)
    checked: list[str] = []
    original = verify_module.Verifier.check

    def counting(self: Any, memory: Any) -> Any:
        checked.append(memory.name)
        return original(self, memory)

    monkeypatch.setattr(verify_module.Verifier, "check", counting)
    put("two", "Config is parsed by `vanished()`.")
    results, _ = verify_module.verify_store(layout)
    assert checked == ["two"]
    assert {v.name: v.result for v in results} == {"one": "ok", "two": "stale"}


def test_a_stated_size_is_the_size_of_the_file_named_cited_or_defining_the_name(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    root = layout.root
    (root / "app" / "Models").mkdir()
    model = root / "app" / "Models" / "Server.php"
    model.write_text("<?php\nclass Server extends Model\n{\n" + "    // x\n" * 1000 + "}\n")
    commit_all(root, "model")
    kb = model.stat().st_size // 1024
    put("named", f"`Server` - remote servers ({kb}KB, complex)")
    put("pathed", "`app/Models/Server.php` is about 1004 lines long.")
    put("cited", f"The `model` is big ({kb} KB).", citations=(Citation("app/Models/Server.php"),))
    put("counted", "`app/Models/Server.php` has 3 lines.")  # a count of the moment: no claim
    put("limit", "Uploads are limited to 1 MB (`MAX_UPLOAD`).")  # a limit, not a file's size
    memories = RepoMemoryStore(layout).load_all().memories
    assert {v.name: v.result for v in verify_memories(layout, memories)} == {
        "named": "ok",
        "pathed": "ok",
        "cited": "ok",
        "counted": "ok",
        "limit": "ok",
    }
    model.write_text(model.read_text() + "    // y\n" * 600)  # half as large again
    results = {v.name: v for v in verify_memories(layout, memories)}
    assert {n: v.result for n, v in results.items()} == {
        "named": "stale",
        "pathed": "stale",
        "cited": "stale",
        "counted": "ok",
        "limit": "ok",
    }
    reason = results["named"].failures[0].reason
    assert reason.startswith(f"states Server is {kb} KB; app/Models/Server.php is now")
    assert "1604 lines" in results["pathed"].failures[0].reason


def test_definitions_of_languages_without_a_grammar_are_found_by_pattern() -> None:
    php = codeindex.file_facts(
        b"<?php\nfinal class Server extends Model {\n  public static function boot() {}\n}\n",
        "app/Server.php",
    )
    assert {"Server", "boot", "Server.boot"} <= php.defs and not php.syntax
    ruby = codeindex.file_facts(
        b"class Account::Balance < ApplicationRecord\n  def series?\n  end\nend\n", "a.rb"
    )
    assert {"Account::Balance", "Balance", "Balance.series?"} <= ruby.defs
    cs = codeindex.file_facts(
        b"public sealed class CipherService : ICipherService\n{\n"
        b"    public async Task<Cipher> SaveAsync(Cipher c)\n    {\n    }\n}\n",
        "src/CipherService.cs",
    )
    assert {"CipherService", "CipherService.SaveAsync"} <= cs.defs
    kotlin = codeindex.file_facts(b"data class User(val id: Int)\nfun User.greet() = 1\n", "U.kt")
    assert {"User", "greet"} <= kotlin.defs
    dart = codeindex.file_facts(
        b"abstract class EngineFactory {\n  Future<void> start(int n) async {\n"
        b"    if (n > 0) {\n      return launch(n);\n    }\n  }\n}\n"
        b"mixin Loggable on Object {}\nextension Labels on String {}\n",
        "lib/engine.dart",
    )
    assert {"EngineFactory", "EngineFactory.start", "Loggable", "Labels"} <= dart.defs
    assert not {"if", "launch"} & dart.defs  # a condition and a call are no definitions
    swift = codeindex.file_facts(
        b"public final class Cache {\n  private static func load(key: String) {}\n}\n", "C.swift"
    )
    assert {"Cache", "Cache.load"} <= swift.defs
    scala = codeindex.file_facts(
        b"sealed trait Shape\nobject Main {\n  def run(args: Array[String]): Unit = {}\n}\n",
        "M.scala",
    )
    assert {"Shape", "Main", "Main.run"} <= scala.defs


def test_paths_and_calls_in_prose_are_claims() -> None:
    claims = {
        (c.kind, c.text)
        for c in body_claims(
            "Config lives in app/settings.py and web/static/ (see https://example.com/a/b.py, "
            "[guide](docs/guide.md)); call parse_config() or Loader.load() and/or retry on "
            "branches named hotfix/<ticket> or feature/{name}.",
            SHAPE,
        )
    }
    assert claims == {
        ("mention", "app/settings.py"),
        ("mention", "web/static/"),
        ("function", "parse_config()"),
        ("member", "Loader.load()"),
    }


def test_a_value_stated_for_a_name_is_what_the_code_sets_it_to(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    root = layout.root
    (root / "app" / "limits.py").write_text(
        'MAX_RETRIES = 5\nTIMEOUT_MS: int = 30000\n\nparser.add_argument("--jobs", default=4)\n'
    )
    (root / "config.toml").write_text("[server]\nworkers = 8\n")
    commit_all(root, "limits")
    put("retries", "`MAX_RETRIES` is 5.")
    put("timeout", "`TIMEOUT_MS` defaults to 30 s.")
    put("jobs", "`--jobs` (default 4) runs that many at once.")
    put("workers", "Set `workers = 8` in config.toml.")
    put("unset", "`BATCH` is 3.")  # nothing sets it: nothing to compare with
    memories = RepoMemoryStore(layout).load_all().memories
    assert {v.name: v.result for v in verify_memories(layout, memories)} == dict.fromkeys(
        ("retries", "timeout", "jobs", "workers", "unset"), "ok"
    )
    (root / "app" / "limits.py").write_text(
        'MAX_RETRIES = 3\nTIMEOUT_MS: int = 5000\n\nparser.add_argument("--jobs", default=2)\n'
    )
    (root / "config.toml").write_text("[server]\nworkers = 8\n")
    results = {v.name: v for v in verify_memories(layout, memories)}
    assert {n for n, v in results.items() if v.stale} == {"retries", "timeout", "jobs"}
    assert results["retries"].failures[0].reason == (
        "states MAX_RETRIES is 5; app/limits.py sets 3"
    )


def test_a_folder_in_prose_three_parts_below_a_top_level_folder_needs_no_slash() -> None:
    claims = {
        (c.kind, c.text)
        for c in body_claims(
            "Images live in web/assets/img and fonts in web/fonts/; web/public and "
            "input/output are words.",
            SHAPE,
        )
    }
    assert claims == {("mention", "web/assets/img"), ("mention", "web/fonts/")}


def test_a_path_in_prose_is_stale_only_when_its_file_is_gone_from_the_tree(
    layout: Layout, put: Callable[..., Any]
) -> None:
    put("abbreviated", "The cart is drawn in src/cart.js of the web client.")  # web/cart.js
    put("gone", "Settings are read in app/settings.py at start-up.")
    results = {n: v.result for n, v in verify_all(layout).items()}
    assert results == {"abbreviated": "ok", "gone": "stale"}


def test_a_past_tree_is_read_only_for_a_commit_git_knows(git_repo: Path) -> None:
    (git_repo / "a.py").write_text("A = 1\n")
    sha = commit(git_repo)
    listing = codeindex.tree_at(git_repo, sha)
    assert listing is not None and "a.py" in listing
    tree = codeindex.git(git_repo, "rev-parse", f"{sha}^{{tree}}").decode().strip()
    assert codeindex.tree_at(git_repo, tree) is None  # a tree is not a commit
    assert codeindex.tree_at(git_repo, "0" * 40) is None


def test_a_js_path_holds_where_its_typescript_source_is(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    lib = layout.root / "packages" / "core" / "src" / "v2"
    lib.mkdir(parents=True)
    (lib / "format.ts").write_text("export const format = (s: string) => s;\n")
    commit_all(layout.root, "core")
    put("compiled", "Re-exports live in `packages/core/src/v2/format.js`.")
    put("relative", "Import the helpers from `v2/format.js` inside the core package.")
    put("gone", "Parsers live in `packages/core/src/v2/parse.js`.")
    results = {n: v.result for n, v in verify_all(layout).items()}
    assert results == {"compiled": "ok", "relative": "ok", "gone": "stale"}


def test_a_name_a_fact_says_is_no_longer_used_is_expected_gone(
    layout: Layout, put: Callable[..., Any]
) -> None:
    put("gone-by-design", "Handlers are no longer registered in `app/kernel.py`.")
    put("gone", "Handlers are registered in `app/kernel.py`.")
    put("behaviour", "`app/prune.py` deletes what the remote no longer has.")
    results = {n: v.result for n, v in verify_all(layout).items()}
    assert results == {"gone-by-design": "ok", "gone": "stale", "behaviour": "stale"}
