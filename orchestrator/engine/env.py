"""What every workflow step works with: the task, its journal, the repository, the models."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orchestrator.config import Config
from orchestrator.engine.activity import Activity, Doing
from orchestrator.engine.enums import ApprovalKind, Role
from orchestrator.engine.exceptions import NeedsApproval
from orchestrator.engine.journal import Journal
from orchestrator.engine.parts import Parts
from orchestrator.engine.progress import usd
from orchestrator.engine.roles import JsonRole
from orchestrator.engine.state import TaskState
from orchestrator.engine.tools import ReadOnlyTools
from orchestrator.engine.vcs import ProjectRepo
from orchestrator.messages import Reply, Request
from orchestrator.models import get_model
from orchestrator.protocols import Model
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder


@dataclass
class CappedModel:
    """A model that stops the task, before a call, once its spending reached the cap
    (`[budget] max_cost_usd`): WAITING_APPROVAL for `budget`, with the figures."""

    inner: Model
    state: TaskState
    cap: float | None
    phase: int | None

    @property
    def name(self) -> str:
        return self.inner.name

    def complete(self, request: Request) -> Reply:
        figures = self.state.budget_reached(self.cap)
        if figures is not None:
            raise NeedsApproval(
                ApprovalKind.BUDGET,
                f"the task spent {usd(figures.spent_usd)} of its {usd(figures.cap_usd)} cap "
                "([budget] max_cost_usd); `orch approve` allows another max_cost_usd, "
                "`orch abandon` gives the task up",
                phase=request.phase if request.phase is not None else self.phase,
                budget=figures,
            )
        return self.inner.complete(request)

    def count_tokens(self, request: Request) -> int:
        return self.inner.count_tokens(request)


@dataclass
class AnnouncedModel:
    """A model that says when each of its calls starts (to the live display; not logged)."""

    inner: Model
    activity: Activity
    agent: str

    @property
    def name(self) -> str:
        return self.inner.name

    def complete(self, request: Request) -> Reply:
        turn = f" (turn {request.turn + 1})" if request.turn else ""
        self.activity.begin(Doing.MODEL, f"{self.agent}: model call{turn}")
        return self.inner.complete(request)

    def count_tokens(self, request: Request) -> int:
        return self.inner.count_tokens(request)


@dataclass
class Env:
    task: TaskFolder
    config: Config
    repo: ProjectRepo
    journal: Journal
    parts: Parts
    _models: dict[str, Model] = field(default_factory=dict)

    @property
    def state(self) -> TaskState:
        return self.journal.state

    @property
    def layout(self) -> Layout:
        return self.task.layout

    @property
    def slug(self) -> str:
        return self.task.slug

    def model(self, role: Role, phase: int | None) -> Model:
        """The model for `role`: `<role>_model` from the configuration, else the task's model
        (`orch resume --model` changes it), behind the task's spending cap."""
        configured = {
            Role.PLANNER: self.config.planner_model,
            Role.AUDITOR: self.config.auditor_model,
            Role.REVIEWER: self.config.reviewer_model,
            Role.COMPACTOR: self.config.compactor_model,
        }
        name = configured.get(role) or self.state.model
        if name not in self._models:
            self._models[name] = get_model(name, self.config)
        logged = self.parts.wrap_model(self._models[name], self.journal.as_log(), role.agent, phase)
        announced = AnnouncedModel(logged, self.journal.activity, role.agent)
        return CappedModel(announced, self.state, self.config.budget.max_cost_usd, phase)

    def read_tools(self) -> ReadOnlyTools:
        return ReadOnlyTools(self.repo, output_cap=self.config.policy.shell_output_cap)

    def json_role(self, role: Role, phase: int | None = None) -> JsonRole:
        """A role that answers in JSON, with read-only tools and the verified memory."""
        return JsonRole(
            role,
            self.model(role, phase),
            self.read_tools(),
            self.config.max_tokens,
            self.memory_context(phase),
        )

    def plan(self) -> dict[str, Any]:
        return self.task.load_plan()

    def plan_phase(self, phase_id: int) -> dict[str, Any]:
        for phase in self.plan()["phases"]:
            if phase["phase_id"] == phase_id:
                result: dict[str, Any] = phase
                return result
        raise KeyError(phase_id)

    def memory_context(self, phase: int | None = None) -> str:
        """Verified memory for prompts. The newest user turn (the task, or an approval's note)
        decides: one that asks for a fresh context gets no memory tier."""
        return self.parts.memory.prompt(
            self.layout, self.journal.as_log(), self.state.user_turn, phase
        )

    def plan_of_iteration(self, iteration: int) -> dict[str, Any] | None:
        for event in reversed(self.journal.events):
            p = event.payload
            if (
                event.event_type == "execution_report"
                and p.get("kind") == "plan"
                and p.get("iteration") == iteration
            ):
                plan: dict[str, Any] | None = p.get("plan")
                return plan
        return None
