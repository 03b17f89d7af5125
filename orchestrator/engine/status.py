"""Where a task stands, read from its event log: what `orch status` shows.

`load()` folds a task's log into a `TaskState`; `summary()` adds the plan's phases, the
log's check and the gate that stops the task. Nothing here takes a lock, runs git or
calls a model, so `orch status` imports none of the workflow that runs tasks.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from orchestrator.engine.blocking import blocking_gate
from orchestrator.engine.enums import ApprovalKind, PhaseStatus
from orchestrator.engine.payloads import StateChange
from orchestrator.engine.state import TaskState
from orchestrator.events.log import Event, read_events
from orchestrator.events.verify import verify_log
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder, list_tasks


@dataclass
class Loaded:
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


USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def _spent(events: list[Event]) -> dict[int | None, dict[str, Any]]:
    """Tokens and estimated cost of the model calls, by phase (None: outside a phase)."""
    out: dict[int | None, dict[str, Any]] = {}
    for event in events:
        if event.event_type != "model_call" or "usage" not in event.payload:
            continue
        row = out.setdefault(
            event.phase, {"calls": 0, **dict.fromkeys(USAGE_KEYS, 0), "estimated_cost_usd": 0.0}
        )
        row["calls"] += 1
        usage = event.payload["usage"]
        for key in USAGE_KEYS:
            row[key] += int(usage.get(key) or 0)
        cost = event.payload.get("estimated_cost_usd", event.payload.get("cost_usd"))
        row["estimated_cost_usd"] = round(row["estimated_cost_usd"] + float(cost or 0.0), 6)
    return out


def _total(rows: list[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {"calls": 0, **dict.fromkeys(USAGE_KEYS, 0), "estimated_cost_usd": 0.0}
    for row in rows:
        for key in total:
            total[key] += row[key]
    total["estimated_cost_usd"] = round(total["estimated_cost_usd"], 6)
    return total


def summary(task: TaskFolder) -> dict[str, Any]:
    """Where one task stands, for `orch status` (reads; takes no lock)."""
    loaded = load(task)
    spent = _spent(loaded.events)
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
                "tokens": spent.get(p["phase_id"]) or _total([]),
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
        "tokens": _total(list(spent.values())),
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
