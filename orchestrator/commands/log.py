"""`orch log SLUG`: a task's event log, readable."""

from __future__ import annotations

import json

import click

from orchestrator.commands._common import json_option, repo, warn
from orchestrator.engine.enums import STOPPED_STATES, Step
from orchestrator.engine.progress import format_event
from orchestrator.events.log import EVENT_TYPES, Event, read_events
from orchestrator.events.log import follow as follow_log
from orchestrator.events.verify import verify_log
from orchestrator.store.tasks import TaskFolder

_STEPS = frozenset(Step)


@click.command()
@click.argument("slug")
@json_option
@click.option(
    "--follow",
    "-f",
    is_flag=True,
    help="Keep printing events as they are appended, until the task stops (COMPLETE, "
    "BLOCKED, WAITING_APPROVAL) or Ctrl-C.",
)
@click.option(
    "--type",
    "types",
    multiple=True,
    type=click.Choice(EVENT_TYPES),
    help="Only this event type (repeatable).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Also verify the log (chain, MACs, head record) and every line's JSON Schema.",
)
def log(slug: str, as_json: bool, follow: bool, types: tuple[str, ...], check: bool) -> None:
    """Print task SLUG's event log (one event per line, or NDJSON with --json).

    Lines that cannot be read (a torn last line, a line that is not JSON or not an event)
    are skipped and reported on stderr, one line each, and the exit code is then 1.
    With --check, the verdict on the whole log follows on stderr (verified, tampered with
    the first bad line and why, or unverified: no MACs, another key); exit 1 unless verified.
    With --follow, new events are printed as they come until the task stops: COMPLETE,
    BLOCKED or WAITING_APPROVAL (at once for a task already stopped).
    """
    try:
        _print_log(slug, as_json, follow, types, check)
    except KeyboardInterrupt:
        if not follow:
            raise
        # Ctrl-C is how following ends, also when it comes before the first new event


def _print_log(slug: str, as_json: bool, follow: bool, types: tuple[str, ...], check: bool) -> None:
    layout = repo()
    task = TaskFolder.open(layout, slug)
    where = task.event_log_path.relative_to(layout.root).as_posix()
    problems = 0

    stopped = False  # the newest state change of the engine's put the task in a stopped state

    def show(event: Event) -> None:
        nonlocal stopped
        if event.event_type == "state_change" and event.payload.get("step") in _STEPS:
            stopped = event.payload.get("to") in STOPPED_STATES
        if types and event.event_type not in types:
            return
        if as_json:
            click.echo(json.dumps(event.to_dict(), ensure_ascii=False))
        else:
            click.echo(format_event(event))

    def problem(line: str) -> None:
        nonlocal problems
        problems += 1
        warn(line)

    result = read_events(task.event_log_path, check=check, where=where)
    for event in result.events:
        show(event)
    for line in result.problems:
        if follow and result.torn_tail and line is result.problems[-1]:
            continue  # following: a last line still being written shows once it is complete
        problem(line)
    if check:
        verdict = verify_log(task.event_log_path, task=task.slug)
        for note in verdict.notes:
            click.echo(f"note: {where}: {note}", err=True)
        click.echo(f"{'' if verdict.ok else 'error: '}{where}: {verdict.summary()}", err=True)
        problems += 0 if verdict.ok else 1
    if follow:
        try:
            for event in follow_log(
                task.event_log_path,
                offset=result.end,
                lines=result.lines,
                check=check,
                on_problem=lambda line: problem(line.replace(str(task.event_log_path), where)),
                stop=lambda: stopped,
            ):
                show(event)
        except KeyboardInterrupt:
            pass  # Ctrl-C is how following ends (the problems found still set the exit code)
    if problems:
        raise SystemExit(1)
