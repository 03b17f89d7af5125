"""`orch init`."""

from __future__ import annotations

import click

from orchestrator.commands._common import emit_json, json_option, repo


@click.command()
@json_option
def init(as_json: bool) -> None:
    """Scaffold orch's layout in the current git repository.

    \b
    Creates NOTES.md, memories/repo/MEMORY.md, memories/session/ (git-ignored),
    plans/templates/, plans/artifacts/ and .orch/ (git-ignored). Safe to run again:
    it never overwrites a file that exists.
    """
    from orchestrator.store.scaffold import scaffold

    layout = repo(initialised=False)
    result = scaffold(layout)
    if as_json:
        emit_json({"root": str(layout.root), "created": result.created, "kept": result.kept})
        return
    if not result.created:
        click.echo(f"orch is already set up in {layout.root}; nothing changed.")
        return
    click.echo(f"Set up orch in {layout.root}:")
    for item in result.created:
        click.echo(f"  created {item}")
