"""A task's report as data: what its event log, its folder and git say, folded once.

`build(task)` reads the task's event log (the source of truth), its plan (for the phase
titles) and git (the commits whose `Orch-Task` trailer names the task, with their
diffstat), and returns a `Report`: the timeline, every gate with its runs, retries and
approvals, review verdicts, tokens and estimated cost per phase, memory decisions,
commits, and the task folder's files to link to. Nothing here prints or writes; the
rendering is `orchestrator.report.html`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from orchestrator.engine.enums import Step
from orchestrator.engine.payloads import GateEvent, GateRun, StateChange
from orchestrator.engine.progress import Spent, spending
from orchestrator.engine.vcs import TRAILER_PHASE, TRAILER_TASK
from orchestrator.errors import OrchError, UsageError
from orchestrator.events.log import Event, read_events
from orchestrator.store.tasks import TaskFolder

PLANNING = "planning"
COMPLETION = "completion"


def _ms(ts: str) -> int:
    """Milliseconds since the epoch of an event's `ts` (`...Z`, UTC)."""
    return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)


def _text(value: object) -> str:
    return "" if value is None else str(value)


# records ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gate:
    """One gate's decision, with the quality gates it ran."""

    gate: str
    phase: int | None
    at_ms: int
    decision: str
    reason: str
    next_action: str
    duration_ms: int | None  # from the start of the gate's work to its decision, when known
    iteration: int
    max_iterations: int
    failure_class: str | None
    runs: tuple[GateRun, ...]


@dataclass(frozen=True)
class Review:
    kind: str  # review | final_review
    phase: int | None
    attempt: int | None
    verdict: str
    passed: bool
    summary: str
    blocking: tuple[str, ...]
    validated: tuple[str, ...]
    demoted: tuple[str, ...]
    non_blocking: tuple[str, ...]
    criteria: tuple[tuple[str, bool, str], ...]  # (criterion, met, evidence)


@dataclass(frozen=True)
class Turn:
    """A retry, a restart, a resume, a block or an approval: a turn the task took."""

    at_ms: int
    step: str
    phase: int | None
    reason: str
    attempt: int | None = None
    failure_class: str | None = None
    kind: str | None = None  # an approval's kind
    command: str | None = None
    note: str | None = None
    by: str | None = None
    waited_ms: int | None = None  # an answer: how long the task waited for it


@dataclass(frozen=True)
class MemoryDecision:
    phase: int | None
    fact: str
    decision: str
    reason: str
    memory: str | None
    type: str
    source: str


@dataclass(frozen=True)
class FileStat:
    path: str
    added: int | None  # None: a binary file
    deleted: int | None


@dataclass(frozen=True)
class Commit:
    sha: str
    phase: int | None
    subject: str
    files: tuple[FileStat, ...]

    @property
    def added(self) -> int:
        return sum(f.added or 0 for f in self.files)

    @property
    def deleted(self) -> int:
        return sum(f.deleted or 0 for f in self.files)


@dataclass(frozen=True)
class Span:
    """A stretch of the timeline: planning, a wait for a person, a phase, completion."""

    lane: str
    label: str
    start_ms: int
    end_ms: int


@dataclass
class Phase:
    id: int
    title: str
    status: str = "pending"
    attempts: int = 0
    start_ms: int | None = None
    end_ms: int | None = None
    commit: str | None = None


@dataclass(frozen=True)
class Link:
    label: str
    path: Path  # absolute


@dataclass
class Report:
    slug: str
    title: str
    task_text: str
    model: str
    state: str
    start_ms: int
    end_ms: int
    events: int
    problems: list[str] = field(default_factory=list)
    phases: dict[int, Phase] = field(default_factory=dict)
    spans: list[Span] = field(default_factory=list)
    gates: list[Gate] = field(default_factory=list)
    steps: list[Turn] = field(default_factory=list)
    reviews: list[Review] = field(default_factory=list)
    tokens: dict[str, Spent] = field(default_factory=dict)  # planning, "phase N", completion
    memory: list[MemoryDecision] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    git_note: str | None = None
    links: list[Link] = field(default_factory=list)

    @property
    def total_tokens(self) -> Spent:
        return Spent.sum(self.tokens.values())


# the fold -----------------------------------------------------------------------------------


