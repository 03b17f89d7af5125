"""`orch memory promote|import`: Checklist C on a task's candidates; Claude Code memory.

Thin: each command parses its options, calls `orchestrator.memory`, and prints.
"""

from __future__ import annotations

from pathlib import Path

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.config import load_config
from orchestrator.memory.importer import import_claude_code
from orchestrator.memory.promotion import promote as run_promote
from orchestrator.models import get_model
from orchestrator.store.tasks import TaskFolder


@click.command("promote")
@click.argument("slug")
@click.option("--phase", type=int, help="Record the decisions against this phase.")
@click.option(
    "--model",
    "model_name",
    help="Let this model propose classifications (e.g. scripted:extractor.yaml).",
)
@json_option
def promote(slug: str, phase: int | None, model_name: str | None, as_json: bool) -> None:
    """Run Checklist C on a task's candidates: write, supersede, skip, keep or drop each.

    Candidates come from the task's session notes (Key Results), phase reports (Notes for
    later phases), episodes, and memory-candidates.ndjson. Each decision is logged as a
    memory_promotion event in the task's log.

    \b
    Examples:
      orch memory promote add-rate-limit
      orch memory promote add-rate-limit --json
    """
    layout = repo()
    task = TaskFolder.open(layout, slug)
    model = None
    if model_name:
        model = get_model(model_name, load_config(layout.root))
    with task.lock(wait=10):
        report = run_promote(layout, task, task.events(), phase=phase, model=model)
    if as_json:
        emit_json(report.to_dict())
    else:
        click.echo(report.text(), nl=False)


@click.command("import")
@click.option(
    "--from",
    "source",
    type=click.Choice(["claude-code"]),
    required=True,
    help="The format of the folder to import.",
)
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--on-duplicate",
    type=click.Choice(["skip", "supersede"]),
    default="skip",
    show_default=True,
    help="Checklist A: what to do with a memory that near-duplicates one already here.",
)
@json_option
def import_(source: str, folder: Path, on_duplicate: str, as_json: bool) -> None:
    """Import a Claude Code memory folder (MEMORY.md + topic files) into memories/repo/.

    Names become kebab-case; every memory goes through validation and Checklist A; what
    is skipped is reported with the reason.

    \b
    Example:
      orch memory import --from claude-code ~/.claude/projects/my-app/memory
    """
    report = import_claude_code(repo(), folder, on_duplicate=on_duplicate)
    if as_json:
        emit_json(report.to_dict())
    else:
        click.echo(report.text(), nl=False)
