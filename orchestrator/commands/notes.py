"""`orch notes ...`: NOTES.md, the active objective state."""

from __future__ import annotations

import click

from orchestrator.commands._common import emit_json, json_option, repo, warn


@click.group()
def notes() -> None:
    """NOTES.md: Active objective / Blockers / Pending, at most 20 lines."""


@notes.command("show")
@json_option
def notes_show(as_json: bool) -> None:
    """Print NOTES.md (exit code 1 if it strays from its form or its 20 lines)."""
    from orchestrator.store.notes import NOTES_NAME, Notes, NotesFile, form_problems, render_notes

    text = NotesFile(repo()).text()
    shown = render_notes(Notes()) if text is None else text
    problems = form_problems(shown)
    if as_json:
        from orchestrator.store.notes import parse_notes

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
    from orchestrator.errors import UsageError
    from orchestrator.store.notes import NotesFile

    if not (objective or blocker or pending or clear_blockers or clear_pending):
        raise UsageError("notes set needs --objective, --blocker, --pending or a --clear option")
    NotesFile(repo()).set(
        objective=list(objective) if objective else None,
        blockers=list(blocker) if blocker else ([] if clear_blockers else None),
        pending=list(pending) if pending else ([] if clear_pending else None),
    )
    click.echo("Updated NOTES.md.")
