"""Import a Claude Code memory folder into `memories/repo/`.

A Claude Code memory folder holds `MEMORY.md` (an index of links, one line each) and topic
files with `name`, `description` and `type` frontmatter and a markdown body. Each topic file
becomes a repo memory:

- the name becomes kebab-case (from `name`, else the file stem): "Test Command" ->
  `test-command`; a name already taken gets `-2`, `-3`...;
- the subject is taken from the frontmatter if present, else from the name's words;
- the reason from the frontmatter, else the body's `**Why:**` line, else, for user and
  reference memories (whose worth needs no stated reason), where it came from;
- citations from the frontmatter, else the repository files the body names in backticks;
- every memory goes through the store's validation and Checklist A (`on_duplicate` skip
  or supersede); what cannot be written is skipped, with the reason.

Files are imported in MEMORY.md's order, then the unlisted ones: of two near-duplicates
the listed one is kept. Files the index links to but that are missing, and topic files
that do not parse (with the problem and its line), are reported too. Nothing is half-written: each memory is one atomic write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from orchestrator.errors import OrchError, UsageError
from orchestrator.memory.promotion import derived_citations
from orchestrator.memory.writer import MemoryWriter
from orchestrator.store.layout import INDEX_FILE, Layout
from orchestrator.store.memfile import (
    MEMORY_TYPES,
    Citation,
    Memory,
    first_paragraph,
    load_yaml,
    split_frontmatter,
)
from orchestrator.store.repo import InvalidMemory

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+\.md)\)")
_WHY = re.compile(r"^\s*\*\*Why:\*\*\s*(.+)$", re.M | re.I)
# Kinds whose worth needs no stated reason: a person's preference, a pointer to a
# reference. Imported without a `**Why:**` line, their reason says where they came from;
# project and feedback memories still need one.
SELF_EVIDENT = ("user", "reference")
_TYPE_ALIASES = {"preference": "user", "preferences": "user", "guidance": "feedback"}


@dataclass(frozen=True)
class ImportItem:
    source: str  # the file, relative to the imported folder
    action: str  # created | superseded | skipped
    name: str | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "action": self.action,
            "name": self.name,
            "reason": self.reason,
        }


@dataclass
class ImportReport:
    folder: str
    items: list[ImportItem] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {"created": 0, "superseded": 0, "skipped": 0}
        for item in self.items:
            out[item.action] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "from": "claude-code",
            "folder": self.folder,
            **self.counts(),
            "items": [i.to_dict() for i in self.items],
        }

    def text(self) -> str:
        c = self.counts()
        lines = [
            f"Imported from {self.folder}: {c['created']} created, {c['superseded']} "
            f"superseding, {c['skipped']} skipped."
        ]
        for item in self.items:
            if item.action == "skipped":
                lines.append(f"- skipped {item.source}: {item.reason}")
            else:
                lines.append(f"- {item.action} {item.name} from {item.source}")
        return "\n".join(lines) + "\n"


def kebab(text: str) -> str:
    """ "Test Command" / "test_command" / "TestCommand" -> "test-command"."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", text)
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)[:80].strip("-")


def _subject(name: str) -> str:
    return " ".join(kebab(name).split("-"))


def _read_topic(path: Path) -> tuple[dict[str, Any] | None, str, str | None]:
    """(frontmatter, body, problem) for one topic file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, "", f"unreadable: {exc}"
    fm_text, body = split_frontmatter(text)
    if fm_text is None:
        return None, body, "no YAML frontmatter (name, description, type)"
    try:
        raw = load_yaml(fm_text)
    except yaml.YAMLError as exc:
        return None, body, f"broken frontmatter: {_yaml_problem(exc)}"
    except Exception as exc:  # PyYAML raises others on some malformed input
        return None, body, f"broken frontmatter: {' '.join(str(exc).split())}"
    if not isinstance(raw, dict):
        return None, body, "frontmatter is not a mapping"
    return raw, body, None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """What is wrong and where, whole: "mapping values are not allowed here (line 3,
    column 12)", not PyYAML's message with its quoted buffer."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        mark = exc.problem_mark
        where = f" (frontmatter line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        context = f"{exc.context}: " if exc.context else ""
        return f"{context}{exc.problem}{where}"
    return " ".join(str(exc).split())


