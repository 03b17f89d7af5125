"""Claude Code as orch's executor and as a model, with the real CLI against the scripted
local Messages API server (orchestrator/models/messages_server.py).

The tests that run the CLI are slow and skip, saying so, where `make claude-cli` has not
installed it; the others check the parts around it (the script's replies, the prompt, the
pinned version, the refusals) without it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from orchestrator.cli import cli as orch_cli
from orchestrator.engine.demo import TASK, orch_command, prepare_repo, sample_paths
from orchestrator.errors import UsageError
from orchestrator.events.log import EventLog, read_events
from orchestrator.messages import Message, Request, SystemPart, ToolCall
from orchestrator.models import get_model
from orchestrator.models.claude_code import CLAUDE_CODE_VERSION, installed_cli, prompt_of
from orchestrator.models.logging import LoggedModel
from orchestrator.models.messages_server import (
    Conversations,
    MessagesServer,
    ScriptInvalid,
    request_text,
)
from orchestrator.sandbox import bwrap_installed
from orchestrator.store.layout import Layout

# The pinned CLI `make claude-cli` put beside orch in .venv: never one from the home folder
# or the PATH, so the tests run the version they were written for.
CLI = installed_cli() if os.access(installed_cli(), os.X_OK) else None
NO_CLI = (
    "Claude Code's CLI is not installed: `make claude-cli` installs "
    f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION} (CI does)"
)
needs_cli = pytest.mark.skipif(CLI is None, reason=NO_CLI)
ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-ant-api03-" + "x7" * 45  # the shape of an Anthropic key


def run_orch(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`orch ARGS` as a subprocess in `repo`, its output captured (a real CLI session each
    phase: minutes on a loaded machine, hence the long timeout)."""
    return subprocess.run(
        orch_command(*args), cwd=repo, env=env, capture_output=True, text=True, timeout=600
    )


def body(system: str, *messages: dict[str, Any]) -> dict[str, Any]:
    return {"system": [{"type": "text", "text": system}], "messages": list(messages)}


SCRIPT = {
    "conversations": [
        {
            "when": {"contains": ["Phase 1 of 2:", "gate failed"]},
            "replies": [{"text": "retry done"}],
        },
        {
            "when": {"contains": ["Phase 1 of 2:"]},
            "replies": [
                {"tool_calls": [{"name": "Write", "input": {"file_path": "{root}/a.py"}}]},
                {"text": "first done", "usage": {"input_tokens": 5, "output_tokens": 3}},
            ],
        },
    ]
}


# the script's replies, without the CLI ------------------------------------------------------


def test_a_reply_is_chosen_by_the_request_phrases_and_its_assistant_turns() -> None:
    replies = Conversations(SCRIPT["conversations"], root="/work/p")
    first = replies.reply_for(body("... Phase 1 of 2: fix it", {"role": "user", "content": "go"}))
    assert first is not None and first["stop_reason"] == "tool_use"
    [call] = first["content"]
    assert call["name"] == "Write" and call["input"] == {"file_path": "/work/p/a.py"}
    second = replies.reply_for(
        body(
            "Phase 1 of 2:",
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"]}]},
        )
    )
    assert second is not None and second["content"] == [{"type": "text", "text": "first done"}]
    assert second["usage"] == {"input_tokens": 5, "output_tokens": 3}
    # the retry's prompt holds the gate's failure: the conversation listed first answers it
    retry = replies.reply_for(
        body(
            "Phase 1 of 2:", {"role": "user", "content": [{"type": "text", "text": "gate failed"}]}
        )
    )
    assert retry is not None and retry["content"][0]["text"] == "retry done"
    assert replies.reply_for(body("Phase 2 of 2:", {"role": "user", "content": "go"})) is None


def test_the_server_answers_from_its_conversations_and_records_what_has_no_reply() -> None:
    import http.client

    server = MessagesServer(Conversations(SCRIPT["conversations"])).start()
    try:
        host, port = server.httpd.server_address[:2]
        for system, status in (("Phase 1 of 2:", 200), ("Phase 9 of 9:", 500)):
            conn = http.client.HTTPConnection(str(host), int(port), timeout=10)
            data = json.dumps(body(system, {"role": "user", "content": "go"}))
            conn.request("POST", "/v1/messages", data, {"content-type": "application/json"})
            assert conn.getresponse().status == status
            conn.close()
    finally:
        server.stop()
    assert server.unexpected == ["/v1/messages"]


