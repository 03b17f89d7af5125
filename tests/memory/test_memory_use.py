"""Verify before use, and ignore memory on request."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.config import MemoryConfig
from orchestrator.events.log import EventLog
from orchestrator.memory.fresh import wants_fresh_context
from orchestrator.memory.use import memories_for_prompt
from orchestrator.schemas import errors
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation


def _log(layout: Layout) -> EventLog:
    return EventLog(layout.artifacts / "t" / "observability" / "t.ndjson", "t")


def _setup(layout: Layout, put: Callable[..., Any]) -> None:
    put("timeout", "`DEFAULT_TIMEOUT` is 30 seconds.", citations=(Citation("app/main.py", 5),))
    put("parser", "Config is parsed by `parse_config()`.", subject="config parser")
    main = layout.root / "app" / "main.py"
    main.write_text(main.read_text().replace("parse_config", "read_config"))


def test_stale_memories_are_withheld_and_logged(layout: Layout, put: Callable[..., Any]) -> None:
    _setup(layout, put)
    log = _log(layout)
    got = memories_for_prompt(layout, MemoryConfig(), log, phase=2)
    assert [m.name for m in got.memories] == ["timeout"]
    assert [(s.name, s.claim) for s in got.withheld] == [("parser", "parse_config()")]
    assert "[timeout]" in got.index_text and "parser" not in got.index_text
    events = log.read(check=True)
    assert events.problems == []
    (event,) = events.events
    assert event.event_type == "memory_verification" and event.phase == 2
    assert event.payload["stale"] == 1 and event.payload["ok"] == 1
    assert event.payload["withheld"][0]["reason"] == "parse_config() is not defined in the code"


def test_stale_memories_can_be_marked_instead(layout: Layout, put: Callable[..., Any]) -> None:
    _setup(layout, put)
    got = memories_for_prompt(layout, MemoryConfig(stale_policy="mark"), _log(layout))
    assert got.withheld == [] and [s.name for s in got.stale] == ["parser"]
    line = next(x for x in got.index_text.splitlines() if "[parser]" in x)
    assert line.endswith("[STALE: parse_config() is not defined in the code]")
    assert [m.name for m in got.memories] == ["timeout"]


def test_a_fresh_context_request_gets_no_memory_tier(
    layout: Layout, put: Callable[..., Any]
) -> None:
    _setup(layout, put)
    log = _log(layout)
    got = memories_for_prompt(
        layout, MemoryConfig(), log, user_turn="Ignore memory for this one: what does main do?"
    )
    assert got.fresh_context and got.index_text == "" and got.memories == []
    (event,) = log.read(check=True).events
    assert event.payload["fresh_context"] is True and event.payload["checked"] == 0
    # the next turn reads memory again
    again = memories_for_prompt(layout, MemoryConfig(), log, user_turn="Now add a test.")
    assert not again.fresh_context and [m.name for m in again.memories] == ["timeout"]


ASKS = [
    "Ignore memory for this one.",
    "ignore your memories and look at the code",
    "Please don't use memory here",
    "do not use the memory tier",
    "Fresh context please: what does `foo` do?",
    "Start with a fresh context.",
    "Without using memory, answer this.",
    "disregard stored memories",
    "no memory this time",
    "don't rely on memory",
    "skip memory for this question",
    "Answer from a clean slate, ignore prior memories",
    "Don’t use memory.",
    "IGNORE MEMORY",
    "Let's start fresh on this bug",
    "Do not consult your memories for this.",
    "Can you answer without any memory?",
]
NEAR_MISSES = [
    "don't ignore the memory leak in the parser",
    "ignore memory usage warnings from pytest",
    "fix the memory leak",
    "We need a fresh context manager for the DB session",
    "don't use memory-mapped files",
    "Do not use memory caching for auth tokens",
    "Add a memory limit to the worker",
    "the memory tool should not ignore errors",
    "make sure memory is not ignored",
    "There is no memory leak here",
    "create a new context for each request",
    "Never ignore memory errors",
    "Please remember to update memory after this",
    "we should not ignore memory pressure",
    "Don't skip the memory tests",
]


@pytest.mark.parametrize("text", ASKS)
def test_requests_for_no_memory(text: str) -> None:
    assert wants_fresh_context(text)


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_do_not_drop_memory(text: str) -> None:
    assert not wants_fresh_context(text)


def test_payload_schemas_accept_what_is_logged_and_reject_garbage(tmp_path: Path) -> None:
    good = {
        "purpose": "prompt", "policy": "withhold", "fresh_context": False, "checked": 1,
        "ok": 1, "changed": 0, "stale": 0, "withheld": [], "marked": [],
    }  # fmt: skip
    assert errors("payloads/memory_verification", good) == []
    assert errors("payloads/memory_verification", {**good, "policy": "ignore"})
    assert errors("payloads/memory_audit", {"memories": 1})
    assert errors("payloads/memory_promotion", {"decision": "written"})
