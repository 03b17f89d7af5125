"""`orch mcp`: the repository's memory and tasks as an MCP server over stdio.

Built on the official MCP Python SDK (`mcp.server.mcpserver.MCPServer`), imported only
here, and this module only when `orch mcp` runs. Every tool goes through the parts the CLI
uses, so the same rules hold:

- writes (`memory_add`, `memory_supersede`) go through `MemoryWriter`: the store's schema,
  Checklist A, secret refusal, MEMORY.md and the search index. A refusal is a tool error
  (`is_error`) carrying the reason, never a crash;
- reads serve verified memory only: `memory_get` and `memory_search` check a memory
  against the working tree first and never serve a stale one as true (it comes back as
  `{"status": "stale", "reason"}` without its fact); each memory served is recorded as a
  use (`via="mcp"`);
- `task_brief` is `integrations.brief.task_brief`, within a token cap.

Resources: `orch://notes` (NOTES.md) and `orch://memory-index` (the verified memory
index, stale entries withheld).
"""

from __future__ import annotations

from typing import Any, NotRequired

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from typing_extensions import TypedDict

from orchestrator import __version__
from orchestrator.config import load_config
from orchestrator.engine.status import statuses, summary
from orchestrator.errors import OrchError
from orchestrator.integrations.brief import DEFAULT_CAP, task_brief
from orchestrator.memory.audit import audit
from orchestrator.memory.usage import record_use
from orchestrator.memory.use import memories_for_prompt
from orchestrator.memory.verify import Verification, verify_store
from orchestrator.memory.writer import MemoryWriter
from orchestrator.retrieval import SearchIndex
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import MEMORY_TYPES, Citation, Memory
from orchestrator.store.notes import NotesFile, parse_notes
from orchestrator.store.tasks import TaskFolder

INSTRUCTIONS = (
    "orch keeps this repository's durable memory (memories/repo/), its notes (NOTES.md) "
    "and its tasks. Memory served here was checked against the code first: a stale memory "
    "is never served as true. Write memory only through memory_add/memory_supersede: "
    "they refuse duplicates, secrets and facts without subject, reason or citations."
)


class CitationArg(TypedDict):
    """A citation: a repository-relative path, optionally a line and a symbol."""

    path: str
    line: NotRequired[int]
    symbol: NotRequired[str]


def _fail(exc: OrchError) -> ToolError:
    return ToolError(exc.line())


def _memory(
    name: str,
    type: str,
    subject: str,
    reason: str,
    fact: str,
    citations: list[CitationArg] | None,
    description: str | None,
) -> Memory:
    if type not in MEMORY_TYPES:
        raise ToolError(f"type must be one of {', '.join(MEMORY_TYPES)}")
    cites = tuple(Citation(str(c["path"]), c.get("line"), c.get("symbol")) for c in citations or ())
    first = " ".join(fact.split())
    return Memory(
        name=name,
        description=(description or first.split(". ")[0])[:150],
        type=type,
        subject=subject,
        reason=reason,
        citations=cites,
        body=fact.strip() + "\n",
        source={"via": "mcp"},
    )


