"""`orch init`."""

from __future__ import annotations

import subprocess

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.config import load_config
from orchestrator.errors import UsageError
from orchestrator.integrations.agent_setup import (
    claude_md_hint,
    codex_config,
    install_claude_code,
    remove_claude_code,
)
from orchestrator.store.layout import Layout
from orchestrator.store.scaffold import scaffold

AGENTS = ("claude-code", "codex")


@click.command()
@click.option(
    "--agent",
    type=click.Choice(AGENTS),
    help="Also plug orch into this agent: claude-code writes .mcp.json and hooks in "
    ".claude/settings.json; codex prints its MCP configuration.",
)
@click.option("--remove", is_flag=True, help="With --agent: take out what it added.")
@json_option
def init(agent: str | None, remove: bool, as_json: bool) -> None:
    """Scaffold orch's layout in the current git repository.

    \b
    Creates NOTES.md, memories/repo/MEMORY.md, memories/session/ (git-ignored),
    plans/templates/, plans/artifacts/ and .orch/ (git-ignored); task transcripts are
    git-ignored too unless [records] commit_transcripts = true. Safe to run again:
    it never overwrites a file that exists.
    \b
    Examples:
      orch init
      orch init --agent claude-code            # .mcp.json + hooks, merged with yours
      orch init --agent claude-code --remove   # takes out exactly what it added
      orch init --agent codex                  # prints the TOML for ~/.codex/config.toml
    """
    if remove and not agent:
        raise UsageError("--remove needs --agent (what to take out)")
    layout = repo(initialised=False)
    if remove:
        assert agent is not None
        _remove(layout, agent, as_json)
        return
    config = load_config(layout.root)
    result = scaffold(layout, ignore_transcripts=not config.records.commit_transcripts)
    agent_files = install_claude_code(layout) if agent == "claude-code" else []
    uncommitted = _uncommitted(layout)
    if as_json:
        emit_json(
            {
                "root": str(layout.root),
                "created": result.created,
                "kept": result.kept,
                "agent": agent,
                "agent_files": agent_files,
                "uncommitted": uncommitted,
                "codex_config": codex_config() if agent == "codex" else None,
            }
        )
        return
    if result.created:
        click.echo(f"Set up orch in {layout.root}:")
        for item in result.created:
            click.echo(f"  {item}" if item.startswith(".gitignore") else f"  created {item}")
    else:
        done = "" if agent_files else "; nothing changed"
        click.echo(f"orch is already set up in {layout.root}{done}.")
    for path in agent_files:
        click.echo(f"  {path}: orch's MCP server and hooks for Claude Code merged in")
    if agent == "codex":
        click.echo("\nCodex CLI reads its MCP servers from ~/.codex/config.toml; add:\n")
        click.echo(codex_config())
    hint = claude_md_hint(layout) if agent == "claude-code" else None
    if hint:
        click.echo(f"\nnote: {hint}")
    _next_steps(layout, uncommitted)


def _remove(layout: Layout, agent: str, as_json: bool) -> None:
    changed = remove_claude_code(layout) if agent == "claude-code" else []
    if as_json:
        emit_json({"root": str(layout.root), "agent": agent, "removed_from": changed})
    elif agent == "codex":
        click.echo("orch wrote nothing for Codex CLI: remove [mcp_servers.orch] from "
                   "~/.codex/config.toml yourself.")  # fmt: skip
    elif changed:
        click.echo(f"Took orch's entries out of {', '.join(changed)}.")
    else:
        click.echo("No orch entries to take out of .mcp.json or .claude/settings.json.")


def _uncommitted(layout: Layout) -> list[str]:
    """What `git status` shows as changed or new (what the user should commit)."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=normal"],
        cwd=layout.root,
        capture_output=True,
        text=True,
    )
    return [line[3:] for line in done.stdout.splitlines() if line.strip()]


def _next_steps(layout: Layout, uncommitted: list[str]) -> None:
    has_config = (layout.root / "orch.toml").is_file() or "orch" in (
        (layout.root / "pyproject.toml").read_text(encoding="utf-8", errors="replace")
        if (layout.root / "pyproject.toml").is_file()
        else ""
    )
    click.echo("\nNext:")
    step = 1
    if not has_config:
        click.echo(
            f"  {step}. say how to check a change, in orch.toml:\n"
            '       test_command = "pytest -q"\n'
            '       lint_command = "ruff check ."'
        )
        step += 1
    if uncommitted:
        shown = " ".join(uncommitted[:8]) + (" ..." if len(uncommitted) > 8 else "")
        click.echo(
            f"  {step}. commit what orch set up (orch run refuses a tree with uncommitted "
            f"changes):\n       git add {shown} && git commit -m 'Set up orch'"
        )
        step += 1
    click.echo(f'  {step}. orch run "describe the task"')
