"""Terminal progress: one short line per event a person cares about.

`describe(event)` is pure (a line and a style, or None to stay quiet); `Printer` writes
the lines with rich, which only the commands that print progress import.
"""

from __future__ import annotations

from typing import Any

from orchestrator.engine.state import TaskState
from orchestrator.events.log import Event

GATE_STYLE = {"GO": "green", "REPLAN": "yellow", "ABSTAIN": "yellow", "BLOCKED": "red"}


def _s(text: Any, limit: int = 140) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def describe(event: Event) -> tuple[str, str] | None:
    p = event.payload
    kind = event.event_type
    if kind == "state_change":
        step = p.get("step")
        if step == "task_created":
            return f"Task {event.task}: {_s(p['task']['text'])}", "bold"
        if step in ("phase_started", "phase_restarted"):
            return f"Phase {p['phase']}: {_s(p['reason'].split(': ', 1)[-1])}", "bold cyan"
        if step == "phase_retry":
            return f"  retry, attempt {p.get('attempt')}: {_s(p['reason'])}", "yellow"
        if step == "phase_committed":
            return f"  committed {p['commit'][:12]}" + (
                " (reconciled)" if p.get("reconciled") else ""
            ), "green"
        if step == "approval_requested":
            return f"WAITING_APPROVAL: {_s(p['reason'], 300)}", "bold yellow"
        if step == "blocked":
            return f"BLOCKED: {_s(p['reason'], 300)}", "bold red"
        if step == "complete":
            return f"COMPLETE: {_s(p['reason'])}", "bold green"
        if step in (
            "approval_given",
            "approval_denied",
            "resumed",
            "plan_ready",
            "plan_approved",
            "branch_created",
            "gates_started",
        ):
            return f"  {_s(p['reason'])}", "dim"
        return None
    if kind == "delegation":
        return f"  -> {p['to']}: {_s(p['reason'])}", "dim"
    if kind == "execution_report":
        if p["kind"] == "plan":
            return (
                f"  plan iteration {p.get('iteration')}: {p.get('phases')} phase(s), tier "
                f"{p.get('tier')}"
            ), ""
        if p["kind"] == "final_review":
            return None  # its verdict event says it already
        if p["kind"] == "phase":
            return f"  executor done after {p.get('turns')} turn(s): {_s(p['summary'], 100)}", ""
        return f"  {p['kind'].replace('_', ' ')}: {_s(p['summary'], 100)}", "dim"
    if kind == "plan_audit":
        return (
            f"  audit iteration {p['iteration']}: {p['effective_verdict']} (score "
            f"{p['score']}, {len(p['findings'])} finding(s))"
        ), ""
    if kind == "gate_event":
        phase = f" phase {p['phase_id']}" if p.get("phase_id") else ""
        return (
            f"  {p['event_type']}{phase}: {p['decision']}: {_s(p['reason'])}",
            GATE_STYLE.get(p["decision"], ""),
        )
    if kind == "verdict":
        if p["kind"] == "quality_gate":
            secs = f" in {p.get('duration_ms', 0) / 1000:.1f} s" if p.get("command") else ""
            return f"  {p['gate']}: {p['status']}{secs}", "green" if p["passed"] else "red"
        return (
            f"  {p['kind'].replace('_', ' ')}: {'pass' if p['passed'] else 'FAIL'}: {_s(p['summary'], 100)}",
            ("green" if p["passed"] else "red"),
        )
    if kind == "tool_call":
        shown = " ".join(
            f"{k}={_s(v, 40)}"
            for k, v in (p.get("input") or {}).items()
            if k in ("path", "command", "op", "pattern", "title", "id", "status")
        )
        return f"    {p['tool']} {shown}" + ("" if p["ok"] else " (error)"), "dim"
    if kind == "error":
        return f"  error ({p.get('kind')}): {_s(p.get('detail', ''))}", "red"
    if kind == "compaction":
        tokens = ""
        if p.get("tokens_before") is not None and p.get("tokens_after") is not None:
            tokens = f", {p['tokens_before']} -> {p['tokens_after']} tokens"
        return f"  compaction ({p.get('kind')}): {p.get('outcome')}{tokens}", "dim"
    if kind == "memory_verification" and p.get("purpose") == "prompt":
        if p.get("fresh_context"):
            return "  memory: none for this turn (the user asked for a fresh context)", "dim"
        if not p.get("checked"):
            return None  # no repo memory yet: nothing worth a line
        withheld = len(p.get("withheld") or [])
        line = f"  memory verified: {p['checked']} checked, {p['ok']} ok, {p['changed']} changed, {p['stale']} stale"
        return line + (f" ({withheld} withheld)" if withheld else ""), "dim"
    if kind in ("memory_promotion", "memory_verification"):
        from orchestrator.commands.log import summarise

        return f"  {kind}: {_s(summarise(event), 100)}", "dim"
    return None


class Printer:
    """Prints progress lines with rich (colour on a terminal, plain text otherwise)."""

    def __init__(self, *, stderr: bool = False, tools: bool = True) -> None:
        from rich.console import Console

        self.console = Console(stderr=stderr, highlight=False, soft_wrap=True)
        self.tools = tools

    def __call__(self, event: Event, state: TaskState) -> None:
        if event.event_type == "tool_call" and not self.tools:
            return
        shown = describe(event)
        if shown is not None:
            text, style = shown
            self.console.print(text, style=style or None, markup=False)

    def line(self, text: str, style: str = "") -> None:
        self.console.print(text, style=style or None, markup=False)
