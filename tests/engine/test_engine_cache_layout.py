"""The executor's requests, as recorded (ORCH_RECORD_REQUESTS), are laid out for caching:
a byte-stable prefix from turn to turn, a moving breakpoint on the conversation, what
changes every turn after the last breakpoint (docs/models.md, "Request layout")."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from engine_support import Script, done, orch, task_events, write_calc

from orchestrator.models.anthropic_request import MAX_CACHE_BREAKPOINTS
from orchestrator.models.recording import recorded


def _flat(params: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request as cacheable blocks in prefix order: (canonical JSON, marked)."""
    out = []
    blocks = [*params.get("tools", []), *params.get("system", [])]
    for message in params["messages"]:
        blocks += [{"role": message["role"], **b} for b in message["content"]]
    for block in blocks:
        marked = "cache_control" in block
        rest = {k: v for k, v in block.items() if k != "cache_control"}
        out.append((json.dumps(rest, sort_keys=True), marked))
    return out


def _marks(params: dict[str, Any]) -> list[int]:
    return [i for i, (_, marked) in enumerate(_flat(params)) if marked]


@pytest.fixture
def executor_requests(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> list[dict[str, Any]]:
    folder = tmp_path / "requests"
    monkeypatch.setenv("ORCH_RECORD_REQUESTS", str(folder))
    script = Script()
    reads = [
        {"tool_calls": [{"name": "read_file", "input": {"path": "calc.py"}}]},
        {"tool_calls": [{"name": "read_file", "input": {"path": "tests/test_calc.py"}}]},
        {"tool_calls": [{"name": "list_files", "input": {}}]},
    ]
    script.executor = {1: [*reads, write_calc(), done()]}
    result = orch(
        "run", "Add a subtract function", "--yes", "--model", script.write(tmp_path / "s.json")
    )
    assert result.exit_code == 0, result.output
    requests = recorded(folder)
    assert [r["file"] for r in requests][:2] == ["0001-planner.json", "0002-auditor.json"]
    return [r for r in requests if r["role"] == "executor"]


def test_consecutive_executor_turns_share_a_byte_stable_prefix_up_to_the_last_breakpoint(
    executor_requests: list[dict[str, Any]],
) -> None:
    assert len(executor_requests) == 5
    for before, after in itertools.pairwise(executor_requests):
        old, new = _flat(before["params"]), _flat(after["params"])
        last = _marks(before["params"])[-1]
        # everything up to the previous request's last breakpoint is sent again unchanged
        assert [text for text, _ in old[: last + 1]] == [text for text, _ in new[: last + 1]]
        # ... and this request has a breakpoint at exactly that block, so it reads it
        assert last in _marks(after["params"])
        # and a new breakpoint further on, on the newest user turn's last stable block
        assert _marks(after["params"])[-1] > last


def test_breakpoints_stay_within_the_limit_and_the_volatile_part_comes_after_them(
    executor_requests: list[dict[str, Any]],
) -> None:
    for request in executor_requests:
        params = request["params"]
        assert request["provider"] == "scripted" and request["phase"] == 1
        assert 1 <= len(_marks(params)) <= MAX_CACHE_BREAKPOINTS
        # the task list is the newest user turn's last block, after every breakpoint
        newest = params["messages"][-1]
        assert newest["role"] == "user"
        assert newest["content"][-1]["text"].startswith("Your task list")
        assert "cache_control" not in newest["content"][-1]
        assert len(_flat(params)) - 1 > _marks(params)[-1]
        # the system prompt changes no more from turn to turn: no task list in it
        assert not any("Your task list" in part["text"] for part in params["system"])
    systems = {json.dumps(r["params"]["system"]) for r in executor_requests}
    assert len(systems) == 1


def test_the_scripted_model_logs_estimated_usage_and_cost(mini: Path, tmp_path: Path) -> None:
    script = Script()
    result = orch(
        "run", "Add a subtract function", "--yes", "--model", script.write(tmp_path / "s.json")
    )
    assert result.exit_code == 0, result.output
    events = task_events(mini)
    calls = [e.payload for e in events if e.event_type == "model_call" and "usage" in e.payload]
    assert calls and all(c["usage"]["input_tokens"] > 0 for c in calls)
    assert sum(c["usage"]["cache_read_tokens"] for c in calls) > 0
    assert all(c["usage"]["output_tokens"] > 0 for c in calls)
    assert all(c["cost_usd"] == 0 and c["estimated_cost_usd"] > 0 for c in calls)
    status = orch("status", json.loads(orch("status", "--json").output)[0]["task"], "--json")
    info = json.loads(status.output)
    assert info["tokens"]["calls"] == len(calls)
    assert info["tokens"]["estimated_cost_usd"] > 0
    assert info["phases"][0]["tokens"]["calls"] >= 2
