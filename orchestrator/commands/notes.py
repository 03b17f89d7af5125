"""`orch notes ...`: NOTES.md, the active objective state."""

from __future__ import annotations

import click

from orchestrator.checks.secrets import secret_kind
from orchestrator.commands._common import emit_json, json_option, repo, warn
from orchestrator.errors import SecretRefused, UsageError
from orchestrator.store.notes import (
    NOTES_NAME,
    Notes,
    NotesFile,
    form_problems,
    parse_notes,
    render_notes,
)


@click.group()
def notes() -> None:
    """NOTES.md: Active objective / Blockers / Pending, at most 20 lines."""


@notes.command("show")
@json_option
def notes_show(as_json: bool) -> None:
    """Print NOTES.md (exit code 1 if it strays from its form or its 20 lines)."""
    text = NotesFile(repo()).text()
    shown = render_notes(Notes()) if text is None else text
    problems = form_problems(shown)
    if as_json:
        emit_json({**parse_notes(shown).to_dict(), "problems": problems})
    else:
        click.echo(shown, nl=not shown.endswith("\n") and bool(shown))
        for problem in problems:
            warn(f"{NOTES_NAME}: {problem}")
    if problems:
        raise SystemExit(1)


@notes.command("set")
@click.option(
    "--objective", multiple=True, help="The active objective (repeatable; replaces the section)."
)
@click.option("--blocker", multiple=True, help="A blocker (repeatable; replaces the section).")
@click.option("--pending", multiple=True, help="A pending item (repeatable; replaces the section).")
@click.option("--clear-blockers", is_flag=True, help="Empty the Blockers section.")
@click.option("--clear-pending", is_flag=True, help="Empty the Pending section.")
def notes_set(
    objective: tuple[str, ...],
    blocker: tuple[str, ...],
    pending: tuple[str, ...],
    clear_blockers: bool,
    clear_pending: bool,
) -> None:
    """Replace sections of NOTES.md (sections not named stay as they are)."""
    if not (objective or blocker or pending or clear_blockers or clear_pending):
        raise UsageError("notes set needs --objective, --blocker, --pending or a --clear option")
    for field, items in (("objective", objective), ("blocker", blocker), ("pending", pending)):
        for item in items:
            kind = secret_kind(item)
            if kind is not None:
                raise SecretRefused("NOTES.md", field, kind)
    NotesFile(repo()).set(
        objective=list(objective) if objective else None,
        blockers=list(blocker) if blocker else ([] if clear_blockers else None),
        pending=list(pending) if pending else ([] if clear_pending else None),
    )
    click.echo("Updated NOTES.md.")