def _issue(raw: object) -> str:
    if not isinstance(raw, Mapping):
        return _text(raw)
    where = _text(raw.get("file"))
    if where and raw.get("line"):
        where += f":{raw['line']}"
    why = _text(raw.get("demoted_because"))
    text = _text(raw.get("description"))
    return " ".join(
        p for p in (f"[{where}]" if where else "", text, f"({why})" if why else "") if p
    )


def _issues(raw: object) -> tuple[str, ...]:
    return tuple(_issue(i) for i in raw) if isinstance(raw, list) else ()


def _review(event: Event) -> Review:
    p = event.payload
    criteria = p.get("criteria") if isinstance(p.get("criteria"), list) else []
    return Review(
        kind=_text(p.get("kind")),
        phase=event.phase,
        attempt=p.get("attempt"),
        verdict=_text(p.get("verdict")),
        passed=bool(p.get("passed")),
        summary=_text(p.get("summary")),
        blocking=_issues(p.get("blocking_issues")),
        validated=_issues(p.get("validated_blocking_issues")),
        demoted=_issues(p.get("demoted")),
        non_blocking=_issues(p.get("non_blocking")),
        criteria=tuple(
            (_text(c.get("criterion")), bool(c.get("met")), _text(c.get("evidence")))
            for c in criteria or []
            if isinstance(c, Mapping)
        ),
    )


TURNS = {
    Step.PLAN_APPROVED,
    Step.PHASE_RETRY,
    Step.PHASE_RESTARTED,
    Step.RESUMED,
    Step.BLOCKED,
    Step.APPROVAL_REQUESTED,
    Step.APPROVAL_GIVEN,
    Step.APPROVAL_DENIED,
}