def test_a_script_without_conversations_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text("replies: []\n", encoding="utf-8")
    with pytest.raises(ScriptInvalid, match="needs a list under `conversations`"):
        Conversations.from_file(path)


def test_request_text_holds_the_system_and_the_user_turns_not_the_assistant() -> None:
    seen = request_text(
        body(
            "rules",
            {"role": "user", "content": [{"type": "text", "text": "asked"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "answered"}]},
        )
    )
    assert "rules" in seen and "asked" in seen and "answered" not in seen


def test_a_conversation_becomes_one_prompt_with_its_turns_marked() -> None:
    assert prompt_of([Message.user("just this")]) == "just this"
    prompt = prompt_of(
        [
            Message.user("plan it"),
            Message("assistant", [ToolCall("t1", "read_file", {"path": "a.py"})]),
            Message.user("the file says x"),
        ]
    )
    assert prompt.startswith("<user>\nplan it\n</user>")
    assert '[tool call read_file: {"path": "a.py"}]' in prompt
    assert prompt.endswith("Answer as the assistant's next turn.")


def test_the_make_target_installs_the_version_orch_pins() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    [pinned] = re.findall(r"^CLAUDE_CODE_VERSION := (\S+)$", makefile, re.MULTILINE)
    assert pinned == CLAUDE_CODE_VERSION
    assert "make claude-cli" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_claude_code_models_are_named_like_the_others() -> None:
    assert get_model("claude-code:claude-sonnet-4-6").name == "claude-code:claude-sonnet-4-6"
    with pytest.raises(UsageError, match="claude-code:<model>"):
        get_model("claude-code:")


