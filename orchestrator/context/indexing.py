"""Keeping the search index in step with what context management writes.

The retrieval index (`orchestrator.retrieval`) reads transcripts, episodes, cascading
summaries and `l3.json` from the task folder itself (see its `sources.py`); this part only
tells it which files changed, through the writers' hook `index_written`, once per
`prepare`/`compact`/`close_phase` call rather than once per line. The hook never raises: the
index is a cache that its next refresh or rebuild brings up to date.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.retrieval import index_written
from orchestrator.store.layout import Layout


def episode_text(data: dict[str, Any]) -> str:
    """An episode or a short-term summary as plain text, summary first."""
    lines = [str(data.get("summary") or data.get("text") or "")]
    for d in data.get("decisions", []):
        lines.append(f"Decision: {d['decision']} Reason: {d['reason']}")
    for e in data.get("eliminated", []):
        lines.append(f"Eliminated: {e['approach']} Why: {e['why']}")
    for q in data.get("open_questions", []):
        lines.append(f"Open question: {q}")
    for f in data.get("l3", []):
        lines.append(f"Fact: {f['subject']}: {f['fact']}")
    for p in data.get("patterns", []):
        lines.append(f"Pattern: {p['subject']}: {p['pattern']}")
    for r in data.get("tool_results", []):
        lines.append(f"Tool result {r['tool']}({r['input']}): {r['result']}")
    return "\n".join(line for line in lines if line)


class Indexer:
    """Collects the files written during one call and hands them to the index at the end."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._pending: list[Path] = []

    def written(self, path: Path) -> None:
        if path not in self._pending:
            self._pending.append(path)

    def flush(self) -> None:
        if not self._pending:
            return
        paths, self._pending = self._pending, []
        index_written(self.layout, *paths)
