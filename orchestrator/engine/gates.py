"""The quality gates of a phase, run for real, and the CodeReviewer verdict's validation.

Gates (a phase's `quality_gates`):
- tests_pass: the configured `test_command`, as a subprocess in the repository root;
- lint_clean: the configured `lint_command`;
- schema_valid: every JSON, TOML and YAML file the phase changed parses, and the task
  list and plan still fit their schemas;
- safety_clear: the phase's added lines hold no private key, cloud key or API key;
- human_approved_if_required: every high-risk command of the phase was answered by a person.

A gate with nothing to run (no command configured) is NOT_RUN and does not block. A failed
gate carries its failure class: a command that cannot be found is `escalate` (fix the
configuration), a command killed at its time limit is `transient`, any other failure is
`fixable` with the command's output as the fix hint.

What a gate's command printed is kept as its tail: the last `TAIL_LINES` lines, at most
`TAIL_CHARS` characters, secrets redacted. The tail goes in the gate's verdict event, in
the PHASE_REVIEW_GATE's record (`GateRun`), in the fix hint and in the phase report.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from orchestrator.engine import faults, shell
from orchestrator.engine.activity import Activity, Doing, NoActivity
from orchestrator.engine.payloads import GateRun, output_tail
from orchestrator.engine.state import PhaseState
from orchestrator.errors import FailureClass
from orchestrator.sandbox import Sandbox, SandboxUnavailable

SECRET_PATTERNS = (
    (re.compile(r"-----BEGIN (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----"), "a private key"),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), "an AWS access key id"),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), "an Anthropic API key"),
    (re.compile(r"\bghp_[A-Za-z0-9]{36}\b"), "a GitHub token"),
    (re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}"), "a Slack token"),
)


@dataclass
class GateResult:
    gate: str
    status: str  # PASS | FAIL | NOT_RUN
    summary: str
    command: str | None = None
    exit_code: int | None = None
    duration_ms: int = 0
    output_tail: str = ""
    failure_class: FailureClass | None = None
    blocked: bool = False  # the cause is outside the code (configuration)

    @property
    def passed(self) -> bool:
        return self.status != "FAIL"

    def payload(self, attempt: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "quality_gate",
            "gate": self.gate,
            "passed": self.passed,
            "status": self.status,
            "summary": self.summary,
            "command": self.command,
            "exit_code": self.exit_code,
            "duration_ms": self.duration_ms,
            "output_tail": self.output_tail,
            "attempt": attempt,
        }
        if self.failure_class:
            out["failure_class"] = self.failure_class
        return out

    def run(self) -> GateRun:
        """This result as the phase gate records it (the tail only when the gate failed)."""
        return GateRun(
            self.gate,
            self.status,
            command=self.command,
            exit_code=self.exit_code,
            duration_ms=self.duration_ms,
            output_tail="" if self.passed else self.output_tail,
        )


@dataclass
class GateContext:
    root: Path
    test_command: str | None
    lint_command: str | None
    timeout: float
    output_cap: int
    changed: list[tuple[str, str]]  # (status letter, path) of the phase's change
    diff: str
    phase: PhaseState
    sandbox: Sandbox  # the test and lint commands run in the agent's sandbox
    validate_files: list[Callable[[], list[str]]] = field(default_factory=list)
    activity: Activity = field(default_factory=NoActivity)  # told each gate and its output

    def command(self, gate: str) -> str | None:
        """The command gate `gate` runs, if it runs one."""
        setting = COMMAND_SETTINGS.get(gate)
        return getattr(self, setting) if setting else None


COMMAND_SETTINGS = {"tests_pass": "test_command", "lint_clean": "lint_command"}


def run_gate(gate: str, ctx: GateContext) -> GateResult:
    if gate in COMMAND_SETTINGS:
        return _command_gate(gate, ctx.command(gate), COMMAND_SETTINGS[gate], ctx)
    check = CHECKS.get(gate)
    if check is None:
        return GateResult(gate, "NOT_RUN", f"unknown gate {gate!r}")
    return check(ctx)


def _command_gate(gate: str, command: str | None, setting: str, ctx: GateContext) -> GateResult:
    if not command:
        return GateResult(gate, "NOT_RUN", f"no {setting} configured; the gate did not run")
    faults.point("gate.before_command")
    try:
        result = shell.run_command(
            command,
            ctx.root,
            timeout=ctx.timeout,
            output_cap=ctx.output_cap,
            sandbox=ctx.sandbox,
            on_output=ctx.activity.output,
        )
    except SandboxUnavailable as exc:
        return GateResult(
            gate,
            "FAIL",
            exc.line(),
            command=command,
            failure_class=FailureClass.ESCALATE,
            blocked=True,
        )
    faults.point("gate.after_command")
    tail = output_tail(result.output)
    base: dict[str, Any] = dict(
        command=command,
        exit_code=result.exit_code,
        duration_ms=result.duration_ms,
        output_tail=tail,
    )
    if result.ok:
        return GateResult(gate, "PASS", f"`{command}` passed", **base)
    if result.timed_out:
        return GateResult(
            gate,
            "FAIL",
            f"`{command}` was killed after {ctx.timeout:g} s",
            failure_class=FailureClass.TRANSIENT,
            **base,
        )
    if result.not_found or _not_found(result.output, command):
        return GateResult(
            gate,
            "FAIL",
            f"{setting} `{command}` cannot run (command not found); fix {setting} in "
            "orch.toml or [tool.orch], then `orch resume`",
            failure_class=FailureClass.ESCALATE,
            blocked=True,
            **base,
        )
    return GateResult(
        gate,
        "FAIL",
        f"`{command}` failed with exit code {result.exit_code}",
        failure_class=FailureClass.FIXABLE,
        **base,
    )


def _not_found(output: str, command: str) -> bool:
    program = command.split()[0] if command.split() else command
    return f"{program}: not found" in output or f"{program}: command not found" in output


def _schema_gate(ctx: GateContext) -> GateResult:
    problems: list[str] = []
    for status, path in ctx.changed:
        if status == "D":
            continue
        target = ctx.root / path
        try:
            text = target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        try:
            if path.endswith(".json"):
                json.loads(text)
            elif path.endswith(".toml"):
                tomllib.loads(text)
            elif path.endswith((".yaml", ".yml")):
                yaml.safe_load(text)
        except Exception as exc:
            problems.append(f"{path}: {' '.join(str(exc).split())[:200]}")
    for check in ctx.validate_files:
        problems.extend(check())
    if problems:
        return GateResult(
            "schema_valid",
            "FAIL",
            f"{len(problems)} file(s) do not parse",
            output_tail=output_tail("\n".join(problems)),
            failure_class=FailureClass.FIXABLE,
        )
    return GateResult(
        "schema_valid", "PASS", "changed data files parse; plan and task list fit their schemas"
    )


def _safety_gate(ctx: GateContext) -> GateResult:
    found = []
    for line in ctx.diff.splitlines():
        if not line.startswith("+") or line.startswith("+++"):
            continue
        for rx, what in SECRET_PATTERNS:
            if rx.search(line):
                found.append(what)
    if found:
        kinds = ", ".join(sorted(set(found)))
        return GateResult(
            "safety_clear",
            "FAIL",
            f"the change adds {kinds}",
            output_tail=f"remove {kinds} from the change; keep secrets out of the repository",
            failure_class=FailureClass.FIXABLE,
        )
    return GateResult("safety_clear", "PASS", "no secrets in the added lines")


def _approval_gate(ctx: GateContext) -> GateResult:
    answered = ctx.phase.approvals
    granted = sum(1 for v in answered.values() if v)
    return GateResult(
        "human_approved_if_required",
        "PASS",
        f"{len(answered)} high-risk command(s) answered by a person ({granted} approved)"
        if answered
        else "no high-risk command needed approval",
    )


# the gates that need no command, by name
CHECKS: dict[str, Callable[[GateContext], GateResult]] = {
    "schema_valid": _schema_gate,
    "safety_clear": _safety_gate,
    "human_approved_if_required": _approval_gate,
}


def run_gates(gates: list[str], ctx: GateContext) -> list[GateResult]:
    results = []
    for gate in gates:
        command = ctx.command(gate)
        if command:  # the others take no time worth showing
            ctx.activity.begin(Doing.GATE, f"{gate}: `{command}`")
        started = time.monotonic()
        result = run_gate(gate, ctx)
        if not result.duration_ms:
            result.duration_ms = int((time.monotonic() - started) * 1000)
        results.append(result)
    return results


def gate_runs(results: list[GateResult]) -> tuple[GateRun, ...]:
    """The quality gates that ran a command or failed, as a gate event records them."""
    return tuple(r.run() for r in results if r.command or not r.passed)


# does a gate's command exist -----------------------------------------------------------

# words a command line may start with that are not programs (the shell's own)
SHELL_WORD_LIST = (
    "cd test [ [[ echo true false exit export set source . exec eval command if for while "
    "case ( { time ! builtin type"
)
SHELL_WORDS = frozenset(SHELL_WORD_LIST.split())


def program_exists(command: str, root: Path) -> bool:
    """False only when the command's program is surely missing: its first word is neither
    on PATH nor a file in the repository (the gate sees exit 127 too)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return True
    while words and "=" in words[0] and not words[0].startswith(("/", ".")):
        words = words[1:]
    if not words or words[0] in SHELL_WORDS:
        return True
    program = words[0]
    if "/" in program:
        path = Path(program) if program.startswith("/") else root / program
        return path.exists()
    return shutil.which(program) is not None or (root / program).is_file()


