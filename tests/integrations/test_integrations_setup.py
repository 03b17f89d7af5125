"""`orch init --agent`: the files it writes, merged with the user's, and taken out again."""

from __future__ import annotations

import json

from integrations_support import orch

from orchestrator.store.layout import Layout

THEIRS_MCP = {"mcpServers": {"docs": {"command": "docs-server", "args": []}}}
THEIRS_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
}


def test_claude_code_files_merge_and_come_out_again(project: Layout) -> None:
    repo = project.root
    (repo / ".mcp.json").write_text(json.dumps(THEIRS_MCP, indent=2) + "\n")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps(THEIRS_SETTINGS) + "\n")
    first = orch(repo, "init", "--agent", "claude-code")
    assert first.returncode == 0, first.stderr
    servers = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert servers["docs"] == THEIRS_MCP["mcpServers"]["docs"]
    assert servers["orch"] == {"command": "orch", "args": ["mcp"]}
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == THEIRS_SETTINGS["permissions"]
    commands = [h["command"] for e in settings["hooks"]["Stop"] for h in e["hooks"]]
    assert commands == ["say done", "orch hook claude-code Stop"]
    assert settings["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert "PreCompact" in settings["hooks"]
    assert "commit what orch set up" in first.stdout and ".mcp.json" in first.stdout
    before = {p: (repo / p).read_text() for p in (".mcp.json", ".claude/settings.json")}
    again = orch(repo, "init", "--agent", "claude-code")
    assert again.returncode == 0
    assert {p: (repo / p).read_text() for p in before} == before  # nothing added twice
    removed = orch(repo, "init", "--agent", "claude-code", "--remove")
    assert removed.returncode == 0 and "Took orch's entries out" in removed.stdout
    assert json.loads((repo / ".mcp.json").read_text()) == THEIRS_MCP
    assert json.loads((repo / ".claude" / "settings.json").read_text()) == THEIRS_SETTINGS


def test_files_orch_created_alone_are_removed_whole(project: Layout) -> None:
    repo = project.root
    assert orch(repo, "init", "--agent", "claude-code").returncode == 0
    assert (repo / ".mcp.json").exists() and (repo / ".claude" / "settings.json").exists()
    assert orch(repo, "init", "--agent", "claude-code", "--remove").returncode == 0
    assert not (repo / ".mcp.json").exists() and not (repo / ".claude").exists()


def test_a_broken_settings_file_is_refused_and_left_alone(project: Layout) -> None:
    repo = project.root
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{not json")
    done = orch(repo, "init", "--agent", "claude-code")
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1
    assert "settings.json" in done.stderr
    assert (repo / ".claude" / "settings.json").read_text() == "{not json"


def test_codex_gets_its_configuration_printed_and_nothing_written(project: Layout) -> None:
    repo = project.root
    done = orch(repo, "init", "--agent", "codex")
    assert done.returncode == 0
    assert '[mcp_servers.orch]\ncommand = "orch"\nargs = ["mcp"]' in done.stdout
    assert not (repo / ".mcp.json").exists() and not (repo / ".codex").exists()
    home_codex = list((repo.parent).glob("**/.codex"))
    assert home_codex == []
