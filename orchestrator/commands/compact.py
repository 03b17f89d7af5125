"""`orch compact SLUG`: compact a task's working context by hand."""

from __future__ import annotations

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.config import load_config
from orchestrator.context.saved import compact_saved
from orchestrator.engine.status import load
from orchestrator.store.tasks import TaskFolder


def task_model(task: TaskFolder) -> str | None:
    """The model the task's log says it uses (`orch run --model`, `orch resume --model`)."""
    state = load(task).state
    return state.model if state.task is not None else None


@click.command()
@click.argument("slug")
@click.option(
    "--phase", type=int, help="The phase whose conversation to compact (default: the latest)."
)
@click.option(
    "--model",
    "model_name",
    help="The model that writes the summary (default: the task's model).",
)
@click.option(
    "--reason", default="compacted by hand", show_default=True, help="Recorded in the event log."
)
@json_option
def compact(
    slug: str, phase: int | None, model_name: str | None, reason: str, as_json: bool
) -> None:
    """Compact the saved conversation of task SLUG's current phase.

    The older turns are saved to the task's transcripts, then replaced by a summary; the
    repository rules, the phase card and the last instruction are kept verbatim. The task
    must not be running (it takes the task lock). A failed compaction changes nothing.

    \b
    Examples:
      orch compact add-rate-limiting
      orch compact add-rate-limiting --phase 2 --json
    """
    layout = repo()
    task = TaskFolder.open(layout, slug)
    config = load_config(layout.root, {"model": model_name or task_model(task)})
    saved, result = compact_saved(task, config, phase=phase, reason=reason)
    if as_json:
        emit_json(
            {
                "task": slug,
                "phase": saved.phase,
                "outcome": result.outcome,
                "tokens_before": result.tokens_before,
                "tokens_after": result.tokens_after,
                "transcript": result.transcript,
                "turns": {"first": result.turns[0], "last": result.turns[1]}
                if result.turns
                else None,
                "messages_before": len(saved.messages),
                "messages_after": len(result.messages),
                "folded": [f.id for f in result.folds],
            }
        )
        return
    if result.outcome == "nothing":
        click.echo(
            f"nothing to compact in phase {saved.phase} of {slug}: "
            f"{len(saved.messages)} messages, fewer than the turns kept verbatim"
        )
        return
    assert result.turns is not None
    folded = f"; folded into {', '.join(f.id for f in result.folds)}" if result.folds else ""
    click.echo(
        f"compacted phase {saved.phase} of {slug}: {result.tokens_before} -> "
        f"{result.tokens_after} tokens (estimated); turns {result.turns[0]}-{result.turns[1]} "
        f"saved in {result.transcript}{folded}"
    )
