"""`orch init`."""

from __future__ import annotations

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.config import load_config
from orchestrator.store.scaffold import scaffold


@click.command()
@json_option
def init(as_json: bool) -> None:
    """Scaffold orch's layout in the current git repository.

    \b
    Creates NOTES.md, memories/repo/MEMORY.md, memories/session/ (git-ignored),
    plans/templates/, plans/artifacts/ and .orch/ (git-ignored); task transcripts are
    git-ignored too unless [records] commit_transcripts = true. Safe to run again:
    it never overwrites a file that exists.
    """
    layout = repo(initialised=False)
    config = load_config(layout.root)
    result = scaffold(layout, ignore_transcripts=not config.records.commit_transcripts)
    if as_json:
        emit_json({"root": str(layout.root), "created": result.created, "kept": result.kept})
        return
    if not result.created:
        click.echo(f"orch is already set up in {layout.root}; nothing changed.")
        return
    click.echo(f"Set up orch in {layout.root}:")
    for item in result.created:
        click.echo(f"  created {item}")
