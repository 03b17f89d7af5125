"""NOTES.md: the active objective state, three short sections, at most 20 lines.

The form is fixed: a `# NOTES` title, then `## Active objective`, `## Blockers` and
`## Pending`, each a list of one-line items (`- none` when empty). `NotesFile.set` rewrites
the file in that form; it refuses to run over lines it would drop (text outside the three
sections), so a hand edit is never lost silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from orchestrator.checks.secrets import redact
from orchestrator.errors import InvalidFile, UsageError
from orchestrator.store.fs import atomic_write, confine, file_lock
from orchestrator.store.layout import Layout

MAX_NOTES_LINES = 20
NOTES_NAME = "NOTES.md"
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


def form_problems(text: str) -> list[str]:
    """How NOTES.md text strays from its form ([] when it keeps to it)."""
    found = []
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if lines > MAX_NOTES_LINES:
        found.append(f"{lines} lines (at most {MAX_NOTES_LINES})")
    other = [line for line in parse_notes(text).other if line.strip()]
    if other:
        found.append(f"text outside Active objective / Blockers / Pending: {other[0].strip()!r}")
    return found


def _one_line(item: str) -> str:
    return " ".join(item.split())


class NotesFile:
    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.path = layout.notes

    def text(self) -> str | None:
        """The file as it is (None when there is none)."""
        confine(self.layout.root, NOTES_NAME)  # a NOTES.md symlinked out is not read
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError:
            raise InvalidFile(NOTES_NAME, "not UTF-8 text") from None
        except OSError as exc:
            raise InvalidFile(NOTES_NAME, f"unreadable: {exc.strerror or exc}") from None

    def read(self) -> Notes:
        text = self.text()
        return Notes() if text is None else parse_notes(text)

    def write(self, notes: Notes) -> str:
        notes = Notes(
            [_one_line(i) for i in notes.objective if i.strip()],
            [_one_line(i) for i in notes.blockers if i.strip()],
            [_one_line(i) for i in notes.pending if i.strip()],
        )
        text = render_notes(notes)
        count = text.count("\n")
        if count > MAX_NOTES_LINES:
            raise UsageError(
                f"NOTES.md would be {count} lines (at most {MAX_NOTES_LINES}); keep it to the "
                "active objective: move detail to the task folder or session notes"
            )
        atomic_write(self.path, redact(text))
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
            stray = [line for line in notes.other if line.strip()]
            if stray:
                raise InvalidFile(
                    NOTES_NAME,
                    f"has text outside Active objective / Blockers / Pending ({stray[0].strip()!r});"
                    " move it to the task folder or delete it, then run this again",
                )
            if objective is not None:
                notes.objective = [o for o in objective if o.strip()]
            if blockers is not None:
                notes.blockers = [b for b in blockers if b.strip()]
            if pending is not None:
                notes.pending = [p for p in pending if p.strip()]
            self.write(notes)
        return notes
