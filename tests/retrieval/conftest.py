"""Fixtures for the search index: an initialised repository and writers for each kind."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.memory.writer import MemoryWriter
from orchestrator.retrieval import SearchIndex, index_written
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory
from orchestrator.store.scaffold import scaffold
from orchestrator.store.tasks import TaskFolder


@pytest.fixture
def layout(git_repo: Path) -> Layout:
    layout = Layout(git_repo)
    scaffold(layout)
    return layout


@pytest.fixture
def task(layout: Layout) -> TaskFolder:
    return TaskFolder.create(layout, "add rate limiting")


@pytest.fixture
def add_memory(layout: Layout) -> Callable[..., Memory]:
    def add(name: str, fact: str, *, subject: str | None = None) -> Memory:
        memory = Memory(
            name=name,
            description=fact.split(".")[0],
            type="user",
            body=fact + "\n",
            subject=subject or name.replace("-", " "),
            reason="it matters beyond one task",
        )
        return MemoryWriter(layout).add(memory).memory

    return add


def write_json(layout: Layout, path: Path, data: Any, *, notify: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    if notify:
        index_written(layout, path)
    return path


def write_transcript(
    layout: Layout, path: Path, turns: list[tuple[str, str]], *, notify: bool = True
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"role": role, "content": [{"type": "text", "text": text}]})
        for role, text in turns
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if notify:
        index_written(layout, path)
    return path


def refs(index: SearchIndex, query: str, **kw: Any) -> list[str]:
    return [f"{h.kind}:{h.ref}" for h in index.search(query, **kw)]
