"""`moved` for memories and `orch memory verify --fix`, on real git repositories: a path
that is gone while the thing lives elsewhere is not staleness; the fix supersedes the
memory with repaired citations through Checklist A, all or nothing."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import recorded_ok, verify_all

from orchestrator.cli import cli
from orchestrator.config import MemoryConfig
from orchestrator.memory.audit import audit
from orchestrator.memory.lint import lint
from orchestrator.memory.record import record
from orchestrator.memory.usage import UsageLog
from orchestrator.memory.use import memories_for_prompt
from orchestrator.memory.verify import verify_memories
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation
from orchestrator.store.repo import RepoMemoryStore


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


HELPERS = "import os\n\n\ndef helper(x):\n    return x + 1\n\n\nLIMIT = 3\n"


def _with_helpers(layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]) -> str:
    """app/util.py with `helper` at line 4 and `LIMIT` at line 8, a memory citing both, the
    verification recorded; returns that commit."""
    (layout.root / "app" / "util.py").write_text(HELPERS)
    commit_all(layout.root, "helpers")
    put(
        "helper-adds",
        "The helper in `app/util.py` adds one.",
        citations=(Citation("app/util.py", 4, "helper"), Citation("app/util.py", 8)),
    )
    memories = RepoMemoryStore(layout).load_all().memories
    record(layout, memories, verify_memories(layout, memories))
    return commit_all(layout.root, "memory")


def _rename(layout: Layout, commit_all: Callable[..., str]) -> None:
    """git mv app/util.py app/tools.py, with a line added on top (lines shift by one)."""
    git(layout.root, "mv", "app/util.py", "app/tools.py")
    tools = layout.root / "app" / "tools.py"
    tools.write_text("# moved here\n" + tools.read_text())
    commit_all(layout.root, "rename")


def test_a_renamed_file_is_moved_with_its_new_lines_not_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    _with_helpers(layout, put, commit_all)
    _rename(layout, commit_all)
    result = verify_all(layout)["helper-adds"]
    assert result.result == "moved" and not result.failures
    assert {(m.path, m.to, m.origin, m.line, m.symbol) for m in result.moved} == {
        ("app/util.py", "app/tools.py", "citation", 5, "helper"),  # the symbol's line now
        ("app/util.py", "app/tools.py", "citation", 9, None),  # the cited line, found again
        ("app/util.py", "app/tools.py", "body", None, None),
    }
    assert result.summary() == "app/util.py moved to app/tools.py"


def test_a_symbol_that_left_with_its_file_is_found_by_the_symbol_index(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    put(
        "parse",
        "Config is parsed in one place.",
        citations=(Citation("app/main.py", 16, "parse_config"),),
    )
    commit_all(layout.root, "memory")
    main = layout.root / "app" / "main.py"
    main.unlink()  # nothing like it is added: git's rename detection says nothing
    (layout.root / "app" / "config.py").write_text(
        "import json\n\n\ndef parse_config(path):\n    with open(path) as fh:\n"
        "        return json.load(fh)\n"
    )
    commit_all(layout.root, "config in its own module")
    result = verify_all(layout)["parse"]
    assert result.result == "moved"
    assert [(m.to, m.line) for m in result.moved] == [("app/config.py", 4)]


def test_a_moved_file_whose_symbol_is_gone_is_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    _with_helpers(layout, put, commit_all)
    git(layout.root, "mv", "app/util.py", "app/tools.py")
    tools = layout.root / "app" / "tools.py"
    tools.write_text(tools.read_text().replace("def helper(", "def assist("))
    commit_all(layout.root, "rename and drop helper")
    result = verify_all(layout)["helper-adds"]
    assert result.result == "stale"
    assert result.failures[0].reason == "app/util.py does not exist"
    assert [m.origin for m in result.moved] == ["body"]  # the body path moved; the symbol did not


def test_moved_memories_reach_the_prompt_marked_and_the_audit_warns(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    _with_helpers(layout, put, commit_all)
    _rename(layout, commit_all)
    found = memories_for_prompt(layout, MemoryConfig())
    assert [m.name for m in found.memories] == ["helper-adds"] and not found.stale
    assert "[MOVED: app/util.py moved to app/tools.py]" in found.index_text
    payload = found.to_payload()
    assert (payload["moved"], payload["stale"], payload["ok"]) == (1, 0, 0)
    kinds = {(f.kind, f.memory, f.severity) for f in audit(layout).findings}
    assert ("moved_citation", "helper-adds", "warning") in kinds
    assert not any(k == "stale_citation" for k, _, _ in kinds)


def test_verify_lists_the_repair_and_fix_supersedes_through_the_store(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    _with_helpers(layout, put, commit_all)
    _rename(layout, commit_all)
    folder = layout.repo_memories
    before = {p.name: p.read_text() for p in folder.iterdir()}

    dry = CliRunner().invoke(cli, ["memory", "verify"])
    assert dry.exit_code == 0, dry.output
    assert "MOVED    helper-adds: app/util.py moved to app/tools.py" in dry.output
    assert "--fix would write helper-adds -> helper-adds-2" in dry.output
    assert "cites app/tools.py:5#helper, app/tools.py:9" in dry.output
    assert "1 memories: 0 ok, 0 changed, 1 moved, 0 stale." in dry.output
    assert {p.name: p.read_text() for p in folder.iterdir()} == before  # nothing written

    fixed = CliRunner().invoke(cli, ["memory", "verify", "--fix", "--json"])
    assert fixed.exit_code == 0, fixed.output
    out = json.loads(fixed.output)
    assert out["moved"] == 1
    assert out["repairs"] == [
        {
            "memory": "helper-adds",
            "moves": [m.to_dict() for m in _moves_of(out)],
            "new": "helper-adds-2",
            "citations": [
                {"path": "app/tools.py", "line": 5, "symbol": "helper"},
                {"path": "app/tools.py", "line": 9},
            ],
            "written": True,
        }
    ]
    store = RepoMemoryStore(layout).load_all().by_name()
    old, new = store["helper-adds"], store["helper-adds-2"]
    assert (old.status, old.superseded_by) == ("superseded", "helper-adds-2")
    assert new.supersedes == ("helper-adds",) and new.active
    assert new.body == "The helper in `app/tools.py` adds one.\n"
    assert new.extra["repaired"]["moves"][0] == "app/util.py moved to app/tools.py:5"
    assert new.verified is not None and new.verified["result"] == "ok"
    assert "helper-adds-2" in (folder / "MEMORY.md").read_text()
    with UsageLog(layout) as usage:
        assert usage.summary()["helper-adds"].superseded
    assert not (layout.cache / "memory-intent.json").exists()

    again = CliRunner().invoke(cli, ["memory", "verify"])
    assert again.exit_code == 0 and "1 memories: 1 ok, 0 changed, 0 moved, 0 stale." in again.output


def _moves_of(out: dict[str, Any]) -> list[Any]:
    from orchestrator.memory.moves import Move

    result = next(r for r in out["results"] if r["name"] == "helper-adds")
    return [Move.from_dict(m) for m in result["moved"]]


def test_a_fix_refused_part_way_leaves_every_file_as_it_was(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    _with_helpers(layout, put, commit_all)
    put(
        "limit-three",
        "`LIMIT` in `app/util.py` caps retries at three.",
        citations=(Citation("app/util.py", 8, "LIMIT"),),
    )
    commit_all(layout.root, "second memory")
    _rename(layout, commit_all)
    # an active memory the second repair near-duplicates (Checklist A refuses it, after
    # the first repair was written in the same transaction)
    put(
        "limit-three-copy",
        "`LIMIT` in `app/tools.py` caps retries at three.",
        citations=(Citation("app/tools.py", 9, "LIMIT"),),
    )
    folder = layout.repo_memories
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    result = CliRunner().invoke(cli, ["memory", "verify", "--fix"])
    assert result.exit_code == 1
    last = result.output.strip().splitlines()[-1]
    assert "cannot repair limit-three" in last and "nothing was written" in last
    assert "Traceback" not in result.output
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert not (layout.cache / "memory-intent.json").exists()

    named = CliRunner().invoke(cli, ["memory", "verify", "--fix", "helper-adds"])
    assert named.exit_code == 0, named.output
    assert RepoMemoryStore(layout).load_all().by_name()["helper-adds"].status == "superseded"


def test_fix_refuses_bad_input_in_one_line(layout: Layout) -> None:
    for args, words in (
        (["--fix", "--file", "AGENTS.md"], "--file lints one file"),
        (["--fix", "--all"], "--fix repairs active memories"),
        (["--fix", "--changed", "app/main.py"], "--fix repairs active memories"),
        (["--fix", "no-such-memory"], "no memory named 'no-such-memory'"),
    ):
        result = CliRunner().invoke(cli, ["memory", "verify", *args])
        assert result.exit_code == 2, (args, result.output)
        assert words in result.output and len(result.output.strip().splitlines()) == 1


def test_a_claim_that_never_held_at_the_recorded_commit_is_not_newly_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    verified = recorded_ok(layout)
    cites = (Citation("pyproject.toml"),)
    put("never", "Call `never_defined()` first.", verified=verified, citations=cites)
    put("held", "Config is read by `parse_config()`.", verified=verified)
    put("recorded-stale", "Use `vanished()` here.", verified={**verified, "result": "stale"})
    put("unrecorded", "Call `also_vanished()`.")
    main = layout.root / "app" / "main.py"
    main.write_text(main.read_text().replace("def parse_config(", "def read_config("))
    commit_all(layout.root, "parse_config renamed")

    results = verify_all(layout)
    assert results["held"].result == "stale"  # it held when recorded: newly stale
    assert results["recorded-stale"].result == "stale"
    assert results["unrecorded"].result == "stale"
    never = results["never"]
    assert never.result == "ok" and not never.failures
    assert [f.claim.symbol for f in never.unconfirmed] == ["never_defined"]
    assert "never confirmed" in never.summary()
    # answered again from the cache (the commit's tree is not checked out twice)
    assert verify_all(layout)["never"].unconfirmed == never.unconfirmed


def test_a_word_the_code_lacked_when_an_unrecorded_memory_was_created_is_not_stale(
    layout: Layout,
    put: Callable[..., Any],
    commit_all: Callable[..., str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A memory never verified was written against the commit HEAD had at its `created`
    date: a bare word the code lacked there too was never this code's (never confirmed),
    a word it had there and lost since is stale, and a path is checked as it stands."""
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2030-01-01T10:00:00Z")
    (layout.root / "app" / "legacy.py").write_text("def gone_helper():\n    return 1\n")
    commit_all(layout.root, "a helper")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2030-01-10T10:00:00Z")
    (layout.root / "app" / "legacy.py").unlink()
    commit_all(layout.root, "the helper removed")
    born = "2030-01-05T10:00:00Z"  # between the two commits
    put("never", "Call `never_defined_fn()` first.", created=born)
    put("lost", "Call `gone_helper()` first.", created=born)
    put("no-path", "Settings are read from `config/never_there.yaml`.", created=born)
    put("older", "Call `never_defined_fn()` to start.", created="2001-01-01T10:00:00Z")

    results = verify_all(layout)
    never = results["never"]
    assert never.result == "ok" and not never.failures
    assert [f.claim.symbol for f in never.unconfirmed] == ["never_defined_fn"]
    assert "where the memory was written" in never.summary()
    assert results["lost"].result == "stale"
    assert "gone_helper" in results["lost"].summary()
    assert results["no-path"].result == "stale"
    # born before every commit: nothing it was written against is known, it stays stale
    assert results["older"].result == "stale"


