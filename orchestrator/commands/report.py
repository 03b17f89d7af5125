"""`orch report SLUG`: one self-contained HTML page about a task."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.report import write
from orchestrator.store.tasks import TaskFolder


@click.command()
@click.argument("slug")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the page here (default: plans/artifacts/SLUG/report.html).",
)
@click.option("--open", "open_it", is_flag=True, help="Open the page in a web browser.")
@json_option
def report(slug: str, out: Path | None, open_it: bool, as_json: bool) -> None:
    """Write task SLUG's report: one HTML page with the phases on a timeline, every gate
    (duration, verdict, command, exit code, output tail), retries and approvals, review
    verdicts, tokens and estimated cost per phase, memory decisions, the commits with their
    diffstat, and links to the plan, reports and transcripts.

    The page is self-contained (inline CSS, no script) and fetches nothing when viewed.
    A task without events is an error, and nothing is written.
    """
    layout = repo()
    task = TaskFolder.open(layout, slug)
    path, rep = write(task, out)
    try:
        shown = path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        shown = str(path)
    committed = sum(1 for p in rep.phases.values() if p.commit)
    if as_json:
        emit_json(
            {
                "report": str(path),
                "task": rep.slug,
                "state": rep.state,
                "events": rep.events,
                "phases": len(rep.phases),
                "committed": committed,
                "gates": len(rep.gates),
                "commits": len(rep.commits),
            }
        )
    else:
        click.echo(
            f"wrote {shown}: {rep.state or 'no state'}, {committed} of {len(rep.phases)} "
            f"phase(s) committed, {len(rep.gates)} gate(s), {rep.events} events"
        )
    if open_it:
        webbrowser.open(path.as_uri())