class _Fold:
    """One pass over the events, in order."""

    def __init__(self, report: Report, titles: Mapping[int, str]) -> None:
        self.r = report
        self.titles = titles
        self.gate_started: dict[int | None, int] = {}  # phase -> when its gates began
        self.audit_started: int | None = None
        self.waiting: tuple[int, str] | None = None  # when a wait began, and for what
        self.planning_end: int | None = None
        self.completion_start: int | None = None
        self.handlers: dict[str, Callable[[Event, int], None]] = {
            "state_change": self.state_change,
            "gate_event": self.gate_event,
            "memory_promotion": self.memory_promotion,
            "verdict": self.verdict,
            "delegation": self.delegation,
        }

    def phase(self, pid: int) -> Phase:
        if pid not in self.r.phases:
            self.r.phases[pid] = Phase(pid, self.titles.get(pid, f"phase {pid}"))
        return self.r.phases[pid]

    def run(self, events: Iterable[Event]) -> None:
        for event in events:
            try:
                at = _ms(event.ts)
            except ValueError:
                continue
            handler = self.handlers.get(event.event_type)
            if handler is not None:
                handler(event, at)
        self.close()

    # handlers ---------------------------------------------------------------------------
    def delegation(self, event: Event, at: int) -> None:
        if event.payload.get("purpose") == "auditor":
            self.audit_started = at
        elif event.payload.get("purpose") == "reviewer" and event.phase is None:
            self.completion_start = self.completion_start or at

    def memory_promotion(self, event: Event, at: int) -> None:
        p = event.payload
        self.r.memory.append(
            MemoryDecision(
                phase=event.phase,
                fact=_text(p.get("fact")),
                decision=_text(p.get("decision")),
                reason=_text(p.get("reason")),
                memory=p.get("memory") if isinstance(p.get("memory"), str) else None,
                type=_text(p.get("type")),
                source=_text(p.get("source")),
            )
        )

    def verdict(self, event: Event, at: int) -> None:
        if event.payload.get("kind") in ("review", "final_review"):
            self.r.reviews.append(_review(event))

    def gate_event(self, event: Event, at: int) -> None:
        try:
            g = GateEvent.from_payload(event.payload)
        except (KeyError, ValueError, TypeError):
            return
        started = self.audit_started if g.gate == "PLAN_GATE" else self.gate_started.get(g.phase)
        runs = g.diagnosis.runs if g.diagnosis and g.diagnosis.runs else ()
        if started is not None and g.gate in ("PLAN_GATE", "PHASE_REVIEW_GATE"):
            duration: int | None = max(0, at - started)
        else:
            duration = sum(r.duration_ms for r in runs) if runs else None
        self.r.gates.append(
            Gate(
                gate=str(g.gate),
                phase=g.phase,
                at_ms=at,
                decision=str(g.decision),
                reason=g.reason,
                next_action=g.next_action,
                duration_ms=duration,
                iteration=g.iteration_index,
                max_iterations=g.max_iterations,
                failure_class=str(g.failure_class) if g.failure_class else None,
                runs=runs,
            )
        )
        if g.gate == "COMPLETION_GATE":
            self.completion_start = self.completion_start or at

    def state_change(self, event: Event, at: int) -> None:
        try:
            change = StateChange.from_payload(event.payload)
        except (KeyError, ValueError, TypeError):
            change = None
        if change is None:
            return
        self.r.state = str(change.to)
        if change.task is not None:
            self.r.task_text, self.r.model = change.task.text, change.task.model
        self.phase_change(change, at)
        if change.step in TURNS:
            self.turn(change, at)
        if change.step in (Step.PLAN_READY, Step.APPROVAL_REQUESTED) and self.planning_end is None:
            self.planning_end = at

    def phase_change(self, c: StateChange, at: int) -> None:
        if c.phase is None:
            return
        ph = self.phase(c.phase)
        if c.step in (Step.PHASE_STARTED, Step.PHASE_RETRY, Step.PHASE_RESTARTED):
            ph.start_ms = ph.start_ms if ph.start_ms is not None else at
            ph.attempts = max(ph.attempts, c.attempt or 1)
            ph.status = "acting"
        elif c.step == Step.GATES_STARTED:
            self.gate_started[c.phase] = at
            ph.status = "reviewing"
        elif c.step == Step.PHASE_COMMITTED:
            ph.commit, ph.status = c.commit, "committed"
        elif c.step == Step.PHASE_CLOSED:
            ph.end_ms, ph.status = at, "closed"
        if ph.start_ms is not None:
            ph.end_ms = max(ph.end_ms or at, at)

    def turn(self, c: StateChange, at: int) -> None:
        approval = c.approval
        waited = None
        if c.step == Step.APPROVAL_REQUESTED:
            self.waiting = (at, str(approval.kind) if approval else "approval")
        elif c.step in (Step.APPROVAL_GIVEN, Step.APPROVAL_DENIED) and self.waiting:
            began, what = self.waiting
            waited = at - began
            self.r.spans.append(Span("approval", f"waiting: {what}", began, at))
            self.waiting = None
        self.r.steps.append(
            Turn(
                at_ms=at,
                step=str(c.step),
                phase=c.phase,
                reason=c.reason,
                attempt=c.attempt,
                failure_class=str(c.failure_class) if c.failure_class else None,
                kind=str(approval.kind) if approval else None,
                command=approval.command if approval else None,
                note=approval.note if approval else None,
                by=c.by,
                waited_ms=waited,
            )
        )

    def close(self) -> None:
        r = self.r
        first_phase = min((p.start_ms for p in r.phases.values() if p.start_ms), default=None)
        plan_end = self.planning_end or first_phase or r.end_ms
        r.spans.insert(0, Span(PLANNING, "planning and audit", r.start_ms, plan_end))
        for ph in sorted(r.phases.values(), key=lambda p: p.id):
            if ph.start_ms is not None:
                end = ph.end_ms or ph.start_ms
                r.spans.append(
                    Span(f"phase {ph.id}", f"phase {ph.id}: {ph.title}", ph.start_ms, end)
                )
        if self.completion_start is not None:
            r.spans.append(
                Span(COMPLETION, "final review and completion", self.completion_start, r.end_ms)
            )
        if self.waiting:
            began, what = self.waiting
            r.spans.append(Span("approval", f"waiting: {what} (unanswered)", began, r.end_ms))


# git ----------------------------------------------------------------------------------------


