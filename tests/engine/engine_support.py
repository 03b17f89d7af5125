"""Engine test helpers: real git repositories, real gate commands, a scripted model.

`mini` is a tiny project (one module, one unittest test) with orch set up and committed;
`Script` builds a scripted model's conversations for a one- or two-phase task, and each
test changes only the replies it is about.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from orchestrator.cli import cli
from orchestrator.events.log import Event, read_events

PY = shlex.quote(sys.executable)
TEST_CMD = f"{PY} -m unittest discover -s tests -t ."


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def make_repo(root: Path, files: dict[str, str], config: str) -> Path:
    from orchestrator.store.layout import Layout
    from orchestrator.store.scaffold import scaffold

    root.mkdir(parents=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "orch.toml").write_text(config, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    scaffold(Layout(root))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Initial commit")
    return root


MINI_FILES = {
    ".gitignore": "__pycache__/\n",
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": (
        "import unittest\n\nfrom calc import add\n\n\n"
        "class AddTest(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    ),
}


# scripted replies ---------------------------------------------------------------------------


def fenced(obj: Any) -> dict[str, Any]:
    return {"text": "```json\n" + json.dumps(obj, indent=1) + "\n```"}


def phase(
    pid: int,
    title: str,
    *,
    deps: list[int] | None = None,
    gates: tuple[str, ...] = ("tests_pass",),
    path: str = "calc.py",
) -> dict[str, Any]:
    return {
        "phase_id": pid,
        "title": title,
        "objective": f"{title}.",
        "files": [{"path": path, "action": "modify", "reason": "the change"}],
        "steps": ["change it", "test it"],
        "tests": ["tests/test_calc.py"],
        "acceptance_criteria": [f"{title} works"],
        "quality_gates": list(gates),
        "dependencies": deps or [],
    }


def plan(*phases: dict[str, Any], **changes: Any) -> dict[str, Any]:
    levels = (
        "data_volume",
        "performance",
        "concurrency",
        "access_control",
        "migration_rollback",
        "dependency",
        "operability",
    )
    out = {
        "schema_version": 1,
        "task_title": "A task",
        "slug": "ignored",
        "summary": "Do the task in small phases.",
        "status": "READY_FOR_EXECUTION",
        "confidence": 0.8,
        "complexity_tier": "TRIVIAL",
        "phases": list(phases) or [phase(1, "Add subtract")],
        "open_questions": [],
        "risks": [],
        "risk_review": {k: {"level": "none", "notes": ""} for k in levels},
        "success_criteria": ["the tests pass"],
    }
    out.update(changes)
    return out


def verdict(
    kind: str = "APPROVED",
    score: float = 0.9,
    checks: dict[str, bool] | None = None,
    findings: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "verdict": kind,
        "score": score,
        "summary": f"{kind.lower()} at {score}",
        "findings": findings or [],
        "checks": [
            {"id": cid, "description": f"check {cid}", "passed": ok}
            for cid, ok in (checks or {"covers-task": True}).items()
        ],
    }


def review(
    passed: bool = True,
    *,
    validated: list[dict[str, Any]] | None = None,
    needs_replan: bool = False,
    reason: str = "",
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "verdict": "PASS" if passed else "FAIL",
        "summary": "looks right" if passed else "needs work",
        "blocking_issues": list(validated or []),
        "validated_blocking_issues": list(validated or []),
        "non_blocking": [],
        "criteria": [{"criterion": "it works", "met": passed, "evidence": "the tests"}],
    }
    if needs_replan:
        out["needs_replan"] = True
        out["replan_reason"] = reason
    return out


SUBTRACT = "def subtract(a, b):\n    return a - b\n"
ADD = "def add(a, b):\n    return a + b\n"


def write_calc(extra: str = SUBTRACT) -> dict[str, Any]:
    return {
        "tool_calls": [
            {"name": "write_file", "input": {"path": "calc.py", "content": ADD + "\n\n" + extra}}
        ]
    }


def done(text: str = "Done.") -> dict[str, Any]:
    return {"text": text}


class Script:
    """A scripted model's conversations for a task; defaults run a 1-phase task to the end."""

    def __init__(self, the_plan: dict[str, Any] | None = None) -> None:
        self.the_plan = the_plan or plan()
        self.planner: list[dict[str, Any]] = [fenced(self.the_plan)]
        self.audits: list[dict[str, Any]] = [fenced(verdict())]
        self.executor: dict[int, list[dict[str, Any]]] = {
            p["phase_id"]: [write_calc(), done()] for p in self.the_plan["phases"]
        }
        self.reviews: dict[int, list[dict[str, Any]]] = {
            p["phase_id"]: [fenced(review())] for p in self.the_plan["phases"]
        }
        self.final: list[dict[str, Any]] = [fenced(review())]
        self.extra: list[dict[str, Any]] = []  # conversations matched before the others

    def conversations(self) -> list[dict[str, Any]]:
        convs = list(self.extra)
        # planner/auditor iterations are told apart by their first message
        for n, reply in enumerate(self.planner, 1):
            convs.append(
                {
                    "when": {"purpose": "planner", "contains": f"Plan iteration {n}"},
                    "replies": [reply],
                }
            )
        for n, reply in enumerate(self.audits, 1):
            convs.append(
                {
                    "when": {"purpose": "auditor", "contains": f"Plan iteration {n} of"},
                    "replies": [reply],
                }
            )
        for pid, replies in self.executor.items():
            convs.append({"when": {"purpose": "executor", "phase": pid}, "replies": replies})
        for pid, replies in self.reviews.items():
            convs.append({"when": {"purpose": "reviewer", "phase": pid}, "replies": replies})
        convs.append({"when": {"purpose": "reviewer"}, "replies": self.final})
        return convs

    def write(self, where: Path) -> str:
        where.write_text(json.dumps({"conversations": self.conversations()}), encoding="utf-8")
        return f"scripted:{where}"


def orch(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def task_events(repo: Path) -> list[Event]:
    logs = sorted(repo.glob("plans/artifacts/*/observability/*.ndjson"))
    assert len(logs) == 1, logs
    result = read_events(logs[0], check=True)
    assert result.problems == [], result.problems
    return result.events


def only_task(repo: Path) -> str:
    logs = sorted(repo.glob("plans/artifacts/*/observability/*.ndjson"))
    assert len(logs) == 1, logs
    return logs[0].stem


def gates(events: list[Event], gate: str) -> list[dict[str, Any]]:
    return [
        e.payload
        for e in events
        if e.event_type == "gate_event" and e.payload["event_type"] == gate
    ]


def steps(events: list[Event]) -> list[str]:
    return [e.payload["step"] for e in events if e.event_type == "state_change"]
