"""Crash `orch run` anywhere, resume it, and check nothing was lost: `python -m evals.resume`.

The scenario is the demo's (the bundled sample project and its scripted model, run with
`--yes`). One uninterrupted run is the reference. Then, for every kill point, a fresh copy
of the sample runs `orch run` with `ORCH_FAULT` set, so the process SIGKILLs itself at that
point (see `orchestrator/engine/faults.py`), or is SIGKILLed from outside at a random
moment (once its event log reaches a random length: the process is then wherever it is); `orch resume` runs until the task stops. A kill point counts as identical when the
task ends COMPLETE with the reference's commit subjects and trees (the project's content
at every commit), no phase committed twice, a clean working tree, and an event log in
which every line is valid against its schemas.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import click

from evals.suite import json_option, suite
from orchestrator.engine.demo import TASK, orch_command, prepare_repo, sample_paths
from orchestrator.engine.status import statuses
from orchestrator.engine.vcs import TRAILER_PHASE, ProjectRepo
from orchestrator.events.log import read_events
from orchestrator.store.layout import Layout

# Named kill points: (fault rule, what the crash interrupts). Spread over planning, tool
# calls, gate runs, commits, log writes and completion.
KILL_POINTS: tuple[tuple[str, str], ...] = (
    ("task.created", "planning: the task's first event is written"),
    ("plan.after_model", "planning: the planner replied, plan.json not written"),
    ("plan.after_save@2", "planning: revised plan.json written, not recorded"),
    ("audit.after_model", "planning: the auditor replied, nothing recorded"),
    ("audit.after_record@2", "planning: the audit recorded, PLAN_GATE not yet"),
    ("plan.approved", "planning: approval recorded, execution not started"),
    ("torn@9", "log write: half an event line on disk (a power cut)"),
    ("phase.started#1", "phase 1 started, the executor not yet running"),
    ("tool.before@1#1", "tool call: before phase 1's first tool"),
    ("tool.after@5#1", "tool call: a file edited, the step not checkpointed"),
    ("shell.running#1", "tool call: a shell command is running"),
    ("checkpoint.after@3#1", "tool call: right after a checkpoint"),
    ("executor.done#1", "phase 1: the executor finished, not recorded"),
    ("gate.before_command@1#1", "gate run: before the test command"),
    ("gate.after_command@1#1", "gate run: the tests failed, the result not recorded"),
    ("gate.after_decision@1#1", "gate run: the failing gate recorded, retry not decided"),
    ("gate.after_command@3#1", "gate run: the retry's tests passed, not recorded"),
    ("review.after_model#1", "gate run: the reviewer replied, nothing recorded"),
    ("gate.after_decision@2#1", "commit: PHASE_REVIEW_GATE GO recorded, no commit yet"),
    ("commit.before#1", "commit: about to commit phase 1"),
    ("commit.after#1", "commit: phase 1 committed, the commit not recorded"),
    ("phase.after_report#1", "commit: the phase report written, the phase not closed"),
    ("tool.after@13#2", "tool call: a memory written, the step not checkpointed"),
    ("event@60", "log write: right after the 60th event"),
    ("torn@75", "log write: a torn line in phase 2"),
    ("commit.after#2", "commit: phase 2 committed, the commit not recorded"),
    ("completion.before_review", "completion: before the final review"),
    ("completion.after_review", "completion: final_review.md written, not recorded"),
    ("completion.before_complete", "completion: everything done but the last event"),
)
MAX_RESUMES = 4
STOPPED = ("COMPLETE", "WAITING_APPROVAL", "BLOCKED")
PROCESS_TIMEOUT = 300.0


@dataclass
class Outcome:
    """How one run (with its resumes) ended."""

    state: str
    subjects: list[str]
    trees: list[str]
    phase_commits: dict[str, int]  # phase -> commits carrying its trailer
    dirty: list[str]
    log_problems: list[str]
    events: int
    seconds: float
    killed: bool = False
    resumes: int = 0
    active_seconds: float = 0.0  # from the event log's first line to the run's end


@dataclass
class KillResult:
    point: str
    what: str
    killed: bool
    resumes: int
    state: str
    identical: bool
    reasons: list[str] = field(default_factory=list)
    events: int = 0
    seconds: float = 0.0


def clean_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ORCH_") and k != "ANTHROPIC_API_KEY"
    }
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _orch(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        orch_command(*args),
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
    )


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def observe(repo: Path, started: float, *, killed: bool, resumes: int) -> Outcome:
    """What the repository and the task's log look like now."""
    layout = Layout(repo)
    rows = statuses(layout)
    state = rows[0]["state"] if rows else "NO TASK"
    log = Path(rows[0]["log"]) if rows else None
    log_problems = read_events(log, check=True).problems if log else ["no event log"]
    raw = _git(repo, "log", "--first-parent", "--format=%s%x00%T%x00%B%x1e")
    subjects, trees = [], []
    phase_commits: dict[str, int] = {}
    for record in raw.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        subject, tree, body = record.split("\x00", 2)
        subjects.append(subject)
        trees.append(tree)
        for line in body.splitlines():
            if line.startswith(f"{TRAILER_PHASE}: "):
                key = line.split(": ", 1)[1].strip()
                phase_commits[key] = phase_commits.get(key, 0) + 1
    dirty = ProjectRepo(layout).dirty_paths()
    events = rows[0]["events"] if rows else 0
    return Outcome(
        state,
        subjects,
        trees,
        phase_commits,
        dirty,
        log_problems,
        events,
        round(time.monotonic() - started, 2),
        killed,
        resumes,
    )


