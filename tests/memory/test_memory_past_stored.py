"""A past commit's tree is read from git's objects, not checked out (`past.stage`): the
claims that fail now are answered at the recorded commit as a checkout of it would answer
them (a path, a function, a class member, a folder, a file the working tree no longer
has, a stated size), and no file of that commit is written but git's own per-folder
files. Real git repositories, no network."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit, git, verify_all

from orchestrator.memory import codeindex, past
from orchestrator.memory.codeindex import TreeState
from orchestrator.memory.verify import Verifier
from orchestrator.store.layout import Layout

BODY = (
    "The ledger lives in `tools/ledgers/ledger_book.py`, under `tools/ledgers/`: "
    "`open_ledger()` makes one and `LedgerBook.settle_all` closes it. "
    "`tools/ledgers/ledger_book.py` (about 7 lines) is short. "
    "Not so: `never_written()`, `LedgerBook.never_had` and `tools/nowhere/plan.py`."
)
LEDGER = (
    "class LedgerBook:\n"
    "    def settle_all(self):\n"
    "        return 0\n"
    "\n"
    "\n"
    "def open_ledger():\n"
    "    return LedgerBook()\n"
)


def _history(root: Path) -> str:
    """A commit with the ledger module, then a tree without it (and a file left
    uncommitted): the working tree is not the commit's, so its tree must be read."""
    (root / "tools" / "ledgers").mkdir(parents=True)
    (root / "tools" / "ledgers" / "ledger_book.py").write_text(LEDGER)
    (root / "tools" / "run.py").write_text("def run():\n    return 1\n")
    (root / ".gitignore").write_text("build/\n")
    commit(root, "ledgers")
    then = git(root, "rev-parse", "HEAD")
    git(root, "rm", "-q", "-r", "tools/ledgers")
    commit(root, "ledgers went")
    (root / "tools" / "run.py").write_text("def run():\n    return 2\n")
    return then


def _written(folder: Path) -> list[str]:
    """The files under `folder`, outside its `.git`."""
    out = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        out += [Path(top, f).relative_to(folder).as_posix() for f in files]
    return sorted(out)


def test_claims_that_fail_now_are_answered_at_the_recorded_commit(layout: Layout) -> None:
    then = _history(layout.root)
    with Verifier(layout, use_cache=False) as verifier:
        claims = verifier.body_claims(BODY)
        by_text = {c.text: c for c in claims}
        named = [
            "tools/ledgers/ledger_book.py",
            "tools/ledgers/",
            "open_ledger()",
            "LedgerBook.settle_all",
            "never_written()",
            "LedgerBook.never_had",
            "tools/nowhere/plan.py",
        ]
        assert set(named) <= set(by_text)
        failing = [c for c in claims if verifier.check_claim(c) is not None]
        assert {by_text[t] for t in named} <= set(failing)  # all fail now
        never = verifier.never_held(failing, then)
    assert {c.text for c in never} == {
        "never_written()",
        "LedgerBook.never_had",
        "tools/nowhere/plan.py",
    }


def test_a_stored_tree_answers_as_its_checkout_does(layout: Layout, tmp_path: Path) -> None:
    """The same claims, checked by a verifier of the commit's stored tree and by one of a
    checkout of it, get the same answers (a stated size and a folder among them)."""
    then = _history(layout.root)
    checkout = tmp_path / "checkout"
    git(layout.root, "worktree", "add", "-q", "--detach", str(checkout), then)
    stored_at = tmp_path / "stored"
    stored_at.mkdir()
    assert past.stage(layout.root, then, stored_at)
    stored = Verifier(
        Layout(stored_at), use_cache=False, tree=TreeState.read(stored_at, stored=True)
    )
    with Verifier(Layout(checkout), use_cache=False) as full, stored:
        claims = full.body_claims(BODY)
        assert any(c.kind == "size" for c in claims)
        answers = {c: full.check_claim(c) for c in claims}
        assert {c: stored.check_claim(c) for c in claims} == answers
    assert answers[next(c for c in claims if c.text == "open_ledger()")] is None
    assert answers[next(c for c in claims if c.text == "never_written()")] is not None


def test_no_file_of_the_past_commit_is_written_but_gits_own(layout: Layout) -> None:
    then = _history(layout.root)
    with Verifier(layout, use_cache=False) as verifier:
        failing = [c for c in verifier.body_claims(BODY) if verifier.check_claim(c) is not None]
        verifier.never_held(failing, then)
        folder = verifier._past.tree(then)
        assert folder is not None
        assert _written(folder) == [".gitignore"]  # git reads it from disk only
        assert git(folder, "rev-parse", "HEAD") == then
        assert git(folder, "check-ignore", "build/out.js") == "build/out.js"


def test_a_stored_link_reads_as_the_file_it_leads_to(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "lib").mkdir(parents=True)
    git(root, "init", "-q")
    (root / "lib" / "real.py").write_text("def linked_helper():\n    return 1\n")
    (root / "lib" / "alias.py").symlink_to("real.py")
    (root / "lib" / "outside.py").symlink_to("../../elsewhere.py")
    commit(root, "links")
    into = tmp_path / "stored"
    into.mkdir()
    assert past.stage(root, git(root, "rev-parse", "HEAD"), into)
    tree = TreeState.read(into, stored=True)
    assert tree.data("lib/alias.py") == tree.data("lib/real.py")
    assert tree.data("lib/outside.py") is None
    assert tree.size("lib/alias.py") == len("def linked_helper():\n    return 1\n")
    assert tree.exists("lib") and tree.exists("lib/real.py") and not tree.exists("lib/gone.py")
    assert tree.is_file("./lib/real.py") and not tree.is_file("lib")


@pytest.mark.parametrize("commit_name", ["0" * 40, "no-such-commit"])
def test_an_unknown_commit_is_no_tree(layout: Layout, tmp_path: Path, commit_name: str) -> None:
    _history(layout.root)
    assert not past.stage(layout.root, commit_name, tmp_path)


def test_memories_verified_at_one_commit_share_one_search_of_its_tree(
    layout: Layout, put: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    then = _history(layout.root)
    record = {"commit": then, "at": "2026-10-01T10:00:00Z", "result": "ok"}
    put("opens", "`open_ledger()` makes a ledger.", verified=record)
    put("settles", "`LedgerBook.settle_all` closes the books.", verified=record)
    put("never", "`never_written()` was never code.", verified=record)
    searched: list[list[str]] = []
    real_grep = codeindex._grep

    def counted(
        tree: TreeState, paths: list[str], words: list[str], exact: bool = False
    ) -> set[str] | None:
        if tree.stored:
            searched.append(sorted(words))
        return real_grep(tree, paths, words, exact)

    monkeypatch.setattr(codeindex, "_grep", counted)
    results = verify_all(layout)
    assert {n: results[n].result for n in ("opens", "settles", "never")} == {
        "opens": "stale",
        "settles": "stale",
        "never": "ok",  # the code never had it: never confirmed, not stale
    }
    assert len(searched) == 1, searched  # one search of the past tree for the three memories
    assert {"open_ledger", "never_written"} <= set(searched[0])
