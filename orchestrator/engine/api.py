"""What the commands call: start a task, resume it, answer its approval, read its status.

Each function checks its input before it writes anything (an empty task, a dirty working
tree, an unknown model end here with one clear line), takes the locks (the task's, and the
working tree's: one task works in a tree at a time), and runs the workflow until it
completes, waits for a person, or is blocked.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from orchestrator.config import Config, load_config
from orchestrator.engine import faults, shell
from orchestrator.engine.blocking import blocking_gate
from orchestrator.engine.enums import ApprovalKind, PhaseStatus, Scope, Step, Tier, WorkflowState
from orchestrator.engine.env import Env
from orchestrator.engine.gates import program_exists
from orchestrator.engine.journal import Journal, Listener
from orchestrator.engine.parts import Parts, default_parts
from orchestrator.engine.payloads import Approval, StateChange, TaskSpec
from orchestrator.engine.replay import load, reconcile
from orchestrator.engine.state import TaskState, Waiting
from orchestrator.engine.vcs import ProjectRepo
from orchestrator.engine.workflow import Workflow
from orchestrator.errors import UsageError
from orchestrator.events.keys import signing_key_for
from orchestrator.events.log import Event
from orchestrator.events.verify import admit, verify_log
from orchestrator.models import get_model
from orchestrator.sandbox import Mode, mode_of, off_notice
from orchestrator.store.fs import file_lock
from orchestrator.store.layout import Layout
from orchestrator.store.notes import NotesFile
from orchestrator.store.tasks import TaskFolder, list_tasks

DIRTY_POLICIES = ("refuse", "branch")
# where a task goes when a person says no, by what it waited for (else BLOCKED)
DENIED_TO = {ApprovalKind.PLAN: WorkflowState.PLANNING}


@dataclass
class Options:
    listeners: list[Listener] = field(default_factory=list)
    parts: Parts | None = None
    overrides: dict[str, Any] = field(default_factory=dict)  # configuration from flags
    notices: Callable[[str], None] | None = None  # one-line notes for the terminal
    accept_log: bool = False  # a person read a log that does not verify and goes on from it


@contextlib.contextmanager
def _worktree_lock(layout: Layout) -> Iterator[None]:
    with file_lock(
        layout.locks,
        "worktree",
        timeout=0,
        what="the working tree (another orch task is running in it)",
    ):
        yield


def _open(task: TaskFolder, config: Config, options: Options) -> Env:
    # A log that does not verify is refused before anything acts on it, unless a person
    # accepts it: that is recorded first (orchestrator/events/verify.py).
    accepted = admit(task.event_log_path, task.slug, task.layout.root, accept=options.accept_log)
    loaded = load(task)
    journal = Journal(task.events(), loaded.state, loaded.events)
    if accepted is not None:
        journal.record("error", accepted)
    journal.listeners.extend(options.listeners)
    if options.notices:
        for problem in loaded.problems:
            options.notices(problem)
    shell.kill_leftovers(task.layout)  # what a dead run's commands left running
    if mode_of(config.policy.sandbox) is Mode.OFF and options.notices:
        options.notices(off_notice())
    parts = options.parts or default_parts(config)
    return Env(task, config, ProjectRepo(task.layout), journal, parts)


def start(
    layout: Layout,
    text: str,
    *,
    tier: str | None = None,
    auto_approve: bool = False,
    model: str | None = None,
    options: Options | None = None,
) -> Env:
    """Create task `text` and run it."""
    options = options or Options()
    text = " ".join((text or "").split())
    if not text:
        raise UsageError('the task is empty: say what to do, e.g. orch run "add a --verbose flag"')
    if tier is not None and tier.upper() not in list(Tier):
        raise UsageError(f"unknown tier {tier!r} (one of {', '.join(Tier)})")
    layout.require_initialised()
    overrides = {**options.overrides, **({"model": model} if model else {})}
    config = load_config(layout.root, overrides)
    if config.dirty_tree not in DIRTY_POLICIES:
        raise UsageError(
            f"dirty_tree must be one of {', '.join(DIRTY_POLICIES)}, not {config.dirty_tree!r}"
        )
    mode_of(config.policy.sandbox)  # the configuration already refused a bad [policy] sandbox
    repo = ProjectRepo(layout)
    head = repo.head()
    if head is None:
        raise UsageError("the repository has no commit yet: make a first commit, then orch run")
    check_gate_commands(layout, config)  # a mistyped test command ends here, before the planner
    get_model(config.model, config)  # an unknown or unreadable model fails here, before any write
    signing_key_for(layout.root)  # so does a key that cannot be made, or would be in reach
    with _worktree_lock(layout):
        dirty = repo.dirty_paths()
        if dirty and config.dirty_tree == "refuse":
            shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
            raise UsageError(
                f"the working tree has uncommitted changes ({shown}); commit or stash them, "
                'or set dirty_tree = "branch" in orch.toml to work on a new branch'
            )
        task = TaskFolder.create(layout, text)
        with task.lock():
            env = _open(task, config, options)
            spec = TaskSpec(
                text=text,
                tier=Tier(tier.upper()) if tier else None,
                auto_approve=auto_approve,
                model=config.model,
                base_commit=head,
                branch=f"orch/{task.slug}" if dirty else None,
            )
            env.journal.change(
                StateChange(
                    WorkflowState.PLANNING, Step.TASK_CREATED, f"task created: {text}", task=spec
                )
            )
            faults.point("task.created")
            _run(env, options)
    return env


def check_gate_commands(layout: Layout, config: Config) -> None:
    """Refuse a configured test or lint command whose program does not exist."""
    for setting, command in (
        ("test_command", config.test_command),
        ("lint_command", config.lint_command),
    ):
        if command and not program_exists(command, layout.root):
            raise UsageError(
                f"{setting} `{command}` cannot run: its program is neither on PATH nor a file "
                f"in the repository; fix {setting} in orch.toml (or [tool.orch]), then run again"
            )


NO_TEST_COMMAND = (
    "no test_command configured: no phase is tested (tests_pass is NOT_RUN); "
    'set test_command in orch.toml, e.g. test_command = "pytest -q"'
)


def _run(env: Env, options: Options) -> None:
    """Run the workflow, said once first when nothing will test it."""
    if not env.config.test_command and options.notices:
        options.notices(NO_TEST_COMMAND)
    Workflow(env).run()


def pick(layout: Layout, slug: str | None) -> TaskFolder:
    """Task `slug`, or the newest task that is not complete."""
    layout.require_initialised()
    if slug:
        return TaskFolder.open(layout, slug)
    newest: tuple[str, TaskFolder] | None = None
    for task in list_tasks(layout):
        state = load(task).state
        if (
            state.task is not None
            and not state.finished
            and (newest is None or state.last_ts > newest[0])
        ):
            newest = (state.last_ts, task)
    if newest is None:
        raise UsageError("no unfinished task to resume (see orch status)")
    return newest[1]


def _config_for(layout: Layout, options: Options) -> Config:
    return load_config(layout.root, options.overrides or None)


def _require_started(env: Env) -> None:
    if env.state.task is None:
        raise UsageError(
            f"task {env.slug!r} never started (its log is empty); remove "
            f"{env.task.path.relative_to(env.layout.root)} and run the task again"
        )


def resume(
    layout: Layout,
    slug: str | None,
    *,
    model: str | None = None,
    options: Options | None = None,
) -> Env:
    """Continue a task from its log: after a crash, a context reset, or a fixed blocker.
    `model` becomes the task's model from here on (recorded, so later resumes keep it)."""
    options = options or Options()
    task = pick(layout, slug)
    config = _config_for(layout, options)
    if model:
        get_model(model, config)  # an unknown or unreadable model fails here, before any write
    with task.lock(), _worktree_lock(layout):
        env = _open(task, config, options)
        _require_started(env)
        s = env.state
        if s.abandoned:
            raise UsageError(
                f"task {task.slug!r} was abandoned ({s.last_reason}); it cannot be resumed: "
                'start it again with orch run "TASK"'
            )
        if s.done:
            return env
        if model and model != s.model:
            env.journal.change(
                StateChange(
                    s.state or WorkflowState.PLANNING,
                    Step.MODEL_CHANGED,
                    f"the task's model is now {model} (was {s.model})",
                    model=model,
                    by="orch resume --model",
                )
            )
        if s.waiting is not None:
            return env
        if s.blocked is not None:
            back = s.blocked.source
            if back in (None, WorkflowState.WAITING_APPROVAL, WorkflowState.BLOCKED):
                back = WorkflowState.ACTING if s.blocked.phase else WorkflowState.PLANNING
            env.journal.change(
                StateChange(
                    back,
                    Step.RESUMED,
                    "resumed by a person after: " + s.blocked.reason[:300],
                    phase=s.blocked.phase,
                )
            )
        for line in reconcile(env):
            if options.notices:
                options.notices(line)
        _run(env, options)
    return env


