"""The lazy click group every `orch` command group uses: subcommands are imported only
when they run, and an `OrchError` becomes one line and its exit code, never a traceback."""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import Any

import click

from orchestrator.errors import OrchError


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
