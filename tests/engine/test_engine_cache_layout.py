"""The executor's requests, as recorded (ORCH_RECORD_REQUESTS), are laid out for caching:
a byte-stable prefix from turn to turn, a moving breakpoint on the conversation, what
changes every turn after the last breakpoint (docs/models.md, "Request layout"); a
compaction on the executor's model sends the executor's request again with a summary turn
after it, and one on another model falls back to the turns as text."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from engine_support import Script, done, git, orch, task_events, write_calc

from orchestrator.context.compaction import SECTIONS
from orchestrator.context.manager import SUMMARY_TOKENS
from orchestrator.models.anthropic_request import MAX_CACHE_BREAKPOINTS
from orchestrator.models.cachesim import CacheSim, chain, min_cacheable
from orchestrator.models.logging import ESTIMATE_AS
from orchestrator.models.recording import recorded
from orchestrator.prompts import prompt_text


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


SUMMARY = "\n".join(
    f"## {section}\n- {section.lower()} of the subtract work" for section in SECTIONS
)


def _compaction_run(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compactor: str | None
) -> list[dict[str, Any]]:
    """`orch run` whose executor reads a file, calls `compact`, then writes and ends; the
    requests recorded. `compactor`: a script for `compactor_model` (None: the executor's)."""
    (repo / "orch.toml").write_text(
        (repo / "orch.toml").read_text(encoding="utf-8") + "\n[context]\nkeep_recent_turns = 2\n",
        encoding="utf-8",
    )
    git(repo, "commit", "-qam", "keep two turns after a compaction")
    folder = tmp_path / "requests"
    monkeypatch.setenv("ORCH_RECORD_REQUESTS", str(folder))
    summarise = {
        "when": {"purpose": "compactor", "contains": "Conversation to summarise"},
        "replies": [{"text": SUMMARY}],
    }
    script = Script()
    script.executor = {
        1: [
            {"tool_calls": [{"name": "read_file", "input": {"path": "calc.py"}}]},
            {"tool_calls": [{"name": "compact", "input": {"reason": "calc.py is read"}}]},
        ]
    }
    # after the compaction the conversation is the summary and the `compact` round: turn 1
    after = {"when": {"purpose": "executor", "contains": "<context-summary"}}
    script.extra = [{**after, "replies": [done("unused"), write_calc(), done()]}]
    if compactor is None:
        script.extra.append(summarise)
    else:
        other = tmp_path / "compactor.json"
        other.write_text(json.dumps({"conversations": [summarise]}), encoding="utf-8")
        monkeypatch.setenv("ORCH_COMPACTOR_MODEL", f"scripted:{other}")
    result = orch(
        "run", "Add a subtract function", "--yes", "--model", script.write(tmp_path / "s.json")
    )
    assert result.exit_code == 0, result.output
    compacted = [e.payload for e in task_events(repo) if e.event_type == "compaction"]
    assert [(c["kind"], c["outcome"]) for c in compacted if c["kind"] != "fold"] == [("tool", "ok")]
    return recorded(folder)


def _summarising(requests: list[dict[str, Any]]) -> int:
    found = [
        n
        for n, r in enumerate(requests)
        if r["role"] == "compactor" and "Conversation to summarise" in json.dumps(r["params"])
    ]
    assert len(found) == 1
    return found[0]


def _lands(requests: list[dict[str, Any]], n: int) -> None:
    """The executor's next request starts with the summary as the compacted head."""
    following = next(r for r in requests[n + 1 :] if r["role"] == "executor")
    head = following["params"]["messages"][0]["content"][0]["text"]
    assert '<context-summary compaction="1" turns="0-2"' in head
    assert SUMMARY in head


def test_a_compaction_sends_the_executor_request_again_with_a_summary_turn_after_it(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = _compaction_run(mini, tmp_path, monkeypatch, None)
    n = _summarising(requests)
    executor, compactor = requests[n - 1], requests[n]
    assert executor["role"] == "executor" and compactor["model"] == executor["model"]
    old, new = _flat(executor["params"]), _flat(compactor["params"])
    last = _marks(executor["params"])[-1]
    # tools, system and conversation are byte-identical up to the executor's last breakpoint
    assert [text for text, _ in old[: last + 1]] == [text for text, _ in new[: last + 1]]
    assert len(compactor["params"]["tools"]) == len(executor["params"]["tools"])
    # ... and the compactor reads it there: a breakpoint on that very block, none after it
    assert last in _marks(compactor["params"]) and _marks(compactor["params"])[-1] == last
    assert len(_marks(compactor["params"])) <= MAX_CACHE_BREAKPOINTS
    bills = CacheSim(min_cacheable(ESTIMATE_AS))
    for r in requests[:n]:
        bills.bill(r["params"])
    bill = bills.bill(compactor["params"])
    # billed as the API would: all of it up to there is a cache read, nothing is written
    assert bill.read == chain(compactor["params"]).upto(last) > 0 and bill.write == 0
    # the executor's conversation as that request held it (the `compact` call and its
    # result, which no request wrote yet, left out); its last user turn, after the tool
    # results, carries the task list, then the ask
    held = executor["params"]["messages"]
    assert [text for text, _ in _flat({"messages": compactor["params"]["messages"][:-1]})] == [
        text for text, _ in _flat({"messages": held[:-1]})
    ]
    newest = compactor["params"]["messages"][-1]["content"]
    assert [b["type"] for b in newest[:-2]] == [
        b["type"] for b in held[-1]["content"] if b["type"] == "tool_result"
    ]
    assert newest[-2]["text"].startswith("Your task list")
    ask = newest[-1]["text"]
    assert ask.startswith("Conversation to summarise: every turn of this conversation (raw")
    assert all(f"## {section}" in ask for section in SECTIONS) and "call no tool" in ask
    assert compactor["params"]["max_tokens"] == SUMMARY_TOKENS
    _lands(requests, n)


def test_a_compactor_of_another_model_gets_the_turns_as_text_under_its_own_prompt(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = _compaction_run(mini, tmp_path, monkeypatch, "other")
    n = _summarising(requests)
    compactor = requests[n]
    assert compactor["model"] != requests[n - 1]["model"]
    params = compactor["params"]
    assert "tools" not in params
    assert [s["text"] for s in params["system"]] == [prompt_text("compactor")]
    [message] = params["messages"]
    text = message["content"][0]["text"]
    assert text.startswith("Conversation to summarise (task ")
    assert '[turn 1 · assistant calls read_file]\n{"path": "calc.py"}' in text
    _lands(requests, n)
    agents = {e.agent for e in task_events(mini) if e.event_type == "model_call"}
    assert "Compactor" in agents
