"""Events as text for a person: one line of progress per event that matters, and the
one-line summaries `orch log` prints.

Everything here is pure: `describe(event)` gives a line and a style (or None to stay
quiet), `format_event(event)` a line of `orch log`, `spending` and `phase_gates` the
figures of a run's summary; `spending` also serves `orch status` and the report. Printing
them is the commands' job (`orchestrator/commands/run.py` prints progress as a listener of
the journal).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

from msgspec import Struct

from orchestrator.engine.enums import Decision, Step
from orchestrator.events.log import Event

Line = tuple[str, str]  # the text and its rich style ("" for none)
Payload = dict[str, Any]

GATE_STYLE = {
    Decision.GO: "green",
    Decision.REPLAN: "yellow",
    Decision.ABSTAIN: "yellow",
    Decision.BLOCKED: "red",
}
TOOL_INPUTS = ("path", "command", "op", "pattern", "title", "id", "status")
# steps shown as their reason only, dimmed
QUIET_STEPS = {
    Step.APPROVAL_GIVEN,
    Step.APPROVAL_DENIED,
    Step.RESUMED,
    Step.PLAN_READY,
    Step.PLAN_APPROVED,
    Step.BRANCH_CREATED,
    Step.GATES_STARTED,
}


def short(text: Any, limit: int = 140) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


# orch log ------------------------------------------------------------------------------------


def summarise(event: Event) -> str:
    """What an event says, in one line."""
    p: Payload = event.payload
    if event.event_type == "gate_event":
        return f"{p.get('event_type')} {p.get('decision')} [{p.get('workflow_state')}]: {p.get('reason')}"
    if event.event_type == "state_change":
        return f"{p.get('from')} -> {p.get('to')}" + (f": {p['reason']}" if p.get("reason") else "")
    for key in ("summary", "detail", "message", "reason"):
        if isinstance(p.get(key), str):
            return str(p[key])
    text = json.dumps(p, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 160 else text[:157] + "..."


def format_event(event: Event) -> str:
    phase = "-" if event.phase is None else str(event.phase)
    return f"{event.ts}  {phase:>2}  {event.agent:<14} {event.event_type:<19} {summarise(event)}"


# progress ------------------------------------------------------------------------------------


def describe(event: Event) -> Line | None:
    """The progress line for `event`, or None when a person need not see it."""
    render = DESCRIBERS.get(event.event_type)
    return render(event) if render is not None else None


def _state_change(event: Event) -> Line | None:
    p = event.payload
    step = p.get("step")
    if step == Step.TASK_CREATED:
        return f"Task {event.task}: {short(p['task']['text'])}", "bold"
    if step in (Step.PHASE_STARTED, Step.PHASE_RESTARTED):
        return f"Phase {p['phase']}: {short(p['reason'].split(': ', 1)[-1])}", "bold cyan"
    if step == Step.PHASE_RETRY:
        return f"  retry, attempt {p.get('attempt')}: {short(p['reason'])}", "yellow"
    if step == Step.PHASE_COMMITTED:
        reconciled = " (reconciled)" if p.get("reconciled") else ""
        return f"  committed {p['commit'][:12]}{reconciled}", "green"
    if step == Step.APPROVAL_REQUESTED:
        return f"WAITING_APPROVAL: {short(p['reason'], 300)}", "bold yellow"
    if step == Step.BLOCKED:
        return f"BLOCKED: {short(p['reason'], 300)}", "bold red"
    if step == Step.COMPLETE:
        return f"COMPLETE: {short(p['reason'])}", "bold green"
    if step in QUIET_STEPS:
        return f"  {short(p['reason'])}", "dim"
    return None


def _delegation(event: Event) -> Line:
    return f"  -> {event.payload['to']}: {short(event.payload['reason'])}", "dim"


def _execution_report(event: Event) -> Line | None:
    p = event.payload
    if p["kind"] == "plan":
        line = f"  plan iteration {p.get('iteration')}: {p.get('phases')} phase(s), tier {p.get('tier')}"
        return line, ""
    if p["kind"] == "final_review":
        return None  # its verdict event says it already
    if p["kind"] == "phase":
        return f"  executor done after {p.get('turns')} turn(s): {short(p['summary'], 100)}", ""
    return f"  {p['kind'].replace('_', ' ')}: {short(p['summary'], 100)}", "dim"


def _plan_audit(event: Event) -> Line:
    p = event.payload
    return (
        f"  audit iteration {p['iteration']}: {p['effective_verdict']} (score "
        f"{p['score']}, {len(p['findings'])} finding(s))"
    ), ""


def usd(amount: float) -> str:
    """An amount of US dollars, to the cent (to a hundredth of a cent below ten cents)."""
    return f"${amount:.2f}" if amount >= 0.1 else f"${amount:.4f}"


def gate_output(name: str, command: str | None, exit_code: int | None, tail: str) -> list[str]:
    """A gate's name, command and exit code on one line, then its output's tail, indented."""
    head = name
    if command:
        head += f": `{command}`"
    if exit_code is not None:
        head += f" exited with code {exit_code}"
    return [head, *(f"    | {line}" for line in tail.splitlines())]


def _gate_event(event: Event) -> Line:
    p = event.payload
    phase = f" phase {p['phase_id']}" if p.get("phase_id") else ""
    line = f"  {p['event_type']}{phase}: {p['decision']}: {short(p['reason'])}"
    if p["event_type"] == "COMPLETION_GATE":  # its gates' runs have no verdict line of their own
        for run in (p.get("diagnosis_packet") or {}).get("runs") or []:
            if run["status"] == "FAIL":
                line += "\n" + "\n".join(_failed_gate(run))
    return line, GATE_STYLE.get(p["decision"], "")


def _failed_gate(p: Payload) -> list[str]:
    """What a person needs at once when a gate fails: which, what ran, how, what it said."""
    secs = f" in {p.get('duration_ms', 0) / 1000:.1f} s" if p.get("command") else ""
    first, *tail = gate_output(
        f"{p['gate']}: FAIL{secs}", p.get("command"), p.get("exit_code"), p.get("output_tail") or ""
    )
    return [f"  {first}", *tail]


def _verdict(event: Event) -> Line:
    p = event.payload
    style = "green" if p["passed"] else "red"
    if p["kind"] == "quality_gate":
        if p["status"] == "FAIL":
            return "\n".join(_failed_gate(p)), style
        secs = f" in {p.get('duration_ms', 0) / 1000:.1f} s" if p.get("command") else ""
        return f"  {p['gate']}: {p['status']}{secs}", style
    passed = "pass" if p["passed"] else "FAIL"
    return f"  {p['kind'].replace('_', ' ')}: {passed}: {short(p['summary'], 100)}", style


def tool_text(tool: str, inputs: Payload) -> str:
    """A tool call in one line: its name and the inputs that say what it does."""
    shown = " ".join(f"{k}={short(v, 40)}" for k, v in inputs.items() if k in TOOL_INPUTS)
    return f"{tool} {shown}".rstrip()


def _tool_call(event: Event) -> Line:
    p = event.payload
    text = tool_text(p["tool"], p.get("input") or {})
    return f"    {text}" + ("" if p["ok"] else " (error)"), "dim"


def _error(event: Event) -> Line:
    p = event.payload
    return f"  error ({p.get('kind')}): {short(p.get('detail', ''))}", "red"


def _compaction(event: Event) -> Line:
    p = event.payload
    tokens = ""
    if p.get("tokens_before") is not None and p.get("tokens_after") is not None:
        tokens = f", {p['tokens_before']} -> {p['tokens_after']} tokens"
    return f"  compaction ({p.get('kind')}): {p.get('outcome')}{tokens}", "dim"


def _memory_verification(event: Event) -> Line | None:
    p = event.payload
    if p.get("purpose") != "prompt":
        return _memory(event)
    if p.get("fresh_context"):
        return "  memory: none for this turn (the user asked for a fresh context)", "dim"
    if not p.get("checked"):
        return None  # no repo memory yet: nothing worth a line
    withheld = len(p.get("withheld") or [])
    line = (
        f"  memory verified: {p['checked']} checked, {p['ok']} ok, {p['changed']} changed, "
        f"{p['stale']} stale"
    )
    return line + (f" ({withheld} withheld)" if withheld else ""), "dim"


def _memory(event: Event) -> Line:
    return f"  {event.event_type}: {short(summarise(event), 100)}", "dim"


DESCRIBERS: dict[str, Callable[[Event], Line | None]] = {
    "state_change": _state_change,
    "delegation": _delegation,
    "execution_report": _execution_report,
    "plan_audit": _plan_audit,
    "gate_event": _gate_event,
    "verdict": _verdict,
    "tool_call": _tool_call,
    "error": _error,
    "compaction": _compaction,
    "memory_verification": _memory_verification,
    "memory_promotion": _memory,
}


# figures for a summary -----------------------------------------------------------------------


# what a task's model calls spent: the live board, a run's summary, `orch status` and the
# report all read it from here
KINDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
K = TypeVar("K", bound=Hashable)


def _count(value: object) -> int:
    """A token count as the `model_call` schema has it; anything else (a log edited by
    hand) counts as none."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class Spent(Struct):
    """The model calls of one part of a task: how many, their tokens of each kind and their
    estimated cost (a scripted model's usage priced as claude-sonnet-4-6)."""

    calls: int = 0
    answered: int = 0  # calls that reported their usage
    failed: int = 0  # calls that ended in a failure
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    unpriced: int = 0  # answered calls whose model has no known price (cost_usd null)

    def add(self, payload: Mapping[str, Any]) -> None:
        """Count one `model_call` event's payload."""
        usage = payload.get("usage")
        cost = payload.get("estimated_cost_usd", payload.get("cost_usd"))
        priced = isinstance(cost, int | float) and not isinstance(cost, bool)
        self.calls += 1
        self.failed += 1 if payload.get("failure_class") else 0
        self.cost_usd += float(cost) if priced else 0.0
        if "usage" in payload:
            self.answered += 1
            self.unpriced += 0 if priced else 1
        if isinstance(usage, Mapping):
            self.input_tokens += _count(usage.get("input_tokens"))
            self.output_tokens += _count(usage.get("output_tokens"))
            self.cache_read_tokens += _count(usage.get("cache_read_tokens"))
            self.cache_write_tokens += _count(usage.get("cache_write_tokens"))

    def plus(self, other: Spent) -> Spent:
        # the field names, as msgspec keeps them (`msgspec.structs.fields` would also read
        # every annotation, compiling each from its text)
        names = self.__struct_fields__
        return Spent(*(getattr(self, name) + getattr(other, name) for name in names))

    @classmethod
    def sum(cls, parts: Iterable[Spent]) -> Spent:
        total = cls()
        for part in parts:
            total = total.plus(part)
        return total

    @property
    def tokens_in(self) -> int:
        """Input tokens, read from the cache or written to it included."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total(self) -> int:
        return self.tokens_in + self.output_tokens

    def text(self) -> str:
        """`7 model calls, 80,000 tokens in, 2,000 out`: the live board and a run's summary."""
        line = f"{self.calls} model call{'s' * (self.calls != 1)}"
        if self.tokens_in or self.output_tokens:
            line += f", {self.tokens_in:,} tokens in, {self.output_tokens:,} out"
        return line

    def to_dict(self) -> Payload:
        """`orch status`'s figures: the calls that reported usage, by token kind, and their
        estimated cost."""
        return {
            "calls": self.answered,
            **{kind: getattr(self, kind) for kind in KINDS},
            "estimated_cost_usd": round(self.cost_usd, 6),
        }


