"""The `orch` command line: a click group whose subcommands load on first use.

Each command group lives in `orchestrator/commands/<group>.py`; nothing heavy is imported
until a command runs, so `orch --help` stays fast and never imports the model SDK.
"""

from __future__ import annotations

import atexit
import gc
import sys

import click

from orchestrator import __version__
from orchestrator.commands._lazy import LazyGroup

# command name -> "module:attribute", in the order `orch --help` lists them
COMMANDS: dict[str, tuple[str, str]] = {
    "init": (
        "orchestrator.commands.init:init",
        "Scaffold orch's folders in the current git repository.",
    ),
    "run": ("orchestrator.commands.run:run", "Plan, audit, execute, gate and promote a task."),
    "plan": (
        "orchestrator.commands.run:plan",
        "Plan and audit a task without executing it; show a task's plan.",
    ),
    "approve": ("orchestrator.commands.run:approve", "Answer a task that waits for approval."),
    "resume": (
        "orchestrator.commands.run:resume",
        "Continue a task after a crash or a context reset.",
    ),
    "abandon": ("orchestrator.commands.run:abandon", "Give a task up: it becomes ABANDONED."),
    "status": ("orchestrator.commands.status:status", "Where every task stands."),
    "log": ("orchestrator.commands.log:log", "A task's event log, readable."),
    "report": (
        "orchestrator.commands.report:report",
        "One HTML page about a task: timeline, gates, costs, commits.",
    ),
    "compact": (
        "orchestrator.commands.compact:compact",
        "Compact a task's working context by hand.",
    ),
    "demo": (
        "orchestrator.commands.demo:demo",
        "The whole workflow on a bundled sample repository.",
    ),
    "memory": (
        "orchestrator.commands.memory:memory",
        "Repo memory: list, show, add, supersede, search, audit...",
    ),
    "mcp": (
        "orchestrator.commands.mcp:mcp",
        "Serve memory and tasks to any agent over MCP (stdio).",
    ),
    "hook": (
        "orchestrator.commands.hook:hook",
        "Answer an agent's hook (Claude Code): JSON in, JSON out.",
    ),
    "notes": (
        "orchestrator.commands.notes:notes",
        "NOTES.md: the active objective, blockers, pending.",
    ),
    "session": ("orchestrator.commands.session:session", "Session scratch notes (tier 1)."),
}


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="orch")
def cli() -> None:
    """orch: multi-phase coding tasks driven by a language model, with memory kept
    in the repository it works on.

    \b
    Set up a repository, then run a task:
      orch init
      orch run "add rate limiting to the API"
      orch status
      orch resume add-rate-limiting-to-the-api
    """


def main(argv: list[str] | None = None) -> None:
    # At exit every object goes with the process; Python's last collections would still walk
    # them all (about 25 ms for `orch status`, a sixth of its time). Frozen, they are left
    # out of those walks; nothing else changes: the collector works as ever while a command
    # runs, and what a command closes or flushes it does so explicitly before it returns.
    atexit.register(gc.freeze)
    try:
        cli.main(args=argv, prog_name="orch")
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
