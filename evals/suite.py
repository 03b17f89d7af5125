"""What every evaluation suite shares: run as a program, fail in one line, print JSON.

A suite is a click command declared with `@suite(name)` and run by
`python -m evals.<name>`. An `OrchError` raised inside it (a missing file, bad input)
becomes one line on stderr and the error's exit code, as it would under `orch`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from orchestrator.commands._lazy import CLIError
from orchestrator.errors import OrchError


class Suite(click.Command):
    """A click command whose `OrchError`s end the program as one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OrchError as exc:
            raise CLIError(exc.line(), exc.exit_code) from None


def suite(name: str) -> Callable[[Callable[..., Any]], Suite]:
    """Declare a suite's command (`-h` is help, as under `orch`)."""
    return click.command(name, cls=Suite, context_settings={"help_option_names": ["-h", "--help"]})


def json_option(func: Any) -> Any:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")(func)


def emit_json(data: Any) -> None:
    """One JSON document on stdout."""
    click.echo(json.dumps(data, ensure_ascii=False, default=str))
