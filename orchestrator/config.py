"""Configuration: defaults < `[tool.orch]` in pyproject.toml < `orch.toml` < ORCH_* env < flags.

Keys are flat at the top level (model, test_command...) with tables for the larger parts:
`[tool.orch.context]` (compaction and prompt budget), `[tool.orch.memory]`,
`[tool.orch.policy]` (shell commands and the sandbox), `[tool.orch.models.openai]`
(where `openai:` models are served) and `[tool.orch.budget]` (a task's spending cap) and `[tool.orch.debug]` (recorded requests). The dataclasses below declare every key and its
type; reading a value converts it by that declaration (`orchestrator.checks.schema`
reads it), so no key has code of its own. Unknown keys and values outside a key's
choices are errors naming the key, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

from orchestrator.checks.schema import Kind, OneOf, Shape, declared
from orchestrator.errors import UsageError

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


@dataclass(frozen=True)
class ContextConfig:
    mask_keep_rounds: int = 3  # tool rounds kept verbatim (past the threshold: the newest only)
    # older results are masked when this many rounds wait for it, all at once, so the
    # conversation's prefix stays byte-stable (cacheable) between batches
    mask_batch_rounds: int = 4
    compact_threshold_tokens: int = 60_000  # estimated prompt tokens that trigger compaction
    keep_recent_turns: int = 8  # raw turns kept after a compaction (L1)
    prompt_budget_tokens: int = 100_000  # the whole prompt stays under this
    fold_every_turns: int = 40  # at most one L2 episode per this many turns
    folding: Annotated[str, OneOf(("episodic", "cascading"))] = "episodic"
    server_context_editing: bool = False  # Anthropic clear_tool_uses_20250919
    server_compaction: bool = False  # Anthropic compact_20260112
    max_failed_compactions: int = 3


@dataclass(frozen=True)
class ImportanceWeights:
    """`[memory.importance]`: how a memory's importance is weighed (docs/memory.md,
    "Importance"): the weights of use, recency and type, how much the outcome of the
    phases that used it counts, each type's prior, and the quality factors."""

    use: float = 0.6
    recency: float = 0.4
    type: float = 0.3  # how much the type's prior scales the score (0: not at all)
    outcome: float = 0.5  # share of `use` that depends on the phases passing their gates
    type_user: float = 1.0
    type_feedback: float = 0.9
    type_project: float = 0.7
    type_reference: float = 0.6
    changed_factor: float = 0.8  # verified, but the cited code changed since
    moved_factor: float = 0.8  # the fact holds, but a path it names went elsewhere
    stale_factor: float = 0.2  # a claim no longer holds
    unknown_factor: float = 0.9  # not verified yet
    duplicate_factor: float = 0.7  # another active memory near-duplicates it


@dataclass(frozen=True)
class MemoryConfig:
    stale_policy: Annotated[str, OneOf(("withhold", "mark"))] = "withhold"
    related_results: int = 5  # past experiences injected at phase start
    skill_min_occurrences: int = 3
    half_life_days: float = 30.0  # a use counts half as much this many days later
    decay_after_tasks: int = 20  # unused within the last N tasks ...
    decay_after_days: float = 60.0  # ... or the last D days (the newer): a decay candidate
    decay_below: float = 0.3  # ... when its importance is also below this
    prompt_index_tokens: int = 6000  # over this, the least important memories leave a prompt
    importance: ImportanceWeights = field(default_factory=ImportanceWeights)


@dataclass(frozen=True)
class PolicyConfig:
    shell_timeout: float = 120.0
    shell_output_cap: int = 20_000
    allow_high_risk: tuple[str, ...] = ()  # regexes of commands allowed without approval
    sandbox: Annotated[str, OneOf(("bwrap", "off"))] = (
        "bwrap"  # bwrap | off: where the agent's and the gates' commands run
    )
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
class RecordsConfig:
    """`[records]`: what of orch's records goes into git."""

    commit_transcripts: bool = False  # transcripts/ git-ignored by `orch init` unless true
    commit: bool = False  # commit plans/, memories/ and NOTES.md when a task completes


@dataclass(frozen=True)
class BudgetConfig:
    """`[budget]`: what a task may spend on models (docs/engine.md, "Spending cap")."""

    # USD per task, summed from the cost_usd of its model_call events (unpriced models
    # count nothing); reaching it stops the task at WAITING_APPROVAL. None or 0: no cap.
    max_cost_usd: float | None = None