def test_run_with_the_claude_code_executor_but_no_cli_says_how_to_install_it(
    project: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("ORCH_CLAUDE_CODE", str(project.root / "no-such-claude"))
    script = f"scripted:{ROOT / 'orchestrator' / 'sample' / 'script.yaml'}"
    missing = CliRunner().invoke(
        orch_cli, ["run", "do a thing", "--executor", "claude-code", "--model", script]
    )
    assert missing.exit_code == 2 and "make claude-cli" in missing.stderr
    assert not list(project.artifacts.glob("*/observability"))  # refused before any task
    unknown = CliRunner().invoke(orch_cli, ["run", "do a thing", "--executor", "codex"])
    assert unknown.exit_code == 2 and "'codex' is not one of" in unknown.stderr


# the real CLI --------------------------------------------------------------------------------


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Path:
    assert CLI is not None
    monkeypatch.setenv("ORCH_CLAUDE_CODE", str(CLI))
    return CLI


@pytest.mark.slow
@needs_cli
def test_the_claude_code_model_answers_a_text_role_in_one_headless_call(
    cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = '{"verdict": "PASS", "summary": "fine"}'
    conversations = [
        {
            "when": {"contains": ["You are the reviewer", "Review this diff"]},
            "replies": [{"text": answer, "usage": {"input_tokens": 40, "output_tokens": 9}}],
        }
    ]
    server = MessagesServer(Conversations(conversations)).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy")
    monkeypatch.chdir(tmp_path)
    log = EventLog(tmp_path / "observability" / "task.ndjson", "task")
    model = LoggedModel(get_model("claude-code:claude-sonnet-4-6"), log)
    try:
        reply = model.complete(
            Request(
                [SystemPart("You are the reviewer.")],
                [Message.user("Review this diff.")],
                purpose="reviewer",
            )
        )
    finally:
        server.stop()
    assert reply.text == answer and reply.tool_calls == []
    assert reply.usage.input_tokens == 40 and reply.usage.output_tokens == 9
    [sent] = server.message_requests
    assert sent.body["model"] == "claude-sonnet-4-6" and sent.body.get("tools", []) == []
    assert "You are the reviewer." in request_text(sent.body)
    # its configuration lives in the project's .orch/claude/, never in the home folder
    assert (tmp_path / ".orch" / "claude").is_dir()
    [event] = [e for e in log.read(check=True).events if e.event_type == "model_call"]
    assert event.payload["cost_usd"] is not None and event.payload["cost_usd"] > 0


@pytest.mark.slow
@needs_cli
def test_the_demo_with_claude_code_completes_with_two_commits_after_a_kill(
    cli: Path, tmp_path: Path
) -> None:
    where = tmp_path / "demo" / "wordstats"
    proc = subprocess.run(
        orch_command("demo", "--executor", "claude-code", "--dir", str(where), "--json"),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    info = json.loads(proc.stdout)
    assert info["state"] == "COMPLETE"
    assert [s["exit_code"] for s in info["steps"]] == [0, -9, 0]  # approve was killed
    subjects = subprocess.run(
        ["git", "log", "--format=%s"], cwd=where, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert subjects == [  # each phase committed once, the killed one too
        "Phase 2: Report the most frequent words",
        "Phase 1: Keep contractions and hyphenated words whole",
        "Initial commit: the wordstats sample",
    ]
    assert "def top_words" in (where / "wordstats" / "core.py").read_text(encoding="utf-8")
    log = read_events(Path(info["event_log"]), check=True)
    assert log.problems == []
    task = next(e for e in log.events if e.payload.get("step") == "task_created")
    assert task.payload["task"]["executor"] == "claude-code"
    sessions = [
        e.payload
        for e in log.events
        if e.event_type == "delegation" and e.payload.get("to") == "Executor"
    ]
    assert all(s["executor"] == "claude-code" and s["session_id"] for s in sessions)
    assert len({s["session_id"] for s in sessions}) == len(sessions) == 4
    # phase 1: attempt 1 fails its test gate, attempt 2 fixes it; phase 2 starts again
    # after the kill from its checkpoint, in a new session that names the one cut off
    assert [(s["phase"], s["attempt"]) for s in sessions] == [(1, 1), (1, 2), (2, 1), (2, 1)]
    assert sessions[3]["resumed_session"] == sessions[2]["session_id"]
    tools = [e.payload for e in log.events if e.event_type == "tool_call"]
    assert {"Read", "Edit", "Write", "Bash"} <= {t["tool"] for t in tools}
    assert all(t["ok"] and t["executor"] == "claude-code" for t in tools)
    calls = [
        e.payload
        for e in log.events
        if e.event_type == "model_call" and e.payload["purpose"] == "executor"
    ]
    assert len(calls) == 3 and all(c["model"].startswith("claude-code:") for c in calls)
    assert all(c["cost_usd"] > 0 and c["usage"]["input_tokens"] > 0 for c in calls)
    transcripts = where / "plans" / "artifacts" / info["task"] / "transcripts" / "claude-code"
    assert sorted(p.name for p in transcripts.iterdir()) == [
        "phase-1-attempt-1.jsonl",
        "phase-1-attempt-2.jsonl",
        "phase-2-attempt-1.jsonl",
    ]
    first = json.loads((transcripts / "phase-1-attempt-1.jsonl").read_text().splitlines()[0])
    assert first["type"] == "system" and first["session_id"] == sessions[0]["session_id"]
    assert (where / ".orch" / "claude" / "projects").is_dir()  # its sessions, in the project


@pytest.mark.slow
@needs_cli
@pytest.mark.skipif(not bwrap_installed(), reason="bubblewrap (bwrap) is not installed")
def test_claude_codes_own_bash_is_confined_by_orchs_sandbox(cli: Path, tmp_path: Path) -> None:
    """The `claude` process runs in orch's jail: its Bash tool writes the working tree, but
    not orch's records, .git, or .orch/ (its own configuration folder aside)."""
    with sample_paths() as (sample, script):
        repo = prepare_repo(tmp_path / "wordstats", sample)
        model = f"scripted:{script}"
    attempts = {
        "notes": "echo gone > NOTES.md",
        "git": "touch .git/planted",
        "plans": "touch plans/planted",
        "cache": "touch .orch/planted",
        "tree": "echo made > made.txt",
        "home": "test ! -e ~/.claude && echo home is empty",
        "secret": f"echo {SECRET}",
    }
    calls = [
        {"name": "Bash", "input": {"command": c, "description": k}} for k, c in attempts.items()
    ]
    conversations = [
        {
            "when": {"contains": ["Phase 1 of 2:"]},
            "replies": [{"tool_calls": calls}, {"text": "tried"}],
        }
    ]
    server = MessagesServer(Conversations(conversations, root=repo)).start()
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "dummy",
        "ORCH_FAULT": "executor.done",  # stop right after the session, before the gates
    }
    try:
        proc = run_orch(
            repo, env, "run", TASK, "--model", model, "--executor", "claude-code", "--yes"
        )
    finally:
        server.stop()
    assert proc.returncode == -9, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "gone" not in (repo / "NOTES.md").read_text(encoding="utf-8")  # orch's notes stay
    assert not (repo / ".git" / "planted").exists()
    assert not (repo / "plans" / "planted").exists()
    assert not (repo / ".orch" / "planted").exists()
    assert (repo / "made.txt").read_text(encoding="utf-8") == "made\n"
    [log_path] = (repo / "plans" / "artifacts").glob("*/observability/*.ndjson")
    results = {
        e.payload["input"]["description"]: e.payload["ok"]
        for e in read_events(log_path).events
        if e.event_type == "tool_call"
    }
    assert results == {
        "notes": False,
        "git": False,
        "plans": False,
        "cache": False,
        "tree": True,
        "home": True,
        "secret": True,
    }
    # the key the tool printed is in no record of orch's: not the transcript, not the log
    [transcript] = (repo / "plans" / "artifacts").glob("*/transcripts/claude-code/*.jsonl")
    written = transcript.read_text(encoding="utf-8")
    assert "home is empty" in written and SECRET not in written
    assert "[REDACTED" in written and SECRET not in log_path.read_text(encoding="utf-8")


@pytest.mark.slow
@needs_cli
def test_the_hooks_and_mcp_server_orch_init_writes_reach_the_real_cli(
    cli: Path, git_repo: Path, tmp_path: Path
) -> None:
    """`orch init --agent claude-code` in a project, then the real CLI in it: the
    SessionStart hook's context is in its first request, and orch's MCP tools are offered
    to it (behind its tool search) once the server is up."""
    for args in (("init",), ("init", "--agent", "claude-code")):
        subprocess.run(orch_command(*args), cwd=git_repo, check=True, capture_output=True)
    subprocess.run(
        orch_command("notes", "set", "--objective", "ship the frobnicator"),
        cwd=git_repo,
        check=True,
        capture_output=True,
    )
    # wait (a Bash sleep a turn) until orch's MCP tools are offered, then end
    wait = {"name": "Bash", "input": {"command": "sleep 1", "description": "wait"}}
    server = MessagesServer(
        Conversations(
            [
                {
                    "when": {"contains": "mcp__orch__memory_search"},
                    "replies": [{"text": "done"}] * 30,
                },
                {"when": {}, "replies": [{"tool_calls": [wait]}] * 30},
            ]
        )
    ).start()
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # the hooks run `orch`: the one of this interpreter
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    argv = [str(cli), "-p", "hello", "--output-format", "stream-json", "--verbose"]
    try:
        proc = subprocess.run(
            [*argv, "--allowedTools", "Bash"],
            cwd=git_repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the tools may be offered from the first request on (one request in all) or later
    first, last = server.message_requests[0], server.message_requests[-1]
    seen = request_text(first.body)
    assert "SessionStart hook additional context" in seen
    assert "ship the frobnicator" in seen  # NOTES.md, through `orch hook claude-code`
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    init = next(e for e in events if e.get("subtype") == "init")
    assert {"name": "orch", "source": "project"}.items() <= init["mcp_servers"][0].items()
    offered = json.dumps(last.body)
    assert "mcp__orch__memory_search" in offered and "mcp__orch__task_brief" in offered


@pytest.mark.slow
@needs_cli
def test_a_kill_after_a_session_ended_resumes_at_the_gates_without_a_new_session(
    cli: Path, tmp_path: Path
) -> None:
    with sample_paths() as (sample, script):
        repo = prepare_repo(tmp_path / "wordstats", sample)
        model = f"scripted:{script}"
        replies = Conversations.from_file(script.parent / "claude_code.yaml", repo)
    server = MessagesServer(replies).start()
    env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "dummy"}
    run = ("run", TASK, "--model", model, "--executor", "claude-code", "--yes")
    try:
        # the session ended, not yet recorded
        killed = run_orch(repo, {**env, "ORCH_FAULT": "executor.done"}, *run)
        resumed = run_orch(repo, env, "resume", "--json")
    finally:
        server.stop()
    assert killed.returncode == -9, killed.stdout[-2000:]
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-2000:]
    [log_path] = (repo / "plans" / "artifacts").glob("*/observability/*.ndjson")
    log = read_events(log_path, check=True)
    sessions = [
        (e.payload["phase"], e.payload["attempt"])
        for e in log.events
        if e.event_type == "delegation" and e.payload.get("to") == "Executor"
    ]
    assert sessions == [(1, 1), (1, 2), (2, 1)]  # phase 1's first session was not run again
    subjects = subprocess.run(
        ["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert subjects[:2] == [
        "Phase 2: Report the most frequent words",
        "Phase 1: Keep contractions and hyphenated words whole",
    ]
    assert len(subjects) == 3
