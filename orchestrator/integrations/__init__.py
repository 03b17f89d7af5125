"""orch in the agents people already use: the MCP server, Claude Code's hooks, AGENTS.md.

Each module meets an outside agent on its terms and reaches orch's parts through the same
entry points the CLI uses (`MemoryWriter`, verification, the audit, task state), so the
rules hold whichever agent asks. The MCP SDK is imported only by `mcp_server`, which is
loaded only when `orch mcp` runs.
"""
