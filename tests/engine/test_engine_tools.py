"""The executor's tools, the shell policy and the task list, on a real repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_support import Script, done, write_calc

from orchestrator.config import PolicyConfig
from orchestrator.engine import tasklist
from orchestrator.engine.api import Options, start
from orchestrator.engine.enums import Gate
from orchestrator.engine.exceptions import NeedsApproval
from orchestrator.engine.executor import rounds_since_tasks_update
from orchestrator.engine.parts import Parts
from orchestrator.engine.shell import classify
from orchestrator.engine.tools import ExecutorTools, ReadOnlyTools, approval_key
from orchestrator.engine.vcs import ProjectRepo
from orchestrator.messages import Message, Reply, Request, ToolCall
from orchestrator.store.layout import Layout

TRACE = "3f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"


def tools(repo: Path, **policy: object) -> ExecutorTools:
    return ExecutorTools(
        ProjectRepo(Layout(repo)),
        phase=1,
        trace_id=TRACE,
        policy=PolicyConfig(**policy),  # type: ignore[arg-type]
        approvals={},
        tasklist_path=repo / "plans" / "artifacts" / "t" / "tasks.json",
    )


def call(t: ReadOnlyTools, name: str, **args: object) -> tuple[str, bool]:
    result = t.run(ToolCall("id1", name, dict(args)))
    return result.content, result.is_error


def test_list_read_and_search(mini: Path) -> None:
    t = tools(mini)
    (mini / "__pycache__").mkdir()
    (mini / "__pycache__" / "x.pyc").write_bytes(b"\0\1")
    listing, err = call(t, "list_files")
    assert not err and "calc.py" in listing.split() and "__pycache__/x.pyc" not in listing
    assert call(t, "list_files", glob="test_*.py")[0] == "tests/test_calc.py"
    text, err = call(t, "read_file", path="calc.py")
    assert not err and text.splitlines()[0] == "     1\tdef add(a, b):"
    assert call(t, "read_file", path="calc.py", offset=2, limit=1)[0].startswith("     2\t")
    hits, _ = call(t, "search", pattern=r"def \w+", glob="*.py")
    assert "calc.py:1: def add(a, b):" in hits and "tests/test_calc.py:7:" in hits
    assert call(t, "search", pattern="(")[1] is True
    assert call(t, "read_file", path="missing.py") == ("no file 'missing.py'", True)


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "a/../../b"])
def test_paths_outside_the_repository_are_refused(mini: Path, path: str) -> None:
    text, err = call(tools(mini), "read_file", path=path)
    assert err and "outside the repository" in text
    text, err = call(tools(mini), "write_file", path=path, content="x")
    assert err and "outside the repository" in text


@pytest.mark.parametrize(
    "path", ["plans/artifacts/x.md", "memories/repo/a.md", "NOTES.md", ".git/config", ".orch/x"]
)
def test_orchs_own_records_are_not_edited_with_file_tools(mini: Path, path: str) -> None:
    text, err = call(tools(mini), "write_file", path=path, content="x")
    assert err and "orch's own records" in text


def test_write_and_edit(mini: Path) -> None:
    t = tools(mini)
    assert call(t, "write_file", path="pkg/new.py", content="a = 1\na = 1\n")[0].startswith(
        "created"
    )
    assert (mini / "pkg" / "new.py").read_text() == "a = 1\na = 1\n"
    text, err = call(t, "edit_file", path="pkg/new.py", old_string="a = 1", new_string="a = 2")
    assert err and "occurs 2 times" in text
    assert not call(
        t, "edit_file", path="pkg/new.py", old_string="a = 1", new_string="a = 2", replace_all=True
    )[1]
    assert (mini / "pkg" / "new.py").read_text() == "a = 2\na = 2\n"
    text, err = call(t, "edit_file", path="pkg/new.py", old_string="zzz", new_string="y")
    assert err and "does not occur" in text
    assert call(t, "no_such_tool")[1] is True


def test_shell_output_exit_code_time_limit_and_cap(mini: Path) -> None:
    t = tools(mini, shell_timeout=1.0, shell_output_cap=2000)
    text, err = call(t, "run_shell", command="echo hello && echo oops >&2")
    assert not err and text.splitlines() == ["exit code 0", "hello", "oops"]
    text, err = call(t, "run_shell", command="exit 3")
    assert err and text.startswith("exit code 3")
    text, err = call(t, "run_shell", command="sleep 20")
    assert err and "timed out" in text and "[killed after 1 s]" in text
    text, err = call(t, "run_shell", command="python3 -c \"print('x' * 50000)\"")
    assert len(text) < 2200 and "characters cut" in text


def test_a_high_risk_command_stops_unless_approved_or_allowed(mini: Path) -> None:
    (mini / "victim.txt").write_text("x")
    t = tools(mini)
    with pytest.raises(NeedsApproval) as stop:
        call(t, "run_shell", command="rm victim.txt")
    assert stop.value.request.key == approval_key(TRACE, 1, "rm victim.txt")
    assert stop.value.request.rule == "delete"
    assert stop.value.gate is not None and stop.value.gate.gate is Gate.HIGH_RISK_APPROVAL_GATE
    assert (mini / "victim.txt").exists()
    t.approvals[approval_key(TRACE, 1, "rm victim.txt")] = False
    text, err = call(t, "run_shell", command="rm victim.txt")
    assert err and "denied" in text and (mini / "victim.txt").exists()
    t.approvals[approval_key(TRACE, 1, "rm victim.txt")] = True
    assert call(t, "run_shell", command="rm victim.txt")[1] is False
    assert not (mini / "victim.txt").exists()
    allowed = tools(mini, allow_high_risk=(r"rm -f build/.*",))
    assert call(allowed, "run_shell", command="rm -f build/x")[1] is False


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("rm -rf build", "delete"),
        ("ls && rm x", "delete"),
        ("find . -name '*.tmp' -delete", "delete"),
        ("git push --force origin main", "history"),
        ("git push origin +main", "history"),
        ("git reset --hard HEAD~1", "history"),
        ("git rebase -i HEAD~3", "history"),
        ("git commit --amend -m x", "history"),
        ("git clean -fdx", "history"),
        ("git checkout -- .", "history"),
        ("sudo make install", "privilege"),
        ("cat /etc/passwd", "outside"),
        ("cp notes.txt ../elsewhere/", "outside"),
        ("echo hi > /tmp/out.txt", "outside"),
        ("cd / && ls", "outside"),
        ("FOO=1 rm x", "delete"),
    ],
)
def test_the_policy_names_high_risk_commands(mini: Path, command: str, rule: str) -> None:
    risk = classify(command, mini)
    assert risk is not None and risk.rule == rule, command


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "git status --short",
        "git diff --stat",
        "git log -3",
        "python3 -m unittest -q",
        "grep -rn '/api/v1' src",
        "echo hi > out.txt 2>&1",
        "cat tests/test_calc.py | head",
        "pytest -q 2>/dev/null",
        "git push origin feature",
    ],
)
def test_the_policy_lets_ordinary_commands_run(mini: Path, command: str) -> None:
    assert classify(command, mini) is None


def test_the_task_list_keeps_its_rules_on_disk(mini: Path) -> None:
    t = tools(mini)
    assert "added item 1" in call(t, "tasks", op="add", title="first")[0]
    assert "added item 2" in call(t, "tasks", op="add", title="second", blockedBy=["1"])[0]
    text, err = call(t, "tasks", op="update", id="2", status="in_progress")
    assert err and "blocked by 1" in text
    assert not call(t, "tasks", op="update", id="1", status="in_progress")[1]
    text, err = call(t, "tasks", op="add", title="third")
    text, err = call(t, "tasks", op="update", id="3", status="in_progress")
    assert err and "one item is in progress at a time" in text
    call(t, "tasks", op="update", id="1", status="completed")
    assert not call(t, "tasks", op="update", id="2", status="in_progress")[1]
    listing = call(t, "tasks", op="list")[0]
    assert "[x] 1. first" in listing and "[>] 2. second (blocked by 1)" in listing
    saved = json.loads(t.tasklist_path.read_text())
    assert saved["items"][0]["blocks"] == ["2"] and saved["items"][1]["blockedBy"] == ["1"]
    assert tasklist.load(t.tasklist_path).get("2").status == "in_progress"
    assert call(t, "tasks", op="add", title="x", blockedBy=["9"])[1] is True


def test_rounds_since_the_task_list_was_updated() -> None:
    def turn(*names: str) -> Message:
        return Message(
            "assistant",
            [
                ToolCall(f"id{i}", n, {"op": "add"} if n == "tasks" else {})
                for i, n in enumerate(names)
            ],
        )

    user = Message.user("go")
    assert rounds_since_tasks_update([user]) == 0
    assert rounds_since_tasks_update([user, turn("tasks"), turn("read_file")]) == 1
    assert rounds_since_tasks_update([user, turn("read_file")] * 3) == 3


class Recorder:
    def __init__(self, inner, seen: list[Request]) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.name, self.seen = inner, inner.name, seen

    def complete(self, request: Request) -> Reply:
        self.seen.append(request)
        reply: Reply = self.inner.complete(request)
        return reply

    def count_tokens(self, request: Request) -> int:
        return 0


def test_the_prompt_reminds_the_executor_of_a_stale_task_list(mini: Path, tmp_path: Path) -> None:
    look = {"tool_calls": [{"name": "read_file", "input": {"path": "calc.py"}}]}
    add = {"tool_calls": [{"name": "tasks", "input": {"op": "add", "title": "subtract"}}]}
    script = Script()
    script.executor[1] = [add, look, look, look, write_calc(), done()]
    seen: list[Request] = []
    parts = Parts(wrap_model=lambda model, log, agent, phase: Recorder(model, seen))
    env = start(
        Layout(mini),
        "Add a subtract function",
        auto_approve=True,
        model=script.write(tmp_path / "s.json"),
        options=Options(parts=parts),
    )
    assert env.state.done
    executor = [r for r in seen if r.purpose == "executor"]
    # the task list and its reminder change every turn: they travel after the cached
    # prefix, as the newest user turn's last part (Request.volatile), not in the system
    volatile = [r.volatile for r in executor]
    assert ["Reminder" in v for v in volatile] == [False, False, False, False, True, True]
    assert "[ ] 1. subtract" in volatile[1]
    assert not any("Your task list (tasks.json)" in p.text for r in executor for p in r.system)
    assert executor[0].system[1].label == "phase-card" and executor[0].system[1].cache
