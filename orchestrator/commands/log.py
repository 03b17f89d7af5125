"""`orch log SLUG`: a task's event log, readable."""

from __future__ import annotations

import json
from typing import Any

import click

from orchestrator.commands._common import json_option, repo, warn
from orchestrator.events.log import EVENT_TYPES, Event


def summarise(event: Event) -> str:
    p: dict[str, Any] = event.payload
    if event.event_type == "gate_event":
        return f"{p.get('event_type')} {p.get('decision')} [{p.get('workflow_state')}]: {p.get('reason')}"
    if event.event_type == "state_change":
        return f"{p.get('from')} -> {p.get('to')}" + (f": {p['reason']}" if p.get("reason") else "")
    for key in ("summary", "detail", "message", "reason"):
        if isinstance(p.get(key), str):
            return p[key]
    text = json.dumps(p, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 160 else text[:157] + "..."


def format_event(event: Event) -> str:
    phase = "-" if event.phase is None else str(event.phase)
    return f"{event.ts}  {phase:>2}  {event.agent:<14} {event.event_type:<19} {summarise(event)}"


@click.command()
@click.argument("slug")
@json_option
@click.option("--follow", "-f", is_flag=True, help="Keep printing events as they are appended.")
@click.option(
    "--type",
    "types",
    multiple=True,
    type=click.Choice(EVENT_TYPES),
    help="Only this event type (repeatable).",
)
@click.option(
    "--check", is_flag=True, help="Validate every line against the schemas; exit 1 on any problem."
)
def log(slug: str, as_json: bool, follow: bool, types: tuple[str, ...], check: bool) -> None:
    """Print task SLUG's event log (one event per line, or NDJSON with --json)."""
    from orchestrator.events.log import follow as follow_log
    from orchestrator.events.log import read_events
    from orchestrator.store.tasks import TaskFolder

    task = TaskFolder.open(repo(), slug)

    def show(event: Event) -> None:
        if types and event.event_type not in types:
            return
        if as_json:
            click.echo(json.dumps(event.to_dict(), ensure_ascii=False))
        else:
            click.echo(format_event(event))

    result = read_events(task.event_log_path, check=check)
    for event in result.events:
        show(event)
    for problem in result.problems:
        warn(problem)
    if follow:
        skip = len(result.events)
        for n, event in enumerate(follow_log(task.event_log_path)):
            if n >= skip:
                show(event)
    if check and result.problems:
        raise SystemExit(1)
