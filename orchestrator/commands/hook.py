"""`orch hook claude-code EVENT`: answer a Claude Code hook (JSON on stdin, JSON on stdout)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from orchestrator.errors import OrchError
from orchestrator.integrations.claude_hooks import EVENTS, HookInputError, handle, read_payload
from orchestrator.store.layout import Layout


@click.group()
def hook() -> None:
    """Answer an agent's hooks (installed by `orch init --agent claude-code`)."""


@hook.command("claude-code")
@click.argument("event", type=click.Choice(EVENTS))
def hook_claude_code(event: str) -> None:
    """Answer Claude Code's EVENT hook: the event's JSON on stdin, the answer on stdout.

    \b
    SessionStart: NOTES.md, the active task's brief and the verified memory index,
                  as additional context (stale memories withheld).
    PreCompact:   saves the transcript's path and the session scratch.
    Stop:         reports memories the session's changes made stale (never blocks).
    \b
    A hook never breaks the session: bad input or any failure is one line on stderr and
    exit code 0.
    """
    try:
        payload = read_payload(sys.stdin.read())
        where = payload.get("cwd") or os.environ.get("CLAUDE_PROJECT_DIR") or None
        layout = Layout.discover(Path(where) if isinstance(where, str) else None)
        if not layout.initialised:
            raise HookInputError(f"orch is not set up in {layout.root} (orch init)")
        answer = handle(layout, event, payload)
    except (HookInputError, OrchError, OSError, ValueError) as exc:
        text = exc.line() if isinstance(exc, OrchError) else str(exc)
        click.echo(f"orch hook {event}: {text}", err=True)
        return
    except Exception as exc:
        click.echo(f"orch hook {event}: {type(exc).__name__}: {exc}", err=True)
        return
    if answer:
        click.echo(json.dumps(answer))
