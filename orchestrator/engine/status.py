"""Where a task stands, read from its event log: what `orch status` shows.

`load()` folds a task's log into a `TaskState`; `summary()` adds the plan's phases, the
log's check and the gate that stops the task. Nothing here takes a lock, runs git or
calls a model, so `orch status` imports none of the workflow that runs tasks.
"""

from __future__ import annotations

import contextlib
from typing import Any

from msgspec import Struct

from orchestrator.engine.blocking import blocking_gate
from orchestrator.engine.enums import ApprovalKind, PhaseStatus
from orchestrator.engine.payloads import StateChange
from orchestrator.engine.progress import Spent, by_phase, spending
from orchestrator.engine.state import TaskState
from orchestrator.events.log import Event, read_events
from orchestrator.events.verify import verify_log
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder, list_tasks


class Loaded(Struct):
    """A task's log, read and folded."""

    state: TaskState
    events: list[Event]
    problems: list[str]


def replay(slug: str, events: list[Event]) -> TaskState:
    """The state after `events` (a task's whole log, in order)."""
    state = TaskState(slug)
    for event in events:
        state.apply(event)
    return state


def load(task: TaskFolder) -> Loaded:
    result = read_events(task.event_log_path)
    return Loaded(replay(task.slug, result.events), result.events, result.problems)


def summary(task: TaskFolder) -> dict[str, Any]:
    """Where one task stands, for `orch status` (reads; takes no lock)."""
    loaded = load(task)
    spent = spending(loaded.events, by_phase)
    s: TaskState = loaded.state
    plan: dict[str, Any] | None = None
    with contextlib.suppress(Exception):
        plan = task.load_plan(recorded_sha=s.plan_sha)
    phases = []
    for p in (plan or {}).get("phases", []):
        ph = s.phases.get(p["phase_id"])
        phases.append(
            {
                "phase": p["phase_id"],
                "title": p["title"],
                "status": ph.status if ph else PhaseStatus.PENDING,
                "attempt": ph.attempt if ph else 0,
                "retries": list(ph.failures) if ph else [],
                "commit": ph.commit if ph else None,
                "tokens": spent.get(p["phase_id"], Spent()).to_dict(),
            }
        )
    state = s.state or "EMPTY"
    reason = ""
    if s.waiting is not None:
        reason = s.waiting.reason
    elif s.blocked is not None:
        reason = s.blocked.reason
    else:
        reason = s.last_reason
    return {
        "task": task.slug,
        "title": (plan or {}).get("task_title") or (s.task.text if s.task else ""),
        "state": state,
        "waiting_for": s.waiting.kind if s.waiting else None,
        "command": s.waiting.command if s.waiting else None,
        "reason": reason,
        "plan_iteration": s.plan_iteration,
        "tier": s.tier,
        "phases": phases,
        "committed": sum(1 for ph in phases if ph["commit"]),
        "events": s.events,
        "updated": s.last_ts or None,
        "folder": str(task.path),
        "log": str(task.event_log_path),
        "log_problems": loaded.problems,
        "log_check": verify_log(task.event_log_path, task=task.slug).to_dict(),
        "model": s.model if s.task else None,
        "executor": s.spec.executor if s.task else None,
        "blocking_gate": blocking_gate(s, loaded.events),
        "cost_usd": round(s.cost_usd, 6),
        "unpriced_calls": s.unpriced_calls,
        "tokens": Spent.sum(spent.values()).to_dict(),
        "budget": _budget(s, loaded.events),
    }


def _budget(s: TaskState, events: list[Event]) -> dict[str, float] | None:
    """The figures of the budget stop the task waits on, or None."""
    if s.waiting is None or s.waiting.kind is not ApprovalKind.BUDGET:
        return None
    for event in reversed(events):
        change = (
            StateChange.from_payload(event.payload) if event.event_type == "state_change" else None
        )
        if change is not None and change.budget is not None:
            return change.budget.to_dict()
    return None


def statuses(layout: Layout) -> list[dict[str, Any]]:
    layout.require_initialised()
    rows = [summary(t) for t in list_tasks(layout)]
    rows.sort(key=lambda r: r["updated"] or "", reverse=True)
    return rows
