"""`orch memory audit`: find duplicated, contradicted, stale or polluted memory."""

from __future__ import annotations

import sys

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.memory.audit import audit as run_audit


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
