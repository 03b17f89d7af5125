"""`orch run`, `plan`, `approve`, `resume`, `abandon`, `status`: the workflow."""

from __future__ import annotations

import os
import sys
import textwrap
from typing import Any

import click
from rich.console import Console

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.engine.api import Options, start, statuses, summary, whereabouts
from orchestrator.engine.api import abandon as abandon_task
from orchestrator.engine.api import approve as approve_task
from orchestrator.engine.api import resume as resume_task
from orchestrator.engine.enums import ApprovalKind, Tier, WorkflowState
from orchestrator.engine.env import Env, usd
from orchestrator.engine.progress import describe, gate_output
from orchestrator.engine.state import TaskState
from orchestrator.events.log import Event
from orchestrator.store.plans import plan_text
from orchestrator.store.tasks import TaskFolder

TIER = click.Choice([t.value for t in Tier], case_sensitive=False)
# the states `orch status` gives a reason line for
STOPPED = (WorkflowState.WAITING_APPROVAL, WorkflowState.BLOCKED, WorkflowState.ABANDONED)


class _Console(Console):
    """rich's console, except that a closed stdout ends the printing, not the process
    (rich's default exits with code 1, and would leave the task half-way)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        silence_stdout()


class Printer:
    """Prints progress lines with rich (colour on a terminal, plain text otherwise)."""

    def __init__(self, *, tools: bool = True) -> None:
        self.console = _Console(highlight=False, soft_wrap=True)
        self.tools = tools

    def __call__(self, event: Event, state: TaskState) -> None:
        if event.event_type == "tool_call" and not self.tools:
            return
        shown = describe(event)
        if shown is not None:
            self.line(*shown)

    def line(self, text: str, style: str = "") -> None:
        """Print one line. A closed stdout ends the printing, never the task: what is
        left goes to the null device, and the task runs on to where it would stop."""
        self.console.print(text, style=style or None, markup=False)


def silence_stdout() -> None:
    """Point stdout at the null device (Python's recipe for a closed pipe): later writes,
    and the interpreter's last flush, then succeed quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _options(as_json: bool, quiet_tools: bool = False) -> Options:
    options = Options()
    if not as_json:
        printer = Printer(tools=not quiet_tools)
        options.listeners.append(printer)
        options.notices = lambda line: printer.line(f"note: {line}", "yellow")
    return options


def _finish(env: Env, as_json: bool) -> None:
    """Print where the task stands; exit 1 when it is blocked (whether or not anyone still
    reads the output)."""
    info = summary(env.task)
    try:
        _print_finish(info, as_json)
        if not as_json:
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


def _print_finish(info: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(info)
    else:
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
        click.echo(f"  task folder: {info['folder']}")
        click.echo(f"  event log:   {info['log']} ({info['events']} events)")


@click.command()
@click.argument("task")
@click.option("--tier", type=TIER, help="Force the complexity tier (else the planner picks).")
@click.option("--yes", "-y", is_flag=True, help="Approve the plan without asking.")
@click.option("--model", help="Model to use: anthropic:<id>, openai:<model> or scripted:<path>.")
@click.option("--quiet-tools", is_flag=True, help="Do not print each tool call.")
@json_option
def run(
    task: str, tier: str | None, yes: bool, model: str | None, quiet_tools: bool, as_json: bool
) -> None:
    """Plan, audit, execute, gate and commit TASK, phase by phase.

    \b
    Without --yes the task stops when its plan is ready: read plans/artifacts/<slug>/plan.md,
    then `orch approve SLUG`. A crash or a context reset loses nothing: `orch resume`.
    \b
    Examples:
      orch run "add a --verbose flag to the CLI"
      orch run "fix the flaky date test" --tier TRIVIAL --yes
    """
    env = start(
        repo(),
        task,
        tier=tier,
        auto_approve=yes,
        model=model,
        options=_options(as_json, quiet_tools),
    )
    _finish(env, as_json)


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
@json_option
def plan_task(task: str, tier: str | None, model: str | None, as_json: bool) -> None:
    """Plan and audit TASK; stop for approval before any change is made."""
    env = start(repo(), task, tier=tier, auto_approve=False, model=model, options=_options(as_json))
    _finish(env, as_json)


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
@json_option
def approve(
    slug: str, deny: bool, note: str | None, no_run: bool, quiet_tools: bool, as_json: bool
) -> None:
    """Answer task SLUG's WAITING_APPROVAL (a plan, a risky command, an escalation, a budget).

    Approving a stop at the spending cap lets the task spend another [budget] max_cost_usd.

    \b
    Examples:
      orch approve add-a-verbose-flag
      orch approve add-a-verbose-flag --deny --note "keep the old flag as an alias"
    """
    env = approve_task(
        repo(), slug, deny=deny, note=note, run=not no_run, options=_options(as_json, quiet_tools)
    )
    _finish(env, as_json)


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
@json_option
def resume(
    slug: str | None, model: str | None, quiet_tools: bool, accept_log: bool, as_json: bool
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
    options = _options(as_json, quiet_tools)
    options.accept_log = accept_log
    env = resume_task(repo(), slug, model=model, options=options)
    _finish(env, as_json)


def _echo_blocking_gate(gate: dict[str, Any] | None) -> None:
    if gate is None:
        return
    first, *rest = gate_output(
        gate["name"], gate["command"], gate["exit_code"], gate["output_tail"]
    )
    click.echo(f"  blocking gate: {first}")
    for line in rest:
        click.echo(line)


@click.command()
@click.argument("slug", required=False)
@json_option
def status(slug: str | None, as_json: bool) -> None:
    """Where every task stands (or task SLUG in detail)."""
    layout = repo()
    if slug:
        info = summary(TaskFolder.open(layout, slug))
        if as_json:
            emit_json(info)
            return
        click.echo(f"{info['task']}: {info['state']}  {info['title']}")
        if info["reason"]:
            click.echo(f"  {info['reason']}")
        _echo_blocking_gate(info["blocking_gate"])
        if info["waiting_for"]:
            click.echo(
                f"  waiting for: {info['waiting_for']}"
                + (f" ({info['command']})" if info["command"] else "")
                + f"; answer with orch approve {info['task']}"
            )
        if info["budget"]:
            click.echo(
                f"  spent {usd(info['budget']['spent_usd'])} of the "
                f"{usd(info['budget']['cap_usd'])} cap ([budget] max_cost_usd)"
            )
        unpriced = f", {info['unpriced_calls']} call(s) unpriced" if info["unpriced_calls"] else ""
        click.echo(
            f"  plan iteration {info['plan_iteration']}, tier {info['tier'] or '-'}, "
            f"model {info['model']}, spent {usd(info['cost_usd'])}{unpriced}"
        )
        click.echo(f"  model calls: {_tokens(info['tokens'])}")
        for ph in info["phases"]:
            commit = f" {ph['commit'][:12]}" if ph["commit"] else ""
            retries = f" retries: {', '.join(ph['retries'])}" if ph["retries"] else ""
            click.echo(f"  phase {ph['phase']}: {ph['status']:<9} {ph['title']}{commit}{retries}")
            if ph["tokens"]["calls"]:
                click.echo(f"    {_tokens(ph['tokens'])}")
        click.echo(f"  task folder: {info['folder']}")
        click.echo(f"  event log:   {info['log']} ({info['events']} events)")
        click.echo(f"  log check:   {info['log_check']['summary']}")
        for problem in info["log_problems"]:
            click.echo(f"  log: {problem}")
        return
    rows = statuses(layout)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo('No tasks yet. Start one with: orch run "TASK"')
        return
    width = max(len(info["task"]) for info in rows)
    for info in rows:
        phases = f"{info['committed']}/{len(info['phases'])}" if info["phases"] else "-"
        click.echo(
            f"{info['task']:<{width}}  {info['state']:<17} phases {phases:<6} "
            f"{(info['updated'] or '')[:19]}"
        )
        if info["state"] in STOPPED:
            click.echo(_wrapped(info["reason"]))
        if not info["log_check"]["ok"]:
            check = f"log {info['log_check']['summary']} (orch log {info['task']} --check)"
            click.echo(_wrapped(check))


def _tokens(t: dict[str, Any]) -> str:
    """`12 calls, 80,000 input tokens (60,000 read from cache, 9,000 written), 2,000
    output, est. $0.05`: scripted models' usage is estimated, priced as claude-sonnet-4-6."""
    total = t["input_tokens"] + t["cache_read_tokens"] + t["cache_write_tokens"]
    return (
        f"{t['calls']} calls, {total:,} input tokens ({t['cache_read_tokens']:,} read from "
        f"cache, {t['cache_write_tokens']:,} written), {t['output_tokens']:,} output, "
        f"est. {usd(t['estimated_cost_usd'])}"
    )


def _wrapped(text: str, limit: int = 400) -> str:
    """A reason under its task: cut at a word (never mid-word) and wrapped, indented."""
    short = textwrap.shorten(" ".join(text.split()), limit, placeholder=" …")
    return textwrap.fill(short, 100, initial_indent="  ", subsequent_indent="  ")
