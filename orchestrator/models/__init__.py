"""Models by name: `anthropic:<model id>` or `scripted:<path>`.

The Anthropic adapter (`orchestrator.models.anthropic_adapter`) is the only module that
imports the `anthropic` SDK, and it is imported only when an anthropic model is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.errors import UsageError

if TYPE_CHECKING:
    from orchestrator.config import Config
    from orchestrator.protocols import Model

MODEL_FORMS = ("anthropic:<model id>", "scripted:<path to a YAML or JSON script>")


def get_model(name: str, config: Config | None = None) -> Model:
    """Build the model called `name`; an unknown name lists the valid forms."""
    kind, _, rest = name.partition(":")
    if kind == "scripted" and rest:
        from orchestrator.models.scripted import ScriptedModel

        return ScriptedModel.from_file(Path(rest))
    if kind == "anthropic" and rest:
        from orchestrator.models.anthropic_adapter import AnthropicModel  # type: ignore[import-not-found]

        model: Model = AnthropicModel(rest, config)
        return model
    raise UsageError(f"unknown model {name!r}: use one of {', '.join(MODEL_FORMS)}")
