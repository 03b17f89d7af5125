"""`orch init`: create the three-tier layout in a git repository, never touching what exists."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.store.fs import atomic_write
from orchestrator.store.index import render_index
from orchestrator.store.layout import Layout
from orchestrator.store.notes import Notes, render_notes
from orchestrator.store.templates import TEMPLATE_NAMES, package_template

GITIGNORE_LINES = ("memories/session/", ".orch/")


@dataclass
class ScaffoldResult:
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def scaffold(layout: Layout) -> ScaffoldResult:
    result = ScaffoldResult()
    root = layout.root

    def rel(p: Path) -> str:
        return p.relative_to(root).as_posix()

    for folder in (
        layout.repo_memories,
        layout.session,
        layout.templates,
        layout.artifacts,
        layout.cache,
    ):
        if folder.is_dir():
            result.kept.append(rel(folder) + "/")
        else:
            folder.mkdir(parents=True)
            result.created.append(rel(folder) + "/")

    files = {
        layout.notes: render_notes(Notes()),
        layout.memory_index: render_index([]),
        layout.artifacts / ".gitkeep": "",
        **{layout.templates / name: package_template(name) for name in TEMPLATE_NAMES},
    }
    for path, text in files.items():
        if path.exists():
            result.kept.append(rel(path))
        else:
            atomic_write(path, text)
            result.created.append(rel(path))

    gitignore = root / ".gitignore"
    current = gitignore.read_text(encoding="utf-8") if gitignore.exists() else ""
    present = {line.strip() for line in current.splitlines()}
    missing = [line for line in GITIGNORE_LINES if line not in present]
    if missing:
        block = "# orch: session scratch and rebuildable cache\n" + "\n".join(missing) + "\n"
        sep = "" if not current or current.endswith("\n") else "\n"
        atomic_write(gitignore, current + sep + ("\n" if current else "") + block)
        result.created.append(".gitignore (" + ", ".join(missing) + ")")
    else:
        result.kept.append(".gitignore")
    return result
