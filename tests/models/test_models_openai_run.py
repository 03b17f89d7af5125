"""A whole task through `openai:<model>`: a real `orch run --yes` process on a tiny git
repository, its model served by the local Chat Completions server (streamed replies, a
tool call whose arguments arrive in pieces), reaching COMPLETE."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from chat_server import ChatServer, Reply, completion, tool_call

from orchestrator.events.log import read_events

ORCH = Path(sys.executable).with_name("orch")
ENGINE_SUPPORT = Path(__file__).parents[1] / "engine" / "engine_support.py"
ROLES = {
    "planner": "You are the Planner of orch",
    "auditor": "You are the PlanAuditor of orch",
    "executor": "You are the Executor of orch",
    "reviewer": "You are the CodeReviewer of orch",
    "folding": "# Folding: turns into an episode",
}


def engine_support() -> ModuleType:
    """The engine tests' helpers (repository, plan, verdict and review builders)."""
    spec = importlib.util.spec_from_file_location("openai_run_engine_support", ENGINE_SUPPORT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def role_of(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    return next((role for role, marker in ROLES.items() if marker in system), "?")


def test_orch_run_completes_a_task_on_an_openai_compatible_server(
    chat: ChatServer, tmp_path: Path
) -> None:
    support = engine_support()
    repo = support.make_repo(
        tmp_path / "mini",
        support.MINI_FILES,
        f'model = "openai:local-coder"\nfallback_model = ""\nmax_retries = 0\n'
        f'test_command = "{support.TEST_CMD}"\n\n'
        f'[models.openai]\nbase_url = "{chat.base_url}"\napi_key_env = "LOCAL_LLM_KEY"\n'
        'max_tokens_field = "max_tokens"\n',
    )
    new_calc = support.ADD + "\n\n" + support.SUBTRACT
    chat.on_chat_when(ROLES["planner"], Reply(completion(support.fenced(support.plan())["text"])))
    chat.on_chat_when(
        ROLES["auditor"], Reply(completion(support.fenced(support.verdict())["text"]))
    )
    chat.on_chat_when(
        ROLES["executor"],
        Reply(
            completion(
                "Adding subtract.",
                tool_call("write_file", {"path": "calc.py", "content": new_calc}, id="call_w1"),
                prompt_tokens=900,
                completion_tokens=60,
                cached_tokens=512,
            )
        ),
        Reply(completion("Phase 1 done: subtract added.")),
    )
    review = Reply(completion(support.fenced(support.review())["text"]))
    chat.on_chat_when(ROLES["reviewer"], review, review)
    fold = {"summary": "Added subtract to calc.py; the tests pass."}
    chat.on_chat_when(ROLES["folding"], Reply(completion(json.dumps(fold))))

    env = {**os.environ, "LOCAL_LLM_KEY": "unused"}
    done = subprocess.run(
        [str(ORCH), "run", "add a subtract function", "--yes"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "COMPLETE" in done.stdout
    # what the provider lacks is said once in the whole run, on stderr
    assert done.stderr.count("no prompt-cache breakpoints") == 1, done.stderr

    # the phase is committed, with the file the model wrote through the tool call
    log = support.git(repo, "log", "--format=%s").splitlines()
    assert len(log) == 2 and log[0].startswith("Phase 1: ")
    assert (repo / "calc.py").read_text(encoding="utf-8") == new_calc

    # every role went to the server, streamed, with the key and the configured limit field
    sent = chat.chat_requests
    roles = [role_of(r.body) for r in sent]
    assert [r for r in roles if r != "folding"] == [
        "planner",
        "auditor",
        "executor",
        "executor",
        "reviewer",
        "reviewer",
    ]
    for request in sent:
        assert request.headers["authorization"] == "Bearer unused"
        assert request.body["model"] == "local-coder"
        assert request.body["stream"] is True and "max_tokens" in request.body

    # the tool call went round orch's loop with its id: the second executor request holds
    # the assistant's call and the tool's result
    second = [r.body for r in sent if role_of(r.body) == "executor"][1]
    call_turn = next(m for m in second["messages"] if m.get("tool_calls"))
    assert call_turn["tool_calls"][0]["id"] == "call_w1"
    assert json.loads(call_turn["tool_calls"][0]["function"]["arguments"])["path"] == "calc.py"
    result = next(m for m in second["messages"] if m["role"] == "tool")
    assert result["tool_call_id"] == "call_w1" and "calc.py" in result["content"]

    # the event log records the calls as the openai model's, with the server's usage
    logs = sorted(repo.glob("plans/artifacts/*/observability/*.ndjson"))
    events = read_events(logs[0], check=True)
    assert events.problems == []
    calls = [e.payload for e in events.events if e.event_type == "model_call"]
    assert all("failure_class" not in c for c in calls), calls
    assert {c["model"] for c in calls} == {"openai:gpt-test-1"}
    first_executor = next(c for c in calls if c["purpose"] == "executor")
    assert first_executor["tool_calls"] == ["write_file"]
    assert first_executor["usage"] == {
        "input_tokens": 388,
        "output_tokens": 60,
        "cache_read_tokens": 512,
        "cache_write_tokens": 0,
    }
    assert first_executor["cost_usd"] is None  # no price is known for this model
