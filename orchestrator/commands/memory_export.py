"""`orch memory export --agents-md`: AGENTS.md's orch section from verified repo memory."""

from __future__ import annotations

import sys

import click

from orchestrator.commands._common import emit_json, json_option, repo, warn
from orchestrator.config import load_config
from orchestrator.errors import UsageError
from orchestrator.integrations.agent_setup import claude_md_hint
from orchestrator.integrations.agents_md import END, START, export, write


@click.command("export")
@click.option("--agents-md", "agents", is_flag=True, help="Write AGENTS.md's orch section.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if the section is out of date.")
@json_option
def export_(agents: bool, check: bool, as_json: bool) -> None:
    """Keep the orch section of AGENTS.md true: verified memories, one line each.

    \b
    The section between the markers
      <!-- orch:memory:start --> and <!-- orch:memory:end -->
    is rewritten from the active memories that verify against the code (at most 30
    lines, the most cited first); text outside them is never touched, and the section is
    appended when missing. --check writes nothing and exits 1 when the section is out of
    date (for CI, or the pre-commit hook orch-agents-md-check).
    \b
    Examples:
      orch memory export --agents-md
      orch memory export --agents-md --check
    """
    if not agents:
        raise UsageError("say what to export: --agents-md (the one export there is)")
    layout = repo()
    result = export(layout, load_config(layout.root).memory)
    hint = claude_md_hint(layout)
    if not check:
        write(result)
    if as_json:
        emit_json(
            {
                "file": "AGENTS.md",
                "changed": result.changed,
                "written": result.changed and not check,
                "lines": result.lines,
                "left_out": result.left_out,
                "markers": [START, END],
                "hint": hint,
            }
        )
    elif check:
        click.echo(
            "AGENTS.md: orch's section is out of date: run `orch memory export --agents-md`"
            if result.changed
            else "AGENTS.md: orch's section is up to date."
        )
    else:
        what = "updated" if result.changed else "already up to date"
        click.echo(f"AGENTS.md {what}: {result.lines} memories in orch's section.")
    if hint and not as_json:
        warn(hint)
    if check and result.changed:
        sys.exit(1)
