"""Task folders (tier 2): everything about one task in `plans/artifacts/<slug>/`, kept after it ends."""

from __future__ import annotations

import contextlib
import json
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

from msgspec import Struct

from orchestrator.checks.secrets import redact, redact_data
from orchestrator.errors import InvalidFile, UsageError
from orchestrator.events.log import EventLog
from orchestrator.store.fs import atomic_write, confine, file_lock
from orchestrator.store.layout import Layout
from orchestrator.store.plans import plan_problems, plan_sha, render_plan_md
from orchestrator.store.templates import template

MAX_SLUG = 48
SLUG_RX = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
VERIFIED_STATUSES = ("VERIFIED", "REGRESSED", "PENDING", "RETIRED")


def slugify(title: str, *, max_len: int = MAX_SLUG) -> str:
    """ "Add rate limiting to the API!" -> "add-rate-limiting-to-the-api" (accents dropped:
    "Café" -> "cafe"; whole words only, at most `max_len` characters)."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_title.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > max_len:
            break
        slug = candidate
    if not slug and words:
        slug = words[0][:max_len]
    if not slug:
        raise UsageError(f"cannot make a task name from {title!r}: it has no letters or digits")
    return slug


class VerifiedItem(Struct, frozen=True):
    """One row of a task's verified-items table."""

    item_id: str
    description: str
    first_verified: str
    last_verified: str
    status: str

    def row(self) -> str:
        cells = [
            self.item_id,
            self.description,
            self.first_verified,
            self.last_verified,
            self.status,
        ]
        return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _cell(text: str) -> str:
    """One table cell: on one line, pipes escaped (`load_verified` undoes the escape)."""
    return " ".join(text.split()).replace("|", "\\|")


_SEPARATOR = re.compile(r"^\|?(\s*:?-+:?\s*\|)+\s*:?-*:?\s*$")


