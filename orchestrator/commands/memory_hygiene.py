"""`orch memory verify|audit|promote|import`: memory discipline from the command line.

Thin: each command parses its options, calls `orchestrator.memory`, and prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.config import load_config
from orchestrator.errors import UsageError
from orchestrator.memory.audit import audit as run_audit
from orchestrator.memory.importer import import_claude_code
from orchestrator.memory.promotion import promote as run_promote
from orchestrator.memory.verify import record as record_results
from orchestrator.memory.verify import verify_store
from orchestrator.models import get_model
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.tasks import TaskFolder


@click.command("verify")
@click.argument("names", nargs=-1)
@click.option("--all", "include_all", is_flag=True, help="Also check superseded and stale ones.")
@click.option(
    "--record",
    is_flag=True,
    help="Write `verified: {commit, at, result}` into memories whose record changes.",
)
@json_option
def verify(names: tuple[str, ...], include_all: bool, record: bool, as_json: bool) -> None:
    """Check memories' claims against the working tree: ok, changed or stale.

    Claims are citations (path, line, symbol) and what the body names in backticks
    (paths, `name()`, `Class.method`, `--flags`). Exit code 1 when any memory is stale.

    \b
    Examples:
      orch memory verify
      orch memory verify test-command --json
      orch memory verify --record
    """
    layout = repo()
    everything, active = verify_store(layout)
    if names:
        unknown = [n for n in names if n not in active]
        if unknown:
            raise UsageError(f"no memory named {unknown[0]!r} (see `orch memory list`)")
        results = [v for v in everything if v.name in names]
    else:
        results = [v for v in everything if include_all or active[v.name]]
    written: list[str] = []
    if record:
        memories = RepoMemoryStore(layout).load_all().by_name()
        chosen = [memories[v.name] for v in results if v.name in memories]
        written = record_results(layout, chosen, results)
    counts = {r: sum(1 for v in results if v.result == r) for r in ("ok", "changed", "stale")}
    if as_json:
        emit_json(
            {
                "v": 1,
                "memories": len(results),
                **counts,
                "results": [v.to_dict() for v in results],
                "recorded": written,
            }
        )
    else:
        for v in results:
            if v.result != "ok":
                click.echo(f"{v.result.upper():<8} {v.name}: {v.summary()}")
        click.echo(
            f"{len(results)} memories: {counts['ok']} ok, {counts['changed']} changed, "
            f"{counts['stale']} stale."
        )
        if record:
            click.echo(f"Recorded the verification in {len(written)} memory files.")
    if counts["stale"]:
        sys.exit(1)


@click.command("audit")
@click.option("--check", is_flag=True, help="Exit 1 when any finding is an error (for CI).")
@click.option("--no-verify", is_flag=True, help="Skip checking claims against the tree.")
@json_option
def audit(check: bool, no_verify: bool, as_json: bool) -> None:
    """Find duplicated, contradicted, stale or polluted memory (changes nothing).

    \b
    Finds: near_duplicate, contradiction, stale_citation, excluded_content, secret,
    invalid_file, missing_field, index_drift, index_oversize, notes_style.
    \b
    Examples:
      orch memory audit
      orch memory audit --json
      orch memory audit --check      # in CI or as a pre-commit hook
    """
    report = run_audit(repo(), verify=not no_verify)
    if as_json:
        emit_json(report.to_dict())
    else:
        click.echo(report.text(), nl=False)
    if check and report.errors:
        sys.exit(1)


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
