"""Fixtures for the model layer: an orch-initialised git repository, the local Messages API
and Chat Completions servers, and models pointed at them."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from chat_server import ChatServer

from orchestrator.config import Config, ModelsConfig, OpenAIConfig
from orchestrator.models import openai_adapter
from orchestrator.models.anthropic_adapter import AnthropicModel
from orchestrator.models.messages_server import MessagesServer
from orchestrator.models.openai_adapter import OpenAIModel
from orchestrator.store.layout import Layout
from orchestrator.store.scaffold import scaffold


@pytest.fixture(autouse=True)
def _no_openai_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """No OPENAI_* variable of the user's reaches a test; the once-per-process warnings
    start afresh in every test."""
    for key in list(os.environ):
        if key.startswith("OPENAI_"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(openai_adapter, "_warned", set())


@pytest.fixture
def layout(git_repo: Path) -> Layout:
    """A real git repository with orch's layout, a pyproject.toml to cite, one commit."""
    (git_repo / "pyproject.toml").write_text(
        '[project]\nname = "sample"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
        encoding="utf-8",
    )
    (git_repo / "app.py").write_text("def handler():\n    return 1\n", encoding="utf-8")
    repo_layout = Layout(git_repo)
    scaffold(repo_layout)
    subprocess.run(["git", "add", "-A"], cwd=git_repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "start"], cwd=git_repo, check=True)
    return repo_layout


@pytest.fixture
def server() -> Iterator[MessagesServer]:
    """A local Messages API server; a request it has no scripted answer for fails the test."""
    running = MessagesServer().start()
    try:
        yield running
    finally:
        running.stop()
    assert not running.unexpected, f"unscripted requests to {running.unexpected}"


@pytest.fixture
def api_env(server: MessagesServer, monkeypatch: pytest.MonkeyPatch) -> MessagesServer:
    """ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL pointing the SDK at the local server."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    return server


@pytest.fixture
def make_model(api_env: MessagesServer) -> Callable[..., AnthropicModel]:
    """AnthropicModel for `model_id` with a Config built from keyword settings."""

    def make(model_id: str = "claude-sonnet-4-5", **settings: object) -> AnthropicModel:
        context = settings.pop("context", None)
        config = Config(api_timeout=5.0, **settings)
        if context is not None:
            config = replace(config, context=replace(config.context, **context))
        return AnthropicModel(model_id, config)

    return make


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    """A local Chat Completions server; a request it has no scripted answer for fails the test."""
    running = ChatServer().start()
    try:
        yield running
    finally:
        running.stop()
    assert not running.unexpected, f"unscripted requests to {running.unexpected}"


@pytest.fixture
def openai_env(chat: ChatServer, monkeypatch: pytest.MonkeyPatch) -> ChatServer:
    """OPENAI_API_KEY set (any value: the local server checks none)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-key")
    return chat


def openai_config(chat: ChatServer, **settings: object) -> Config:
    """A Config whose `[models.openai]` points at `chat`, with keyword settings: top-level
    keys, and `openai={...}` for the table's own keys."""
    table = {"base_url": chat.base_url, **dict(settings.pop("openai", None) or {})}  # type: ignore[call-overload]
    settings.setdefault("api_timeout", 5.0)
    return Config(models=ModelsConfig(openai=OpenAIConfig(**table)), **settings)  # type: ignore[arg-type]


@pytest.fixture
def make_openai(openai_env: ChatServer) -> Callable[..., OpenAIModel]:
    """OpenAIModel for `model_id` on the local server, with a Config from keyword settings."""

    def make(model_id: str = "gpt-test-1", **settings: object) -> OpenAIModel:
        return OpenAIModel(model_id, openai_config(openai_env, **settings))

    return make
