"""`orch init --agent claude-code|codex`: the files that plug orch into an agent.

Claude Code reads project settings from the repository: `.mcp.json` (MCP servers) and
`.claude/settings.json` (hooks). `install_claude_code` merges orch's entries into them,
keeping everything that is there (other servers, other hooks, other settings), and
writes nothing when they are in already. `remove_claude_code` takes out exactly the
entries orch adds, and a file it leaves empty. Both write atomically and refuse a file
that is not a JSON object (one line; nothing written).

Codex CLI keeps its MCP servers in its own configuration in the user's home
(`~/.codex/config.toml`): orch writes nothing outside the repository, so
`codex_config` is the TOML to paste there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestrator.errors import InvalidFile
from orchestrator.store.fs import atomic_write
from orchestrator.store.layout import Layout

SERVER_NAME = "orch"
SERVER = {"command": "orch", "args": ["mcp"]}
HOOK_PREFIX = "orch hook claude-code "
HOOKS: dict[str, dict[str, Any]] = {
    "SessionStart": {
        "matcher": "startup|resume|clear|compact",
        "hooks": [{"type": "command", "command": HOOK_PREFIX + "SessionStart"}],
    },
    "PreCompact": {"hooks": [{"type": "command", "command": HOOK_PREFIX + "PreCompact"}]},
    "Stop": {"hooks": [{"type": "command", "command": HOOK_PREFIX + "Stop"}]},
}


def mcp_json(layout: Layout) -> Path:
    return layout.root / ".mcp.json"


def claude_settings(layout: Layout) -> Path:
    return layout.root / ".claude" / "settings.json"


def _read(path: Path, root: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    rel = path.relative_to(root).as_posix()
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (ValueError, OSError) as exc:
        raise InvalidFile(rel, f"not readable JSON ({exc}); fix it, then run again") from None
    if not isinstance(data, dict):
        raise InvalidFile(rel, "is not a JSON object; fix it, then run again")
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _ours(entry: Any) -> bool:
    """A hook entry orch added: every command in it is one of orch's hooks."""
    if not isinstance(entry, dict):
        return False
    commands = [h.get("command", "") for h in entry.get("hooks", []) if isinstance(h, dict)]
    return bool(commands) and all(str(c).startswith(HOOK_PREFIX) for c in commands)


def install_claude_code(layout: Layout) -> list[str]:
    """Merge orch's MCP server and hooks into the project's Claude Code files; the files
    it changed (none when everything was there)."""
    root = layout.root
    servers_file, settings_file = mcp_json(layout), claude_settings(layout)
    servers = _read(servers_file, root)
    settings = _read(settings_file, root)
    changed = []
    table = servers.setdefault("mcpServers", {})
    if not isinstance(table, dict):
        raise InvalidFile(".mcp.json", "mcpServers is not an object; fix it, then run again")
    if table.get(SERVER_NAME) != SERVER:
        if SERVER_NAME in table:
            raise InvalidFile(
                ".mcp.json", f"has another server named {SERVER_NAME!r}; rename it, then run again"
            )
        table[SERVER_NAME] = SERVER
        _write(servers_file, servers)
        changed.append(".mcp.json")
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidFile(".claude/settings.json", "hooks is not an object; fix it, then run again")
    added = False
    for event, entry in HOOKS.items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise InvalidFile(".claude/settings.json", f"hooks.{event} is not a list")
        if entry not in entries:
            entries.append(entry)
            added = True
    if added:
        _write(settings_file, settings)
        changed.append(".claude/settings.json")
    return changed


def remove_claude_code(layout: Layout) -> list[str]:
    """Take out what `install_claude_code` added (and a file left empty); the files changed."""
    root = layout.root
    changed = []
    servers_file = mcp_json(layout)
    servers = _read(servers_file, root)
    table = servers.get("mcpServers")
    if isinstance(table, dict) and table.get(SERVER_NAME) == SERVER:
        del table[SERVER_NAME]
        if not table:
            del servers["mcpServers"]
        _save_or_remove(servers_file, servers)
        changed.append(".mcp.json")
    settings_file = claude_settings(layout)
    settings = _read(settings_file, root)
    hooks = settings.get("hooks")
    if isinstance(hooks, dict):
        touched = False
        for event in list(hooks):
            entries = hooks[event]
            if not isinstance(entries, list):
                continue
            kept = [e for e in entries if not _ours(e)]
            if len(kept) != len(entries):
                touched = True
                if kept:
                    hooks[event] = kept
                else:
                    del hooks[event]
        if touched:
            if not hooks:
                del settings["hooks"]
            _save_or_remove(settings_file, settings)
            changed.append(".claude/settings.json")
    return changed


def _save_or_remove(path: Path, data: dict[str, Any]) -> None:
    if data:
        _write(path, data)
        return
    path.unlink()
    if path.parent.name == ".claude" and not any(path.parent.iterdir()):
        path.parent.rmdir()


def codex_config() -> str:
    """What to add to Codex CLI's ~/.codex/config.toml (orch writes nothing there)."""
    return (
        "# Codex CLI: orch's MCP server (run Codex from the repository's folder)\n"
        f"[mcp_servers.{SERVER_NAME}]\n"
        f'command = "{SERVER["command"]}"\n'
        f"args = {json.dumps(SERVER['args'])}\n"
    )


def claude_md_hint(layout: Layout) -> str | None:
    """How to make Claude Code read AGENTS.md, when CLAUDE.md exists and does not import it."""
    claude = layout.root / "CLAUDE.md"
    if not claude.is_file():
        return None
    if "@AGENTS.md" in claude.read_text(encoding="utf-8", errors="replace"):
        return None
    return (
        "CLAUDE.md does not import AGENTS.md, so Claude Code will not read orch's memory "
        "section there: add a line `@AGENTS.md` to CLAUDE.md (orch does not edit it)"
    )