def run_scenario(
    repo: Path,
    *,
    fault: str | None = None,
    kill_at: int | None = None,
    env: dict[str, str] | None = None,
) -> Outcome:
    """`orch run` on a prepared sample `repo` (crashed as asked), then resume until it stops."""
    env = dict(env or clean_env())
    started = time.monotonic()
    with sample_paths() as (_sample, script):
        args = ["run", TASK, "--yes", "--model", f"scripted:{script}", "--json"]
        run_env = dict(env)
        if fault:
            run_env["ORCH_FAULT"] = fault
        proc = subprocess.Popen(
            orch_command(*args),
            cwd=repo,
            env=run_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            log_seen = _watch(proc, repo, kill_at)
            code = proc.wait(timeout=PROCESS_TIMEOUT)
            active = time.monotonic() - log_seen
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    killed = code == -signal.SIGKILL
    outcome = observe(repo, started, killed=killed, resumes=0)
    outcome.active_seconds = round(active, 2)
    resumes = 0
    while outcome.state not in STOPPED and resumes < MAX_RESUMES:
        resumes += 1
        _orch(repo, "resume", "--json", env=env)
        outcome = observe(repo, started, killed=killed, resumes=resumes)
    return outcome


def _watch(proc: subprocess.Popen[bytes], repo: Path, kill_at: int | None) -> float:
    """When the task's event log appeared; with `kill_at`, SIGKILL `proc` from outside as
    soon as the log holds that many lines (wherever the process then is)."""
    deadline = time.monotonic() + PROCESS_TIMEOUT
    logs: list[Path] = []
    while proc.poll() is None and time.monotonic() < deadline and not logs:
        logs = list(repo.glob("plans/artifacts/*/observability/*.ndjson"))
        time.sleep(0.005)
    seen = time.monotonic()
    while kill_at is not None and logs and proc.poll() is None and time.monotonic() < deadline:
        try:
            lines = logs[0].read_bytes().count(b"\n")
        except OSError:
            lines = 0
        if lines >= kill_at:
            os.kill(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.005)
    return seen


def compare(reference: Outcome, outcome: Outcome) -> list[str]:
    """Why `outcome` is not identical to `reference` ([] when it is)."""
    reasons = []
    if outcome.state != "COMPLETE":
        reasons.append(f"ended {outcome.state}")
    if outcome.subjects != reference.subjects:
        reasons.append(f"commit subjects {outcome.subjects} != {reference.subjects}")
    if outcome.trees != reference.trees:
        reasons.append("commit trees differ from the reference run")
    twice = {p: n for p, n in outcome.phase_commits.items() if n != 1}
    if twice:
        reasons.append(f"phases not committed exactly once: {twice}")
    if outcome.dirty:
        reasons.append(f"uncommitted project changes: {outcome.dirty[:5]}")
    if outcome.log_problems:
        reasons.append(f"event log problems: {outcome.log_problems[:3]}")
    return reasons


def fresh_repo(base: Path, name: str) -> Path:
    with sample_paths() as (sample, _script):
        return prepare_repo(base / name / "wordstats", sample)


def run_matrix(
    work: Path,
    *,
    points: tuple[tuple[str, str], ...] = KILL_POINTS,
    external: int = 3,
    seed: int = 4,
    progress: Callable[[KillResult], None] | None = None,
) -> tuple[Outcome, list[KillResult]]:
    """The reference run, then one crashed-and-resumed run per kill point."""
    env = clean_env()
    reference = run_scenario(fresh_repo(work, "reference"), env=env)
    if compare(reference, reference):
        raise click.ClickException(
            "the uninterrupted reference run did not complete cleanly: "
            + "; ".join(compare(reference, reference))
        )
    rng = random.Random(seed)
    plan: list[tuple[str, str, str | None, int | None]] = [
        (rule, what, rule, None) for rule, what in points
    ]
    for _ in range(external):
        at = rng.randint(2, reference.events - 5)
        plan.append(
            (f"external@{at}", f"SIGKILL from outside once the log has {at} lines", None, at)
        )
    results = []
    for index, (name, what, fault, kill_at) in enumerate(plan):
        repo = fresh_repo(work, f"kill-{index:02d}")
        outcome = run_scenario(repo, fault=fault, kill_at=kill_at, env=env)
        reasons = compare(reference, outcome)
        if not outcome.killed:
            reasons.append("the process was not killed (the kill point was never reached)")
        result = KillResult(
            name,
            what,
            outcome.killed,
            outcome.resumes,
            outcome.state,
            not reasons,
            reasons,
            outcome.events,
            outcome.seconds,
        )
        results.append(result)
        if progress:
            progress(result)
    return reference, results


@suite("resume")
@json_option
@click.option(
    "--external", default=3, show_default=True, help="Kills from outside at random times."
)
@click.option("--seed", default=4, show_default=True, help="Seed for the random kill times.")
@click.option("--keep", is_flag=True, help="Keep the crashed repositories (printed at the end).")
def resume(as_json: bool, external: int, seed: int, keep: bool) -> None:
    """Crash `orch run` at every kill point, resume, and compare with an uninterrupted run.

    \b
    Runs the demo's scenario with the scripted model (no API key): the reference run, then
    one run per kill point. Prints each kill point, whether it resumed to an identical
    result, and the count.
    """
    work = Path(tempfile.mkdtemp(prefix="orch-eval-resume-"))

    def show(result: KillResult) -> None:
        if not as_json:
            mark = "identical" if result.identical else "DIFFERENT: " + "; ".join(result.reasons)
            click.echo(
                f"{result.point:<28} killed={'yes' if result.killed else 'no ':<3} "
                f"resumes={result.resumes} {result.state:<9} {mark}"
            )

    try:
        reference, results = run_matrix(work, external=external, seed=seed, progress=show)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    identical = sum(1 for r in results if r.identical)
    summary: dict[str, Any] = {
        "kill_points": len(results),
        "identical": identical,
        "reference": {
            "events": reference.events,
            "seconds": reference.seconds,
            "commits": reference.subjects,
        },
        "results": [asdict(r) for r in results],
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(
            f"\n{identical} of {len(results)} kill points resumed to an identical result "
            f"(reference: {reference.events} events, {reference.seconds} s)."
        )
        if keep:
            click.echo(f"repositories kept in {work}")
    if identical != len(results):
        raise SystemExit(1)


if __name__ == "__main__":
    resume()
