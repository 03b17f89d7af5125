"""`orch memory verify`: check memories' claims against the working tree."""

from __future__ import annotations

import sys

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.errors import UsageError
from orchestrator.memory.record import record as record_results
from orchestrator.memory.verify import verify_store
from orchestrator.store.repo import RepoMemoryStore


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
