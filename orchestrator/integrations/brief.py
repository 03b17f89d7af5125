"""A task's brief: what an agent needs to pick a task up again, within a token cap.

For one task (or the active one: the most recently updated that is not complete or
abandoned): its objective, the phase it is in, the last gate and its verdict, the next
step, the blockers, and the verified repo memories most relevant to it. Memory goes
through verify-before-use (`memory.use.memories_for_prompt`): a stale memory is never in a
brief; it is named among those withheld. Used by the MCP server's `task_brief` tool and by
the Claude Code SessionStart hook, so what matters survives a compaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orchestrator.config import MemoryConfig
from orchestrator.engine.enums import WorkflowState
from orchestrator.engine.status import summary
from orchestrator.events.log import read_events
from orchestrator.memory.use import memories_for_prompt
from orchestrator.retrieval import SearchIndex
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory
from orchestrator.store.notes import NotesFile, parse_notes
from orchestrator.store.tasks import TaskFolder, list_tasks
from orchestrator.tokens import estimate_text

DONE = {WorkflowState.COMPLETE.value, WorkflowState.ABANDONED.value}
DEFAULT_CAP = 2000  # tokens


@dataclass
class Brief:
    task: str | None
    title: str = ""
    state: str = ""
    objective: str = ""
    phase: dict[str, Any] | None = None
    last_gate: dict[str, Any] | None = None
    next_step: str = ""
    blockers: list[str] = field(default_factory=list)
    memories: list[dict[str, str]] = field(default_factory=list)
    withheld: list[str] = field(default_factory=list)  # stale memories, never served
    left_out: int = 0  # relevant memories that did not fit the cap

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "title": self.title,
            "state": self.state,
            "objective": self.objective,
            "phase": self.phase,
            "last_gate": self.last_gate,
            "next_step": self.next_step,
            "blockers": self.blockers,
            "memories": self.memories,
            "withheld": self.withheld,
            "left_out": self.left_out,
        }

    def text(self) -> str:
        if self.task is None:
            lines = ["No active orch task."]
        else:
            lines = [f"orch task {self.task}: {self.title} ({self.state})"]
            if self.objective:
                lines.append(f"Objective: {self.objective}")
            if self.phase:
                lines.append(
                    f"Phase {self.phase['id']}: {self.phase['title']} ({self.phase['status']})"
                )
            if self.last_gate:
                g = self.last_gate
                lines.append(f"Last gate: {g['gate']} {g['decision']}: {g['reason']}")
            if self.next_step:
                lines.append(f"Next step: {self.next_step}")
        if self.blockers:
            lines += ["Blockers:", *(f"- {b}" for b in self.blockers)]
        if self.memories:
            lines.append("Verified repo memory relevant to it:")
            lines += [f"- {m['name']}: {m['fact']}" for m in self.memories]
        if self.left_out:
            lines.append(f"({self.left_out} more relevant memories: orch memory search)")
        if self.withheld:
            lines.append(f"Withheld as stale (no longer true): {', '.join(self.withheld)}")
        return "\n".join(lines) + "\n"


def active_task(layout: Layout) -> TaskFolder | None:
    """The most recently updated task that is not complete or abandoned."""
    best: tuple[str, TaskFolder] | None = None
    for task in list_tasks(layout):
        if not task.event_log_path.is_file():
            continue
        events = read_events(task.event_log_path).events
        if not events:
            continue
        states = [e.payload.get("to") for e in events if e.event_type == "state_change"]
        if states and states[-1] in DONE:
            continue
        if best is None or events[-1].ts > best[0]:
            best = (events[-1].ts, task)
    return best[1] if best else None


def _last_gate(task: TaskFolder) -> dict[str, Any] | None:
    for event in reversed(read_events(task.event_log_path).events):
        if event.event_type == "gate_event":
            p = event.payload
            return {
                "gate": p.get("event_type"),
                "decision": p.get("decision"),
                "reason": p.get("reason", ""),
                "phase": p.get("phase_id"),
            }
    return None


def _next_step(info: dict[str, Any]) -> str:
    state, slug = info["state"], info["task"]
    if state == WorkflowState.WAITING_APPROVAL:
        return f"a person decides: orch approve {slug} (or --deny): {info['reason']}"
    if state == WorkflowState.BLOCKED:
        return f"fix the cause, then orch resume {slug}: {info['reason']}"
    if state in DONE:
        return "nothing: the task is over"
    pending = [p for p in info["phases"] if not p["commit"]]
    if pending:
        p = pending[0]
        return f"phase {p['phase']} ({p['title']}): orch resume {slug} carries on"
    return f"orch resume {slug} carries on"


def _relevant(layout: Layout, usable: list[Memory], query: str) -> list[Memory]:
    """The usable memories, those the search index ranks for `query` first."""
    by_name = {m.name: m for m in usable}
    ranked: list[Memory] = []
    if query.strip():
        with SearchIndex(layout) as index:
            hits = index.search(query, k=len(usable) or 1, kinds={"memory"})
        ranked = [by_name[h.ref] for h in hits if h.ref in by_name]
    seen = {m.name for m in ranked}
    return ranked + [m for m in usable if m.name not in seen]


def task_brief(
    layout: Layout,
    slug: str | None = None,
    *,
    config: MemoryConfig | None = None,
    cap: int = DEFAULT_CAP,
) -> Brief:
    """The brief of task `slug` (or the active one), its memory within `cap` tokens."""
    config = config or MemoryConfig()
    task = TaskFolder.open(layout, slug) if slug else active_task(layout)
    notes = NotesFile(layout).text()
    brief = Brief(task.slug if task else None)
    brief.blockers = list(parse_notes(notes).blockers) if notes else []
    query = ""
    if task is not None:
        info = summary(task)
        brief.title, brief.state = info["title"], info["state"]
        plan: dict[str, Any] = {}
        try:
            plan = task.load_plan()
        except Exception:
            plan = {}
        brief.objective = str(plan.get("summary") or info["title"])
        current = next((p for p in info["phases"] if not p["commit"]), None)
        if current is not None:
            brief.phase = {"id": current["phase"], "title": current["title"],
                           "status": str(current["status"])}  # fmt: skip
        brief.last_gate = _last_gate(task)
        brief.next_step = _next_step(info)
        if info["state"] in (WorkflowState.WAITING_APPROVAL, WorkflowState.BLOCKED):
            brief.blockers.append(info["reason"])
        query = f"{brief.title} {brief.objective}"
    found = memories_for_prompt(layout, config) if layout.initialised else None
    if found is not None:
        brief.withheld = [s.name for s in found.stale]
        used = estimate_text(brief.text())
        for m in _relevant(layout, found.memories, query):
            line = {"name": m.name, "type": m.type, "fact": " ".join(m.fact.split())[:400]}
            cost = estimate_text(f"- {line['name']}: {line['fact']}") + 1
            if used + cost > cap:
                brief.left_out += 1
                continue
            brief.memories.append(line)
            used += cost
    return brief
