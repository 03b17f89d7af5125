"""`orch demo`: the whole workflow on a bundled sample repository, with a scripted model."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import click

from orchestrator.commands._common import emit_json, json_option
from orchestrator.engine.demo import Demo, DemoFailed
from orchestrator.engine.enums import WorkflowState
from orchestrator.errors import OrchError, UsageError


@click.command()
@click.option(
    "--dir",
    "where",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to put the sample repository (must not exist; default: a new temporary folder).",
)
@click.option(
    "--executor",
    type=click.Choice(["orch", "claude-code"]),
    default="orch",
    show_default=True,
    help="Who carries out the phases: orch's own loop, or Claude Code's real CLI against a "
    "local scripted Messages API server (needs `make claude-cli`).",
)
@json_option
def demo(where: Path | None, executor: str, as_json: bool) -> None:
    """Run the whole workflow on a bundled sample project, with a scripted model.

    \b
    Plan, audit (one revision), approval, two phases behind real test and lint gates
    (one gate fails and its retry fixes it), memory, a crash in the middle of phase 2,
    `orch resume`, completion. No API key is needed: the model's replies are scripted.
    The sample repository is kept, so you can look around afterwards.
    """
    if where is None:
        where = Path(tempfile.mkdtemp(prefix="orch-demo-")) / "wordstats"
    elif where.exists():
        raise UsageError(f"{where} exists; give a new folder with --dir")

    def say(line: str) -> None:
        if not as_json:
            click.echo(line)

    try:
        result = Demo(where.resolve(), say=say, quiet=as_json, executor=executor).run()
    except DemoFailed as exc:
        raise OrchError(f"the demo failed: {exc}") from None
    info = result.status
    if as_json:
        emit_json(
            {
                "repo": str(result.repo),
                "task": result.slug,
                "state": info.get("state"),
                "events": info.get("events"),
                "task_folder": info.get("folder"),
                "event_log": info.get("log"),
                "commits": result.commits,
                "memories": result.memories,
                "steps": result.steps,
            }
        )
    else:
        click.echo("")
        click.echo(f"Demo finished: task {result.slug} is {info.get('state')}.")
        click.echo(f"  sample repository: {result.repo}")
        click.echo(f"  task folder:       {info.get('folder')}")
        click.echo(f"  event log:         {info.get('log')} ({info.get('events')} events)")
        click.echo("  commits:")
        for line in result.commits:
            click.echo(f"    {line}")
        if result.memories:
            click.echo(f"  repo memories:     {', '.join(result.memories)}")
        orch = _orch_on_path()
        click.echo(
            f"Look around: cd {result.repo} && {orch} status {result.slug} && {orch} log {result.slug}"
        )
    if info.get("state") != WorkflowState.COMPLETE:
        raise SystemExit(1)


def _orch_on_path() -> str:
    """`orch` if that is the one running, else its full path (e.g. .venv/bin/orch)."""
    here = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    found = shutil.which("orch")
    if (
        here is not None
        and here.name == "orch"
        and (found is None or Path(found).resolve() != here)
    ):
        return str(here)
    return "orch"
