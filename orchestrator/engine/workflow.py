"""The workflow driver: run the next step the state asks for, until there is none.

`Workflow.run()` is a loop over `next_step()`; each step records what it decided before it
acts. A step leaves the loop by a typed exception (`NeedsApproval`, `Blocked`) that
carries the gate event and the reason to record: the driver records them, and the task
waits for a person (`orch approve`) or for its cause to be fixed (`orch resume`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from orchestrator.engine import faults, records
from orchestrator.engine.completion import Completion
from orchestrator.engine.enums import PhaseStatus, Step, WorkflowState
from orchestrator.engine.env import Env
from orchestrator.engine.exceptions import Blocked, NeedsApproval, StepAgain, WorkflowExit
from orchestrator.engine.payloads import StateChange
from orchestrator.engine.phases import Phases
from orchestrator.engine.planning import Planning
from orchestrator.engine.state import TaskState
from orchestrator.errors import OrchError

Action = Callable[[], None]  # one step of the workflow


class Workflow:
    def __init__(self, env: Env) -> None:
        self.env = env
        self.planning = Planning(env)
        self.phases = Phases(env)
        self.completion = Completion(env)

    @property
    def state(self) -> TaskState:
        return self.env.state

    def run(self) -> TaskState:
        """Run until the task is COMPLETE, waits for a person, or is blocked."""
        while True:
            step = self.next_step()
            if step is None:
                return self.state
            faults.FAULTS.phase = None
            try:
                step()
            except StepAgain:
                continue
            except WorkflowExit as stop:
                self.stop(stop)
                return self.state
            except OrchError as exc:  # a file or git failure a person must look at
                self.stop(Blocked(f"{exc.line()}; fix it, then `orch resume`"))
                return self.state

    def next_step(self) -> Action | None:
        s = self.state
        if s.finished or s.waiting is not None or s.blocked is not None:
            return None
        if s.spec.branch and not s.branch_ready:
            return self.make_branch
        if s.replan is not None or not s.plan_approved:
            return self.planning.next_step()
        if not s.plan_ready:
            return self.planning.review_plan
        for pid in s.order:
            if s.phase(pid).status is not PhaseStatus.CLOSED:
                return functools.partial(self.phases.advance, pid)
        return self.completion.next_step()

    def make_branch(self) -> None:
        env, s = self.env, self.state
        branch = s.spec.branch or ""
        stash = env.repo.stash_and_branch(branch, f"orch: uncommitted changes before {env.slug}")
        env.journal.change(
            StateChange(
                WorkflowState.PLANNING,
                Step.BRANCH_CREATED,
                f"working on branch {branch}; uncommitted changes are in the stash"
                if stash
                else f"working on branch {branch}",
                branch=branch,
                stash=stash,
            )
        )

    def stop(self, stop: WorkflowExit) -> None:
        env, s = self.env, self.state
        if stop.gate is not None:
            env.journal.gate(stop.gate)
        if isinstance(stop, NeedsApproval):
            change = StateChange(
                WorkflowState.WAITING_APPROVAL,
                Step.APPROVAL_REQUESTED,
                stop.reason,
                phase=stop.phase,
                approval=stop.request,
                failure_class=stop.failure_class,
                budget=stop.budget,
            )
        else:
            change = StateChange(
                WorkflowState.BLOCKED,
                Step.BLOCKED,
                stop.reason,
                phase=stop.phase,
                failure_class=stop.failure_class,
            )
        env.journal.change(change)
        if s.task is not None:
            records.set_blocker(env, stop.reason)
