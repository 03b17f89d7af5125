"""What the index holds: the files of the layout, read into documents by where they lie.

| kind | file | ref |
|---|---|---|
| `memory` | `memories/repo/<name>.md` | `<name>` |
| `episode` | `plans/artifacts/<slug>/episodes/<id>.json` | `<slug>/<id>` |
| `l3` | `plans/artifacts/<slug>/l3.json`, one document an item | `<slug>/<item id>` |
| `report` | `plans/artifacts/<slug>/phase-<n>-report.md` | `<slug>/phase-<n>` |
| `transcript` | `plans/artifacts/<slug>/transcripts/<n>.jsonl`, one document a line | `<slug>/<n>:<line>` |
| `summary` | `plans/artifacts/<slug>/summaries/<stem>.md` or `.json` | `<slug>/<stem>` |

Paths come from `Layout` and `TaskFolder`; reading never raises on bad content: a file
that does not parse gives what could be read (a torn last transcript line is skipped).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.checks.secrets import redact, redact_data
from orchestrator.retrieval.text import compact_json, flatten
from orchestrator.store.fs import readable
from orchestrator.store.layout import INDEX_FILE, Layout
from orchestrator.store.memfile import parse_memory
from orchestrator.store.tasks import SLUG_RX, TaskFolder, list_tasks

KINDS = ("memory", "episode", "l3", "report", "transcript", "summary")
REPORT_RX = re.compile(r"^phase-(\d+)-report\.md$")
SUMMARY_SUFFIXES = (".md", ".json")
MAX_SOURCE_BYTES = 64 * 1024 * 1024  # a file larger than this is not indexed


@dataclass(frozen=True)
class Doc:
    """One searchable document. `meta["title"]` and `meta["date"]` are indexed too."""

    kind: str
    ref: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)


def source_files(layout: Layout) -> Iterator[Path]:
    """Every file the index is built from."""
    if layout.repo_memories.is_dir():
        for path in sorted(layout.repo_memories.glob("*.md")):
            if path.name != INDEX_FILE:
                yield path
    for task in list_tasks(layout):
        yield from sorted(task.episodes.glob("*.json"))
        yield from sorted(p for p in task.path.glob("phase-*-report.md") if REPORT_RX.match(p.name))
        yield from sorted(task.transcripts.glob("*.jsonl"))
        if task.l3.is_file():
            yield task.l3
        yield from sorted(p for p in task.summaries.glob("*") if p.suffix in SUMMARY_SUFFIXES)


def source_folders(layout: Layout) -> Iterator[tuple[Path, bool]]:
    """(folder, whether its files are appended to in place) for every folder holding
    files the index is built from; a file only ever replaced whole (orch's atomic writes,
    git) changes its folder's modification time, an appended one does not."""
    yield layout.repo_memories, False
    for task in list_tasks(layout):
        yield task.path, False
        yield task.episodes, False
        yield task.transcripts, True
        yield task.summaries, False


