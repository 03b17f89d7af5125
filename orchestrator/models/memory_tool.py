"""The model's memory tool (`memory_20250818`) on top of repo memory (`memories/repo/`).

The API's memory tool speaks of files under `/memories`; here `/memories` is the folder
`memories/repo/` and each `/memories/<name>.md` is one repo memory. Every write goes
through `MemoryWriter` (validation, Checklist A, the lock, MEMORY.md regeneration, the
search index), so the model writes memory under the same rules as `orch memory add`.

How the six commands map onto "memories are superseded, not overwritten":

| command | what it does |
|---|---|
| view | `/memories` lists the files (inactive ones marked); a file shows with line numbers |
| create | a new memory; `file_text` is frontmatter + fact. `supersedes: [old]` makes it a supersede of `old`; `duplicate_reason:` creates it next to a near-duplicate |
| str_replace, insert | refused: the message says to create a new memory naming the old one in `supersedes` |
| delete | marks the memory `stale` (the file stays for the audit trail; MEMORY.md drops it) |
| rename | writes the memory under the new name, superseding the old one (which is kept) |

`/memories/MEMORY.md` is read-only; paths with `..`, subfolders, other names, symlinks or
anything outside `/memories` are refused. A refusal raises `ToolInputError` (failure class
`fixable`) whose message tells the model what to do instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from orchestrator.errors import ModelError, OrchError
from orchestrator.memory.usage import record_use
from orchestrator.memory.writer import MemoryWriter, NearDuplicateFound
from orchestrator.messages import ToolSpec
from orchestrator.prompts import prompt_text
from orchestrator.store.fs import confine
from orchestrator.store.layout import INDEX_FILE, Layout
from orchestrator.store.memfile import (
    KEBAB,
    Memory,
    dump_yaml,
    first_paragraph,
    load_yaml,
    now_iso,
    parse_memory,
    split_frontmatter,
)
from orchestrator.store.repo import InvalidMemory

ROOT = "/memories"
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
REQUIRED: dict[str, tuple[tuple[str, type], ...]] = {
    "view": (("path", str),),
    "create": (("path", str), ("file_text", str)),
    "str_replace": (("path", str), ("old_str", str), ("new_str", str)),
    "insert": (("path", str), ("insert_line", int), ("insert_text", str)),
    "delete": (("path", str),),
    "rename": (("old_path", str), ("new_path", str)),
}
SET_BY_ORCH = ("status", "superseded_by", "created", "updated", "verified")
LINE_WIDTH = 6
FORMAT_HINT = (
    "file_text must be YAML frontmatter between --- lines (description, type, subject, "
    "reason, citations for project and reference memories) followed by the fact"
)

EventSink = Callable[[dict[str, Any]], None]


class ToolInputError(ModelError):
    """The model's tool input cannot be carried out; the message says what to do instead."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "fixable")


@cache
def description() -> str:
    return prompt_text("memory_tool").strip()


INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "enum": list(COMMANDS)},
        "path": {"type": "string", "description": "/memories or /memories/<name>.md"},
        "view_range": {
            "type": "array",
            "items": {"type": "integer"},
            "minItems": 2,
            "maxItems": 2,
            "description": "view: first and last line (-1: to the end)",
        },
        "file_text": {"type": "string", "description": "create: frontmatter and fact"},
        "old_str": {"type": "string"},
        "new_str": {"type": "string"},
        "insert_line": {"type": "integer"},
        "insert_text": {"type": "string"},
        "old_path": {"type": "string"},
        "new_path": {"type": "string"},
    },
    "required": ["command"],
}


