"""`orch mcp`: the repository's memory and tasks as an MCP server over stdio."""

from __future__ import annotations

import click

from orchestrator.commands._common import repo
from orchestrator.integrations.mcp_server import serve


@click.command("mcp")
def mcp() -> None:
    """Serve this repository's memory and tasks over MCP (stdio), for any MCP client.

    \b
    Tools: memory_search, memory_get, memory_add, memory_supersede, memory_verify,
    memory_audit, notes_get, task_status, task_brief. Resources: orch://notes,
    orch://memory-index. Writes go through the same checks as `orch memory add`;
    stale memories are never served as true.
    \b
    Set it up for Claude Code with `orch init --agent claude-code`, for Codex CLI with
    `orch init --agent codex` (docs/integrations.md).
    """
    serve(repo())
