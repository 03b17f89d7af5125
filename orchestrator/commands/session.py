"""`orch session ...`: session scratch notes (tier 1)."""

from __future__ import annotations

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.errors import UsageError
from orchestrator.store.session import SessionNotes, session_slugs


@click.group()
def session() -> None:
    """Session notes in memories/session/ (git-ignored; cleared when a session ends)."""


def _pick(slug: str | None) -> str:
    slugs = session_slugs(repo())
    if slug:
        return slug
    if len(slugs) == 1:
        return slugs[0]
    if not slugs:
        raise UsageError("no session notes yet")
    raise UsageError(f"several sessions ({', '.join(slugs)}): name one")


@session.command("show")
@click.argument("slug", required=False)
@json_option
def session_show(slug: str | None, as_json: bool) -> None:
    """Print the session notes of task SLUG (or the only session)."""
    notes = SessionNotes(repo(), _pick(slug))
    if as_json:
        emit_json({"task": notes.slug, "path": str(notes.path), "sections": notes.sections()})
    else:
        click.echo(notes.text(), nl=False)


@session.command("clear")
@click.argument("slug", required=False)
@click.option("--all", "clear_all", is_flag=True, help="Clear every session's notes.")
def session_clear(slug: str | None, clear_all: bool) -> None:
    """Delete the session notes of task SLUG (or all of them)."""
    layout = repo()
    slugs = session_slugs(layout) if clear_all else [_pick(slug)]
    cleared = [s for s in slugs if SessionNotes(layout, s).clear()]
    if slug and not cleared:
        raise UsageError(f"no session notes for task {slug!r}")
    click.echo(f"Cleared {len(cleared)} session note file(s).")