def _citations(layout: Layout, raw: dict[str, Any], body: str) -> tuple[Citation, ...]:
    out = []
    for item in raw.get("citations") or ():
        cite = Citation.loosely(item) if isinstance(item, dict) else None
        if cite is not None:
            out.append(cite)
    return tuple(out) or derived_citations(layout, body)


def _in_index_order(folder: Path, topics: list[Path]) -> list[Path]:
    """The topic files MEMORY.md lists, in its order, then the others by name: of two
    near-duplicates, the one the index lists is the one kept."""
    index = folder / INDEX_FILE
    links = (
        _LINK.findall(index.read_text(encoding="utf-8", errors="replace"))
        if index.is_file()
        else []
    )
    rank = {link: i for i, link in reversed(list(enumerate(links)))}
    return sorted(topics, key=lambda p: (rank.get(p.name, len(rank)), p.name))


def _missing_links(folder: Path) -> list[ImportItem]:
    """The topic files MEMORY.md links to that are not in the folder."""
    index = folder / INDEX_FILE
    if not index.is_file():
        return []
    return [
        ImportItem(link, "skipped", reason="MEMORY.md links to it but it is missing")
        for link in _LINK.findall(index.read_text(encoding="utf-8", errors="replace"))
        if "/" not in link and not (folder / link).is_file()
    ]


def _to_memory(
    layout: Layout, path: Path, raw: dict[str, Any], body: str, taken: set[str]
) -> Memory | str:
    """The repo memory one topic file becomes, or why it cannot become one."""
    kind = str(raw.get("type") or "").strip().lower()
    kind = _TYPE_ALIASES.get(kind, kind)
    if kind not in MEMORY_TYPES:
        return f"type {raw.get('type')!r} is not one of {', '.join(MEMORY_TYPES)}"
    base = kebab(str(raw.get("name") or path.stem)) or kebab(path.stem)
    if not base:
        return "no usable name"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    why = _WHY.search(body)
    reason = str(raw.get("reason") or (why.group(1).strip() if why else ""))
    if not reason and kind in SELF_EVIDENT:
        reason = f"kept by Claude Code across sessions ({path.name})"
    description = " ".join(str(raw.get("description") or "").split())
    return Memory(
        name=name,
        description=description or first_paragraph(body)[:150],
        type=kind,
        body=body.strip() + "\n" if body.strip() else "",
        subject=str(raw.get("subject") or _subject(str(raw.get("name") or path.stem))),
        reason=reason or None,
        citations=_citations(layout, raw, body),
        source={"imported": "claude-code", "file": path.name},
    )


def _import_one(writer: MemoryWriter, path: Path, taken: set[str], on_duplicate: str) -> ImportItem:
    raw, body, problem = _read_topic(path)
    if raw is None:
        return ImportItem(path.name, "skipped", reason=problem)
    memory = _to_memory(writer.layout, path, raw, body, taken)
    if isinstance(memory, str):
        return ImportItem(path.name, "skipped", reason=memory)
    try:
        result = writer.add(
            memory, on_duplicate="supersede" if on_duplicate == "supersede" else "skip"
        )
    except InvalidMemory as exc:
        return ImportItem(path.name, "skipped", reason="; ".join(exc.reasons))
    except OrchError as exc:
        return ImportItem(path.name, "skipped", reason=exc.message)
    if result.action == "skipped":
        dups = ", ".join(n for n, _ in result.duplicates)
        return ImportItem(path.name, "skipped", reason=f"near-duplicate of {dups} (Checklist A)")
    taken.add(result.memory.name)
    return ImportItem(path.name, result.action, result.memory.name)


def import_claude_code(layout: Layout, folder: Path, *, on_duplicate: str = "skip") -> ImportReport:
    """Import the Claude Code memory folder `folder` (see the module docstring)."""
    if on_duplicate not in ("skip", "supersede"):
        raise UsageError("on_duplicate must be skip or supersede")
    folder = folder.expanduser()
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder")
    topics = _in_index_order(folder, [p for p in folder.glob("*.md") if p.name != INDEX_FILE])
    if not topics and not (folder / INDEX_FILE).is_file():
        raise UsageError(f"{folder} holds no MEMORY.md and no topic files: not a memory folder")
    report = ImportReport(str(folder), _missing_links(folder))
    writer = MemoryWriter(layout)
    taken = {m.name for m in writer.store.load_all().memories}
    taken |= {p.stem for p in layout.repo_memories.glob("*.md")}
    report.items += [_import_one(writer, path, taken, on_duplicate) for path in topics]
    return report
