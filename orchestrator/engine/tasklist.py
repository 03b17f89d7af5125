"""The executor's task list: `tasks.json` in the task folder, so it survives compaction and resume.

Items have an id, a title, a status (pending | in_progress | completed | cancelled), the
phase they belong to, and `blockedBy`/`blocks` links (kept symmetric). At most one item
is in progress at a time, and an item cannot start while an item it is blocked by is not
done. Pure functions change a `TaskList`; `load`/`save` are the I/O at the edge.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from orchestrator.checks.secrets import redact_data
from orchestrator.errors import InvalidFile, UsageError
from orchestrator.schemas import errors
from orchestrator.store.fs import atomic_write


class ItemStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


STATUSES = tuple(ItemStatus)
DONE = (ItemStatus.COMPLETED, ItemStatus.CANCELLED)
MARKS = {
    ItemStatus.PENDING: "[ ]",
    ItemStatus.IN_PROGRESS: "[>]",
    ItemStatus.COMPLETED: "[x]",
    ItemStatus.CANCELLED: "[-]",
}
REMIND_AFTER_ROUNDS = 3


class TaskListError(UsageError):
    """A change the task list refuses (the model sees the message and can correct it)."""


@dataclass
class Item:
    id: str
    title: str
    status: ItemStatus = ItemStatus.PENDING
    phase: int | None = None
    blockedBy: list[str] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)
    notes: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "phase": self.phase,
            "blockedBy": list(self.blockedBy),
            "blocks": list(self.blocks),
        }
        if self.notes:
            out["notes"] = self.notes
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Item:
        return cls(
            id=str(raw["id"]),
            title=str(raw["title"]),
            status=ItemStatus(raw.get("status", ItemStatus.PENDING)),
            phase=raw.get("phase"),
            blockedBy=[str(x) for x in raw.get("blockedBy", [])],
            blocks=[str(x) for x in raw.get("blocks", [])],
            notes=str(raw.get("notes", "")),
        )


@dataclass
class TaskList:
    items: list[Item] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, "items": [i.to_dict() for i in self.items]}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TaskList:
        problems = errors("tasklist", raw)
        if problems:
            raise ValueError(problems[0])
        return cls([Item.from_dict(i) for i in raw["items"]])

    def get(self, item_id: str) -> Item:
        for item in self.items:
            if item.id == str(item_id):
                return item
        known = ", ".join(i.id for i in self.items) or "none"
        raise TaskListError(f"no task item {item_id!r} (items: {known})")

    def add(self, title: str, *, phase: int | None, blocked_by: list[str] | None = None) -> Item:
        if not title.strip():
            raise TaskListError("a task item needs a title")
        deps = [str(d) for d in blocked_by or []]
        for dep in deps:
            self.get(dep)
        item = Item(str(max((int(i.id) for i in self.items), default=0) + 1), title.strip())
        item.phase = phase
        item.blockedBy = deps
        for dep in deps:
            self.get(dep).blocks.append(item.id)
        self.items.append(item)
        return item

    def set_status(self, item_id: str, status: str, notes: str | None = None) -> Item:
        if status not in STATUSES:
            raise TaskListError(f"status must be one of {', '.join(STATUSES)}")
        new = ItemStatus(status)
        item = self.get(item_id)
        if new is ItemStatus.IN_PROGRESS:
            busy = [i for i in self.items if i.status is ItemStatus.IN_PROGRESS and i.id != item.id]
            if busy:
                raise TaskListError(
                    f"item {busy[0].id} ({busy[0].title!r}) is in progress: complete or "
                    "cancel it first; one item is in progress at a time"
                )
            waiting = [d for d in item.blockedBy if self.get(d).status not in DONE]
            if waiting:
                raise TaskListError(
                    f"item {item.id} is blocked by {', '.join(waiting)}, not done yet"
                )
        item.status = new
        if notes is not None:
            item.notes = notes
        return item

    def render(self, phase: int | None = None) -> str:
        shown = [i for i in self.items if phase is None or i.phase in (None, phase)]
        if not shown:
            return "(the task list is empty)"
        lines = []
        for i in shown:
            extra = f" (blocked by {', '.join(i.blockedBy)})" if i.blockedBy else ""
            lines.append(f"{MARKS[i.status]} {i.id}. {i.title}{extra}")
        return "\n".join(lines)


def load(path: Path) -> TaskList:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return TaskList()
    except ValueError as exc:
        raise InvalidFile(path, f"not JSON: {exc}") from None
    try:
        return TaskList.from_dict(raw)
    except ValueError as exc:
        raise InvalidFile(path, f"task list fails its schema: {exc}") from None


def save(path: Path, tasks: TaskList) -> None:
    atomic_write(
        path, json.dumps(redact_data(tasks.to_dict()), indent=2, ensure_ascii=False) + "\n"
    )
