"""Models by name: `anthropic:<model id>`, `openai:<model>`, `claude-code:<model>` or
`scripted:<path>`.

`get_model` returns the named model wrapped in a `ResilientModel`: transient failures are
retried (`max_retries` from the configuration) and an unavailable model falls back to
`fallback_model`. The fallback is built only when it is first needed. A scripted model
falls back only to another scripted model (a scripted run never reaches a real API) and
waits between retries only when its script says `retry_after`.

The Anthropic adapter (`orchestrator.models.anthropic_adapter`) is the only module that
imports the `anthropic` SDK, and the OpenAI adapter (`orchestrator.models.openai_adapter`)
the only one that imports `openai` (an optional extra: `pip install 'orch[openai]'`); each
is imported only when a model of its kind is built. `claude-code:<model>` runs Claude
Code's CLI headless, one call a request (`orchestrator.models.claude_code`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from orchestrator.config import Config
from orchestrator.errors import UsageError
from orchestrator.models.recording import recorder_for
from orchestrator.models.resilient import ResilientModel
from orchestrator.models.scripted import ScriptedModel
from orchestrator.protocols import Model

MODEL_FORMS = (
    "anthropic:<model id>",
    "openai:<model>",
    "claude-code:<model>",
    "scripted:<path to a YAML or JSON script>",
)
KINDS = ("anthropic", "openai", "claude-code", "scripted")


def _kind(name: str, what: str = "model") -> str:
    kind, _, rest = name.partition(":")
    if kind not in KINDS or not rest.strip():
        raise UsageError(f"unknown {what} {name!r}: use one of {', '.join(MODEL_FORMS)}")
    return kind


def build_model(name: str, config: Config | None = None) -> Model:
    """The bare model called `name`, without retries or fallback."""
    kind = _kind(name)
    rest = name.partition(":")[2]
    if kind == "scripted":
        scripted = ScriptedModel.from_file(Path(rest))
        scripted.config = config or Config()
        scripted.recorder = recorder_for(config)
        return scripted
    if kind == "openai":
        return _openai_model(rest, config)
    if kind == "claude-code":
        from orchestrator.models.claude_code import ClaudeCodeModel

        return ClaudeCodeModel(rest)
    from orchestrator.models.anthropic_adapter import AnthropicModel

    model: Model = AnthropicModel(rest, config)
    return model


def _openai_model(model_id: str, config: Config | None) -> Model:
    try:
        from orchestrator.models.openai_adapter import OpenAIModel
    except ImportError as exc:
        if not (exc.name or "").startswith("openai"):
            raise
        raise UsageError(
            f"openai:{model_id} needs the openai package: pip install 'orch[openai]'"
        ) from None
    return OpenAIModel(model_id, config)


def get_model(name: str, config: Config | None = None) -> ResilientModel:
    """Build the model called `name` with retries and fallback; an unknown name lists the forms."""
    config = config or Config()
    kind = _kind(name)
    primary = build_model(name, config)
    fallback_name = config.fallback_model
    fallback: Callable[[], Model] | None = None
    if fallback_name and fallback_name != name:
        fallback_kind = _kind(fallback_name, "fallback_model")
        if kind != "scripted" or fallback_kind == "scripted":
            fallback = partial(build_model, fallback_name, config)
    return ResilientModel(
        primary,
        fallback,
        max_retries=config.max_retries,
        base_delay=0.0 if kind == "scripted" else 1.0,
    )
