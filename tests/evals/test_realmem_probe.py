"""The generated-facts probe on a tiny mirror: what the patterns find defined, the
scripts, targets, variables and options named, each verified ok at the commit it was
made from; a missing mirror is named, exit 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evals.realmem import probe
from evals.realmem.run import Orch
from evals.realmem.trees import git

ORCH = Path(sys.executable).with_name("orch")


def _git(root: Path, *args: str) -> str:
    return git(root, *args).decode().strip()


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / "shop").mkdir(parents=True)
    (work / "shop" / "cart.py").write_text(
        "import os\n\nclass Cart:\n    def total(self):\n        return 0\n\n\n"
        "def checkout(cart):\n    return os.environ.get('SHOP_CURRENCY')\n"
    )
    (work / "package.json").write_text(json.dumps({"scripts": {"build:css": "sass in out"}}))
    (work / "Makefile").write_text("serve:\n\tpython -m shop\n")
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "a shop")
    target = tmp_path / "mirrors" / "acme+shop" / "repo"
    _git(tmp_path, "clone", "-q", "--mirror", str(work), str(target))
    return target


def test_definitions_are_read_per_language() -> None:
    python = (
        "class Cart:\n    def total(self):\n        pass\n    def _hidden(self):\n        pass\n"
    )
    assert probe.definitions(python, ".py") == [(1, "Cart"), (2, "Cart.total")]
    go = "func (c *Cart) Total() int {\n}\ntype Cart struct {\n}\nfunc New() {}\n"
    assert probe.definitions(go, ".go") == [(1, "Cart.Total"), (3, "Cart"), (5, "New")]


def test_every_generated_fact_verifies_ok_where_it_was_made(mirror: Path) -> None:
    commit = _git(mirror, "rev-parse", "HEAD")
    facts = probe.facts_of(mirror, commit, per_repo=5)
    words = [f.body for f in facts]
    assert "Run `npm run build:css` to build css." in words
    assert "Use `make serve` for serve." in words
    assert "Set `SHOP_CURRENCY` to configure it." in words
    cited = [f for f in facts if f.path is not None]
    assert cited and all(f.path == "shop/cart.py" and f.line for f in cited)
    found = probe.probe("acme/shop", mirror, Orch(ORCH), per_repo=5)
    assert found["facts"] == len(facts)
    assert found["not_ok"] == []


def test_a_missing_mirror_names_the_repository_to_fetch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = probe.main(["--mirrors", str(tmp_path), "--repo", "acme/gone"])
    assert code == 2
    assert "github:acme/gone" in capsys.readouterr().err
