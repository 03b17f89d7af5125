"""`orch memory ...`: repo memory (tier 3)."""

from __future__ import annotations

import sys

import click

from orchestrator.commands._common import emit_json, json_option, repo, warn
from orchestrator.commands._lazy import LazyGroup
from orchestrator.config import load_config
from orchestrator.memory.importance import importance
from orchestrator.store.memfile import MEMORY_TYPES, Problem
from orchestrator.store.repo import RepoMemoryStore

# Subcommands that live in other modules (writes, memory discipline, retrieval): listing
# repo memory loads none of them.
MORE: dict[str, tuple[str, str]] = {
    "add": (
        "orchestrator.commands.memory_write:memory_add",
        "Add a memory (validated, checked for near-duplicates, indexed).",
    ),
    "supersede": (
        "orchestrator.commands.memory_write:memory_supersede",
        "Replace memory OLD with a corrected one; OLD is kept, marked superseded.",
    ),
    "index": (
        "orchestrator.commands.memory_write:memory_index",
        "Regenerate MEMORY.md from the memory files.",
    ),
    "search": (
        "orchestrator.commands.memory_search:search",
        "Search memories, episodes, reports and transcripts.",
    ),
    "verify": (
        "orchestrator.commands.memory_verify:verify",
        "Check memories' claims against the working tree.",
    ),
    "audit": (
        "orchestrator.commands.memory_audit:audit",
        "Find duplicated, contradicted, stale or polluted memory.",
    ),
    "decay": (
        "orchestrator.commands.memory_decay:decay",
        "Mark old, unused, low-importance memories stale (never deleting).",
    ),
    "export": (
        "orchestrator.commands.memory_export:export_",
        "Keep AGENTS.md's orch section true, from verified memory.",
    ),
    "promote": (
        "orchestrator.commands.memory_promote:promote",
        "Run Checklist C on a task's candidates.",
    ),
    "import": (
        "orchestrator.commands.memory_promote:import_",
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
@click.option("--type", "kind", type=click.Choice(MEMORY_TYPES))
@click.option(
    "--by",
    type=click.Choice(["name", "importance"]),
    default="name",
    show_default=True,
    help="Order: by name, or most important first (with the score).",
)
@json_option
def memory_list(show_all: bool, kind: str | None, by: str, as_json: bool) -> None:
    """List repo memories (files that do not load are reported, exit code 1)."""
    layout = repo()
    result = RepoMemoryStore(layout).load_all()
    shown = [
        m for m in result.memories if (show_all or m.active) and (kind is None or m.type == kind)
    ]
    scores = {}
    if by == "importance":
        scores = importance(layout, result.memories, load_config(layout.root).memory)
        shown.sort(key=lambda m: (-scores[m.name].score if m.name in scores else 1.0, m.name))
    errors = [p for p in result.problems if p.severity == "error"]
    if as_json:
        listed = [m.to_dict(body=False) for m in shown]
        for entry in listed:
            if entry["name"] in scores:
                entry.update(scores[entry["name"]].to_dict())
        emit_json({"v": 1, "memories": listed, "problems": [p.to_dict() for p in errors]})
    else:
        width = max((len(m.name) for m in shown), default=4)
        for m in shown:
            mark = "" if m.active else f" [{m.status}]"
            score = f"{scores[m.name].score:.2f}  " if m.name in scores else ""
            click.echo(f"{score}{m.name:<{width}}  {m.type:<9}  {m.description}{mark}")
        if not shown:
            click.echo("No memories yet: `orch memory add --help` shows how to add one.")
        _report_problems(errors)
    if errors:
        sys.exit(1)


@memory.command("show")
@click.argument("name")
@json_option
def memory_show(name: str, as_json: bool) -> None:
    """Show one memory, and its importance (the score and its parts) when it is active."""
    layout = repo()
    store = RepoMemoryStore(layout)
    mem = store.get(name)
    found = None
    if mem.active:
        found = importance(layout, store.load_all().memories, load_config(layout.root).memory)
    worth = found.get(name) if found else None
    if as_json:
        emit_json({**mem.to_dict(), **(worth.to_dict() if worth else {})})
        return
    click.echo(store.path_of(name).read_text(encoding="utf-8"), nl=False)
    if worth is not None:
        parts = ", ".join(f"{k} {v:.2f}" for k, v in worth.parts.items())
        click.echo(f"\nimportance {worth.score:.2f} ({parts}); used {worth.use.count} times")
