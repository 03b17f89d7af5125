"""`orch memory ...`: repo memory (tier 3)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from orchestrator.cli import LazyGroup
from orchestrator.commands._common import emit_json, json_option, repo, warn
from orchestrator.errors import OrchError, UsageError

if TYPE_CHECKING:
    from orchestrator.store.memfile import Citation, Problem
    from orchestrator.store.repo import WriteResult

# Subcommands that live in other modules (memory discipline, retrieval).
MORE: dict[str, tuple[str, str]] = {
    "search": (
        "orchestrator.commands.memory_search:search",
        "Search memories, episodes, reports and transcripts.",
    ),
    "verify": (
        "orchestrator.commands.memory_hygiene:verify",
        "Check memories' claims against the working tree.",
    ),
    "audit": (
        "orchestrator.commands.memory_hygiene:audit",
        "Find duplicated, contradicted, stale or polluted memory.",
    ),
    "promote": (
        "orchestrator.commands.memory_hygiene:promote",
        "Run Checklist C on a task's candidates.",
    ),
    "import": (
        "orchestrator.commands.memory_hygiene:import_",
        "Import a Claude Code memory folder.",
    ),
}


@click.group(cls=LazyGroup, lazy=MORE)
def memory() -> None:
    """Repo memory: durable facts with citations, in memories/repo/.

    \b
    Examples:
      orch memory list
      orch memory add --type reference --subject "test command" \\
          --reason "every phase gate runs it" --cite pyproject.toml:12 \\
          --fact "The test command is \\`pytest -q\\`, run from the repository root."
      orch memory supersede test-command --name test-command-make --fact "..."
    """


def _report_problems(problems: list[Problem], *, only_errors: bool = True) -> bool:
    shown = [p for p in problems if p.severity == "error" or not only_errors]
    for p in shown:
        warn(p.line())
    return bool(shown)


@memory.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include superseded and stale memories.")
@click.option("--type", "kind", type=click.Choice(["user", "feedback", "project", "reference"]))
@json_option
def memory_list(show_all: bool, kind: str | None, as_json: bool) -> None:
    """List repo memories (files that do not load are reported, exit code 1)."""
    from orchestrator.store.repo import RepoMemoryStore

    result = RepoMemoryStore(repo()).load_all()
    shown = [
        m for m in result.memories if (show_all or m.active) and (kind is None or m.type == kind)
    ]
    errors = [p for p in result.problems if p.severity == "error"]
    if as_json:
        emit_json(
            {
                "v": 1,
                "memories": [m.to_dict(body=False) for m in shown],
                "problems": [p.to_dict() for p in errors],
            }
        )
    else:
        width = max((len(m.name) for m in shown), default=4)
        for m in shown:
            mark = "" if m.active else f" [{m.status}]"
            click.echo(f"{m.name:<{width}}  {m.type:<9}  {m.description}{mark}")
        if not shown:
            click.echo("No memories yet: `orch memory add --help` shows how to add one.")
        _report_problems(errors)
    if errors:
        sys.exit(1)


@memory.command("show")
@click.argument("name")
@json_option
def memory_show(name: str, as_json: bool) -> None:
    """Show one memory."""
    from orchestrator.store.repo import RepoMemoryStore

    store = RepoMemoryStore(repo())
    mem = store.get(name)
    if as_json:
        emit_json(mem.to_dict())
    else:
        click.echo(store.path_of(name).read_text(encoding="utf-8"), nl=False)


CITE = re.compile(r"^(?P<path>[^:#]+)(?::(?P<line>\d+))?(?:#(?P<symbol>.+))?$")


def parse_citation(text: str) -> Citation:
    from orchestrator.store.memfile import Citation

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
        click.option(
            "--type", "kind", type=click.Choice(["user", "feedback", "project", "reference"])
        ),
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
            type=click.Choice(["refuse", "skip", "supersede", "create"]),
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


@memory.command("add")
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
    on_duplicate: str,
    duplicate_reason: str | None,
    as_json: bool,
) -> None:
    """Add a memory (validated, checked for near-duplicates, indexed)."""
    from orchestrator.store.memfile import Memory, first_paragraph
    from orchestrator.store.repo import RepoMemoryStore
    from orchestrator.store.tasks import slugify

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
    store = RepoMemoryStore(repo())
    result = store.add(mem, on_duplicate=on_duplicate, reason=duplicate_reason)  # type: ignore[arg-type]
    _print_write(result, as_json)


@memory.command("supersede")
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
    from orchestrator.store.memfile import first_paragraph
    from orchestrator.store.repo import RepoMemoryStore

    store = RepoMemoryStore(repo())
    previous = store.get(old)
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
    _print_write(store.supersede(old, new), as_json)


@memory.command("index")
@click.option("--check", is_flag=True, help="Change nothing; exit 1 if MEMORY.md is out of step.")
def memory_index(check: bool) -> None:
    """Regenerate MEMORY.md from the memory files."""
    from orchestrator.store.index import render_index
    from orchestrator.store.repo import RepoMemoryStore

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


def memory_options(func: Callable[..., None]) -> Callable[..., None]:
    """Every field option and Checklist A's choice (for commands that write a new memory)."""
    return _fields(_duplicate_options(func))
