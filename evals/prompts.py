"""Every prompt carries the rules its role must follow: `python -m evals.prompts`.

The rules that several roles share (verify before use, ignore memory on request, save
exclusions, what a memory holds, supersede instead of overwrite) have one wording each, in
`orchestrator/prompts/rules/`, and `orchestrator.prompts.CONTRACT` says which role needs
which. Two checks:

- in the files: each role's prompt, its rule lines expanded, holds the full text of every
  rule its role needs; every prompt file has a contract and every rule line names a rule;
- on the wire: the bundled demo task runs in-process with the scripted model, and every
  request it sends (planner, auditor, executor, reviewer, compactor, folding) is recorded;
  each one's system prompt must hold its role's rules, and the `memory` tool's description
  must hold the memory tool's rules wherever the tool is offered.

The demo does not grow past the compaction threshold, so a compaction is also run on its
own (the engine's `ContextManager.compact`, as the `compact` tool calls it) to record a
compactor request. The extractor is checked in its file only: the engine promotes without
a model by default, so no run sends it anything.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import click

from evals.suite import emit_json, json_option, suite
from orchestrator.config import ContextConfig
from orchestrator.context import ContextManager
from orchestrator.engine.api import Options, start
from orchestrator.engine.demo import TASK, prepare_repo, sample_paths
from orchestrator.engine.parts import default_parts
from orchestrator.messages import Message, Reply, Request
from orchestrator.models.scripted import ScriptedModel
from orchestrator.prompts import CONTRACT, RULES, prompt_text, rule_text
from orchestrator.store.layout import Layout
from orchestrator.store.scaffold import scaffold
from orchestrator.store.tasks import TaskFolder

MEMORY_TOOL = "memory"
# the roles whose requests the scripted run must send (the extractor is checked in its file)
SENT = ("planner", "auditor", "executor", "reviewer", "compactor", "folding", "memory_tool")


@dataclass
class Finding:
    where: str  # "file" | "request"
    role: str
    missing: list[str]
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "role": self.role,
            "missing": self.missing,
            "detail": self.detail,
        }


@dataclass
class Report:
    files: dict[str, list[str]] = field(default_factory=dict)  # role -> rules present
    requests: dict[str, int] = field(default_factory=dict)  # role -> requests checked
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "suite": "prompts",
            "ok": self.ok,
            "rules": list(RULES),
            "contract": {role: list(rules) for role, rules in CONTRACT.items()},
            "files": self.files,
            "requests": self.requests,
            "findings": [f.to_dict() for f in self.findings],
        }


def missing_rules(text: str, rules: tuple[str, ...]) -> list[str]:
    """The rules in `rules` whose full text is not in `text`."""
    return [rule for rule in rules if rule_text(rule).strip() not in text]


def check_files(report: Report) -> None:
    folder = resources.files("orchestrator").joinpath("prompts")
    names = sorted(p.name[:-3] for p in folder.iterdir() if p.name.endswith(".md"))
    for name in names:
        if name not in CONTRACT:
            report.findings.append(Finding("file", name, [], "a prompt file with no contract"))
    for role, rules in CONTRACT.items():
        raw = folder.joinpath(f"{role}.md").read_text("utf-8")
        unknown = sorted(set(re.findall(r"<!-- rule: ([^ ]+) -->", raw)) - set(RULES))
        if unknown:
            report.findings.append(Finding("file", role, [], f"unknown rule lines: {unknown}"))
        text = prompt_text(role)
        missing = missing_rules(text, rules)
        report.files[role] = [r for r in rules if r not in missing]
        if missing:
            report.findings.append(Finding("file", role, missing, f"{role}.md"))


def request_role(request: Request) -> str:
    """The role whose prompt a request carries: its first system part's label, else its purpose."""
    label = request.system[0].label if request.system else ""
    return label if label in CONTRACT else request.purpose


def check_request(request: Request, report: Report) -> None:
    role = request_role(request)
    report.requests[role] = report.requests.get(role, 0) + 1
    rules = CONTRACT.get(role)
    if rules is None:
        report.findings.append(
            Finding("request", role, [], "a request from a role with no contract")
        )
        return
    missing = missing_rules(request.system_text(), rules)
    if missing:
        report.findings.append(
            Finding("request", role, missing, f"request {sum(report.requests.values())}")
        )
    for tool in request.tools:
        if tool.name == MEMORY_TOOL:
            report.requests["memory_tool"] = report.requests.get("memory_tool", 0) + 1
            lacking = missing_rules(tool.description, CONTRACT["memory_tool"])
            if lacking:
                report.findings.append(
                    Finding("request", "memory_tool", lacking, f"offered to {role}")
                )