def folder_sources(layout: Layout, folder: Path) -> list[Path]:
    """The files directly in `folder` that the index is built from (as `source_files`
    finds them: no hidden file)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    paths = (folder / name for name in names if not name.startswith("."))
    return [p for p in paths if kind_of(layout, p) is not None]


def kind_of(layout: Layout, path: Path) -> tuple[str, TaskFolder | None] | None:
    """The kind of document `path` holds (and its task), or None if the index ignores it."""
    if path.parent == layout.repo_memories:
        return ("memory", None) if path.suffix == ".md" and path.name != INDEX_FILE else None
    try:
        rel = path.relative_to(layout.artifacts)
    except ValueError:
        return None
    if len(rel.parts) < 2 or not SLUG_RX.match(rel.parts[0]):
        return None
    task = TaskFolder(layout, rel.parts[0])
    if path.parent == task.episodes and path.suffix == ".json":
        return "episode", task
    if path.parent == task.transcripts and path.suffix == ".jsonl":
        return "transcript", task
    if path.parent == task.summaries and path.suffix in SUMMARY_SUFFIXES:
        return "summary", task
    if path == task.l3:
        return "l3", task
    if path.parent == task.path and REPORT_RX.match(path.name):
        return "report", task
    return None


def read_docs(layout: Layout, path: Path) -> list[Doc]:
    """The documents `path` holds now ([] if it is gone, unreadable or not indexed), with
    any secret in them replaced by its placeholder: the index never holds one."""
    return [
        Doc(d.kind, d.ref, redact(d.text), redact_data(d.meta)) for d in _read_docs(layout, path)
    ]


def _read_docs(layout: Layout, path: Path) -> list[Doc]:
    found = kind_of(layout, path)
    if found is None:
        return []
    kind, task = found
    why, st = readable(layout.root, path)
    if why is not None or st is None or st.st_size > MAX_SOURCE_BYTES:
        return []  # a link out, a loop, a FIFO (which would hang the read), or too large
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    rel = path.relative_to(layout.root).as_posix()
    if kind == "memory":
        return [_memory_doc(text, path.stem, rel)]
    assert task is not None
    if kind == "transcript":
        return list(_transcript_docs(text, f"{task.slug}/{path.stem}", rel))
    if kind == "report":
        match = REPORT_RX.match(path.name)
        assert match is not None
        return [Doc(kind, f"{task.slug}/phase-{match.group(1)}", text, _md_meta(text, rel))]
    if kind == "summary" and path.suffix == ".md":
        return [Doc(kind, f"{task.slug}/{path.stem}", text, _md_meta(text, rel))]
    data = _json(text)
    if data is None:
        return []
    if kind == "l3":
        return list(_l3_docs(data, task.slug, rel))
    return [Doc(kind, f"{task.slug}/{path.stem}", flatten(data), _json_meta(data, rel))]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _md_meta(text: str, rel: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"path": rel}
    for line in text.splitlines():
        if line.startswith("#"):
            meta["title"] = line.lstrip("#").strip()
            break
    return meta


def _json_meta(data: Any, rel: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"path": rel}
    if isinstance(data, dict):
        for key in ("title", "summary", "text"):
            if isinstance(data.get(key), str):
                meta["title"] = data[key].strip().split("\n")[0][:200]
                break
        for key in ("created", "ts", "date"):
            if isinstance(data.get(key), str):
                meta["date"] = data[key]
                break
    return meta


def _memory_doc(text: str, name: str, rel: str) -> Doc:
    parsed = parse_memory(text, name, path=rel).memory
    if parsed is None:
        return Doc("memory", name, text, {"path": rel, "title": name})
    title = " ".join(x for x in (parsed.name, parsed.description, parsed.subject or "") if x)
    body = "\n\n".join(x for x in (parsed.body.strip(), parsed.reason or "") if x)
    return Doc(
        "memory",
        name,
        body,
        {
            "path": rel,
            "title": title,
            "type": parsed.type,
            "status": parsed.status,
            "description": parsed.description,
            **({"date": parsed.updated} if parsed.updated else {}),
        },
    )


def _l3_docs(data: Any, slug: str, rel: str) -> Iterator[Doc]:
    items = data.get("items") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict):
            continue
        item_id = str(item.get("id") or n)
        meta = _json_meta(item, rel)
        for key in ("kind", "type"):
            if isinstance(item.get(key), str):
                meta["type"] = item[key]
        if isinstance(item.get("episodes"), list):
            meta["episodes"] = item["episodes"]
        yield Doc("l3", f"{slug}/{item_id}", flatten(item), meta)


def turn_text(turn: dict[str, Any]) -> str:
    """What a transcript line says: its text, its tool calls and its tool results."""
    content = turn.get("content", "")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            parts.append(f"{block.get('name', '')} {compact_json(block.get('input', {}))}")
        elif kind == "tool_result":
            result = block.get("content", "")
            if isinstance(result, list):
                result = " ".join(str(b.get("text", "")) for b in result if isinstance(b, dict))
            parts.append(str(result))
    return "\n".join(p for p in parts if p)


def _transcript_docs(text: str, group: str, rel: str) -> Iterator[Doc]:
    for n, line in enumerate(text.splitlines(), 1):
        turn = _json(line) if line.strip() else None
        if not isinstance(turn, dict):
            continue  # a blank or torn line: skipped, the rest still counts
        meta: dict[str, Any] = {"path": rel, "line": n}
        title = turn.get("speaker") or turn.get("role")
        if isinstance(title, str):
            meta["title"] = title
        date = turn.get("ts") or turn.get("date")
        if isinstance(date, str):
            meta["date"] = date
        yield Doc("transcript", f"{group}:{n}", turn_text(turn), meta)
