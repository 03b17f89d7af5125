"""Test isolation: no test touches the network or the user's home directory."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

# Read before any test clears the environment; only tests marked `live` may use it.
LIVE_API_KEY = os.environ.get("ANTHROPIC_API_KEY") or None
LOCAL_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


class NetworkGuard:
    """The tripwire: refuses (and remembers) any connection to a host other than loopback."""

    def __init__(self) -> None:
        self.attempts: list[str] = []

    def check(self, host: Any, port: Any = None) -> None:
        if host is None or str(host) in LOCAL_HOSTS:
            return
        where = f"{host}:{port}" if port is not None else str(host)
        self.attempts.append(where)
        raise ConnectionRefusedError(
            f"test tripwire: tried to reach {where}; tests talk only to 127.0.0.1 "
            "(use the local Messages API server)"
        )


@pytest.fixture(autouse=True)
def network_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every test: a real API host (any non-loopback host) fails the test loudly."""
    guard = NetworkGuard()
    if request.node.get_closest_marker("live") is not None:
        yield guard
        return
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple):
            guard.check(address[0], address[1])
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple):
            guard.check(address[0], address[1])
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        guard.check(host.decode() if isinstance(host, bytes) else host, port)
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield guard
    if guard.attempts:
        pytest.fail(f"test tried to reach the network: {', '.join(guard.attempts)}")


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "orch tests")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "tests@orch.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "orch tests")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "tests@orch.invalid")
    for key in list(os.environ):
        if key.startswith(("ORCH_", "ANTHROPIC_")):
            monkeypatch.delenv(key, raising=False)
    # orch's state folder (the event-log key, head records): never the real one. The same
    # folder by either name, for subprocesses started without the ORCH_ variables.
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("ORCH_STATE_DIR", str(home / ".local" / "state" / "orch"))


@pytest.fixture
def git_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real, empty git repository as the current directory."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    monkeypatch.chdir(repo)
    return repo


@pytest.fixture
def live_api_key(request: pytest.FixtureRequest) -> str:
    """The real ANTHROPIC_API_KEY for tests marked `live`, which run only when asked for
    (`pytest -m live`) and with a key; otherwise they are skipped."""
    if "live" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("live test: run `pytest -m live` with ANTHROPIC_API_KEY set")
    if LIVE_API_KEY is None:
        pytest.skip("live test: set ANTHROPIC_API_KEY to run it against the real API")
    return LIVE_API_KEY
