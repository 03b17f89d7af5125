"""Fault injection for the crash tests: SIGKILL this process at a named point.

`ORCH_FAULT` holds one rule (nothing happens when it is unset):

- `<point>` or `<point>@<n>`: kill the n-th time (default the first) the engine passes
  `point(<point>)`, e.g. `commit.after@2`; `<point>@<n>#<phase>` counts only the passes
  while phase <phase> runs, e.g. `tool.after@3#2`;
- `event@<n>`: kill right after the task's event log holds n events;
- `torn@<n>`: when the log holds n-1 events, write the first half of the next event's line
  and kill, as a power cut in the middle of a write would leave it.

The engine calls `point()` at every place where a crash would leave a distinct state
(between a decision and its effect, between an effect and its record). Points are listed
in `POINTS` so tests can check that each one is reached.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field

ENV = "ORCH_FAULT"

POINTS = (
    "task.created",  # task folder and first event written
    "plan.after_model",  # planner replied, plan.json not yet written
    "plan.after_save",  # plan.json written, not yet recorded
    "audit.after_model",  # auditor replied, nothing recorded
    "audit.after_record",  # plan_audit recorded, PLAN_GATE not yet
    "plan.approved",  # approval recorded, execution not started
    "phase.started",  # phase_started recorded, executor not yet running
    "tool.before",  # a tool is about to run
    "tool.after",  # a tool ran, the step is not yet checkpointed
    "shell.running",  # a shell command's process is running
    "checkpoint.after",  # a step's checkpoint is on disk
    "executor.done",  # the executor finished, not yet recorded
    "gate.before_command",  # a quality gate's command is about to run
    "gate.after_command",  # a quality gate's command ended, result not recorded
    "review.after_model",  # the reviewer replied, nothing recorded
    "gate.after_decision",  # PHASE_REVIEW_GATE recorded, its action not taken
    "commit.before",  # the phase is about to be committed
    "commit.after",  # the commit exists, not yet recorded
    "phase.after_report",  # phase report written, phase not yet closed
    "completion.before_review",  # the final review is about to be asked for
    "completion.after_review",  # final_review.md written, not yet recorded
    "completion.before_complete",  # everything done but the last event
)


@dataclass
class FaultPlan:
    rule: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    phase: int | None = None  # the phase the engine is working on (set by the engine)

    @classmethod
    def from_env(cls) -> FaultPlan:
        return cls(os.environ.get(ENV) or None)

    def _target(self) -> tuple[str, int] | None:
        if not self.rule:
            return None
        rule, _, phase = self.rule.partition("#")
        if phase and str(self.phase) != phase:
            return None
        name, _, nth = rule.partition("@")
        return name, int(nth or 1)

    def point(self, name: str) -> None:
        if name not in POINTS:
            raise ValueError(f"unknown fault point {name!r}")
        target = self._target()
        if target is None or target[0] != name:
            return
        self.counts[name] = self.counts.get(name, 0) + 1
        if self.counts[name] == target[1]:
            kill()

    def torn_write_due(self, events_in_log: int) -> bool:
        """True when the next event must be written torn (`torn@<n>`, n = its number)."""
        target = self._target()
        return target is not None and target[0] == "torn" and events_in_log + 1 == target[1]

    def after_event(self, events_in_log: int) -> None:
        target = self._target()
        if target is not None and target[0] == "event" and events_in_log == target[1]:
            kill()


def kill() -> None:
    """Die now, as a crash would: no cleanup, no finally blocks, no flushed buffers."""
    os.kill(os.getpid(), signal.SIGKILL)


FAULTS = FaultPlan.from_env()


def point(name: str) -> None:
    FAULTS.point(name)
