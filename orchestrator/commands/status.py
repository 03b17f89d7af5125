"""`orch status`: where every task stands, or one task in detail.

It reads the tasks' logs and plans only (`orchestrator/engine/status.py`), so it imports
none of the workflow that runs tasks and starts about as fast as Python does.
"""

from __future__ import annotations

import textwrap
from typing import Any

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.engine.enums import WorkflowState
from orchestrator.engine.progress import gate_output, usd
from orchestrator.engine.status import statuses, summary
from orchestrator.store.tasks import TaskFolder

# the states `orch status` gives a reason line for
STOPPED = (WorkflowState.WAITING_APPROVAL, WorkflowState.BLOCKED, WorkflowState.ABANDONED)


def _echo_blocking_gate(gate: dict[str, Any] | None) -> None:
    if gate is None:
        return
    first, *rest = gate_output(
        gate["name"], gate["command"], gate["exit_code"], gate["output_tail"]
    )
    click.echo(f"  blocking gate: {first}")
    for line in rest:
        click.echo(line)


@click.command()
@click.argument("slug", required=False)
@json_option
def status(slug: str | None, as_json: bool) -> None:
    """Where every task stands (or task SLUG in detail)."""
    layout = repo()
    if slug:
        info = summary(TaskFolder.open(layout, slug))
        if as_json:
            emit_json(info)
            return
        click.echo(f"{info['task']}: {info['state']}  {info['title']}")
        if info["reason"]:
            click.echo(f"  {info['reason']}")
        _echo_blocking_gate(info["blocking_gate"])
        if info["waiting_for"]:
            click.echo(
                f"  waiting for: {info['waiting_for']}"
                + (f" ({info['command']})" if info["command"] else "")
                + f"; answer with orch approve {info['task']}"
            )
        if info["budget"]:
            click.echo(
                f"  spent {usd(info['budget']['spent_usd'])} of the "
                f"{usd(info['budget']['cap_usd'])} cap ([budget] max_cost_usd)"
            )
        unpriced = f", {info['unpriced_calls']} call(s) unpriced" if info["unpriced_calls"] else ""
        click.echo(
            f"  plan iteration {info['plan_iteration']}, tier {info['tier'] or '-'}, "
            f"model {info['model']}"
            + (f", executor {info['executor']}" if info.get("executor") == "claude-code" else "")
            + f", spent {usd(info['cost_usd'])}{unpriced}"
        )
        click.echo(f"  model calls: {_tokens(info['tokens'])}")
        for ph in info["phases"]:
            commit = f" {ph['commit'][:12]}" if ph["commit"] else ""
            retries = f" retries: {', '.join(ph['retries'])}" if ph["retries"] else ""
            click.echo(f"  phase {ph['phase']}: {ph['status']:<9} {ph['title']}{commit}{retries}")
            if ph["tokens"]["calls"]:
                click.echo(f"    {_tokens(ph['tokens'])}")
        click.echo(f"  task folder: {info['folder']}")
        click.echo(f"  event log:   {info['log']} ({info['events']} events)")
        click.echo(f"  log check:   {info['log_check']['summary']}")
        for problem in info["log_problems"]:
            click.echo(f"  log: {problem}")
        return
    rows = statuses(layout)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo('No tasks yet. Start one with: orch run "TASK"')
        return
    width = max(len(info["task"]) for info in rows)
    for info in rows:
        phases = f"{info['committed']}/{len(info['phases'])}" if info["phases"] else "-"
        click.echo(
            f"{info['task']:<{width}}  {info['state']:<17} phases {phases:<6} "
            f"{(info['updated'] or '')[:19]}"
        )
        if info["state"] in STOPPED:
            click.echo(_wrapped(info["reason"]))
        if not info["log_check"]["ok"]:
            check = f"log {info['log_check']['summary']} (orch log {info['task']} --check)"
            click.echo(_wrapped(check))


def _wrapped(text: str, limit: int = 400) -> str:
    """A reason under its task: cut at a word (never mid-word) and wrapped, indented."""
    short = textwrap.shorten(" ".join(text.split()), limit, placeholder=" …")
    return textwrap.fill(short, 100, initial_indent="  ", subsequent_indent="  ")


def _tokens(t: dict[str, Any]) -> str:
    """`12 calls, 80,000 input tokens (60,000 read from cache, 9,000 written), 2,000
    output, est. $0.05`: scripted models' usage is estimated, priced as claude-sonnet-4-6."""
    total = t["input_tokens"] + t["cache_read_tokens"] + t["cache_write_tokens"]
    return (
        f"{t['calls']} calls, {total:,} input tokens ({t['cache_read_tokens']:,} read from "
        f"cache, {t['cache_write_tokens']:,} written), {t['output_tokens']:,} output, "
        f"est. {usd(t['estimated_cost_usd'])}"
    )