# the reviewer's verdict -------------------------------------------------------------------


def validate_blocking(
    verdict: dict[str, Any], changed: list[tuple[str, str]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(issues that block, issues demoted): a validated issue blocks only when it names a
    file of the phase's change and gives evidence."""
    paths = {p for _, p in changed}
    blocking, demoted = [], []
    for issue in verdict.get("validated_blocking_issues") or []:
        file = (issue.get("file") or "").removeprefix("./")
        if file in paths and (issue.get("evidence") or "").strip():
            blocking.append(issue)
        else:
            why = "no evidence" if file in paths else f"{file or 'no file'} is not in the change"
            demoted.append({**issue, "demoted_because": why})
    return blocking, demoted


def review_verdict(
    kind: str, review: dict[str, Any], changed: list[tuple[str, str]]
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The `verdict` event's payload for a review (`kind` review or final_review), with the
    issues that block and those demoted (see `validate_blocking`)."""
    blocking, demoted = validate_blocking(review, changed)
    payload = {
        "kind": kind,
        "passed": not blocking and not review.get("needs_replan"),
        "verdict": review["verdict"],
        "summary": review["summary"],
        "blocking_issues": review["blocking_issues"],
        "validated_blocking_issues": blocking,
        "demoted": demoted,
        "non_blocking": review["non_blocking"],
        "criteria": review["criteria"],
    }
    return payload, blocking, demoted


def issues_hint(issues: list[dict[str, Any]]) -> str:
    lines = []
    for issue in issues:
        where = issue.get("file") or ""
        if issue.get("line"):
            where += f":{issue['line']}"
        lines.append(
            f"- {issue['id']} {where}: {issue['description']}"
            + (f" (evidence: {issue['evidence']})" if issue.get("evidence") else "")
        )
    return "\n".join(lines)