def abandon(layout: Layout, slug: str, *, reason: str | None = None) -> TaskFolder:
    """Give task `slug` up: an ABANDONED state change; nothing runs the task again."""
    task = TaskFolder.open(layout, slug)
    with task.lock():
        loaded = load(task)
        s = loaded.state
        if s.task is None:
            raise UsageError(f"task {slug!r} never started (its log is empty): nothing to abandon")
        if s.finished:
            raise UsageError(f"task {slug!r} is already {s.state}: there is nothing to abandon")
        journal = Journal(task.events(), s, loaded.events)
        journal.change(
            StateChange(
                WorkflowState.ABANDONED,
                Step.ABANDONED,
                " ".join((reason or "").split())[:500] or "abandoned by a person",
                by="orch abandon",
            )
        )
        NotesFile(layout).set(task_blocker=(slug, None))  # its blocker goes with it
    return task


def approve(
    layout: Layout,
    slug: str,
    *,
    deny: bool = False,
    note: str | None = None,
    run: bool = True,
    options: Options | None = None,
) -> Env:
    """Answer what task `slug` waits for; then (by default) continue it."""
    options = options or Options()
    task = TaskFolder.open(layout, slug)
    config = _config_for(layout, options)
    with task.lock(), _worktree_lock(layout):
        env = _open(task, config, options)
        _require_started(env)
        s = env.state
        w = s.waiting
        if w is None:
            raise UsageError(f"task {slug!r} is not waiting for approval (it is {s.state})")
        answer = Approval(w.kind, key=w.key, command=w.command, note=note)
        if deny:
            to = w.back_to if w.kind is ApprovalKind.HIGH_RISK else DENIED_TO.get(w.kind)
            env.journal.change(
                StateChange(
                    to or WorkflowState.BLOCKED,
                    Step.APPROVAL_DENIED,
                    f"a person said no: {note or w.reason}"[:500],
                    phase=w.phase,
                    approval=answer,
                    by="orch approve --deny",
                )
            )
        else:
            _approved(env, w, answer)
        if run and env.state.blocked is None:
            reconcile(env)
            _run(env, options)
    return env