def _trailers(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in body.strip().splitlines():
        key, sep, value = line.partition(": ")
        if sep and " " not in key.strip():
            out[key.strip()] = value.strip()
    return out


def _numstat(lines: Iterable[str]) -> tuple[FileStat, ...]:
    files = []
    for line in lines:
        parts = line.split("\t", 2)
        if len(parts) != 3:
            continue
        added, deleted, path = parts
        files.append(
            FileStat(
                path,
                int(added) if added.isdigit() else None,
                int(deleted) if deleted.isdigit() else None,
            )
        )
    return tuple(files)


def task_commits(root: Path, slug: str) -> list[Commit]:
    """The commits of any branch whose `Orch-Task` trailer names `slug`, oldest first.

    Raises OrchError when git cannot be asked (no repository, no git).
    """
    args = ["git", "-C", str(root), "log", "--all", "--reverse", "-F"]
    args += [f"--grep={TRAILER_TASK}: {slug}", "--numstat", "-z"]
    args += ["--format=%x1e%H%x1f%s%x1f%B%x1f"]
    try:
        out = subprocess.run(args, capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        said = (getattr(exc, "stderr", None) or b"").decode("utf-8", "replace").strip()
        raise OrchError(f"git log failed: {said.splitlines()[-1] if said else exc}") from None
    commits = []
    for record in out.decode("utf-8", "replace").split("\x1e"):
        fields = record.split("\x1f")
        if len(fields) != 4:
            continue
        sha, subject, body, stat = fields
        trailers = _trailers(body)
        if trailers.get(TRAILER_TASK) != slug:
            continue
        phase = trailers.get(TRAILER_PHASE, "")
        rows = stat.strip("\n\x00").split("\x00")
        commits.append(
            Commit(sha, int(phase) if phase.isdigit() else None, subject, _numstat(rows))
        )
    return commits


# the whole report ---------------------------------------------------------------------------


def _links(task: TaskFolder, phases: Iterable[int]) -> list[Link]:
    named = [
        ("plan", task.plan_md),
        ("plan (JSON)", task.plan_json),
        ("plan revisions", task.revisions),
        *((f"phase {pid} report", task.phase_report(pid)) for pid in sorted(phases)),
        ("final review", task.final_review),
        ("verified items", task.verified_items),
        ("task memory", task.path / "task-memory.md"),
        ("event log", task.event_log_path),
    ]
    links = [Link(label, path) for label, path in named if path.is_file()]
    for folder, label in ((task.transcripts, "transcript"), (task.episodes, "episode")):
        if folder.is_dir():
            for path in sorted(folder.iterdir(), key=lambda p: (len(p.name), p.name)):
                if path.is_file() and not path.name.startswith("."):
                    links.append(Link(f"{label} {path.stem}", path))
    return links


def _titles(task: TaskFolder) -> tuple[str, dict[int, str]]:
    try:
        plan = task.load_plan()
    except OrchError:
        return "", {}
    titles = {
        int(p["phase_id"]): _text(p.get("title"))
        for p in plan.get("phases", [])
        if isinstance(p, Mapping) and isinstance(p.get("phase_id"), int)
    }
    return _text(plan.get("task_title")), titles


def _spent(events: list[Event]) -> dict[str, Spent]:
    """What the model calls spent in planning, in each phase and in completion: a call
    outside a phase is planning before the first event of a phase, completion after it."""
    began = next((i for i, e in enumerate(events) if e.phase is not None), len(events))
    return {
        **spending(events[:began], lambda e: PLANNING),
        **spending(events[began:], lambda e: COMPLETION if e.phase is None else f"phase {e.phase}"),
    }


def build(task: TaskFolder) -> Report:
    """The report of `task`; UsageError when its log has no event."""
    where = task.event_log_path.relative_to(task.layout.root).as_posix()
    result = read_events(task.event_log_path, where=where)
    events = [e for e in result.events if e.task == task.slug] or result.events
    stamped, timed = [], []
    for e in events:
        try:
            stamped.append(_ms(e.ts))
        except ValueError:
            continue
        timed.append(e)
    if not stamped:
        raise UsageError(f"task {task.slug!r} has no events in {where}: nothing to report")
    title, titles = _titles(task)
    report = Report(
        slug=task.slug,
        title=title,
        task_text="",
        model="",
        state="",
        start_ms=min(stamped),
        end_ms=max(stamped),
        events=len(events),
        problems=list(result.problems),
    )
    fold = _Fold(report, titles)
    for pid in sorted(titles):
        fold.phase(pid)  # a phase not started yet is shown too
    fold.run(events)
    report.tokens = _spent(timed)
    try:
        report.commits = task_commits(task.layout.root, task.slug)
    except OrchError as exc:
        report.git_note = exc.line()
    for commit in report.commits:
        ph = report.phases.get(commit.phase) if commit.phase is not None else None
        if ph is not None and not ph.commit:
            ph.commit = commit.sha  # a commit whose event was lost
    report.links = _links(task, report.phases)
    return report
