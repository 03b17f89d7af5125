"""The human-readable records a task keeps: revisions.md, verified_items.md, phase reports,
final_review.md, NOTES.md and the session notes.

Every writer here is idempotent: it derives the file from the log and the plan, or checks
whether its addition is already there, so a step redone after a crash writes the same.
"""

from __future__ import annotations

from typing import Any

from orchestrator.engine import verified
from orchestrator.engine.enums import PhaseStatus
from orchestrator.engine.env import Env
from orchestrator.events.log import Event
from orchestrator.store.notes import NotesFile, tag_blocker
from orchestrator.store.session import SessionNotes
from orchestrator.store.templates import fill, template

MAX_PENDING = 10
MAX_LINE = 160


def _task_text(env: Env) -> str:
    return env.state.task.text if env.state.task else env.slug


def _short(text: str, limit: int = MAX_LINE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def add_revision(env: Env, iteration: int, text: str) -> None:
    try:
        current = env.task.revisions.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = ""
    if f"\n## Iteration {iteration}\n" in current:
        return
    env.task.append_revision(iteration, text)


def write_verified(env: Env) -> None:
    env.task.save_verified(verified.rows(env.journal.events))


# NOTES.md -------------------------------------------------------------------------------


def set_objective(env: Env, plan: dict[str, Any]) -> None:
    NotesFile(env.layout).set(
        objective=[_short(f"{plan['task_title']} (task {env.slug}): {plan['summary']}")],
        pending=_pending(env, plan),
        task_blocker=(env.slug, None),
    )


def _pending(env: Env, plan: dict[str, Any]) -> list[str]:
    s = env.state
    left = [
        f"phase {p['phase_id']}: {p['title']}"
        for p in plan["phases"]
        if s.phases.get(p["phase_id"]) is None
        or s.phases[p["phase_id"]].status is not PhaseStatus.CLOSED
    ]
    if len(left) > MAX_PENDING:
        left = [*left[: MAX_PENDING - 1], f"and {len(left) - MAX_PENDING + 1} more phases"]
    return [_short(x) for x in left]


def update_pending(env: Env) -> None:
    NotesFile(env.layout).set(pending=_pending(env, env.plan()), fit_for=env.slug)


def set_blocker(env: Env, reason: str | None) -> None:
    """This task's blocker in NOTES.md (tagged with the task); other tasks' stay."""
    tag = len(tag_blocker(env.slug, ""))
    line = _short(reason, MAX_LINE - tag) if reason else None
    NotesFile(env.layout).set(task_blocker=(env.slug, line))


def clear_objective(env: Env) -> None:
    """The task is over: its objective, pending items and own blockers leave NOTES.md."""
    NotesFile(env.layout).set(objective=[], pending=[], task_blocker=(env.slug, None))


# session notes (tier 1) --------------------------------------------------------------------


def session_note(env: Env, heading: str, line: str) -> None:
    notes = SessionNotes(env.layout, env.slug)
    notes.ensure(_task_text(env))
    entry = line if line.startswith("- ") else f"- {line}"
    if entry not in notes.text().splitlines():
        notes.append(heading, entry)


def session_state(env: Env, text: str) -> None:
    notes = SessionNotes(env.layout, env.slug)
    notes.ensure(_task_text(env))
    notes.set("Current State", text)


# phase report ------------------------------------------------------------------------------


def _phase_events(env: Env, phase: int) -> list[Event]:
    return [e for e in env.journal.events if e.phase == phase]


def last_review(events: list[Event]) -> dict[str, Any] | None:
    for event in reversed(events):
        if event.event_type == "verdict" and event.payload.get("kind") == "review":
            return event.payload
    return None


def gate_lines(events: list[Event]) -> list[str]:
    """The quality gates of the newest attempt that ran them."""
    latest: dict[str, dict[str, Any]] = {}
    for event in events:
        p = event.payload
        if event.event_type == "verdict" and p.get("kind") == "quality_gate":
            latest[p["gate"]] = p
    return [
        f"- {g}: {p['status']} ({p['summary']}"
        + (f", {p['duration_ms']} ms" if p.get("duration_ms") else "")
        + ")"
        for g, p in latest.items()
    ]


def failed_gate_lines(events: list[Event]) -> list[str]:
    """Every quality gate that failed, attempt by attempt: the command, its exit code and
    duration, and the tail of its output in a fenced block."""
    lines: list[str] = []
    for event in events:
        p = event.payload
        if event.event_type != "verdict" or p.get("kind") != "quality_gate":
            continue
        if p.get("status") != "FAIL":
            continue
        ran = f"`{p['command']}` exited with code {p.get('exit_code')}" if p.get("command") else ""
        took = f" in {p['duration_ms']} ms" if p.get("duration_ms") else ""
        lines.append(
            f"- attempt {p.get('attempt')}: {p['gate']} FAIL: {ran or _short(p['summary'])}{took}"
        )
        lines.extend(_fenced(p.get("output_tail") or ""))
    return lines


def _fenced(text: str) -> list[str]:
    if not text.strip():
        return []
    fence = "```"
    while fence in text:
        fence += "`"
    return ["", f"  {fence}", *(f"  {line}" for line in text.splitlines()), f"  {fence}", ""]


def phase_report(env: Env, phase: int, changed: list[tuple[str, str]]) -> str:
    s = env.state
    ph = s.phase(phase)
    plan_phase = env.plan_phase(phase)
    events = _phase_events(env, phase)
    review = last_review(events) or {}
    summary = ""
    for event in reversed(events):
        if event.event_type == "execution_report" and event.payload.get("kind") == "phase":
            summary = event.payload.get("summary", "")
            break
    failures = [
        f"- attempt {e.payload.get('attempt')}: {e.payload.get('failure_class')}: "
        f"{_short(e.payload['reason'])}"
        for e in events
        if e.event_type == "state_change" and e.payload.get("step") == "phase_retry"
    ]
    review_text = review.get("summary", "no review recorded")
    if review.get("non_blocking"):
        review_text += "\n" + "\n".join(
            f"- (non-blocking) {i.get('description')}" for i in review["non_blocking"]
        )
    if review.get("demoted"):
        review_text += "\n" + "\n".join(
            f"- (claimed blocking, not validated: {i.get('demoted_because')}) {i.get('description')}"
            for i in review["demoted"]
        )
    gates = gate_lines(events)
    if failures:
        gates.append("Retries:")
        gates.extend(failures)
    failed = failed_gate_lines(events)
    if failed:
        gates.extend(["", "Failed gate runs (command, exit code, the end of its output):", *failed])
    return fill(
        template(env.layout, "phase-report.md"),
        phase_id=phase,
        title=plan_phase["title"],
        task=f"{_task_text(env)} ({env.slug})",
        objective=plan_phase["objective"],
        changes="\n".join(f"- {status} {path}" for status, path in changed) or "- no file changed",
        gates="\n".join(gates) or "- none ran",
        review=review_text,
        commit=f"{ph.commit} (attempt {ph.attempt})" if ph.commit else "not committed",
        notes=summary.strip() or "- none",
    )


# final review ------------------------------------------------------------------------------


def final_review(env: Env, review: dict[str, Any], checks: list[str]) -> str:
    s = env.state
    plan = env.plan()
    phases = "\n".join(
        f"- phase {p['phase_id']}: {p['title']} -> {s.phase(p['phase_id']).commit or 'not committed'}"
        for p in plan["phases"]
    )
    issues = review.get("validated_blocking_issues") or []
    lines = [
        f"# Final review: {plan['task_title']}",
        "",
        f"Task: {_task_text(env)} (`{env.slug}`)",
        f"Verdict: {review.get('verdict', '?')}. {review.get('summary', '')}",
        "",
        "## Phases",
        phases,
        "",
        "## Cross-phase consistency",
        *checks,
        "",
        "## Success criteria",
        *[
            f"- [{'x' if c.get('met') else ' '}] {c.get('criterion')}"
            + (f" ({c['evidence']})" if c.get("evidence") else "")
            for c in review.get("criteria") or []
        ],
        *([f"- {c}" for c in plan["success_criteria"]] if not review.get("criteria") else []),
        "",
        "## Blocking issues",
        *([f"- {i['id']}: {i['description']}" for i in issues] or ["- none"]),
        "",
        "## Notes",
        *([f"- {i.get('description')}" for i in review.get("non_blocking") or []] or ["- none"]),
    ]
    return "\n".join(lines) + "\n"
