"""docs/cli.md is generated from --help and cannot drift."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evals.docs_cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_docs_cli_md_is_up_to_date() -> None:
    check = run("--check")
    assert check.returncode == 0, "docs/cli.md is out of date: run `make docs`\n" + check.stderr


def test_docs_cover_every_foundation_command_with_its_help() -> None:
    text = run().stdout
    for path in (
        "orch",
        "orch init",
        "orch log",
        "orch memory list",
        "orch memory show",
        "orch memory add",
        "orch memory supersede",
        "orch memory index",
        "orch notes show",
        "orch notes set",
        "orch session show",
        "orch session clear",
    ):
        assert f"\n## {path}\n" in text, path
    assert "Usage: orch memory add [OPTIONS]" in text
    assert "--on-duplicate [refuse|skip|supersede|create]" in text


def test_check_fails_on_a_stale_document(tmp_path: Path) -> None:
    doc = tmp_path / "cli.md"
    assert run("--write", "--doc", str(doc)).returncode == 0
    assert run("--check", "--doc", str(doc)).returncode == 0
    doc.write_text(doc.read_text() + "\nstale line\n")
    stale = run("--check", "--doc", str(doc))
    assert stale.returncode == 1 and "out of date" in stale.stderr


def test_every_shipped_data_file_is_in_the_package_data() -> None:
    """A wheel (not only an editable install) must carry every schema and template."""
    import glob
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["orchestrator"]
    package = ROOT / "orchestrator"
    covered = {
        Path(p).resolve()
        for pattern in patterns
        for p in glob.glob(str(package / pattern), recursive=True)
    }
    shipped = [*package.glob("schemas/**/*.json"), *package.glob("templates/*.md")]
    assert shipped
    missing = [str(p.relative_to(ROOT)) for p in shipped if p.resolve() not in covered]
    assert missing == []
