"""A model proposes near-duplicate and contradiction pairs; the rules decide."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from orchestrator.cli import cli
from orchestrator.store.layout import Layout

Put = Callable[..., Any]

PROPOSED = [
    # a paraphrase the lexical rules miss: accepted
    {"a": "shipping-a", "b": "shipping-b", "verdict": "same"},
    # the same statement about two parts: refused (parallel)
    {"a": "api-http", "b": "db-http", "verdict": "same"},
    # one slot, two values: accepted, with the slot
    {"a": "cols-a", "b": "cols-b", "verdict": "contradicts", "slot": "column count"},
    # no slot named: refused
    {"a": "tests-a", "b": "tests-b", "verdict": "contradicts"},
    # a pair that was never put to the model: ignored
    {"a": "shipping-a", "b": "nowhere", "verdict": "same"},
]


def plant(put: Put) -> None:
    put("shipping-a", "Shipping fees follow the destination zone of the parcel.", subject="w")
    put(
        "shipping-b",
        "Apply destination-zone surcharges to shipping and handling fees.",
        subject="r",
    )
    put("api-http", "The api client sends requests over HTTP/1.1.", subject="api http version")
    put("db-http", "The db client sends requests over HTTP/1.1.", subject="db http version")
    put("cols-a", "The export file has 138 columns.", subject="export format")
    # a count in other words (fields, not columns): the rules' own count slot misses it
    put("cols-b", "The exported file holds 139 fields.", subject="output layout")
    put("tests-a", "Run the tests with `pytest -q` before pushing.", subject="tests")
    put("tests-b", "CI runs `make test` on every push.", subject="ci")


def script(path: Path, text: str) -> str:
    data = {"conversations": [{"when": {"purpose": "auditor"}, "replies": [{"text": text}]}]}
    path.write_text(yaml.safe_dump(data))
    return f"scripted:{path}"


def audit_json(*args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(cli, ["memory", "audit", "--json", *args])
    return result.exit_code, json.loads(result.stdout), result.stderr


def pairs(report: dict[str, Any], kind: str) -> set[frozenset[str]]:
    return {
        frozenset({f["memory"], *f["related"][:1]}) for f in report["findings"] if f["kind"] == kind
    }


def test_the_rules_accept_only_what_they_allow(layout: Layout, put: Put, tmp_path: Path) -> None:
    plant(put)
    _, plain, _ = audit_json()
    assert pairs(plain, "near_duplicate") == set() and pairs(plain, "contradiction") == set()

    model = script(tmp_path / "model.yaml", json.dumps({"pairs": PROPOSED}))
    _, report, _ = audit_json("--model", model)
    assert pairs(report, "near_duplicate") == {frozenset({"shipping-a", "shipping-b"})}
    assert pairs(report, "contradiction") == {frozenset({"cols-a", "cols-b"})}
    found = next(f for f in report["findings"] if f["kind"] == "contradiction")
    assert "column count" in found["detail"] and "138" in found["detail"]
    assert "139" in found["detail"]
    assert found["severity"] == "error"  # a model proposed it and the rules accepted it
    assert any(g["decay"] for g in report["groups"])

    # without the model, the report is the deterministic one again (the model's is not cached)
    assert audit_json()[1] == plain


def test_an_answer_out_of_shape_proposes_nothing(layout: Layout, put: Put, tmp_path: Path) -> None:
    plant(put)
    code, report, err = audit_json("--model", script(tmp_path / "m.yaml", "I think they match."))
    assert code == 0 and "no pairs proposed by scripted:" in err and 'no "pairs" list' in err
    assert pairs(report, "near_duplicate") == set()


def test_an_audit_without_a_model_loads_no_model_code(layout: Layout, put: Put) -> None:
    """The model seam is loaded only when `--model` names a model."""
    plant(put)
    seam = ("orchestrator.models", "orchestrator.messages")
    probe = (
        "import sys\nfrom click.testing import CliRunner\nfrom orchestrator.cli import cli\n"
        "done = CliRunner().invoke(cli, ['memory', 'audit', '--json'])\n"
        f"print(done.exit_code, [m for m in {seam!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=layout.root, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "[]"], done.stdout[-300:]
