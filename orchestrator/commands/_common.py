"""Helpers shared by the command modules: the repository, JSON output, one-line notices."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from orchestrator.store.layout import Layout


def repo(*, initialised: bool = True) -> Layout:
    layout = Layout.discover()
    return layout.require_initialised() if initialised else layout


def emit_json(data: Any) -> None:
    """One JSON document on stdout (compact: the C encoder is ten times faster than indent)."""
    click.echo(json.dumps(data, ensure_ascii=False, default=str))


def warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


def json_option(func: Any) -> Any:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")(func)


def is_tty() -> bool:
    return sys.stdout.isatty()