def _approved(env: Env, w: Waiting, answer: Approval) -> None:
    to = WorkflowState.PLAN_REVIEW if w.kind is ApprovalKind.PLAN else w.back_to
    if to in (WorkflowState.WAITING_APPROVAL, WorkflowState.BLOCKED):
        to = WorkflowState.ACTING
    env.journal.change(
        StateChange(
            to,
            Step.APPROVAL_GIVEN,
            f"a person approved: {w.reason}"[:500],
            phase=w.phase,
            approval=answer,
            by="orch approve",
        )
    )
    if w.kind is not ApprovalKind.ESCALATION or w.phase is None:
        return
    ph = env.state.phase(w.phase)
    last = ph.last_failure
    hint = [f"{last.failure_class}: {last.hint}"] if last else []
    hint += [f"A person adds: {answer.note}"] if answer.note else []
    env.journal.change(
        StateChange(
            WorkflowState.ACTING,
            Step.PHASE_RETRY,
            f"phase {w.phase}: a person approved a new attempt",
            phase=w.phase,
            attempt=ph.attempt + 1,
            hint="\n".join(hint) or None,
            scope=Scope.EXECUTOR,
        )
    )


# status ----------------------------------------------------------------------------------


def whereabouts(env: Env) -> dict[str, Any]:
    """Where a run leaves the person: the branch checked out, the stash holding their
    earlier edits (branch mode), and orch's records not yet committed."""
    stashes = [
        e.payload["stash"]
        for e in env.journal.events
        if e.event_type == "state_change" and e.payload.get("stash")
    ]
    return {
        "branch": env.repo.branch(),
        "stash": stashes[-1] if stashes else None,
        "uncommitted": env.repo.uncommitted_records(),
    }


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
        plan = task.load_plan()
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
