"""Generate docs/cli.md from the `--help` of every orch command and subcommand.

    python -m evals.docs_cli --write    # rewrite docs/cli.md (what `make docs` runs)
    python -m evals.docs_cli --check    # exit 1 if docs/cli.md is out of date
    python -m evals.docs_cli            # print the document

Commands whose module is not there (parts not built yet) are not listed: the lazy command
table hides them, and this walks the same table. The help is rendered at a fixed width so
the document does not depend on the terminal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from orchestrator.cli import cli

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
WIDTH = 88
HEADER = """# orch command line

<!-- Generated from each command's --help by `python -m evals.docs_cli --write`
     (`make docs`); do not edit by hand. A test fails when this file is out of date. -->

Every command below prints this help with `--help`. Errors are one line on stderr; the exit
code is 1 for findings (a file that does not load, a log line that cannot be read), 2 for
usage errors, 3 when another orch process holds a lock.
"""


def walk(
    command: click.Command, path: list[str], parent: click.Context | None
) -> Iterator[tuple[list[str], str]]:
    """(command path, help text) for `command` and, depth first, every subcommand."""
    ctx = click.Context(
        command,
        info_name=path[-1],
        parent=parent,
        terminal_width=WIDTH,
        max_content_width=WIDTH,
    )
    yield path, command.get_help(ctx)
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from walk(sub, [*path, name], ctx)


def render() -> str:
    parts = [HEADER]
    for path, text in walk(cli, ["orch"], None):
        parts.append(f"\n## {' '.join(path)}\n\n```text\n{text.rstrip()}\n```\n")
    return "".join(parts)


def doc_main(
    argv: list[str] | None, *, render: Callable[[], str], doc: Path, description: str
) -> int:
    """`--write`, `--check` or print a generated document (this one, docs/scripted-model.md)."""
    parser = argparse.ArgumentParser(description=description)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help=f"rewrite {doc.name}")
    mode.add_argument("--check", action="store_true", help=f"exit 1 if {doc.name} is stale")
    parser.add_argument("--doc", type=Path, default=doc, help=f"the file (default: {doc.name})")
    args = parser.parse_args(argv)
    target: Path = args.doc
    text = render()
    if args.write:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
        return 0
    if args.check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != text:
            print(f"{target} is out of date: run `make docs`", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    return doc_main(argv, render=render, doc=DOC, description=__doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
