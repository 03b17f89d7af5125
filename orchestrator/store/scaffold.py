"""`orch init`: create the three-tier layout in a git repository, never touching what exists.

Everything is checked before anything is written: a path that exists as the wrong kind
(a file where a folder goes) or that leads out of the repository through a symlink stops
`orch init` with one line and nothing created.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.errors import InvalidFile
from orchestrator.store.fs import atomic_write, confine
from orchestrator.store.index import render_index
from orchestrator.store.layout import Layout
from orchestrator.store.notes import Notes, render_notes
from orchestrator.store.templates import TEMPLATE_NAMES, package_template

GITIGNORE_LINES = ("memories/session/", ".orch/")
# raw turns may quote what the agent read; kept out of git unless [records] commit_transcripts
TRANSCRIPTS_LINE = "plans/artifacts/*/transcripts/"


@dataclass
class ScaffoldResult:
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def _ignore_key(line: str) -> str:
    """A .gitignore pattern in a form that compares `/.orch/`, `.orch/` and `.orch` equal."""
    return line.strip().strip("/")


def scaffold(layout: Layout, *, ignore_transcripts: bool = True) -> ScaffoldResult:
    result = ScaffoldResult()
    root = layout.root

    def rel(p: Path) -> str:
        return p.relative_to(root).as_posix()

    folders = (
        layout.repo_memories,
        layout.session,
        layout.templates,
        layout.artifacts,
        layout.cache,
    )
    files = {
        layout.notes: render_notes(Notes()),
        layout.memory_index: render_index([]),
        layout.artifacts / ".gitkeep": "",
        **{layout.templates / name: package_template(name) for name in TEMPLATE_NAMES},
    }
    gitignore = root / ".gitignore"

    # check everything first, so that a refusal leaves the repository as it was
    for path in (*folders, *files, gitignore):
        confine(root, rel(path))
    for folder in folders:
        for step in (folder, *folder.parents):
            if step == root:
                break
            if step.exists() and not step.is_dir():
                raise InvalidFile(rel(step), "exists but is not a folder; orch needs a folder here")
    for path in (*files, gitignore):
        if path.exists() and not path.is_file():
            raise InvalidFile(rel(path), "exists but is not a file; orch needs a file here")
    try:
        current = gitignore.read_bytes() if gitignore.exists() else b""
    except OSError as exc:
        raise InvalidFile(".gitignore", f"unreadable: {exc.strerror or exc}") from None

    for folder in folders:
        if folder.is_dir():
            result.kept.append(rel(folder) + "/")
        else:
            folder.mkdir(parents=True)
            result.created.append(rel(folder) + "/")

    for path, text in files.items():
        if path.exists():
            result.kept.append(rel(path))
        else:
            atomic_write(path, text)
            result.created.append(rel(path))

    present = {_ignore_key(line) for line in current.decode("utf-8", "replace").splitlines()}
    wanted = (*GITIGNORE_LINES, *((TRANSCRIPTS_LINE,) if ignore_transcripts else ()))
    missing = [line for line in wanted if _ignore_key(line) not in present]
    if missing:
        what = "session scratch, raw transcripts, rebuildable cache"
        if TRANSCRIPTS_LINE not in missing:
            what = "session scratch and rebuildable cache"
        block = f"# orch: {what}\n" + "\n".join(missing) + "\n"
        sep = b"" if not current or current.endswith(b"\n") else b"\n"
        atomic_write(gitignore, current + sep + (b"\n" if current else b"") + block.encode())
        how = "appended to" if current else "created"
        result.created.append(f".gitignore ({how}: " + ", ".join(missing) + ")")
    else:
        result.kept.append(".gitignore")
    return result
