"""The sandbox the agent's commands run in: what it shows, hides, keeps and kills.

Real bwrap, real processes, a real git repository with orch's records, a loopback listener.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from orchestrator.cli import cli
from orchestrator.config import PolicyConfig
from orchestrator.engine import shell
from orchestrator.engine.gates import GateContext, run_gate
from orchestrator.engine.state import PhaseState
from orchestrator.engine.tools import ExecutorTools
from orchestrator.engine.vcs import ProjectRepo
from orchestrator.messages import ToolCall
from orchestrator.sandbox import INSTALL_HINT, Mode, RunRecords, Sandbox, off_notice
from orchestrator.store.layout import Layout
from orchestrator.store.scaffold import scaffold


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("x = 1\n")
    scaffold(Layout(root))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root


def sandbox(repo: Path, **policy: object) -> Sandbox:
    return shell.sandbox_for(Layout(repo), PolicyConfig(**policy))  # type: ignore[arg-type]


def run(repo: Path, command: str, box: Sandbox | None = None, timeout: float = 20) -> str:
    result = shell.run_command(
        command, repo, timeout=timeout, output_cap=20_000, sandbox=box or sandbox(repo)
    )
    return f"{result.exit_code}\n{result.output}"


def test_the_tree_is_writable_and_git_and_records_are_not(repo: Path) -> None:
    out = run(repo, "echo new > made.txt && cat made.txt")
    assert out.splitlines() == ["0", "new"] and (repo / "made.txt").read_text() == "new\n"
    for target in (".git/HEAD", "NOTES.md", "plans/x", "memories/repo/x.md", ".orch/x"):
        out = run(repo, f"echo bad > {target}")
        assert out.startswith("2\n") and "Read-only file system" in out, target
    assert git(repo, "rev-parse", "HEAD").strip()
    assert "bad" not in (repo / "NOTES.md").read_text()
    # reading them is fine: git status works inside
    assert run(repo, "git status --short").startswith("0\n")


def test_home_is_an_empty_tmpfs_and_tmp_is_private(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Path(os.environ["HOME"])
    (home / ".bashrc").write_text("mine\n")
    (tmp_path / "sibling").mkdir()
    (tmp_path / "sibling" / "f").write_text("sibling\n")
    seen = Path("/tmp") / f"orch-sandbox-test-{os.getpid()}"
    out = run(repo, f'echo "$HOME"; ls -A ~ | wc -l; echo x >> ~/.bashrc; echo y > {seen}')
    lines = out.splitlines()
    assert lines[:3] == ["0", str(home), "0"]
    assert (home / ".bashrc").read_text() == "mine\n"
    assert not seen.exists()
    out = run(repo, "cat ../sibling/f")
    assert not out.startswith("0\n") and "No such file" in out


def test_secrets_in_the_environment_do_not_reach_the_command(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_notatoken")
    monkeypatch.setenv("PLAIN_SETTING", "kept")
    out = run(repo, "env")
    assert "sk-ant-test" not in out and "ghp_" not in out and "PLAIN_SETTING=kept" in out


class Listener:
    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.5)
        self.port = self.sock.getsockname()[1]

    def reached(self) -> bool:
        try:
            conn, _ = self.sock.accept()
        except TimeoutError:
            return False
        conn.close()
        return True


def test_no_network_unless_the_policy_allows_it(repo: Path) -> None:
    listener = Listener()
    probe = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {listener.port}), 2)\""
    )
    out = run(repo, probe)
    assert not out.startswith("0\n") and not listener.reached()
    out = run(repo, probe, sandbox(repo, network=True))
    assert out.startswith("0\n") and listener.reached()


def test_no_capabilities_so_the_read_only_binds_stay(repo: Path) -> None:
    out = run(repo, "umount .git; mount -o remount,rw .git; touch .git/x; echo done")
    assert "done" in out and not (repo / ".git" / "x").exists()
    assert run(repo, "grep CapEff /proc/self/status").split()[-1] == "0000000000000000"


def test_processes_live_in_their_own_pid_namespace(repo: Path) -> None:
    out = run(repo, "kill -9 -1; echo survived; readlink /proc/self/ns/pid")
    assert "survived" in out
    assert out.splitlines()[-1] != os.readlink("/proc/self/ns/pid")


def _running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline:
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("mode", ["bwrap", "off"])
def test_what_a_command_leaves_running_is_killed_when_it_ends(repo: Path, mode: str) -> None:
    started = time.monotonic()
    out = run(repo, "sleep 313 & sleep 314 & echo started", sandbox(repo, sandbox=mode))
    assert out.splitlines() == ["0", "started"]
    assert time.monotonic() - started < 5
    assert _running("sleep 313") == [] and _running("sleep 314") == []
    assert list((repo / ".orch" / "sandbox").glob("*.json")) == []


def test_the_time_limit_kills_the_whole_group(repo: Path) -> None:
    result = shell.run_command(
        "sleep 315 & sleep 316", repo, timeout=1, output_cap=1000, sandbox=sandbox(repo)
    )
    assert result.timed_out and result.exit_code is None and "[killed after 1 s]" in result.output
    assert _running("sleep 315") == [] and _running("sleep 316") == []


def _orch_like(repo: Path, mode: str, seconds: int) -> subprocess.Popen[bytes]:
    """A process that runs a command the way orch does, and is killed in the middle."""
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        from orchestrator.config import PolicyConfig
        from orchestrator.engine import shell
        from orchestrator.store.layout import Layout
        box = shell.sandbox_for(Layout(Path({str(repo)!r})), PolicyConfig(sandbox={mode!r}))
        shell.run_command("sleep {seconds}", Path({str(repo)!r}), timeout=60,
                          output_cap=100, sandbox=box)
        """
    )
    return subprocess.Popen([sys.executable, "-c", code])


