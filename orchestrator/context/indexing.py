"""What context management writes, as documents for the retrieval index.

`documents(task)` lists every searchable document this part owns (episodes, cascading
summaries, L3 items, transcript turns) as `(kind, ref, text, meta)`, with the kinds and
refs of `docs/seams.md`; a rebuild of the index can walk it. `Indexer.update` sends one
document to `orchestrator.retrieval.SearchIndex` as it is written, when that package is
installed; the index is a rebuildable cache, so a failed update is logged, never fatal.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from typing import Any

from orchestrator.context.semantic import L3Item, load_items
from orchestrator.context.transcripts import iter_lines
from orchestrator.events.log import EventLog
from orchestrator.messages import Message, TextBlock, ToolCall, ToolResult
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder

Document = tuple[str, str, str, dict[str, Any]]


def episode_text(data: dict[str, Any]) -> str:
    """An episode or a short-term summary as plain text (summary first)."""
    lines = [str(data.get("summary") or data.get("text") or "")]
    for d in data.get("decisions", []):
        lines.append(f"Decision: {d['decision']} Reason: {d['reason']}")
    for e in data.get("eliminated", []):
        lines.append(f"Eliminated: {e['approach']} Why: {e['why']}")
    for q in data.get("open_questions", []):
        lines.append(f"Open question: {q}")
    for f in data.get("facts", []):
        lines.append(f"Fact: {f['subject']}: {f['fact']}")
    for p in data.get("patterns", []):
        lines.append(f"Pattern: {p['subject']}: {p['pattern']}")
    for r in data.get("tool_results", []):
        lines.append(f"Tool result {r['tool']}({r['input']}): {r['result']}")
    return "\n".join(line for line in lines if line)


def l3_text(item: L3Item) -> str:
    why = f" Reason: {item.reason}" if item.reason else ""
    return f"{item.kind}: {item.subject}: {item.text}{why}"


def message_text(message: Message) -> str:
    parts = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolCall):
            parts.append(f"{block.name} {json.dumps(block.input, ensure_ascii=False)}")
        elif isinstance(block, ToolResult):
            parts.append(block.content)
    return "\n".join(p for p in parts if p)


def _json_files(folder: Any, pattern: str) -> Iterator[dict[str, Any]]:
    if not folder.is_dir():
        return
    for path in sorted(folder.glob(pattern)):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            yield data


def documents(task: TaskFolder) -> Iterator[Document]:
    """Every searchable document of one task that context management wrote."""
    slug = task.slug
    for data in _json_files(task.episodes, "*.json"):
        meta = {"task": slug, "phase": data.get("phase"), "turns": data.get("turns")}
        yield ("episode", f"{slug}/{data['id']}", episode_text(data), meta)
    for data in _json_files(task.summaries, "*.json"):
        meta = {"task": slug, "phase": data.get("phase"), "summary": data.get("kind")}
        yield ("summary", f"{slug}/{data['id']}", episode_text(data), meta)
    try:
        items = load_items(task)
    except Exception:  # a broken file is the audit's finding, not the index's
        items = []
    for item in items:
        meta = {"task": slug, "kind": item.kind, "sources": list(item.sources)}
        yield ("l3", f"{slug}/{item.id}", l3_text(item), meta)
    for line in iter_lines(task):
        text = message_text(line.message)
        if text:
            meta = {"task": slug, "phase": line.phase, "role": line.message.role}
            yield ("transcript", f"{slug}/{line.number}:{line.turn}", text, meta)


class Indexer:
    """Incremental updates to the search index, when the retrieval package is installed."""

    def __init__(self, layout: Layout, log: EventLog | None = None) -> None:
        self.layout = layout
        self.log = log
        self._index: Any = None
        self._looked = False

    @property
    def available(self) -> bool:
        return self._search_index() is not None

    def _search_index(self) -> Any:
        if not self._looked:
            self._looked = True
            try:
                module = importlib.import_module("orchestrator.retrieval")
            except ImportError:
                return None
            try:
                self._index = module.SearchIndex(self.layout)
            except Exception as exc:  # an unusable index must not stop the phase
                self._report("open", exc)
        return self._index

    def _report(self, what: str, exc: Exception) -> None:
        if self.log is not None:
            self.log.append(
                "error",
                {"kind": "index_update", "detail": f"{what}: {type(exc).__name__}: {exc}"},
                agent="Compactor",
            )

    def update(self, kind: str, ref: str, text: str, meta: dict[str, Any]) -> None:
        index = self._search_index()
        if index is None:
            return
        try:
            index.update(kind, ref, text, meta)
        except Exception as exc:  # the index is a cache: a rebuild restores it
            self._report(f"{kind} {ref}", exc)
