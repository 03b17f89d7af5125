"""Reading as few code files as the claims need: when many files hold the names asked
about, the files that spell them exactly are read in batches until every claim holds; a
past commit's definitions are read from git's objects, not from a checkout. The answers
must be the ones reading every file gives. Real git repositories, no network."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit, git

from orchestrator.memory import past, verify
from orchestrator.memory.verify import Verifier
from orchestrator.store.layout import Layout

USERS = 12  # files that use `Widget` (and `gadget`, in lower case) without defining it


def _tree(root: Path) -> None:
    pkg = root / "pkg"
    pkg.mkdir()
    for i in range(USERS):
        (pkg / f"a{i:02}.py").write_text(f"from pkg.z import Widget\n\ngadget = Widget({i})\n")
    (pkg / "m.py").write_text("def helper():\n    return 1\n")
    (pkg / "z.py").write_text(
        "class Widget:\n    def spin(self):\n        return 0\n\n\nclass Gadget:\n    pass\n"
    )
    commit(root, "widgets")


def _answers(layout: Layout, body: str) -> tuple[dict[str, str | None], set[str]]:
    with Verifier(layout, use_cache=False) as verifier:
        claims = verifier.body_claims(body)
        verifier.answer(claims)
        answers = {c.text: verifier.check_claim(c) for c in claims}
        return answers, set(verifier.facts.indexed)


BODY = "`helper()` and `Widget` hold; `vanished()` is gone."


def test_batches_give_the_answers_of_reading_every_file_and_read_fewer(
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(layout.root)
    whole, read_all = _answers(layout, BODY)
    monkeypatch.setattr(verify, "ENOUGH_FILES", 2)
    batched, read_some = _answers(layout, BODY)
    assert batched == whole
    assert whole["helper()"] is None and whole["Widget"] is None
    assert whole["vanished()"] == "vanished() is not defined in the code"
    assert read_some < read_all


def test_a_member_is_judged_on_every_file_holding_its_class(
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files that only use `Gadget` come first: on them alone the class reads as one from
    elsewhere (held); the file defining it without the member is read all the same."""
    _tree(layout.root)
    for i in range(USERS):
        (layout.root / "pkg" / f"a{i:02}.py").write_text(
            "from pkg.z import Gadget\n\nx = Gadget()\n"
        )
    commit(layout.root, "gadgets")
    monkeypatch.setattr(verify, "ENOUGH_FILES", 2)
    answers, read = _answers(layout, "Call `Gadget.zap`, `Widget.spin` and `helper()`.")
    assert answers["Gadget.zap"] == "Gadget has no member zap"
    assert answers["Widget.spin"] is None
    assert "pkg/z.py" in read


def test_a_dropped_member_is_found_in_gits_objects_without_a_checkout(
    layout: Layout, put: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    account = "class Account\n  def series(period)\n    []\n  end\nend\n"
    (layout.root / "app").mkdir(exist_ok=True)
    (layout.root / "app" / "account.rb").write_text(account)
    commit(layout.root, "accounts")
    head = git(layout.root, "rev-parse", "HEAD")
    (layout.root / "app" / "account.rb").write_text(account.replace("series", "balances"))
    (layout.root / "app" / "chart.rb").write_text("class Chart\n  def series\n  end\nend\n")
    commit(layout.root, "the chart computes the series")

    def no_checkout(*_: object) -> bool:
        raise AssertionError("a repository of the past commit was made")

    monkeypatch.setattr(past, "stage", no_checkout)
    with Verifier(layout, use_cache=False) as verifier:
        body = "`account.series` gives balances."
        claims = verifier.body_claims(body)
        [failure] = verifier.lapsed(body, claims, head)
    assert failure.reason == f"Account defined series at {head[:10]}; no Account defines it now"
