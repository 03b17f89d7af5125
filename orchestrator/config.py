"""Configuration: defaults < `[tool.orch]` in pyproject.toml < `orch.toml` < ORCH_* env < flags.

Keys are flat at the top level (model, test_command...) with tables for the larger parts:
`[tool.orch.context]` (compaction and prompt budget), `[tool.orch.memory]`,
`[tool.orch.policy]` (shell commands) and `[tool.orch.models.openai]` (where `openai:`
models are served). Unknown keys are an error naming the key, so a typo
never silently falls back to a default.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any

from orchestrator.errors import UsageError


@dataclass(frozen=True)
class ContextConfig:
    mask_keep_rounds: int = 3  # tool rounds whose results stay verbatim
    compact_threshold_tokens: int = 60_000  # estimated prompt tokens that trigger compaction
    keep_recent_turns: int = 8  # raw turns kept after a compaction (L1)
    prompt_budget_tokens: int = 100_000  # the whole prompt stays under this
    fold_every_turns: int = 40  # at most one L2 episode per this many turns
    folding: str = "episodic"  # episodic | cascading
    server_context_editing: bool = False  # Anthropic clear_tool_uses_20250919
    server_compaction: bool = False  # Anthropic compact_20260112
    max_failed_compactions: int = 3


@dataclass(frozen=True)
class MemoryConfig:
    stale_policy: str = "withhold"  # withhold | mark
    duplicate_threshold: float = 0.85
    related_results: int = 5  # past experiences injected at phase start
    skill_min_occurrences: int = 3


@dataclass(frozen=True)
class PolicyConfig:
    shell_timeout: float = 120.0
    shell_output_cap: int = 20_000
    allow_high_risk: tuple[str, ...] = ()  # regexes of commands allowed without approval
    sandbox: str = "bwrap"  # bwrap | off: where the agent's and the gates' commands run
    network: bool = False  # the sandbox keeps its network (else it has none)
    sandbox_paths: tuple[str, ...] = ()  # more host paths shown read-only in the sandbox


@dataclass(frozen=True)
class OpenAIConfig:
    """`[models.openai]`: where `openai:<model>` models are served (docs/models.md)."""

    base_url: str | None = None  # None: $OPENAI_BASE_URL, else the OpenAI API
    api_key_env: str = "OPENAI_API_KEY"  # the environment variable that holds the key
    max_tokens_field: str = "max_completion_tokens"  # or max_tokens, for older servers


@dataclass(frozen=True)
class ModelsConfig:
    openai: OpenAIConfig = field(default_factory=OpenAIConfig)


@dataclass(frozen=True)
class Config:
    model: str = "anthropic:claude-sonnet-4-6"
    fallback_model: str | None = "anthropic:claude-haiku-4-5"
    planner_model: str | None = None
    auditor_model: str | None = None
    reviewer_model: str | None = None
    max_tokens: int = 8192
    api_timeout: float = 120.0
    streaming: bool = True  # Messages API replies as server-sent events (False: one JSON body)
    max_retries: int = 3
    prompt_caching: bool = True
    test_command: str | None = None
    lint_command: str | None = None
    gate_timeout: float = 900.0  # seconds a phase gate's test or lint command may run
    dirty_tree: str = "refuse"  # refuse | branch
    max_turns_per_phase: int = 200
    context: ContextConfig = field(default_factory=ContextConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    models: ModelsConfig = field(default_factory=ModelsConfig)

    def model_for(self, role: str) -> str:
        chosen = getattr(self, f"{role}_model", None)
        return chosen or self.model


def _coerce(section: Any, values: dict[str, Any], where: str) -> Any:
    known = {f.name: f for f in fields(section)}
    changes: dict[str, Any] = {}
    for key, value in values.items():
        key = key.replace("-", "_")
        if key not in known:
            raise UsageError(
                f"{where}: unknown setting {key!r} (known: {', '.join(sorted(known))})"
            )
        current = getattr(section, key)
        if is_dataclass(current):
            if not isinstance(value, dict):
                raise UsageError(f"{where}: {key} must be a table")
            changes[key] = _coerce(current, value, f"{where}.{key}")
            continue
        changes[key] = _convert(value, current, f"{where}.{key}")
    return replace(section, **changes)


def _convert(value: Any, current: Any, where: str) -> Any:
    try:
        if isinstance(current, bool):
            if isinstance(value, str):
                if value.lower() in ("1", "true", "yes", "on"):
                    return True
                if value.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError(value)
            return bool(value)
        if isinstance(current, int):
            return int(value)
        if isinstance(current, float):
            return float(value)
        if isinstance(current, tuple):
            return tuple(value.split(",") if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: {value!r} is not a valid {type(current).__name__}") from None
    return value if value != "" else None


def load_config(root: Path | None, overrides: dict[str, Any] | None = None) -> Config:
    """The configuration for the repository at `root` (None: defaults, env and flags only)."""
    config = Config()
    if root is not None:
        pyproject = root / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except tomllib.TOMLDecodeError as exc:
                raise UsageError(f"pyproject.toml: not valid TOML ({exc})") from None
            section = data.get("tool", {}).get("orch")
            if section:
                config = _coerce(config, section, "pyproject.toml [tool.orch]")
        orch_toml = root / "orch.toml"
        if orch_toml.is_file():
            try:
                data = tomllib.loads(orch_toml.read_text(encoding="utf-8"))
            except tomllib.TOMLDecodeError as exc:
                raise UsageError(f"orch.toml: not valid TOML ({exc})") from None
            config = _coerce(config, data, "orch.toml")
    env = {
        f.name: os.environ[f"ORCH_{f.name.upper()}"]
        for f in fields(config)
        if not is_dataclass(getattr(config, f.name)) and f"ORCH_{f.name.upper()}" in os.environ
    }
    if env:
        config = _coerce(config, env, "environment")
    if overrides:
        config = _coerce(
            config, {k: v for k, v in overrides.items() if v is not None}, "command line"
        )
    return config