def by_phase(event: Event) -> int | None:
    return event.phase


def spending(events: Iterable[Event], part: Callable[[Event], K]) -> dict[K, Spent]:
    """What the model calls among `events` spent, for each part of the task that
    `part(event)` names (`by_phase`: each phase, None outside one), in order of first call."""
    parts: dict[K, Spent] = {}
    for event in events:
        if event.event_type == "model_call":
            parts.setdefault(part(event), Spent()).add(event.payload)
    return parts


def phase_gates(events: Iterable[Event]) -> dict[int, list[Payload]]:
    """Each phase's quality gates as its newest attempt ran them (their verdicts' payloads)."""
    newest: dict[int, tuple[int, dict[str, Payload]]] = {}
    for event in events:
        p = event.payload
        if event.event_type != "verdict" or p.get("kind") != "quality_gate" or event.phase is None:
            continue
        attempt, gates = newest.get(event.phase, (0, {}))
        if p.get("attempt", 0) > attempt:
            attempt, gates = p.get("attempt", 0), {}
        gates[p["gate"]] = p
        newest[event.phase] = (attempt, gates)
    return {pid: list(gates.values()) for pid, (_, gates) in newest.items()}


def gate_text(p: Payload) -> str:
    """A gate's verdict in a few words: `tests_pass PASS 0.4 s`."""
    secs = f" {p.get('duration_ms', 0) / 1000:.1f} s" if p.get("command") else ""
    return f"{p['gate']} {p['status']}{secs}"
