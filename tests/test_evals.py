"""The evaluation suites live in `evals/`, each run as `python -m evals.<suite>`; the
package never imports them and `orch` no longer carries them."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from evals.hygiene.suite import hygiene
from orchestrator.cli import cli

ROOT = Path(__file__).resolve().parents[1]
SUITES = ("locomo", "hygiene", "resume", "context", "prompts", "cost")


def module(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("name", SUITES)
def test_each_suite_runs_as_a_module(name: str) -> None:
    done = module(f"evals.{name}", "--help")
    assert done.returncode == 0, done.stderr
    assert f"python -m evals.{name}" in done.stdout.splitlines()[0]
    assert "--json" in done.stdout


def test_orch_has_no_eval_command() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    commands = result.output.split("Commands:", 1)[1].split()
    assert "memory" in commands and "eval" not in commands
    assert CliRunner().invoke(cli, ["eval", "locomo"]).exit_code == 2  # no such command


def test_the_package_never_imports_evals() -> None:
    offenders = []
    for path in sorted((ROOT / "orchestrator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "evals"
            ]
    assert offenders == []
    assert not (ROOT / "orchestrator" / "evals").exists()


def test_a_suite_given_bad_input_says_so_in_one_line(tmp_path: Path) -> None:
    """Run as a program, not only through click's test runner: one line, exit 2."""
    path = tmp_path / "data.json"
    path.write_text("{not json", encoding="utf-8")
    done = module("evals.locomo", "--data", str(path), "--json")
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a LoCoMo file: not JSON" in lines[0], done.stderr
    done = module("evals.hygiene", "--repo", str(tmp_path))
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [f"Error: {tmp_path}: no labels.json"]


def test_the_locomo_suite_prints_recall_by_k_and_questions(tmp_path: Path) -> None:
    """The JSON keys scripts rely on: `recall` (k -> recall) and `questions`."""
    conversation = {
        "sample_id": "conv-a",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "1:00 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I started learning the cello."},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "The weather is grey today."},
            ],
        },
        "qa": [
            {"question": "Which instrument is Ann learning?", "evidence": ["D1:1"], "category": 4}
        ],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([conversation]), encoding="utf-8")
    done = module("evals.locomo", "--data", str(path), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["questions"] == 1
    assert data["recall"] == dict.fromkeys(["1", "5", "10", "20", "50"], 1.0)


def hygiene_json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(hygiene, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.output)
    return report


def test_the_hygiene_figures_hold() -> None:
    """The figures README.md and docs/memory.md give: on the generated set, precision and
    recall 1.000 on every kind, development and held-out seed; on the blind set (seed 1),
    precision 1.000 on every kind, recall 1.000 but near_duplicate 0.952 and contradiction
    0.778."""
    report = hygiene_json("--set", "generated")
    for name in ("development", "held_out"):
        table = report[name]
        assert {k: (r["precision"], r["recall"]) for k, r in table.items()} == dict.fromkeys(
            table, (1.0, 1.0)
        )
        assert all(r["expected"] > 0 for r in table.values())
    blind = hygiene_json("--set", "blind", "--blind-seed", "1")["blind"]
    assert {r["precision"] for r in blind.values()} == {1.0}
    assert {k: r["recall"] for k, r in blind.items()} == {
        **dict.fromkeys(blind, 1.0),
        "near_duplicate": 0.952,
        "contradiction": 0.778,
    }
    assert sum(r["expected"] for r in blind.values()) == 175


def test_the_cost_suite_bills_the_recorded_requests_of_the_replay(tmp_path: Path) -> None:
    from evals.cost import bill, run_replay

    requests = run_replay(tmp_path, 60)
    assert requests[0]["file"] == "0001-executor.json"
    assert {r["role"] for r in requests} == {"executor", "compactor"}
    figures = bill(requests)
    for key in ("calls", "input_tokens", "billed", "ideal", "ratio", "cache_read_share"):
        assert key in figures and key in figures["by_role"]["executor"]
    assert figures["calls"] == len(requests)
    # perfect caching is the floor; the layout gets close to it and reads most input
    assert 1.0 <= figures["ratio"] <= 1.15
    assert figures["by_role"]["executor"]["cache_read_share"] > 0.5
    assert figures["billed"] < figures["input_tokens"]
    causes = figures["uncached_by_cause"]
    assert (
        {"new_round", "fold"}
        <= set(causes)
        <= {
            "new_round",
            "masking",
            "new_head",
            "summary",
            "fold",
            "long",
        }
    )
    # the causes share out exactly what was not read
    assert abs(sum(causes.values()) - (1 - figures["cache_read_share"])) < 0.01


def test_uncached_input_is_told_apart_by_what_changed_since_the_last_executor_request() -> None:
    from evals.cost import uncached_by_cause
    from orchestrator.models.cachesim import Bill

    def request(role: str, *messages: str) -> dict[str, Any]:
        body = [{"role": "user", "content": [{"type": "text", "text": m}]} for m in messages]
        return {"role": role, "phase": 1, "params": {"messages": body}}

    requests = [
        request("executor", "go"),
        request("executor", "go", "round 1"),
        request("executor", "go", "[masked tool result] read_file: 9 chars; raw turn 1"),
        request("compactor", "go", "Conversation to summarise: every turn"),
        request("compactor", "go", "Turns to fold: raw turns 0-1"),
        request("executor", "<context-summary ...>", "round 2"),
        request("planner", "plan it"),
    ]
    bills = [Bill(100, 10, 0, 90), Bill(100, 0, 20, 80), *[Bill(100, 30, 0, 70)] * 5]
    assert uncached_by_cause(requests, bills) == {
        "fold": 0.0429,
        "masking": 0.0429,
        "new_head": 0.0429,
        "new_round": 0.0429,
        "planner": 0.0429,
        "summary": 0.0429,
    }
