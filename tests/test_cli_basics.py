from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from orchestrator.cli import cli


def test_init_outside_a_repository_is_a_usage_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init"])
    assert result.exit_code == 2
    assert "not inside a git repository" in result.output
    assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_init_is_idempotent(git_repo: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(cli, ["init"])
    assert first.exit_code == 0, first.output
    snapshot = {
        p: p.read_bytes() for p in git_repo.rglob("*") if p.is_file() and ".git/" not in str(p)
    }
    second = runner.invoke(cli, ["init"])
    assert second.exit_code == 0
    assert "nothing changed" in second.output
    after = {
        p: p.read_bytes() for p in git_repo.rglob("*") if p.is_file() and ".git/" not in str(p)
    }
    assert after == snapshot
