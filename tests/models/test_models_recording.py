"""Recorded requests (ORCH_RECORD_REQUESTS, `[debug] record_requests`): one JSON file a
model call, in call order, holding exactly what the adapter sends, secrets redacted."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.config import load_config
from orchestrator.messages import Message, Request, SystemPart
from orchestrator.models import build_model
from orchestrator.models.anthropic_adapter import AnthropicModel
from orchestrator.models.messages_server import MessagesServer, Reply, message, text
from orchestrator.models.recording import ENV, Recorder, recorded

SECRET = "AKIAIOSFODNN7EXAMPLF"  # an AWS access key id shape
BIG = "Read before you write; run the tests after each change.\n" * 100


def request(purpose: str = "executor", note: str = "") -> Request:
    return Request(
        system=[SystemPart(BIG, cache=True, label="base")],
        messages=[Message.user(f"Add the flag. aws_access_key_id = {SECRET} {note}".strip())],
        purpose=purpose,
        phase=1,
        volatile="Your task list (tasks.json):\n[ ] 1. Add the flag",
    )


def test_anthropic_records_exactly_what_it_sends(
    make_model: Callable[..., AnthropicModel],
    server: MessagesServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV, str(tmp_path / "requests"))
    server.on_messages(Reply(message(text("ok"))), Reply(message(text("done"))))
    model = make_model("claude-sonnet-4-6", streaming=False)
    model.complete(request())
    model.complete(request("reviewer"))
    files = recorded(tmp_path / "requests")
    assert [f["file"] for f in files] == ["0001-executor.json", "0002-reviewer.json"]
    first = files[0]
    assert (first["provider"], first["role"], first["phase"]) == ("anthropic", "executor", 1)
    sent = server.message_requests[0].body
    # the body the server got is the recorded params (the SDK adds nothing but the key
    # it was given; the secret is redacted in the file only)
    assert json.dumps(first["params"]["system"]) == json.dumps(sent["system"])
    assert first["params"]["model"] == sent["model"] == "claude-sonnet-4-6"
    assert first["params"]["max_tokens"] == sent["max_tokens"]
    recorded_text = first["params"]["messages"][0]["content"][0]["text"]
    assert SECRET in sent["messages"][0]["content"][0]["text"]
    assert SECRET not in recorded_text and "[REDACTED:" in recorded_text
    assert "cache_control" in first["params"]["system"][0]
    assert first["params"]["messages"][0]["content"][-1]["text"].startswith("Your task list")


def test_scripted_models_record_the_request_the_anthropic_adapter_would_send(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "requests"
    monkeypatch.setenv(ENV, str(folder))
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"replies": [{"text": "one"}, {"text": "two"}]}))
    model = build_model(f"scripted:{script}", load_config(None))
    model.complete(request())
    model.complete(request("compactor", "again"))
    first, second = recorded(folder)
    assert (first["file"], second["file"]) == ("0001-executor.json", "0002-compactor.json")
    assert first["provider"] == "scripted" and first["model"] == f"scripted:{script}"
    assert first["params"]["model"] == f"scripted:{script}"
    assert first["params"]["system"][0]["cache_control"] == {"type": "ephemeral"}
    # redaction is deterministic: equal prefixes stay equal from file to file
    one = first["params"]["messages"][0]["content"][0]["text"]
    two = second["params"]["messages"][0]["content"][0]["text"]
    assert SECRET not in one and two.startswith(one)
    # a later process goes on numbering after the files already there
    Recorder(folder).record({"model": "m"}, provider="scripted", role="planner", phase=None)
    assert sorted(p.name for p in folder.iterdir())[-1] == "0003-planner.json"


def test_nothing_is_recorded_unless_asked_and_a_configured_folder_is_the_repos(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"replies": [{"text": "one"}]}))
    model = build_model(f"scripted:{script}", load_config(None))
    model.complete(request())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "orch.toml").write_text('[debug]\nrecord_requests = "debug/requests"\n')
    config = load_config(repo)
    assert config.debug.record_requests == str(repo / "debug" / "requests")
    build_model(f"scripted:{script}", config).complete(request())
    assert [p.name for p in (repo / "debug" / "requests").iterdir()] == ["0001-executor.json"]


def test_the_cache_bill_reads_only_at_an_exact_breakpoint_and_above_the_minimum() -> None:
    from orchestrator.models.cachesim import CacheSim, chain, ideal

    long = {"type": "text", "text": "x" * 7000}  # 2,000 tokens by the local estimate
    marked = {**long, "cache_control": {"type": "ephemeral"}}

    def params(*blocks: dict[str, str]) -> dict[str, object]:
        return {"model": "m", "messages": [{"role": "user", "content": list(blocks)}]}

    tail = {"type": "text", "text": "y" * 350}  # about 100 tokens
    c = chain(params(long, tail))
    head, whole = c.tokens[0], c.total  # about 2,000 and 2,100
    sim = CacheSim(1024)
    first = sim.bill(params(marked, tail))
    assert (first.write, first.read, first.full) == (head, 0, whole - head)
    second = sim.bill(params(marked, tail))  # the same breakpoint: read
    assert (second.read, second.full) == (head, whole - head)
    third = sim.bill(params(long, tail))  # same bytes, no breakpoint: no read
    assert third.read == 0 and third.full == whole
    small = CacheSim(1024).bill(params({**tail, "cache_control": {"type": "ephemeral"}}))
    assert small.write == 0 and small.full == whole - head  # under the minimum: not cached
    # perfect caching writes once what a later request reuses, then reads it
    best = ideal([c, chain(params(long))], 1024)
    assert (best[0].write, best[0].full, best[1].read) == (head, whole - head, head)
