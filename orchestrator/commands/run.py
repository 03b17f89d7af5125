"""`orch run`, `plan`, `approve`, `resume`, `abandon`: the workflow (`orch status` is in status.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.commands._progress import progress_for, silence_stdout
from orchestrator.engine.api import Options, start, whereabouts
from orchestrator.engine.api import abandon as abandon_task
from orchestrator.engine.api import approve as approve_task
from orchestrator.engine.api import resume as resume_task
from orchestrator.engine.enums import ApprovalKind, PhaseStatus, Tier, WorkflowState
from orchestrator.engine.env import Env
from orchestrator.engine.progress import Spent, by_phase, gate_text, phase_gates, spending, usd
from orchestrator.engine.status import summary
from orchestrator.events.log import Event
from orchestrator.store.plans import plan_text
from orchestrator.store.tasks import TaskFolder

TIER = click.Choice([t.value for t in Tier], case_sensitive=False)
quiet_option = click.option(
    "--quiet", "-q", is_flag=True, help="Print no progress, only the summary at the end."
)


def _go(
    task: Callable[[Options], Env],
    *,
    as_json: bool,
    quiet: bool = False,
    quiet_tools: bool = False,
    overrides: dict[str, Any] | None = None,
) -> None:
    """Run `task` with its progress shown (see `_progress`), then say where it stands;
    `overrides` are configuration values the command line sets (the executor)."""
    options = Options()
    if overrides:
        options.overrides = {**options.overrides, **overrides}
    if as_json:
        env = task(options)
    else:
        with progress_for(options, quiet=quiet, tools=not quiet_tools):
            env = task(options)
    _finish(env, as_json)


def _finish(env: Env, as_json: bool) -> None:
    """Print where the task stands; exit 1 when it is blocked (whether or not anyone still
    reads the output)."""
    info = summary(env.task)
    try:
        if as_json:
            emit_json(info)
        else:
            _print_finish(info, env.journal.events)
            _print_whereabouts(whereabouts(env))
    except BrokenPipeError:
        silence_stdout()
    if info["state"] == WorkflowState.BLOCKED:
        raise SystemExit(1)


def _print_whereabouts(where: dict[str, Any]) -> None:
    """Where the task leaves you: the branch, the stash with your earlier edits, and
    orch's records left uncommitted."""
    if where["branch"]:
        click.echo(f"  on branch:   {where['branch']}")
    if where["stash"]:
        click.echo(
            f"  your edits from before the task are in the stash ({where['stash'][:12]}): "
            "`git stash list`, then `git stash pop` where you want them"
        )
    if where["uncommitted"]:
        n = len(where["uncommitted"])
        click.echo(
            f"  not committed: {n} file{'s' * (n != 1)} of orch's records (plans/, memories/, "
            "NOTES.md); commit them to keep the task's record with the code"
        )


def _print_finish(info: dict[str, Any], events: list[Event]) -> None:
    """The summary at the end of a run: the state and why, each phase begun with its commit
    and gates, the model calls and spending, where the task's records are."""
    state = info["state"]
    click.echo("")
    if state == WorkflowState.COMPLETE:
        click.echo(f"Task {info['task']} is COMPLETE: {info['committed']} phase commit(s).")
    elif state == WorkflowState.WAITING_APPROVAL:
        click.echo(f"Task {info['task']} is WAITING_APPROVAL: {info['reason']}")
        if info["waiting_for"] == ApprovalKind.PLAN:
            _echo_plan_summary(info)
        click.echo(f"  answer with: orch approve {info['task']}   (or --deny --note ...)")
    elif state == WorkflowState.BLOCKED:
        click.echo(f"Task {info['task']} is BLOCKED: {info['reason']}")
    else:
        click.echo(f"Task {info['task']} is {state}.")
    gates = phase_gates(events)
    for ph in info["phases"]:
        if ph["status"] == PhaseStatus.PENDING:
            continue
        commit = f" {ph['commit'][:12]}" if ph["commit"] else ""
        click.echo(f"  phase {ph['phase']}: {ph['status']}{commit}  {ph['title']}")
        shown = ", ".join(gate_text(g) for g in gates.get(ph["phase"], []))
        retries = len(ph["retries"])
        if retries:
            shown += f" (after {retries} retr{'ies' if retries > 1 else 'y'})"
        if shown:
            click.echo(f"    gates: {shown}")
    unpriced = f", {info['unpriced_calls']} unpriced" if info["unpriced_calls"] else ""
    spent = Spent.sum(spending(events, by_phase).values())
    click.echo(f"  spent:       {usd(info['cost_usd'])} on {spent.text()}{unpriced}")
    click.echo(f"  task folder: {info['folder']}")
    click.echo(f"  event log:   {info['log']} ({info['events']} events)")


