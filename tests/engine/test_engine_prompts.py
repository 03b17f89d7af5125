"""The prompts are files that carry the rules the engine relies on."""

from __future__ import annotations

import re

import pytest

from orchestrator.engine.prompts import Prompt, TemplateError, load_prompt

ROLES = ("planner", "auditor", "executor", "reviewer")
TEMPLATES = {
    "planner": {"task", "revise", "schema_errors", "replan"},
    "auditor": {"audit", "schema_errors"},
    "reviewer": {"phase", "final", "schema_errors"},
    "executor": {"card", "start", "retry", "tasklist", "reminder", "notes", "claude_code"},
}


@pytest.mark.parametrize("role", ROLES)
def test_each_prompt_carries_the_memory_rules(role: str) -> None:
    text = " ".join(load_prompt(role).system.lower().split())
    assert "verif" in text and "before use" in text
    assert "ignore memory" in text and "fresh context" in text
    if role in ("planner", "auditor", "executor"):
        assert "save exclusions" in text or "save exclusion" in text


@pytest.mark.parametrize("role", ROLES)
def test_each_template_the_engine_renders_exists_and_fills(role: str) -> None:
    prompt = load_prompt(role)
    assert set(prompt.templates) == TEMPLATES[role]
    for name, text in prompt.templates.items():
        names = set(re.findall(r"\$([a-z_]+)", text))
        rendered = prompt.render(name, **{n: "X" for n in names})
        assert "$" not in rendered.replace("$X", "")


def test_json_roles_describe_their_answer() -> None:
    assert '"validated_blocking_issues"' in load_prompt("reviewer").system
    assert (
        '"verdict": "APPROVED | NEEDS_REVISION | REJECTED | ABSTAIN"'
        in load_prompt("auditor").system
    )
    assert "risk_review" in load_prompt("planner").system


def test_a_misspelt_placeholder_fails_loudly() -> None:
    prompt = load_prompt("executor")
    with pytest.raises(
        TemplateError, match=r"executor.md, template 'start' needs a value for \$title"
    ):
        prompt.render("start", phase=1, tilte="Add the flag", objective="a --verbose flag")
    misspelt = Prompt("executor", "", {"start": "Phase $phase: $tilte"})
    with pytest.raises(TemplateError, match=r"needs a value for \$tilte"):
        misspelt.render("start", phase=1, title="Add the flag")


def test_a_value_without_its_placeholder_or_an_unknown_template_fails() -> None:
    prompt = load_prompt("executor")
    with pytest.raises(TemplateError, match="no placeholder for rounds"):
        prompt.render("notes", notes="n", rounds=3)
    with pytest.raises(TemplateError, match="'retyr' does not exist"):
        prompt.render("retyr", previous=1)
