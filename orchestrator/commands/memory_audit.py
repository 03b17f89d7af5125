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
from orchestrator.memory.proposals import Proposal, Proposer
from orchestrator.store.memfile import Memory


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
    so on stderr once and propose nothing (the audit stays deterministic).

    The model seam (`orchestrator.models`, `orchestrator.messages`) is imported here, when
    `--model` names a model, as the SDKs are: an audit without one never loads it."""
    from orchestrator.messages import Message, Request, SystemPart
    from orchestrator.models import get_model

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