@click.command()
@click.argument("task")
@click.option("--tier", type=TIER, help="Force the complexity tier (else the planner picks).")
@click.option("--yes", "-y", is_flag=True, help="Approve the plan without asking.")
@click.option(
    "--model",
    help="Model to use: anthropic:<id>, openai:<model>, claude-code:<model> or scripted:<path>.",
)
@click.option(
    "--executor",
    type=click.Choice(["orch", "claude-code"]),
    help="Who carries out the phases: orch's own agent loop, or a Claude Code session "
    "(recorded with the task; default: the configuration's `executor`).",
)
@click.option("--quiet-tools", is_flag=True, help="Do not print each tool call.")
@quiet_option
@json_option
def run(
    task: str,
    tier: str | None,
    yes: bool,
    model: str | None,
    executor: str | None,
    quiet_tools: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Plan, audit, execute, gate and commit TASK, phase by phase.

    \b
    Without --yes the task stops when its plan is ready: read plans/artifacts/<slug>/plan.md,
    then `orch approve SLUG`. A crash or a context reset loses nothing: `orch resume`.
    On a terminal progress is live (what runs now and for how long, the last lines of a
    running gate's output); piped, one plain line per event; --quiet: the summary only.
    \b
    Examples:
      orch run "add a --verbose flag to the CLI"
      orch run "fix the flaky date test" --tier TRIVIAL --yes
    """
    _go(
        lambda options: start(
            repo(), task, tier=tier, auto_approve=yes, model=model, options=options
        ),
        as_json=as_json,
        quiet=quiet,
        quiet_tools=quiet_tools,
        overrides={"executor": executor} if executor else None,
    )


def _echo_plan_summary(info: dict[str, Any]) -> None:
    """The plan waiting for approval, in short: its phases and their titles."""
    click.echo(f"  plan: {info['title']} ({len(info['phases'])} phase(s))")
    for ph in info["phases"]:
        click.echo(f"    {ph['phase']}. {ph['title']}")
    click.echo(f"  the whole plan: orch plan show {info['task']}")


class PlanGroup(click.Group):
    """`orch plan "TASK"` plans a task; `orch plan show SLUG` prints a task's plan. A first
    word that is not a subcommand is the task (so a task cannot be the bare word `show`)."""

    default = "task"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [self.default, *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[OPTIONS] TASK")
        formatter.write_usage(ctx.command_path, "show SLUG [--json]", prefix="   or: ")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.commands[self.default].format_options(ctx, formatter)
        self.format_commands(ctx, formatter)


@click.group(cls=PlanGroup)
def plan() -> None:
    """Plan and audit TASK; stop for approval before any change is made.

    \b
    Then: orch plan show SLUG   (read the plan), orch approve SLUG   (executes it),
    or edit plans/artifacts/SLUG/plan.json first.
    """


@plan.command("task", hidden=True)
@click.argument("task")
@click.option("--tier", type=TIER, help="Force the complexity tier (else the planner picks).")
@click.option("--model", help="Model to use: anthropic:<id>, openai:<model> or scripted:<path>.")
@quiet_option
@json_option
def plan_task(task: str, tier: str | None, model: str | None, quiet: bool, as_json: bool) -> None:
    """Plan and audit TASK; stop for approval before any change is made."""
    _go(
        lambda options: start(
            repo(), task, tier=tier, auto_approve=False, model=model, options=options
        ),
        as_json=as_json,
        quiet=quiet,
    )


@plan.command("show")
@click.argument("slug")
@json_option
def plan_show(slug: str, as_json: bool) -> None:
    """Print task SLUG's plan, readably.

    \b
    Its phases, each with its files and their actions, steps and acceptance criteria;
    --json prints plan.json as it is (the plan the task runs, after any edit).
    """
    the_plan = TaskFolder.open(repo(), slug).load_plan()
    if as_json:
        emit_json(the_plan)
        return
    click.echo(plan_text(the_plan), nl=False)


@click.command()
@click.argument("slug")
@click.option("--reason", help="Why (recorded, and shown by orch status).")
def abandon(slug: str, reason: str | None) -> None:
    """Give task SLUG up: it becomes ABANDONED, and nothing runs it again.

    \b
    orch status shows it with the reason; a bare orch resume skips it. Its commits, branch
    and records stay as they are. A task another orch process runs is locked: stop it first.
    \b
    Example:
      orch abandon add-a-verbose-flag --reason "done by hand instead"
    """
    task = abandon_task(repo(), slug, reason=reason)
    info = summary(task)
    click.echo(f"Task {info['task']} is ABANDONED: {info['reason']}")


@click.command()
@click.argument("slug")
@click.option("--deny", is_flag=True, help="Say no: a plan is revised, a command is refused.")
@click.option("--note", help="Why, or what to change (given to the planner or executor).")
@click.option("--no-run", is_flag=True, help="Record the answer only; continue later.")
@click.option("--quiet-tools", is_flag=True, help="Do not print each tool call.")
@quiet_option
@json_option
def approve(
    slug: str,
    deny: bool,
    note: str | None,
    no_run: bool,
    quiet_tools: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Answer task SLUG's WAITING_APPROVAL (a plan, a risky command, an escalation, a budget).

    Approving a stop at the spending cap lets the task spend another [budget] max_cost_usd.

    \b
    Examples:
      orch approve add-a-verbose-flag
      orch approve add-a-verbose-flag --deny --note "keep the old flag as an alias"
    """
    _go(
        lambda options: approve_task(
            repo(), slug, deny=deny, note=note, run=not no_run, options=options
        ),
        as_json=as_json,
        quiet=quiet,
        quiet_tools=quiet_tools,
    )


@click.command()
@click.argument("slug", required=False)
@click.option(
    "--model",
    help="Use this model for the rest of the task (recorded: later resumes keep it).",
)
@click.option("--quiet-tools", is_flag=True, help="Do not print each tool call.")
@click.option(
    "--accept-log",
    is_flag=True,
    help="Go on from a log that does not verify, as it is, once you have read it (recorded).",
)
@quiet_option
@json_option
def resume(
    slug: str | None,
    model: str | None,
    quiet_tools: bool,
    accept_log: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Continue task SLUG (default: the newest unfinished, unabandoned one) from its log.

    \b
    Use it after a crash, a context reset, or once a BLOCKED task's cause is fixed.
    Work already committed is never redone. A log that does not verify (edited, cut,
    signed elsewhere: see orch log SLUG --check) is refused; read it, then --accept-log.
    \b
    Examples:
      orch resume
      orch resume add-a-verbose-flag --model anthropic:claude-haiku-4-5
    """

    def go(options: Options) -> Env:
        options.accept_log = accept_log
        return resume_task(repo(), slug, model=model, options=options)

    _go(go, as_json=as_json, quiet=quiet, quiet_tools=quiet_tools)
