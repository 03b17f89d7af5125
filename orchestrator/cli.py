"""The `orch` command line: a click group whose subcommands load on first use.

Each command group lives in `orchestrator/commands/<group>.py`; nothing heavy is imported
until a command runs, so `orch --help` stays fast and never imports the model SDK.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

import click

from orchestrator import __version__
from orchestrator.errors import OrchError

# command name -> "module:attribute", in the order `orch --help` lists them
COMMANDS: dict[str, tuple[str, str]] = {
    "init": (
        "orchestrator.commands.init:init",
        "Scaffold orch's folders in the current git repository.",
    ),
    "run": ("orchestrator.commands.run:run", "Plan, audit, execute, gate and promote a task."),
    "plan": ("orchestrator.commands.run:plan", "Plan and audit a task without executing it."),
    "approve": ("orchestrator.commands.run:approve", "Answer a task that waits for approval."),
    "resume": (
        "orchestrator.commands.run:resume",
        "Continue a task after a crash or a context reset.",
    ),
    "status": ("orchestrator.commands.run:status", "Where every task stands."),
    "log": ("orchestrator.commands.log:log", "A task's event log, readable."),
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
    "notes": (
        "orchestrator.commands.notes:notes",
        "NOTES.md: the active objective, blockers, pending.",
    ),
    "session": ("orchestrator.commands.session:session", "Session scratch notes (tier 1)."),
}


class CLIError(click.ClickException):
    """An `OrchError` carried through click with its exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click declares it on the class


def _available(target: str) -> bool:
    module = target.split(":")[0]
    return importlib.util.find_spec(module) is not None


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when they run (or when listed)."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]] | None = None, **kw: Any):
        super().__init__(*args, **kw)
        self.lazy = lazy or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        eager = [n for n in self.commands if n not in self.lazy]
        return eager + [n for n, (target, _) in self.lazy.items() if _available(target)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy:
            target = self.lazy[cmd_name][0]
            if not _available(target):
                return None
            module_name, attr = target.split(":")
            command: click.Command = getattr(importlib.import_module(module_name), attr)
            return command
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Lazy commands' short help comes from the table, so listing them imports nothing.
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy:
                rows.append((name, self.lazy[name][1]))
            else:
                rows.append((name, self.commands[name].get_short_help_str(limit=80)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OrchError as exc:
            raise CLIError(exc.line(), exc.exit_code) from None
        except KeyboardInterrupt:
            # click would print "Aborted!" and exit 1; Ctrl-C is exit code 130 by convention
            click.echo("Interrupted.", err=True)
            raise click.exceptions.Exit(130) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            raise  # the reader went away (`orch log x | head`): click exits quietly
        except Exception as exc:
            if os.environ.get("ORCH_DEBUG"):
                raise
            raise CLIError(
                f"internal error: {type(exc).__name__}: {exc} (set ORCH_DEBUG=1 for the traceback)",
                1,
            ) from None


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
    try:
        cli.main(args=argv, prog_name="orch")
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