def _wait_for(check: object, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_a_killed_orch_takes_its_sandbox_with_it(repo: Path) -> None:
    proc = _orch_like(repo, "bwrap", 317)
    assert _wait_for(lambda: _running("sleep 317"))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _wait_for(lambda: not _running("sleep 317"))


def test_a_resumed_run_kills_what_a_dead_run_left(repo: Path) -> None:
    # without the sandbox nothing ties the command to orch: the record is what finds it
    proc = _orch_like(repo, "off", 318)
    records = RunRecords.of(Layout(repo).cache)
    assert _wait_for(lambda: _running("sleep 318") and list(records.folder.glob("*.json")))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _running("sleep 318"), "a shell child outlives a SIGKILLed orch"
    killed = shell.kill_leftovers(Layout(repo))
    assert len(killed) == 1
    assert _wait_for(lambda: not _running("sleep 318"))
    assert list(records.folder.glob("*.json")) == []


def test_a_live_orchs_commands_are_left_alone(repo: Path) -> None:
    proc = _orch_like(repo, "off", 319)
    try:
        records = RunRecords.of(Layout(repo).cache)
        assert _wait_for(lambda: list(records.folder.glob("*.json")))
        assert shell.kill_leftovers(Layout(repo)) == []
        assert _running("sleep 319")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        shell.kill_leftovers(Layout(repo))


def test_without_bwrap_the_shell_tool_refuses_in_one_line(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    for tool in ("git", "sh"):  # everything but bwrap
        (empty / tool).symlink_to(shutil.which(tool) or f"/usr/bin/{tool}")
    monkeypatch.setenv("PATH", str(empty))
    tools = ExecutorTools(
        ProjectRepo(Layout(repo)),
        phase=1,
        trace_id="5ec0e7a1-0000-4000-8000-000000000002",
        policy=PolicyConfig(),
        approvals={},
        tasklist_path=repo / "plans" / "tasks.json",
    )
    result = tools.run(ToolCall("1", "run_shell", {"command": "echo hi > made.txt"}))
    assert result.is_error and result.content == INSTALL_HINT
    assert "apt-get install bubblewrap" in result.content and "\n" not in result.content
    assert not (repo / "made.txt").exists()
    ctx = GateContext(
        root=repo,
        test_command="true",
        lint_command=None,
        timeout=10,
        output_cap=1000,
        changed=[],
        diff="",
        phase=PhaseState(1),
        sandbox=sandbox(repo),
    )
    gate = run_gate("tests_pass", ctx)
    assert gate.status == "FAIL" and gate.blocked and gate.failure_class == "escalate"
    assert gate.summary == INSTALL_HINT
    # with the sandbox off the same command runs, unconfined
    off = replace(tools.sandbox, mode=Mode.OFF)
    assert shell.run_command("true", repo, timeout=5, output_cap=100, sandbox=off).ok


def test_a_bad_sandbox_setting_is_one_line_and_exit_2(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    (repo / "orch.toml").write_text('[policy]\nsandbox = "maybe"\n')
    git(repo, "add", "orch.toml")
    git(repo, "commit", "-q", "-m", "config")
    orch = Path(sys.executable).with_name("orch")
    result = subprocess.run(
        [str(orch), "run", "do something"], cwd=repo, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "Error: orch.toml.policy: sandbox must be one of bwrap, off, not 'maybe'"
    ), result.stderr
    assert list(Layout(repo).artifacts.glob("*/")) == []


def test_with_the_sandbox_off_every_run_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.engine.demo import TASK, prepare_repo, sample_paths

    with sample_paths() as (src, script):
        repo = prepare_repo(tmp_path / "wordstats", src)
        monkeypatch.chdir(repo)
        toml = repo / "orch.toml"
        toml.write_text(toml.read_text() + '\n[policy]\nsandbox = "off"\n')
        git(repo, "commit", "-qam", "sandbox off")
        result = CliRunner().invoke(cli, ["run", TASK, "--yes", "--model", f"scripted:{script}"])
    assert "COMPLETE" in result.output, result.output
    assert result.output.count(off_notice()) == 1
