"""Every prompt carries the rules its role must follow, in its file and on the wire."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evals.prompts import Report, check_request, missing_rules, prompts
from orchestrator.messages import Message, Request, SystemPart, ToolSpec
from orchestrator.prompts import CONTRACT, RULES, prompt_text, rule_text


def test_the_scripted_run_sends_every_role_its_rules(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    result = CliRunner().invoke(prompts, ["--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] is True
    assert report["findings"] == []
    for role in (
        "planner",
        "auditor",
        "executor",
        "reviewer",
        "compactor",
        "folding",
        "memory_tool",
    ):
        assert report["requests"][role] >= 1, role
    assert report["files"] == {role: list(rules) for role, rules in CONTRACT.items()}


@pytest.mark.parametrize("role", sorted(CONTRACT))
def test_each_rule_is_included_word_for_word(role: str) -> None:
    text = prompt_text(role)
    assert "<!-- rule:" not in text
    for rule in CONTRACT[role]:
        assert rule_text(rule).strip() in text


def test_every_rule_is_needed_somewhere() -> None:
    assert {r for rules in CONTRACT.values() for r in rules} == set(RULES)


def test_a_prompt_without_a_rule_is_caught() -> None:
    text = prompt_text("executor").replace(rule_text("save-exclusions").strip(), "")
    assert missing_rules(text, CONTRACT["executor"]) == ["save-exclusions"]


def test_a_request_without_its_rules_is_caught() -> None:
    report = Report()
    bare = Request(
        [SystemPart("You plan tasks.", label="base")], [Message.user("x")], purpose="planner"
    )
    check_request(bare, report)
    assert [(f.role, f.missing) for f in report.findings] == [
        ("planner", ["verify-before-use", "ignore-memory", "save-exclusions"])
    ]

    report = Report()
    tool = ToolSpec("memory", "Repository memory.", {"type": "object"})
    executor = Request(
        [SystemPart(prompt_text("executor"), label="base")], [Message.user("x")], tools=[tool]
    )
    check_request(executor, report)
    assert [(f.role, f.missing) for f in report.findings] == [
        ("memory_tool", ["save-exclusions", "memory-format", "supersede"])
    ]


def test_the_engine_sends_the_expanded_prompt() -> None:
    from orchestrator.engine.prompts import load_prompt

    system = load_prompt("executor").system
    for rule in CONTRACT["executor"]:
        assert rule_text(rule).strip() in system
