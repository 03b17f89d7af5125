"""`orch memory audit`: find duplicated, contradicted, stale or polluted memory."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.config import Config, load_config
from orchestrator.errors import ModelError
from orchestrator.memory import proposals
from orchestrator.memory.audit import audit as run_audit
from orchestrator.memory.decay import decay_candidates
from orchestrator.memory.proposals import Proposal, Proposer
from orchestrator.memory.writer import MemoryWriter
from orchestrator.messages import Message, Request, SystemPart
from orchestrator.models import get_model
from orchestrator.store.memfile import Memory, now_iso


@click.command("audit")
@click.option("--check", is_flag=True, help="Exit 1 when any finding is an error (for CI).")
@click.option("--no-verify", is_flag=True, help="Skip checking claims against the tree.")
@click.option(
    "--model",
    "model_name",
    metavar="NAME",
    help="A model that proposes near-duplicate and contradiction pairs the rules then "
    "check (e.g. anthropic:claude-haiku-4-5); without it the audit is deterministic.",
)
@json_option
def audit(check: bool, no_verify: bool, model_name: str | None, as_json: bool) -> None:
    """Find duplicated, contradicted, stale or polluted memory (changes nothing).

    \b
    Finds: near_duplicate, contradiction, stale_citation, moved_citation, excluded_content,
    secret, invalid_file, missing_field, index_drift, index_oversize, notes_style, low_value.
    \b
    Examples:
      orch memory audit
      orch memory audit --json
      orch memory audit --check      # in CI or as a pre-commit hook
      orch memory audit --model anthropic:claude-haiku-4-5
    """
    layout = repo()
    config = load_config(layout.root)
    proposer = _proposer(model_name, config) if model_name else None
    report = run_audit(layout, verify=not no_verify, config=config.memory, proposer=proposer)
    if as_json:
        emit_json(report.to_dict())
    else:
        click.echo(report.text(), nl=False)
    if check and report.errors:
        sys.exit(1)


def _proposer(name: str, config: Config) -> Proposer:
    """Put candidate pairs to the model `name`; when it fails or answers out of shape, say
    so on stderr once and propose nothing (the audit stays deterministic)."""
    model = get_model(name, config)

    def propose(pairs: Sequence[tuple[Memory, Memory]]) -> list[Proposal]:
        request = Request(
            system=[SystemPart(proposals.PROMPT)],
            messages=[Message.user(proposals.question(pairs))],
            purpose="auditor",
            max_tokens=8192,
        )
        try:
            return proposals.parse_reply(model.complete(request).text, pairs)
        except (ModelError, ValueError) as exc:
            why = exc.message if isinstance(exc, ModelError) else str(exc)
            click.echo(f"note: no pairs proposed by {name}: {why}", err=True)
            return []

    return propose


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
