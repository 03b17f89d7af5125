"""Session scratch (tier 1): `memories/session/<task-slug>-notes.md`, git-ignored.

Five headings, from the session-notes template: Current State, Files and Functions,
Errors & Corrections, Key Results, Worklog. Cleared when a session ends.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path

from orchestrator.checks.secrets import redact
from orchestrator.errors import InvalidFile, UsageError
from orchestrator.store.fs import atomic_write, confine, file_lock
from orchestrator.store.layout import Layout
from orchestrator.store.templates import fill, template

HEADINGS = (
    "Current State",
    "Files and Functions",
    "Errors & Corrections",
    "Key Results",
    "Worklog",
)


SLUG_RX = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass
class SessionNotes:
    layout: Layout
    slug: str

    def __post_init__(self) -> None:
        if not SLUG_RX.match(self.slug or ""):
            raise UsageError(f"{self.slug!r} is not a task name (kebab-case: a-z, 0-9, dashes)")

    @property
    def path(self) -> Path:
        """The notes file; refused (PathEscape) if a symlink would take it out of the repo."""
        path = self.layout.session_notes(self.slug)
        confine(self.layout.root, path.relative_to(self.layout.root).as_posix())
        return path

    def exists(self) -> bool:
        return self.path.is_file()

    def ensure(self, title: str = "") -> None:
        if not self.exists():
            text = fill(template(self.layout, "session-notes.md"), title=title or self.slug)
            atomic_write(self.path, redact(text))

    def text(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UsageError(f"no session notes for task {self.slug!r}") from None
        except (OSError, UnicodeDecodeError) as exc:
            reason = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)
            raise InvalidFile(self._rel(), reason) from None

    def _rel(self) -> str:
        return self.layout.session_notes(self.slug).relative_to(self.layout.root).as_posix()

    def _lock(self) -> contextlib.AbstractContextManager[None]:
        return file_lock(self.layout.locks, f"session-{self.slug}", what="the session notes")

    def sections(self) -> dict[str, str]:
        return split_sections(self.text())

    def _edit(self, heading: str, change: str, *, replace: bool) -> None:
        if heading not in HEADINGS:
            raise UsageError(f"unknown session heading {heading!r} (one of {', '.join(HEADINGS)})")
        with self._lock():
            self.ensure()
            text = self.text()
            sections = split_sections(text)
            change = re.sub(r"^#{1,2}(?=\s)", "###", change, flags=re.MULTILINE)  # keep the five
            body = (
                change.strip()
                if replace
                else "\n".join(filter(None, [sections.get(heading, ""), change.strip()]))
            )
            atomic_write(self.path, redact(replace_section(text, heading, body)))

    def set(self, heading: str, body: str) -> None:
        self._edit(heading, body, replace=True)

    def append(self, heading: str, line: str) -> None:
        self._edit(
            heading, line if line.lstrip().startswith(("-", "*")) else f"- {line}", replace=False
        )

    def clear(self) -> bool:
        """Delete the notes (a session ended); False if there were none."""
        with self._lock():
            try:
                self.path.unlink()
            except FileNotFoundError:
                return False
        return True


def split_sections(text: str) -> dict[str, str]:
    """{heading: body text} for every `## heading` in `text`."""
    out: dict[str, str] = {}
    parts = re.split(r"^## +(.+?)\s*$", text, flags=re.MULTILINE)
    for i in range(1, len(parts), 2):
        out[parts[i]] = parts[i + 1].strip()
    return out


def replace_section(text: str, heading: str, body: str) -> str:
    pattern = re.compile(
        rf"^## +{re.escape(heading)}\s*$\n(.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL
    )
    block = f"## {heading}\n" + (f"{body}\n\n" if body else "\n")
    if pattern.search(text):
        return pattern.sub(lambda _: block, text, count=1).rstrip("\n") + "\n"
    return text.rstrip("\n") + f"\n\n{block}".rstrip("\n") + "\n"


def session_slugs(layout: Layout) -> list[str]:
    """Tasks that have session notes (files whose name is not `<slug>-notes.md` are ignored)."""
    if not layout.session.is_dir():
        return []
    slugs = (p.name[: -len("-notes.md")] for p in layout.session.glob("*-notes.md"))
    return sorted(s for s in slugs if SLUG_RX.match(s))
