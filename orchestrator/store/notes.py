"""NOTES.md: the active objective state, three short sections, at most 20 lines."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from orchestrator.errors import UsageError
from orchestrator.store.fs import atomic_write, file_lock
from orchestrator.store.layout import Layout

MAX_NOTES_LINES = 20
SECTIONS = ("Active objective", "Blockers", "Pending")
NONE_LINE = "- none"


@dataclass
class Notes:
    objective: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)  # lines outside the three sections

    def to_dict(self) -> dict[str, list[str]]:
        return {"objective": self.objective, "blockers": self.blockers, "pending": self.pending}


def parse_notes(text: str) -> Notes:
    notes = Notes()
    target: list[str] | None = None
    slots = {
        "active objective": notes.objective,
        "blockers": notes.blockers,
        "pending": notes.pending,
    }
    for line in text.splitlines():
        heading = re.match(r"^#{2,3}\s+(.*?)\s*$", line)
        if heading:
            target = slots.get(heading.group(1).lower())
            if target is None:
                notes.other.append(line)
            continue
        if line.startswith("# ") or not line.strip():
            continue
        item = re.sub(r"^\s*[-*]\s+", "", line).strip()
        if target is None:
            notes.other.append(line)
        elif item.lower() != "none":
            target.append(item)
    return notes


def render_notes(notes: Notes) -> str:
    lines = ["# NOTES"]
    for title, items in zip(
        SECTIONS, (notes.objective, notes.blockers, notes.pending), strict=True
    ):
        lines += ["", f"## {title}", *([f"- {i}" for i in items] or [NONE_LINE])]
    return "\n".join(lines) + "\n"


class NotesFile:
    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.path = layout.notes

    def read(self) -> Notes:
        try:
            return parse_notes(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return Notes()

    def write(self, notes: Notes) -> str:
        text = render_notes(notes)
        count = text.count("\n")
        if count > MAX_NOTES_LINES:
            raise UsageError(
                f"NOTES.md would be {count} lines (at most {MAX_NOTES_LINES}); keep it to the "
                "active objective: move detail to the task folder or session notes"
            )
        atomic_write(self.path, text)
        return text

    def set(
        self,
        *,
        objective: list[str] | None = None,
        blockers: list[str] | None = None,
        pending: list[str] | None = None,
    ) -> Notes:
        """Replace the given sections (None leaves a section as it is)."""
        with file_lock(self.layout.locks, "notes", what="NOTES.md"):
            notes = self.read()
            if objective is not None:
                notes.objective = [o for o in objective if o.strip()]
            if blockers is not None:
                notes.blockers = [b for b in blockers if b.strip()]
            if pending is not None:
                notes.pending = [p for p in pending if p.strip()]
            self.write(notes)
        return notes