class MemoryToolHandler:
    """Carries out memory tool commands on `layout`'s repo memory.

    `on_event`, when given, receives one dict per command (command, paths, ok, action,
    memory, detail) for the caller to log.
    """

    def __init__(
        self,
        layout: Layout,
        *,
        on_event: EventSink | None = None,
        task: str | None = None,
    ) -> None:
        self.layout = layout
        self.writer = MemoryWriter(layout)
        self.store = self.writer.store
        self.on_event = on_event
        self.task = task  # a memory viewed is recorded as read in this task (memory.usage)

    @staticmethod
    def spec() -> ToolSpec:
        """A plain tool named `memory` with the memory_20250818 input schema (for models
        without the native tool; it needs no repository, so it is callable on the class)."""
        return ToolSpec("memory", description(), INPUT_SCHEMA)

    def execute(self, command: dict[str, Any]) -> str:
        """Run one command; returns the text the model sees, or raises ToolInputError."""
        name = command.get("command") if isinstance(command, dict) else None
        record: dict[str, Any] = {"command": str(name), "ok": False}
        try:
            if name not in COMMANDS:
                raise ToolInputError(
                    f"unknown memory command {name!r}: use one of {', '.join(COMMANDS)}"
                )
            for key, kind in REQUIRED[name]:
                value = command.get(key)
                if not isinstance(value, kind) or isinstance(value, bool):
                    raise ToolInputError(f"memory {name} needs `{key}` ({kind.__name__})")
                if key.endswith("path"):
                    record[key] = value
            if not self.layout.initialised:
                raise ToolInputError(
                    f"{ROOT} does not exist yet: orch is not set up in this repository "
                    "(`orch init` creates it)"
                )
            handler: Callable[[dict[str, Any], dict[str, Any]], str] = getattr(self, f"_{name}")
            try:
                text = handler(command, record)
            except ToolInputError:
                raise
            except OrchError as exc:  # the store's refusals, in words for the model
                raise ToolInputError(self._explain(exc)) from exc
            except (OSError, UnicodeDecodeError) as exc:
                raise ToolInputError(f"memory {name} failed: {exc}") from exc
        except ToolInputError as exc:
            record["detail"] = exc.message
            self._emit(record)
            raise
        record["ok"] = True
        self._emit(record)
        return text

    # paths ----------------------------------------------------------------------------

    def _resolve(self, path: str) -> tuple[str | None, Path]:
        """(memory name, file) for a `/memories/...` path; name None for the folder itself,
        "MEMORY" for the index. Refuses everything else."""
        if "\x00" in path or "\\" in path:
            raise ToolInputError(f"path {path!r} is refused: it holds a NUL or a backslash")
        clean = path.rstrip("/") if path not in ("/", "") else path
        if clean == ROOT:
            return None, self._confined("")
        if not clean.startswith(ROOT + "/"):
            raise ToolInputError(f"path {path!r} is outside {ROOT}: every path starts with {ROOT}/")
        rest = clean[len(ROOT) + 1 :]
        parts = rest.split("/")
        if any(part in ("", ".", "..") for part in parts):
            raise ToolInputError(f"path {path!r} is refused: no `.`, `..` or empty parts")
        if len(parts) > 1:
            raise ToolInputError(
                f"path {path!r} is refused: memories are flat files, {ROOT}/<name>.md"
            )
        if rest == INDEX_FILE:
            return "MEMORY", self._confined(rest)
        stem, dot, ext = rest.rpartition(".")
        if not dot or ext != "md" or not KEBAB.match(stem) or len(stem) > 80:
            raise ToolInputError(
                f"path {path!r} is refused: a memory is {ROOT}/<name>.md with a kebab-case "
                "name (a-z, 0-9, single dashes)"
            )
        return stem, self._confined(rest)

    def _confined(self, rest: str) -> Path:
        folder = self.layout.repo_memories.relative_to(self.layout.root).as_posix()
        rel = f"{folder}/{rest}" if rest else folder
        try:
            target = confine(self.layout.root, rel)
        except OrchError:
            raise ToolInputError(
                f"{ROOT}/{rest} is refused: it leads outside the repository through a link"
            ) from None
        if target.is_symlink():
            raise ToolInputError(f"{ROOT}/{rest} is refused: it is a symbolic link")
        return target

    def _memory_path(self, path: str, *, purpose: str) -> tuple[str, Path]:
        name, target = self._resolve(path)
        if name is None:
            raise ToolInputError(f"{purpose} needs a memory file, {ROOT}/<name>.md, not {ROOT}")
        if name == "MEMORY":
            raise ToolInputError(
                f"{ROOT}/{INDEX_FILE} is read-only: it is generated from the memory files "
                "and rewritten whenever one changes"
            )
        return name, target

    def _existing(self, path: str, *, purpose: str) -> tuple[str, Memory]:
        name, target = self._memory_path(path, purpose=purpose)
        if not target.is_file():
            raise ToolInputError(f"{path} does not exist; `view {ROOT}` lists the memories")
        return name, self.store.get(name)

    # commands -------------------------------------------------------------------------

    def _view(self, command: dict[str, Any], record: dict[str, Any]) -> str:
        path = command["path"]
        name, target = self._resolve(path)
        if name is None:
            return self._listing()
        if not target.is_file():
            raise ToolInputError(f"{path} does not exist; `view {ROOT}` lists the memories")
        lines = target.read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        start, shown = 1, lines
        view_range = command.get("view_range")
        if view_range is not None:
            if (
                not isinstance(view_range, list)
                or len(view_range) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)
            ):
                raise ToolInputError("view_range must be two integers: [first, last] (-1: end)")
            first, last = view_range
            if first < 1 or (last != -1 and last < first):
                raise ToolInputError(f"view_range {view_range} is not a range of lines")
            start = first
            shown = lines[first - 1 : None if last == -1 else last]
        record.update(action="viewed", memory=name)
        record_use(self.layout, [name], via="read", task=self.task)
        numbered = [f"{n:>{LINE_WIDTH}}\t{line}" for n, line in enumerate(shown, start)]
        return f"Here's the content of {path} with line numbers:\n" + "\n".join(numbered)

    def _listing(self) -> str:
        folder = self.layout.repo_memories
        status = {m.name: m for m in self.store.load_all().memories}
        rows = [f"{_size(folder.stat().st_size)}\t{ROOT}"]
        for entry in sorted(folder.iterdir(), key=lambda p: p.name):
            if entry.name.startswith(".") or entry.is_symlink() or not entry.is_file():
                continue
            note = ""
            memory = status.get(entry.stem)
            if memory is not None and memory.status == "superseded":
                note = f"  [superseded by {memory.superseded_by}]"
            elif memory is not None and not memory.active:
                note = f"  [{memory.status}]"
            elif entry.name == INDEX_FILE:
                note = "  [generated index, read-only]"
            rows.append(f"{_size(entry.stat().st_size)}\t{ROOT}/{entry.name}{note}")
        header = f"Here're the files and directories up to 2 levels deep in {ROOT}, excluding hidden items:"
        return header + "\n" + "\n".join(rows)

    def _create(self, command: dict[str, Any], record: dict[str, Any]) -> str:
        path = command["path"]
        name, target = self._memory_path(path, purpose="create")
        record["memory"] = name
        if target.exists():
            raise ToolInputError(
                f"{path} exists; memories are superseded, not overwritten: create "
                f"{ROOT}/<new-name>.md with `supersedes: [{name}]` in its frontmatter"
            )
        memory, supersedes, duplicate_reason = self._parse_new(name, command["file_text"])
        if supersedes:
            old = supersedes[0]
            if not KEBAB.match(old) or not self.store.path_of(old).is_file():
                raise ToolInputError(
                    f"no memory named {old!r} to supersede; `view {ROOT}` lists the memories"
                )
            self.writer.supersede(old, memory, refuse_duplicates=True, reason=duplicate_reason)
            record.update(action="superseded", superseded=old)
            return (
                f"Created memory {name} ({ROOT}/{name}.md); it supersedes {old}, which is kept "
                "and marked superseded. MEMORY.md was regenerated."
            )
        result = self.writer.add(
            memory,
            on_duplicate="create" if duplicate_reason else "refuse",
            reason=duplicate_reason,
        )
        record.update(action="created")
        also = ""
        if result.duplicates:
            also = f" It is kept next to {', '.join(n for n, _ in result.duplicates)}."
        return f"Created memory {name} ({ROOT}/{name}.md); MEMORY.md was regenerated.{also}"

    def _str_replace(self, command: dict[str, Any], record: dict[str, Any]) -> str:
        return self._refuse_edit(command, record)

    def _insert(self, command: dict[str, Any], record: dict[str, Any]) -> str:
        return self._refuse_edit(command, record)

    def _refuse_edit(self, command: dict[str, Any], record: dict[str, Any]) -> str:
        name, memory = self._existing(command["path"], purpose=command["command"])
        record["memory"] = name
        hint = (
            f"create {ROOT}/<new-name>.md with the corrected memory and `supersedes: [{name}]` "
            f"in its frontmatter ({name} is kept and marked superseded); to retire it without "
            "a replacement, delete it (it is marked stale, not erased)"
        )
        if not memory.active:
            hint = f"{name} is already {memory.status}; nothing to correct"
        raise ToolInputError(
            f"{command['path']} was not changed: memories are superseded, not edited in place. "
            f"To correct it, {hint}."
        )

    def _delete(self, command: dict[str, Any], record: dict[str, Any]) -> str:
        path = command["path"]
        if self._resolve(path)[0] is None:
            raise ToolInputError(f"{ROOT} itself cannot be deleted")
        name, memory = self._existing(path, purpose="delete")
        record["memory"] = name
        if not memory.active:
            raise ToolInputError(f"{name} is already {memory.status}; nothing to delete")
        self.writer.update(name, status="stale", updated=now_iso())
        record.update(action="marked_stale")
        return (
            f"Marked {name} stale: MEMORY.md no longer lists it; the file stays in "
            f"{ROOT}/{name}.md as a record (memories are retired, never erased)."
        )

    def _rename(self, command: dict[str, Any], record: dict[str, Any]) -> str:
        old_name, old = self._existing(command["old_path"], purpose="rename")
        new_name, target = self._memory_path(command["new_path"], purpose="rename")
        record["memory"] = new_name
        if target.exists():
            raise ToolInputError(f"{command['new_path']} exists; choose another name")
        if not old.active:
            raise ToolInputError(f"{old_name} is {old.status}; only active memories are renamed")
        new = old.with_changes(
            name=new_name,
            created=None,
            updated=None,
            supersedes=(),
            superseded_by=None,
            verified=None,
        )
        self.writer.supersede(old_name, new, refuse_duplicates=True)
        record.update(action="renamed", superseded=old_name)
        return (
            f"Renamed {old_name} to {new_name}: {ROOT}/{new_name}.md supersedes it; "
            f"{ROOT}/{old_name}.md is kept, marked superseded."
        )

    # helpers --------------------------------------------------------------------------

    def _parse_new(self, name: str, file_text: str) -> tuple[Memory, list[str], str | None]:
        """The memory `file_text` describes, the names it supersedes, its duplicate reason."""
        fm_text, body = split_frontmatter(file_text)
        if fm_text is None:
            raise ToolInputError(f"memory {name!r} not written: {FORMAT_HINT}")
        try:
            raw = load_yaml(fm_text)
        except yaml.YAMLError as exc:
            reason = " ".join(str(exc).split())
            raise ToolInputError(f"memory {name!r} not written: broken YAML ({reason})") from None
        if not isinstance(raw, dict):
            raise ToolInputError(f"memory {name!r} not written: {FORMAT_HINT}")
        if raw.get("name", name) != name:
            raise ToolInputError(
                f"memory {name!r} not written: its frontmatter names {raw['name']!r}; "
                "the name is the file's stem"
            )
        raw["name"] = name
        for key in SET_BY_ORCH:
            raw.pop(key, None)
        duplicate_reason = raw.pop("duplicate_reason", None)
        if duplicate_reason is not None:
            duplicate_reason = str(duplicate_reason).strip() or None
        supersedes = raw.get("supersedes") or []
        if isinstance(supersedes, str):
            supersedes = [supersedes]
        if not isinstance(supersedes, list) or not all(isinstance(s, str) for s in supersedes):
            raise ToolInputError(f"memory {name!r} not written: `supersedes` is a list of names")
        if len(supersedes) > 1:
            raise ToolInputError(
                f"memory {name!r} not written: supersede one memory at a time "
                f"(it names {', '.join(supersedes)})"
            )
        raw.pop("supersedes", None)
        if not raw.get("description"):
            fact = first_paragraph(body)
            raw["description"] = re.split(r"(?<=[.!?])\s", fact, maxsplit=1)[0][:150] or name
        parsed = parse_memory("---\n" + dump_yaml(raw) + "---\n" + body, name)
        if parsed.memory is None:
            reasons = "; ".join(p.detail for p in parsed.problems)
            raise ToolInputError(f"memory {name!r} not written: {reasons}")
        memory = parsed.memory
        if memory.body and not memory.body.endswith("\n"):
            memory = memory.with_changes(body=memory.body + "\n")
        return memory, supersedes, duplicate_reason

    def _explain(self, exc: OrchError) -> str:
        if isinstance(exc, NearDuplicateFound):
            first = exc.others[0][0]
            listed = ", ".join(f"{n} (similarity {s:.2f})" for n, s in exc.others)
            return (
                f"memory not written: it near-duplicates {listed} (Checklist A). Choose one: "
                f"skip it (write nothing, {first} already holds the fact); supersede "
                f"{first} (create it with `supersedes: [{first}]` if it corrects it); or "
                "create both (add `duplicate_reason: <why both must exist>` to the frontmatter)"
            )
        if isinstance(exc, InvalidMemory):
            return f"{exc.message} ({FORMAT_HINT})"
        return exc.message

    def _emit(self, record: dict[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(record)


def _size(n: int) -> str:
    if n < 1024:
        return f"{n}B"
    size = float(n)
    for unit in "KMG":
        size /= 1024
        if size < 1024 or unit == "G":
            break
    return f"{size:.1f}{unit}"