def test_a_claim_that_never_held_on_an_unchanged_tree_is_answered_by_the_same_verifier(
    layout: Layout, put: Callable[..., Any]
) -> None:
    """The code has not changed since the recorded commit: the current tree answers for
    it, and closing the verifier (the audit does) ends without closing itself again."""
    verified = recorded_ok(layout)
    put("never", "Call `never_defined()` first.", verified=verified)

    never = verify_all(layout)["never"]
    assert never.result == "ok"
    assert [f.claim.symbol for f in never.unconfirmed] == ["never_defined"]
    report = audit(layout)
    assert not [f for f in report.findings if f.memory == "never"]


def test_a_namespace_that_followed_its_folder_is_a_move(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    models = layout.root / "app" / "models"
    (models / "account").mkdir(parents=True)
    body = "  belongs_to :account\n  validates :amount, presence: true\n\n  def total\n    amount\n  end\nend\n"
    (models / "account" / "balance.rb").write_text(
        "class Account::Balance < ApplicationRecord\n" + body
    )
    commit_all(layout.root, "balances")
    put(
        "balances",
        "Daily balances are rows of one model.",
        citations=(Citation("app/models/account/balance.rb", 1, "Account::Balance"),),
    )
    commit_all(layout.root, "memory")
    git(layout.root, "mv", "app/models/account/balance.rb", "app/models/balance.rb")
    (models / "balance.rb").write_text("class Balance < ApplicationRecord\n" + body)
    commit_all(layout.root, "Balance leaves the Account namespace")
    result = verify_all(layout)["balances"]
    assert result.result == "moved"
    [move] = result.moved
    assert (move.to, move.line, move.renamed) == ("app/models/balance.rb", 1, "Balance")
    fixed = CliRunner().invoke(cli, ["memory", "verify", "--fix", "--json"])
    assert fixed.exit_code == 0, fixed.output
    assert json.loads(fixed.output)["repairs"][0]["citations"] == [
        {"path": "app/models/balance.rb", "line": 1, "symbol": "Balance"}
    ]


def _folder_of(
    layout: Layout, folder: str, names: list[str], commit_all: Callable[..., str]
) -> None:
    (layout.root / folder).mkdir(parents=True)
    for name in names:
        (layout.root / folder / name).write_text(f"# {name}\n\nNotes on {name[:-3]} for readers.\n")
    commit_all(layout.root, f"{folder} written")


def test_a_folder_went_where_its_files_went_unless_they_were_split_up(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    _folder_of(layout, "notes/setup", ["install.md", "upgrade.md", "remove.md"], commit_all)
    _folder_of(layout, "notes/usage", ["basics.md", "tuning.md", "limits.md", "faq.md"], commit_all)
    put("setup", "Setup notes are in `notes/setup/`.", citations=())
    put("usage", "Usage notes are in `notes/usage/`.", citations=())
    commit_all(layout.root, "memories")
    (layout.root / "guides").mkdir()
    git(layout.root, "mv", "notes/setup", "guides/setup")  # the folder moves whole
    for name in ["basics.md", "tuning.md"]:  # its files split up: two here, one there
        git(layout.root, "mv", f"notes/usage/{name}", f"guides/{name}")
    (layout.root / "reference").mkdir()
    git(layout.root, "mv", "notes/usage/limits.md", "reference/limits.md")
    git(layout.root, "rm", "-q", "notes/usage/faq.md")
    commit_all(layout.root, "guides reorganised")
    results = verify_all(layout)
    assert results["setup"].result == "moved"
    assert [m.to for m in results["setup"].moved] == ["guides/setup"]
    assert results["usage"].result == "stale"


def test_a_folder_whose_files_moved_again_is_followed_to_where_they_are(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    _folder_of(layout, "plugins/spell/rules", ["casing.md", "hyphens.md"], commit_all)
    (layout.root / "core" / "rules").mkdir(parents=True)
    (layout.root / "core" / "rules" / "grammar.md").write_text("# Grammar\n")
    put("rules", "Spelling rules are in `plugins/spell/rules/`.", citations=())
    commit_all(layout.root, "memory")
    (layout.root / "core" / "staging").mkdir()
    git(layout.root, "mv", "plugins/spell/rules", "core/staging/rules")
    commit_all(layout.root, "the spelling plugin folded into core")
    for name in ["casing.md", "hyphens.md"]:  # into a folder that held files already
        git(layout.root, "mv", f"core/staging/rules/{name}", f"core/rules/{name}")
    (layout.root / "core" / "staging" / "rules").rmdir()
    commit_all(layout.root, "staging emptied")
    result = verify_all(layout)["rules"]
    assert result.result == "moved"
    assert [m.to for m in result.moved] == ["core/rules"]


def test_a_test_class_that_left_its_package_is_moved(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    tests = layout.root / "shop" / "src" / "test" / "java" / "org" / "acme"
    tests.mkdir(parents=True)
    (tests / "LedgerRoundTest.java").write_text("class LedgerRoundTest {}\n")
    commit_all(layout.root, "ledger test")
    put(
        "ledger", "Run `mvn test -Dtest=org.acme.LedgerRoundTest` after ledger edits.", citations=()
    )
    put("report", "Run `mvn test -Dtest=org.acme.ReportTest` after report edits.", citations=())
    commit_all(layout.root, "memories")
    (tests / "ledger").mkdir()
    git(layout.root, "mv", str(tests / "LedgerRoundTest.java"), str(tests / "ledger"))
    commit_all(layout.root, "ledger tests get their own package")
    results = verify_all(layout)
    assert results["ledger"].result == "moved"
    assert [m.to for m in results["ledger"].moved] == [
        "shop/src/test/java/org/acme/ledger/LedgerRoundTest.java"
    ]
    assert results["report"].result == "stale"


def test_a_path_already_gone_when_the_file_was_written_did_not_move_since(
    git_repo: Path,
) -> None:
    root = git_repo
    (root / "app" / "legacy").mkdir(parents=True)
    (root / "app" / "legacy" / "sync_jobs.py").write_text("def sync():\n    return 1\n")
    text = "- Jobs sync in `app/legacy/sync_jobs.py`.\n"
    (root / "AGENTS.md").write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "sync jobs, and notes naming them")
    (root / "app" / "jobs").mkdir()
    git(root, "mv", "app/legacy/sync_jobs.py", "app/jobs/sync_jobs.py")
    git(root, "commit", "-q", "--no-verify", "-m", "jobs get their folder")
    [finding] = lint(root, "AGENTS.md", text)  # written while the path was there
    assert (finding.status, finding.reason) == (
        "moved",
        "app/legacy/sync_jobs.py moved to app/jobs/sync_jobs.py",
    )
    late = "- Jobs sync in `app/legacy/sync_jobs.py`, as noted.\n"
    (root / "AGENTS.md").write_text(late)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "notes written after the move")
    [finding] = lint(root, "AGENTS.md", late)
    assert (finding.status, finding.reason) == (
        "stale",
        "app/legacy/sync_jobs.py does not exist",
    )


def test_a_file_rewritten_in_another_format_beside_it_is_moved(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    (layout.root / "Shop.sln").write_text("Microsoft Visual Studio Solution File\nProject(App)\n")
    (layout.root / "old.cfg").write_text("[tool]\nmode = fast\n")
    (layout.root / "old.toml").write_text("[tool]\nmode = 'fast'\n")
    commit_all(layout.root, "solution and settings")
    put("sln", "Open `Shop.sln` to build everything.", citations=(Citation("Shop.sln"),))
    put("cfg", "Settings are in `old.cfg`.")
    commit_all(layout.root, "memories")
    (layout.root / "Shop.sln").unlink()
    (layout.root / "Shop.slnx").write_text('<Solution>\n  <Project Path="app" />\n</Solution>\n')
    (layout.root / "old.cfg").unlink()  # old.toml was there all along: no rewrite of it
    commit_all(layout.root, "the solution in the XML format; one settings file")
    results = verify_all(layout)
    assert results["sln"].result == "moved"
    assert {(m.path, m.to) for m in results["sln"].moved} == {("Shop.sln", "Shop.slnx")}
    assert results["cfg"].result == "stale"


def test_a_file_rewritten_below_a_moved_folder_is_moved(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """`.prompts/lint/GUIDE.md` rewritten as `.agent/prompts/lint/GUIDE.md` by the commit
    that removed it (too changed for git to call it a rename, a `GUIDE.md` in every folder):
    moved; one removed while nothing of its folder and name was added is stale."""
    old = {
        ".prompts/lint/GUIDE.md": "# Lint\n\nRun the linter on changed files only.\n",
        ".prompts/docs/GUIDE.md": "# Docs\n\nWrite in the present tense.\n",
        ".prompts/ship/GUIDE.md": "# Ship\n\nTag, then publish the wheel.\n",
    }
    for path, text in old.items():
        (layout.root / path).parent.mkdir(parents=True, exist_ok=True)
        (layout.root / path).write_text(text)
    commit_all(layout.root, "prompts")
    put("lint", "Lint rules: `.prompts/lint/GUIDE.md`.")
    put("ship", "Releasing: `.prompts/ship/GUIDE.md`.")
    commit_all(layout.root, "memories")
    for path in old:
        (layout.root / path).unlink()
    for name in ("lint", "docs"):
        new = layout.root / ".agent" / "prompts" / name / "GUIDE.md"
        new.parent.mkdir(parents=True, exist_ok=True)
        new.write_text(f"# {name}\n\nA new text, every line of it rewritten for agents.\n")
    commit_all(layout.root, "prompts for agents, rewritten")

    results = verify_all(layout)
    assert results["lint"].result == "moved"
    assert {(m.path, m.to) for m in results["lint"].moved} == {
        (".prompts/lint/GUIDE.md", ".agent/prompts/lint/GUIDE.md")
    }
    assert results["ship"].result == "stale"


def test_a_file_whose_whole_life_was_on_a_merged_branch_is_followed(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    """git's default history walk prunes a merged branch on which a path was added and
    moved: the move is looked for in every branch's history."""
    main = git(layout.root, "rev-parse", "--abbrev-ref", "HEAD")
    git(layout.root, "checkout", "-q", "-b", "side")
    (layout.root / "rates").mkdir()
    (layout.root / "rates" / "tariffs.csv").write_text("zone,rate\nA,1.20\nB,2.40\nC,3.10\n")
    commit_all(layout.root, "tariffs on the side branch")
    verified = recorded_ok(layout)
    (layout.root / "lib").mkdir()
    git(layout.root, "mv", "rates/tariffs.csv", "lib/zone-rates.csv")
    commit_all(layout.root, "tariffs are zone rates")
    git(layout.root, "checkout", "-q", main)
    (layout.root / "NEWS").write_text("unrelated\n")
    commit_all(layout.root, "news on the main line")
    git(layout.root, "merge", "-q", "--no-ff", "side", "-m", "merge the side branch")
    put("tariffs", "Shipping reads `rates/tariffs.csv`.", verified=verified)
    result = verify_all(layout)["tariffs"]
    assert result.result == "moved"
    assert [(m.path, m.to) for m in result.moved] == [("rates/tariffs.csv", "lib/zone-rates.csv")]
