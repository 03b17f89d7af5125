"""Configuration: every value is converted by its key's declared type, from TOML and from
the environment; a wrong key or value is one clear error naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.config import Config, ContextConfig, PolicyConfig, load_config
from orchestrator.errors import UsageError


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.write_text(text, encoding="utf-8")
    return root


def test_defaults_without_any_file(tmp_path: Path) -> None:
    assert load_config(tmp_path) == Config()
    assert load_config(None) == Config()


def test_orch_toml_wins_over_pyproject_and_tables_nest(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.orch]\nmax_tokens = 100\ntest_command = "make"\n')
    write(
        tmp_path,
        "orch.toml",
        'max-tokens = 200\n[context]\nfolding = "cascading"\n[policy]\nallow_high_risk = ["^rm "]\n',
    )
    config = load_config(tmp_path)
    assert config.max_tokens == 200 and config.test_command == "make"
    assert config.context == ContextConfig(folding="cascading")
    assert config.policy == PolicyConfig(allow_high_risk=("^rm ",))


def test_environment_strings_become_the_declared_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCH_STREAMING", "off")
    monkeypatch.setenv("ORCH_MAX_RETRIES", "5")
    monkeypatch.setenv("ORCH_API_TIMEOUT", "2.5")
    monkeypatch.setenv("ORCH_FALLBACK_MODEL", "")  # unsets a key that may be unset
    monkeypatch.setenv("ORCH_DIRTY_TREE", "branch")
    config = load_config(tmp_path)
    assert config.streaming is False and config.max_retries == 5
    assert config.api_timeout == 2.5 and config.fallback_model is None
    assert config.dirty_tree == "branch"


def test_flags_win_and_lists_split_on_commas(tmp_path: Path) -> None:
    write(tmp_path, "orch.toml", 'model = "scripted:a.yaml"\n')
    config = load_config(tmp_path, {"model": "scripted:b.yaml", "planner_model": None})
    assert config.model == "scripted:b.yaml" and config.planner_model is None
    policy = load_config(None, {"policy": {"allow_high_risk": "^a,^b"}}).policy
    assert policy.allow_high_risk == ("^a", "^b")


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("modle = 'x'\n", "orch.toml: unknown setting 'modle'"),
        ("[context]\nfold = 3\n", "orch.toml.context: unknown setting 'fold'"),
        ("max_tokens = 'many'\n", "orch.toml.max_tokens: 'many' is not a whole number"),
        ("streaming = 'maybe'\n", "orch.toml.streaming: 'maybe' is not true or false"),
        ("test_command = 3\n", "orch.toml.test_command: 3 is not text"),
        ("dirty_tree = 'stash'\n", "dirty_tree must be one of refuse, branch, not 'stash'"),
        ("[memory]\nstale_policy = 'hide'\n", "stale_policy must be one of withhold, mark"),
        ("context = 3\n", "orch.toml: context must be a table"),
        ("model = [\n", "orch.toml: not valid TOML"),
    ],
)
def test_a_wrong_key_or_value_is_named(tmp_path: Path, toml: str, needle: str) -> None:
    write(tmp_path, "orch.toml", toml)
    with pytest.raises(UsageError) as caught:
        load_config(tmp_path)
    assert needle in caught.value.message and "\n" not in caught.value.message
