"""NOTES.md: the active objective state, three short sections, at most 20 lines.

The form is fixed: a `# NOTES` title, then `## Active objective`, `## Blockers` and
`## Pending`, each a list of one-line items (`- none` when empty). `NotesFile.set` rewrites
the file in that form; it refuses to run over lines it would drop (text outside the three
sections), so a hand edit is never lost silently.

A blocker a task wrote is tagged with the task: `task <slug>: <reason>`. A task replaces
or clears only its own blockers (`set(task_blocker=...)`); the others, and blockers a
person wrote, stay. When the 20 lines are full, Pending is shortened first (its last
line says how many items it left out), then the oldest blockers of other tasks leave the
file (`orch status` still shows every blocked task).
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
_TASK_TAG = re.compile(r"^task (?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*): ")
_MORE_PENDING = re.compile(r"^and \d+ more\b")


def tag_blocker(slug: str, reason: str) -> str:
    """A blocker line tagged with the task that wrote it."""
    return f"task {slug}: {reason}"


def blocker_task(item: str) -> str | None:
    """The task a blocker line is tagged with (None for a person's own blocker)."""
    found = _TASK_TAG.match(item)
    return found.group("slug") if found else None


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
        task_blocker: tuple[str, str | None] | None = None,
        fit_for: str | None = None,
    ) -> Notes:
        """Replace the given sections (None leaves a section as it is). `task_blocker`
        `(slug, reason)` replaces that task's own blockers with `reason` (None: removes
        them), after `blockers`. With a task (`task_blocker`, or `fit_for` a slug: the
        engine's writes) the file is fitted to its 20 lines; else too many is refused."""
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
            if task_blocker is not None:
                slug, reason = task_blocker
                notes.blockers = [b for b in notes.blockers if blocker_task(b) != slug]
                if reason:
                    notes.blockers.append(tag_blocker(slug, _one_line(reason)))
                fit_for = slug
            if fit_for is not None:
                _fit(notes, fit_for)
            self.write(notes)
        return notes


def _lines(notes: Notes) -> int:
    return 7 + sum(max(1, len(x)) for x in (notes.objective, notes.blockers, notes.pending))


def _fit(notes: Notes, slug: str) -> None:
    """Keep to the 20 lines: shorten Pending (its last line says how many it left out),
    then drop the oldest blockers of other tasks; never this task's, nor a person's."""
    over = _lines(notes) - MAX_NOTES_LINES
    if over > 0 and len(notes.pending) > 1:
        items = [p for p in notes.pending if not _MORE_PENDING.match(p)]
        more = sum(int(p.split()[1]) for p in notes.pending if _MORE_PENDING.match(p))
        keep = max(0, len(notes.pending) - over - 1)
        left = len(items) - keep + more
        notes.pending = items[:keep] + ([f"and {left} more pending items"] if left else [])
        over = _lines(notes) - MAX_NOTES_LINES
    while over > 0:
        others = [b for b in notes.blockers if blocker_task(b) not in (None, slug)]
        if not others:
            return
        notes.blockers.remove(others[0])
        over -= 1
