"""`orch memory add|supersede|index`: writing repo memory (through `MemoryWriter`)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.errors import OrchError, UsageError
from orchestrator.memory.writer import (
    DUPLICATE_POLICIES,
    DuplicatePolicy,
    MemoryWriter,
    WriteResult,
)
from orchestrator.store.index import render_index
from orchestrator.store.memfile import MEMORY_TYPES, Citation, Memory, first_paragraph
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.tasks import slugify

CITE = re.compile(r"^(?P<path>[^:#]+)(?::(?P<line>\d+))?(?:#(?P<symbol>.+))?$")


def parse_citation(text: str) -> Citation:
    match = CITE.match(text.strip())
    if not match:
        raise UsageError(f"--cite {text!r}: expected PATH[:LINE][#SYMBOL]")
    line = match.group("line")
    return Citation(match.group("path"), int(line) if line else None, match.group("symbol"))


def _body(fact: str | None, body_file: str | None) -> str | None:
    if body_file == "-":
        return sys.stdin.read()
    if body_file:
        try:
            with open(body_file, encoding="utf-8") as fh:
                return fh.read()
        except OSError as exc:
            raise UsageError(f"--body-file {body_file}: {exc.strerror}") from None
    return fact


def _fields(func: Callable[..., None]) -> Callable[..., None]:
    """The options that give a memory's fields (add and supersede)."""
    options = [
        click.option("--name", help="File stem, kebab-case (default: from the subject)."),
        click.option("--type", "kind", type=click.Choice(MEMORY_TYPES)),
        click.option(
            "--description",
            help="One line; what MEMORY.md shows (default: the fact's first sentence).",
        ),
        click.option("--subject", help="What the fact is about, e.g. 'test command'."),
        click.option("--reason", help="Why it matters beyond one task."),
        click.option(
            "--cite",
            "cites",
            multiple=True,
            metavar="PATH[:LINE][#SYMBOL]",
            help="A citation (repeatable).",
        ),
        click.option("--fact", help="The fact: a concrete, falsifiable paragraph."),
        click.option("--body-file", help="Read the whole body from a file ('-' for stdin)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _duplicate_options(func: Callable[..., None]) -> Callable[..., None]:
    """Checklist A's choice, for `add` (a superseding memory is meant to resemble the old)."""
    options = [
        click.option(
            "--on-duplicate",
            type=click.Choice(DUPLICATE_POLICIES),
            default="refuse",
            show_default=True,
            help="Checklist A: what to do when a near-duplicate exists.",
        ),
        click.option(
            "--duplicate-reason",
            help="Why a near-duplicate must exist too (with --on-duplicate create).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _first_sentence(text: str, limit: int = 120) -> str:
    """The fact's first sentence, cut at a word boundary to fit one index line."""
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    if len(first) <= limit:
        return first
    return first[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "..."


def _print_write(result: WriteResult, as_json: bool) -> None:
    if as_json:
        emit_json(
            {
                "action": result.action,
                "name": result.memory.name,
                "superseded": result.superseded,
                "duplicates": [{"name": n, "score": s} for n, s in result.duplicates],
            }
        )
        return
    if result.action == "skipped":
        names = ", ".join(n for n, _ in result.duplicates)
        click.echo(f"Skipped {result.memory.name}: it near-duplicates {names}.")
    elif result.action == "superseded":
        click.echo(f"Wrote {result.memory.name}; it supersedes {', '.join(result.superseded)}.")
    else:
        click.echo(f"Wrote memories/repo/{result.memory.name}.md and regenerated MEMORY.md.")


@click.command("add")
@_fields
@_duplicate_options
@json_option
def memory_add(
    name: str | None,
    kind: str | None,
    description: str | None,
    subject: str | None,
    reason: str | None,
    cites: tuple[str, ...],
    fact: str | None,
    body_file: str | None,
    on_duplicate: DuplicatePolicy,
    duplicate_reason: str | None,
    as_json: bool,
) -> None:
    """Add a memory (validated, checked for near-duplicates, indexed)."""
    body = _body(fact, body_file)
    missing = [
        flag
        for flag, value in (("--type", kind), ("--subject", subject), ("--fact", body))
        if not value
    ]
    if missing:
        raise UsageError(f"memory add needs {', '.join(missing)}")
    assert kind and subject and body
    mem = Memory(
        name=name or slugify(subject),
        description=description or _first_sentence(first_paragraph(body)),
        type=kind,
        body=body.strip() + "\n",
        subject=subject,
        reason=reason,
        citations=tuple(parse_citation(c) for c in cites),
    )
    result = MemoryWriter(repo()).add(
        mem,
        on_duplicate=on_duplicate,
        reason=duplicate_reason,
    )
    _print_write(result, as_json)


@click.command("supersede")
@click.argument("old")
@_fields
@json_option
def memory_supersede(
    old: str,
    name: str | None,
    kind: str | None,
    description: str | None,
    subject: str | None,
    reason: str | None,
    cites: tuple[str, ...],
    fact: str | None,
    body_file: str | None,
    as_json: bool,
) -> None:
    """Replace memory OLD with a corrected one; OLD is kept, marked superseded.

    Fields not given are taken from OLD; --name and --fact (or --body-file) are required.
    """
    writer = MemoryWriter(repo())
    previous = writer.store.get(old)
    body = _body(fact, body_file)
    if not name or not body:
        raise UsageError("memory supersede needs --name (a new name) and --fact or --body-file")
    new = previous.with_changes(
        name=name,
        type=kind or previous.type,
        description=description or _first_sentence(first_paragraph(body)),
        subject=subject or previous.subject,
        reason=reason or previous.reason,
        citations=tuple(parse_citation(c) for c in cites) or previous.citations,
        body=body.strip() + "\n",
        created=None,
        updated=None,
        supersedes=(),
        superseded_by=None,
        verified=None,
        extra={},
    )
    _print_write(writer.supersede(old, new), as_json)


@click.command("index")
@click.option("--check", is_flag=True, help="Change nothing; exit 1 if MEMORY.md is out of step.")
def memory_index(check: bool) -> None:
    """Regenerate MEMORY.md from the memory files."""
    layout = repo()
    store = RepoMemoryStore(layout)
    if check:
        expected = render_index(store.load_all().memories)
        try:
            actual = layout.memory_index.read_text(encoding="utf-8")
        except FileNotFoundError:
            actual = ""
        if actual != expected:
            raise OrchError(
                "MEMORY.md is out of step with the memory files; run `orch memory index`"
            )
        click.echo("MEMORY.md is up to date.")
        return
    changed = store.index()
    click.echo("Regenerated MEMORY.md." if changed else "MEMORY.md was already up to date.")
