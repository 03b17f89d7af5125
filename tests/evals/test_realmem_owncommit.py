"""The own-commit sweep on a tiny mirror: the instruction file is linted in the tree of the
commit that wrote it (what came later does not count), and a missing mirror is one line
per repository to fetch, exit 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evals.realmem import owncommit
from evals.realmem.run import Orch
from evals.realmem.trees import git

ORCH = Path(sys.executable).with_name("orch")


def _git(root: Path, *args: str) -> str:
    return git(root, *args).decode().strip()


@pytest.fixture
def mirrors(tmp_path: Path) -> tuple[Path, str]:
    work = tmp_path / "work"
    (work / "app").mkdir(parents=True)
    (work / "app" / "main.py").write_text("def serve():\n    return 1\n")
    (work / "AGENTS.md").write_text(
        "- The server starts in `app/main.py`.\n- Settings live in `app/settings.py`.\n"
    )
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "code and instructions")
    written = _git(work, "rev-parse", "HEAD")
    (work / "app" / "main.py").unlink()  # later: the file it names is gone
    _git(work, "commit", "-qam", "no main")
    mirror = tmp_path / "mirrors" / "acme+shop" / "repo"
    _git(tmp_path, "clone", "-q", "--mirror", str(work), str(mirror))
    return tmp_path / "mirrors", written


def test_the_file_is_linted_where_it_was_written(mirrors: tuple[Path, str]) -> None:
    root, written = mirrors
    report = owncommit.lint_at_own_commit(
        owncommit.File("acme/shop", "AGENTS.md", written), root, Orch(ORCH)
    )
    by_line = {c["line"]: c["status"] for c in report["claims"]}
    assert by_line == {1: "ok", 2: "stale"}  # main.py was there; settings.py never was


def test_a_missing_mirror_names_the_repository_to_fetch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "owncommit.json"
    data.write_text(
        json.dumps({"files": [{"repo": "acme/gone", "path": "AGENTS.md", "commit": "0" * 40}]})
    )
    code = owncommit.main(["--mirrors", str(tmp_path / "none"), "--data", str(data)])
    assert code == 2
    assert "github:acme/gone" in capsys.readouterr().err


def test_memory_mode_verifies_each_claim_as_a_memory_made_where_the_file_was_written(
    mirrors: tuple[Path, str],
) -> None:
    root, written = mirrors
    report = owncommit.memories_at_own_commit(
        owncommit.File("acme/shop", "AGENTS.md", written), root, Orch(ORCH)
    )
    assert report["counts"]["stale"] == 1  # settings.py never was; main.py was there then
    assert [(c["line"], c["status"]) for c in report["claims"]] == [(2, "stale")]
    assert "app/settings.py" in report["claims"][0]["reason"]
