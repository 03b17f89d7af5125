"""`orch memory decay`: old, unused, low-importance memories, and marking them stale."""

from __future__ import annotations

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.config import load_config
from orchestrator.memory.decay import decay_candidates
from orchestrator.memory.writer import MemoryWriter
from orchestrator.store.memfile import now_iso


@click.command("decay")
@click.option("--apply", "apply_", is_flag=True, help="Mark the candidates stale (else list).")
@json_option
def decay(apply_: bool, as_json: bool) -> None:
    """Decay candidates: old, unused, low-importance memories; --apply marks them stale.

    \b
    A candidate is older than the window (the last [memory] decay_after_tasks tasks or
    decay_after_days days, the newer), unused within it, and below decay_below. Nothing
    is deleted: a decayed memory keeps its file, with status stale and `decayed` saying
    when and why (`orch memory list --all` shows it).
    \b
    Examples:
      orch memory decay            # what would decay, and why
      orch memory decay --apply
    """
    layout = repo()
    writer = MemoryWriter(layout)
    memories = writer.load_all().memories
    found = decay_candidates(layout, memories, load_config(layout.root).memory)
    if apply_:
        for c in found:
            memory = writer.get(c.name)
            extra = {**memory.extra, "decayed": {"at": now_iso(), "reason": c.reason}}
            writer.update(c.name, status="stale", extra=extra)
    if as_json:
        emit_json({"v": 1, "applied": apply_, "candidates": [c.to_dict() for c in found]})
        return
    for c in found:
        click.echo(f"{'decayed' if apply_ else 'candidate'} {c.name}: {c.reason}")
    if not found:
        click.echo("No decay candidates.")
    elif not apply_:
        click.echo(f"{len(found)} candidates: `orch memory decay --apply` marks them stale.")