class Recorder:
    """A Model that passes every call through and keeps the request."""

    def __init__(self, inner: Any, seen: list[Request]) -> None:
        self.inner = inner
        self.seen = seen

    @property
    def name(self) -> str:
        return str(self.inner.name)

    def complete(self, request: Request) -> Reply:
        self.seen.append(request)
        reply: Reply = self.inner.complete(request)
        return reply

    def count_tokens(self, request: Request) -> int:
        return int(self.inner.count_tokens(request))


def record_demo_requests(work: Path) -> tuple[list[Request], str]:
    """Run the demo task in-process on a fresh copy of the sample; the requests and its end state."""
    seen: list[Request] = []
    parts = default_parts()
    wrap = parts.wrap_model
    parts.wrap_model = lambda model, log, agent, phase: wrap(
        Recorder(model, seen), log, agent, phase
    )
    with sample_paths() as (sample, script):
        repo = prepare_repo(work / "wordstats", sample)
        env = start(
            Layout(repo),
            TASK,
            auto_approve=True,
            model=f"scripted:{script}",
            options=Options(parts=parts),
        )
    return seen, str(env.state.state)


SUMMARY = "\n\n".join(
    f"## {h}\n- recorded for the prompt contract"
    for h in (
        "Task overview",
        "Current state",
        "Important discoveries",
        "Next steps",
        "Context to preserve",
    )
)


def record_compaction_request(work: Path) -> list[Request]:
    """One manual compaction of a short conversation, through the real ContextManager."""
    root = work / "compaction"
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    layout = Layout(root)
    scaffold(layout)
    task = TaskFolder.create(layout, "prompt contract compaction")
    seen: list[Request] = []
    model = Recorder(ScriptedModel.from_replies({"text": SUMMARY}), seen)
    manager = ContextManager(
        task, model, ContextConfig(), task.events(), rules="rules", phase_card="phase card"
    )
    messages = [
        Message.user(f"step {n}: read the module and report")
        if n % 2 == 0
        else Message.assistant(f"step {n}: the module defines parse() and render()")
        for n in range(12)
    ]
    manager.compact(messages, phase=1, last_instruction="carry on", reason="eval", kind="manual")
    return seen


def evaluate(work: Path | None = None) -> Report:
    report = Report()
    check_files(report)
    with tempfile.TemporaryDirectory(prefix="orch-eval-prompts-") as tmp:
        base = work or Path(tmp)
        requests, state = record_demo_requests(base)
        requests += record_compaction_request(base)
    if state != "COMPLETE":
        report.findings.append(Finding("request", "engine", [], f"the scripted demo ended {state}"))
    for request in requests:
        check_request(request, report)
    for role in SENT:
        if not report.requests.get(role):
            report.findings.append(
                Finding("request", role, [], "the scripted run sent no request of this role")
            )
    return report


def render(report: Report) -> str:
    width = max(len(r) for r in CONTRACT)
    lines = [
        "Prompt contract",
        "",
        f"{'role':<{width}}  {'rules in the file':<17}  requests checked",
    ]
    for role, rules in CONTRACT.items():
        have = len(report.files.get(role, []))
        lines.append(f"{role:<{width}}  {have}/{len(rules):<15}  {report.requests.get(role, 0)}")
    lines.append("")
    if report.ok:
        lines.append("Every prompt carries its rules, in its file and in every request sent.")
    for f in report.findings:
        missing = f" missing {', '.join(f.missing)}" if f.missing else ""
        lines.append(f"FAIL {f.where} {f.role}:{missing} {f.detail}".rstrip())
    return "\n".join(lines)


@suite("prompts")
@json_option
def prompts(as_json: bool) -> None:
    """Check that every prompt carries the rules its role must follow (exit 1 if not)."""
    report = evaluate()
    if as_json:
        emit_json(report.to_dict())
    else:
        click.echo(render(report))
    if not report.ok:
        raise SystemExit(1)


if __name__ == "__main__":
    prompts()