@dataclass(frozen=True)
class DebugConfig:
    """`[debug]`: what orch writes to help debug prompts (docs/models.md)."""

    # a folder: every model call's request as one JSON file (ORCH_RECORD_REQUESTS overrides)
    record_requests: str | None = None


@dataclass(frozen=True)
class Config:
    model: str = "anthropic:claude-sonnet-4-6"
    fallback_model: str | None = "anthropic:claude-haiku-4-5"
    planner_model: str | None = None
    auditor_model: str | None = None
    reviewer_model: str | None = None
    # None: the executor's model, which reads the executor's cached conversation when it
    # compacts (docs/context.md); another model gets the turns as text
    compactor_model: str | None = None
    max_tokens: int = 8192
    api_timeout: float = 120.0
    streaming: bool = True  # Messages API replies as server-sent events (False: one JSON body)
    max_retries: int = 3
    prompt_caching: bool = True
    test_command: str | None = None
    lint_command: str | None = None
    gate_timeout: float = 900.0  # seconds a phase gate's test or lint command may run
    dirty_tree: Annotated[str, OneOf(("refuse", "branch"))] = "refuse"
    max_turns_per_phase: int = 200
    # who carries out a phase: orch's own agent loop, or a Claude Code session (recorded
    # with the task when it is created; docs/integrations.md)
    executor: Annotated[str, OneOf(("orch", "claude-code"))] = "orch"
    context: ContextConfig = field(default_factory=ContextConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    models: ModelsConfig = field(default_factory=ModelsConfig)
    records: RecordsConfig = field(default_factory=RecordsConfig)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    debug: DebugConfig = field(default_factory=DebugConfig)

    def model_for(self, role: str) -> str:
        chosen = getattr(self, f"{role}_model", None)
        return chosen or self.model


def _coerce(section: Any, values: dict[str, Any], where: str) -> Any:
    """`section` with `values` (from TOML, the environment or flags) converted by the
    declared type of each key."""
    kind_of_section: type = type(section)
    keys = declared(kind_of_section)
    changes: dict[str, Any] = {}
    for key, value in values.items():
        key = key.replace("-", "_")
        shape = keys.get(key)
        if shape is None:
            raise UsageError(f"{where}: unknown setting {key!r} (known: {', '.join(sorted(keys))})")
        if shape.kind is Kind.RECORD:
            if not isinstance(value, dict):
                raise UsageError(f"{where}: {key} must be a table")
            changes[key] = _coerce(getattr(section, key), value, f"{where}.{key}")
        else:
            changes[key] = _convert(value, shape, where, key)
    return replace(section, **changes)


def _convert(value: Any, shape: Shape, where: str, key: str) -> Any:
    """One value as its key declares it; an empty string unsets a key that may be unset."""
    if value == "" and shape.nullable:
        return None
    if shape.kind is Kind.CHOICE:
        if value not in shape.choices:
            raise UsageError(
                f"{where}: {key} must be one of {', '.join(shape.choices)}, not {value!r}"
            )
        return value
    try:
        return _typed(value, shape.kind)
    except (TypeError, ValueError):
        raise UsageError(f"{where}.{key}: {value!r} is not {shape.kind.noun}") from None


def _typed(value: Any, kind: Kind) -> Any:
    if kind is Kind.BOOLEAN:
        if isinstance(value, str):
            if value.lower() in TRUE + FALSE:
                return value.lower() in TRUE
            raise ValueError(value)
        return bool(value)
    if kind is Kind.INTEGER:
        return int(value)
    if kind is Kind.NUMBER:
        return float(value)
    if kind is Kind.LIST:
        return tuple(value.split(",") if isinstance(value, str) else value)
    if kind is Kind.TEXT and not isinstance(value, str):
        raise TypeError(value)
    return value


def _anchored(config: Config, root: Path) -> Config:
    """A relative `[debug] record_requests` folder is relative to the repository."""
    where = config.debug.record_requests
    if where and not Path(where).is_absolute():
        debug = replace(config.debug, record_requests=str(root / where))
        return replace(config, debug=debug)
    return config


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
        config = _anchored(config, root)
    env = {
        name: os.environ[f"ORCH_{name.upper()}"]
        for name, shape in declared(Config).items()
        if shape.kind is not Kind.RECORD and f"ORCH_{name.upper()}" in os.environ
    }
    if env:
        config = _coerce(config, env, "environment")
    if overrides:
        config = _coerce(
            config, {k: v for k, v in overrides.items() if v is not None}, "command line"
        )
    return config