def build_server(layout: Layout) -> MCPServer:
    """The server, its tools reading and writing `layout`'s repository."""
    config = load_config(layout.root)
    server = MCPServer("orch", instructions=INSTRUCTIONS, version=__version__)

    def checked() -> tuple[dict[str, Memory], dict[str, str], dict[str, Verification]]:
        """Usable memories by name, stale ones with the reason they fail, and every
        verification by name."""
        found = memories_for_prompt(layout, config.memory)
        return (
            {m.name: m for m in found.memories},
            {s.name: s.reason for s in found.stale},
            {v.name: v for v in found.verifications},
        )

    def verified() -> tuple[dict[str, Memory], dict[str, str]]:
        usable, stale, _ = checked()
        return usable, stale

    @server.tool()
    def memory_search(query: str, k: int = 10) -> dict[str, Any]:
        """Search repo memory (verified memories only) and the task records: past
        episodes, phase reports, summaries. Stale memories are left out and named."""
        usable, stale = verified()
        with SearchIndex(layout) as index:
            hits = index.search(query, k=max(1, min(k, 50)) * 2)
        shown, withheld = [], []
        for hit in hits:
            if hit.kind == "memory" and hit.ref not in usable:
                if hit.ref in stale:
                    withheld.append(hit.ref)
                continue
            shown.append({"kind": hit.kind, "ref": hit.ref, "text": hit.text[:600]})
        shown = shown[: max(1, min(k, 50))]
        record_use(layout, [h["ref"] for h in shown if h["kind"] == "memory"], via="mcp")
        return {"query": query, "hits": shown, "withheld_as_stale": withheld}

    @server.tool()
    def memory_get(name: str) -> dict[str, Any]:
        """One repo memory, verified against the code: its fact, citations and type; a
        stale one comes back without its fact, with why it no longer holds; a moved one
        with where its paths are now (`moved`)."""
        usable, stale, results = checked()
        if name in stale:
            return {"name": name, "status": "stale", "reason": stale[name]}
        memory = usable.get(name)
        if memory is None:
            try:
                memory = MemoryWriter(layout).get(name)
            except OrchError as exc:
                raise _fail(exc) from None
            return {"name": name, "status": memory.status, "superseded_by": memory.superseded_by}
        result = results.get(name)
        outcome = result.result if result else "ok"
        record_use(layout, [name], via="mcp", outcome=outcome)
        out = memory.to_dict()
        out.pop("body", None)
        out.pop("extra", None)
        out.update({"status": "active", "verification": outcome})
        if result is not None and result.moved:
            out["moved"] = [m.to_dict() for m in result.moved]  # where its paths are now
        return out

    @server.tool()
    def memory_add(
        name: str,
        type: str,
        subject: str,
        reason: str,
        fact: str,
        citations: list[CitationArg] | None = None,
        description: str | None = None,
    ) -> dict[str, Any]:
        """Add a repo memory: a durable, falsifiable fact (its first paragraph), why it
        matters beyond one task, and citations (required for project and reference
        memories). Refused, with the reason, when it near-duplicates a memory, holds a
        secret, or lacks a field."""
        memory = _memory(name, type, subject, reason, fact, citations, description)
        try:
            result = MemoryWriter(layout).add(memory)
        except OrchError as exc:
            raise _fail(exc) from None
        return {"action": result.action, "name": result.memory.name}

    @server.tool()
    def memory_supersede(
        old: str,
        name: str,
        type: str,
        subject: str,
        reason: str,
        fact: str,
        citations: list[CitationArg] | None = None,
        description: str | None = None,
    ) -> dict[str, Any]:
        """Replace memory `old` with a corrected one named `name` (the old file is kept,
        marked superseded). Refused, with the reason, as memory_add is."""
        memory = _memory(name, type, subject, reason, fact, citations, description)
        try:
            result = MemoryWriter(layout).supersede(old, memory, refuse_duplicates=True)
        except OrchError as exc:
            raise _fail(exc) from None
        return {"action": result.action, "name": result.memory.name, "superseded": old}

    @server.tool()
    def memory_verify(names: list[str] | None = None) -> dict[str, Any]:
        """Check memories' claims (files, lines, symbols, commands) against the working
        tree: ok, changed, moved (the fact holds; a path it names is elsewhere now, given
        in `moved`) or stale, with the reason."""
        results, _ = verify_store(layout)
        chosen = [r for r in results if not names or r.name in names]
        return {"results": [{**r.to_dict(), "summary": r.summary()} for r in chosen]}

    @server.tool()
    def memory_audit() -> dict[str, Any]:
        """Audit repo memory for pollution: near-duplicates, contradictions, stale claims,
        task chatter, secrets, malformed files, decay candidates (changes nothing)."""
        return audit(layout, config=config.memory).to_dict()

    @server.tool()
    def notes_get() -> dict[str, Any]:
        """NOTES.md: the active objective, blockers and pending items."""
        text = NotesFile(layout).text() or ""
        return {"text": text, **parse_notes(text).to_dict()}

    @server.tool()
    def task_status(task: str | None = None) -> dict[str, Any]:
        """Where every task stands, or one task (by its slug): state, phases, the reason
        it waits or is blocked."""
        try:
            if task:
                return summary(TaskFolder.open(layout, task))
            return {"tasks": statuses(layout)}
        except OrchError as exc:
            raise _fail(exc) from None

    @server.tool(name="task_brief")
    def task_brief_tool(task: str | None = None, max_tokens: int = DEFAULT_CAP) -> dict[str, Any]:
        """What to know to pick a task up (the named one, or the active one): objective,
        phase, last gate and its verdict, next step, blockers, and the verified memories
        relevant to it, within max_tokens."""
        try:
            brief = task_brief(layout, task, config=config.memory, cap=max(200, max_tokens))
        except OrchError as exc:
            raise _fail(exc) from None
        record_use(layout, [m["name"] for m in brief.memories], via="mcp")
        return {**brief.to_dict(), "text": brief.text()}

    @server.resource("orch://notes", name="NOTES.md", mime_type="text/markdown")
    def notes_resource() -> str:
        return NotesFile(layout).text() or ""

    @server.resource("orch://memory-index", name="memory index", mime_type="text/markdown")
    def index_resource() -> str:
        return memories_for_prompt(layout, config.memory).index_text

    return server


def serve(layout: Layout) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    build_server(layout).run("stdio")
