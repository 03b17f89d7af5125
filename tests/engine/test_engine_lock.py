"""One orch process works on a task (and in a working tree) at a time."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from engine_support import PY, Script, git

from orchestrator.engine.demo import orch_command


def wait_for(predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_second_orch_on_a_running_task_gets_task_is_locked(mini: Path, tmp_path: Path) -> None:
    # inside the tree: the gate runs in the sandbox, where nothing outside it is writable
    marker = mini / "gate-running"
    # the test gate holds the lock for a while: it signals that it runs, then sleeps
    slow = f"{PY} -c \\\"import pathlib, time; pathlib.Path('{marker}').touch(); time.sleep(30)\\\""
    (mini / "orch.toml").write_text(f'test_command = "{slow}"\nmax_retries = 0\n')
    git(mini, "commit", "-qam", "A slow test gate")
    script = Script().write(tmp_path / "script.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORCH_")}
    first = subprocess.Popen(
        orch_command("run", "Add a subtract function", "--yes", "--model", script, "--json"),
        cwd=mini,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(marker.exists)
        slug = next(mini.glob("plans/artifacts/*/observability/*.ndjson")).stem
        for args, what in (
            (("resume", slug), f"task {slug!r} is locked by another orch process"),
            (("approve", slug), f"task {slug!r} is locked by another orch process"),
            (
                ("run", "Another task", "--model", script),
                "the working tree (another orch task is running in it) is locked",
            ),
        ):
            second = subprocess.run(
                orch_command(*args), cwd=mini, env=env, capture_output=True, text=True, timeout=120
            )
            assert second.returncode == 3, second.stderr
            assert what in second.stderr and "Traceback" not in second.stderr
        assert len(list(mini.glob("plans/artifacts/*/"))) == 1  # the refused run wrote nothing
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
