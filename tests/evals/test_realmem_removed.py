"""The removed-definition probe's labelling on a tiny git repository: names a changed code
file defined at the older commit are removed when no line of the newer tree defines them,
kept when one still does (the probe itself needs fetched mirrors and is not run here)."""

from __future__ import annotations

from pathlib import Path

from evals.realmem.removed import names
from evals.realmem.trees import git


def _git(root: Path, *args: str) -> str:
    return git(root, *args).decode().strip()


def test_names_defined_then_and_nowhere_now_are_removed(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "shapes.go").write_text(
        "package shapes\n\ntype Circle struct{}\n\nfunc (c *Circle) radiusOf() int {\n"
        "\treturn 1\n}\n\nfunc squareArea() int {\n\treturn 4\n}\n"
    )
    (tmp_path / "src" / "colors.ts").write_text("export class PaletteStore {}\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "shapes")
    old = _git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "src" / "shapes.go").write_text(
        "package shapes\n\ntype Circle struct{}\n\n// squareArea was here\n"
    )
    (tmp_path / "src" / "colors.ts").write_text("export class PaletteStore { size = 2 }\n")
    _git(tmp_path, "commit", "-qam", "no squares")
    new = _git(tmp_path, "rev-parse", "HEAD")

    removed, kept = names(tmp_path / ".git", old, new)
    assert removed == {"radiusOf": "func", "squareArea": "func"}  # a comment defines nothing
    assert kept == {"Circle": "type", "PaletteStore": "class"}