class TaskFolder(Struct, frozen=True):
    """One task's folder under `plans/artifacts/<slug>/`, and the files in it."""

    layout: Layout
    slug: str

    # paths -----------------------------------------------------------------------------
    @property
    def path(self) -> Path:
        return self.layout.artifacts / self.slug

    @property
    def plan_json(self) -> Path:
        return self.path / "plan.json"

    @property
    def plan_md(self) -> Path:
        return self.path / "plan.md"

    @property
    def revisions(self) -> Path:
        return self.path / "revisions.md"

    @property
    def verified_items(self) -> Path:
        return self.path / "verified_items.md"

    @property
    def final_review(self) -> Path:
        return self.path / "final_review.md"

    @property
    def episodes(self) -> Path:
        return self.path / "episodes"

    @property
    def transcripts(self) -> Path:
        return self.path / "transcripts"

    @property
    def l3(self) -> Path:
        """L3 semantic memory: `{"v": 1, "items": [{"id": ..., ...}]}`, merged in place."""
        return self.path / "l3.json"

    @property
    def summaries(self) -> Path:
        """Cascading summaries: `short-0001.json`..., `long.json` (versions in `long-versions/`)."""
        return self.path / "summaries"

    @property
    def skill_proposals(self) -> Path:
        return self.path / "skill-proposals"

    @property
    def event_log_path(self) -> Path:
        return self.path / "observability" / f"{self.slug}.ndjson"

    @property
    def tasklist(self) -> Path:
        return self.path / "tasks.json"

    def conversation(self, phase_id: int) -> Path:
        """The executor's saved conversation for a phase (its resume checkpoint)."""
        return self.path / "conversations" / f"phase-{phase_id}.json"

    def phase_report(self, phase_id: int) -> Path:
        return self.path / f"phase-{phase_id}-report.md"

    # life cycle ------------------------------------------------------------------------
    @classmethod
    def create(cls, layout: Layout, title: str, *, slug: str | None = None) -> TaskFolder:
        """A new task folder; a slug already taken gets -2, -3... (claimed with an atomic mkdir)."""
        layout.require_initialised()
        base = slug or slugify(title)
        if not SLUG_RX.match(base):
            raise UsageError(f"{base!r} is not a valid task slug (kebab-case)")
        # plans/ or plans/artifacts/ may not lead out of the repository through a symlink
        confine(layout.root, (layout.artifacts / base).relative_to(layout.root).as_posix())
        for n in range(1, 1000):
            stem = base[: MAX_SLUG - len(str(n)) - 1].rstrip("-")
            candidate = base if n == 1 else f"{stem}-{n}"
            try:
                os.mkdir(layout.artifacts / candidate)
            except FileExistsError:
                continue
            return cls(layout, candidate)
        raise UsageError(f"too many tasks named {base!r}")

    @classmethod
    def open(cls, layout: Layout, slug: str) -> TaskFolder:
        if not SLUG_RX.match(slug or "") or not (layout.artifacts / slug).is_dir():
            known = ", ".join(t.slug for t in list_tasks(layout)[:10]) or "none yet"
            raise UsageError(f"no task {slug!r} (tasks: {known})")
        confine(layout.root, (layout.artifacts / slug).relative_to(layout.root).as_posix())
        return cls(layout, slug)

    def lock(self, *, wait: float = 0) -> contextlib.AbstractContextManager[None]:
        """The task's exclusive lock: one orch process works on a task at a time."""
        return file_lock(
            self.layout.locks, f"task-{self.slug}", timeout=wait, what=f"task {self.slug!r}"
        )

    def events(self, *, validate: bool = True) -> EventLog:
        return EventLog(self.event_log_path, self.slug, validate=validate)

    # plan ------------------------------------------------------------------------------
    def _rel(self, path: Path) -> str:
        return path.relative_to(self.layout.root).as_posix()

    def _plan_error(self, problems: list[str]) -> InvalidFile:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return InvalidFile(self._rel(self.plan_json), f"plan fails its schema: {problems[0]}{more}")

    def save_plan(self, plan: dict[str, Any]) -> None:
        """Validate, then write plan.json and its rendering plan.md (nothing if invalid)."""
        problems = plan_problems(plan)
        if problems:
            raise self._plan_error(problems)
        atomic_write(
            self.plan_json, json.dumps(redact_data(plan), indent=2, ensure_ascii=False) + "\n"
        )
        atomic_write(self.plan_md, redact(render_plan_md(plan)))

    def load_plan(self, *, recorded_sha: str | None = None) -> dict[str, Any]:
        """plan.json, validated. A plan whose fingerprint is `recorded_sha`, one the event
        log recorded, is not validated again: it was, before it was saved."""
        try:
            plan = json.loads(self.plan_json.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UsageError(f"task {self.slug!r} has no plan yet") from None
        except (ValueError, RecursionError) as exc:  # JSON, UTF-8, nesting
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
            raise InvalidFile(self._rel(self.plan_json), f"not JSON: {reason}") from None
        except OSError as exc:
            raise InvalidFile(self._rel(self.plan_json), f"unreadable: {exc.strerror}") from None
        if recorded_sha is not None and isinstance(plan, dict) and plan_sha(plan) == recorded_sha:
            return plan
        problems = plan_problems(plan)
        if problems:
            raise self._plan_error(problems)
        result: dict[str, Any] = plan
        return result

    # records ---------------------------------------------------------------------------
    def append_revision(self, iteration: int, text: str) -> None:
        with file_lock(self.layout.locks, f"task-{self.slug}-files"):
            try:
                current = self.revisions.read_text(encoding="utf-8")
            except FileNotFoundError:
                current = f"# Plan revisions: {self.slug}\n"
            atomic_write(
                self.revisions,
                redact(f"{current.rstrip()}\n\n## Iteration {iteration}\n\n{text.strip()}\n"),
            )

    def load_verified(self) -> list[VerifiedItem]:
        try:
            text = self.verified_items.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            reason = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)
            raise InvalidFile(self._rel(self.verified_items), reason) from None
        items = []
        previous = ""  # the table line before this one
        for line in text.splitlines():
            line = line.strip()
            if not line.startswith("|"):
                previous = ""
                continue
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            header = previous == "" and cells[:1] == ["Item ID"]
            separator = previous == "header" and _SEPARATOR.match(line)
            previous = "header" if header else "row"
            if not header and not separator and len(cells) == 5:
                items.append(VerifiedItem(*cells))
        return items

    def save_verified(self, items: list[VerifiedItem]) -> None:
        head = template(self.layout, "verified-items.md").rstrip("\n")
        atomic_write(
            self.verified_items, redact(head + "\n" + "".join(i.row() + "\n" for i in items))
        )

    def write_phase_report(self, phase_id: int, text: str) -> Path:
        atomic_write(self.phase_report(phase_id), redact(text))
        return self.phase_report(phase_id)


def list_tasks(layout: Layout) -> list[TaskFolder]:
    if not layout.artifacts.is_dir():
        return []
    return [
        TaskFolder(layout, p.name)
        for p in sorted(layout.artifacts.iterdir())
        if p.is_dir() and SLUG_RX.match(p.name)
    ]
