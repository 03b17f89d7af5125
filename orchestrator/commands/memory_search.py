"""`orch memory search`: search repo memories, episodes, L3 items, reports and transcripts."""

from __future__ import annotations

import re

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.errors import UsageError
from orchestrator.retrieval import SearchIndex

KIND_CHOICES = ("memory", "episode", "l3", "report", "transcript", "summary")
SNIPPET = 160


def _snippet(text: str) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…"


@click.command("search")
@click.argument("query", nargs=-1)
@click.option(
    "-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many results."
)
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(KIND_CHOICES),
    help="Only documents of this kind (repeatable).",
)
@click.option("--rebuild", is_flag=True, help="Rebuild the index from the files first.")
@json_option
def search(
    query: tuple[str, ...], k: int, kinds: tuple[str, ...], rebuild: bool, as_json: bool
) -> None:
    """Search what orch remembers: repo memories, episodes, L3 items, phase reports,
    summaries and transcripts, best match first.

    The index (.orch/search.sqlite) follows every write and is rebuilt whenever it is
    missing or damaged; --rebuild reads every file again.

    \b
    Examples:
      orch memory search test command
      orch memory search "rate limit" --kind episode --kind transcript -k 5 --json
      orch memory search --rebuild
    """
    text = " ".join(query).strip()
    if not text and not rebuild:
        raise UsageError("memory search needs a QUERY (or --rebuild)")
    with SearchIndex(repo()) as index:
        if rebuild:
            count = index.rebuild()
            if not text:
                if as_json:
                    emit_json({"v": 1, "rebuilt": count})
                else:
                    click.echo(f"Rebuilt the search index: {count} document{'s' * (count != 1)}.")
                return
        hits = index.search(text, k=k, kinds=set(kinds) or None)
    if as_json:
        emit_json({"v": 1, "query": text, "hits": [h.to_dict() for h in hits]})
        return
    if not hits:
        click.echo("No results.")
        return
    for n, hit in enumerate(hits, 1):
        label = hit.meta.get("description") or hit.meta.get("title")
        head = f"{n:>2}. {hit.kind} {hit.ref}"
        if isinstance(label, str) and label:
            head += f" ({_snippet(label)[:60]})" if hit.kind != "transcript" else f" {label}:"
        click.echo(f"{head}  [score {hit.score:.3g}]")
        click.echo(f"    {_snippet(hit.text)}")
