"""Planning: the Planner writes plan.json, the PlanAuditor judges it, the PLAN_GATE decides.

Each method is one step of the workflow; the driver calls the step the state asks for.
A step records its result before the next step can depend on it, and redoing a step after
a crash writes the same files again (the plan of an iteration, revisions.md's section for
that iteration, verified_items.md as a projection of the log).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from orchestrator.engine import faults, policy, records, verified
from orchestrator.engine.enums import (
    ApprovalKind,
    AuditVerdict,
    Decision,
    Gate,
    ReplanStage,
    Role,
    Scope,
    Step,
    WorkflowState,
)
from orchestrator.engine.env import Env
from orchestrator.engine.exceptions import Blocked, NeedsApproval, StepAgain
from orchestrator.engine.payloads import Diagnosis, GateEvent, StateChange
from orchestrator.engine.prompts import load_prompt
from orchestrator.engine.roles import AnswerInvalid, fixer, plan_check
from orchestrator.engine.state import AuditRecord
from orchestrator.errors import ModelError
from orchestrator.store.plans import plan_problems, plan_sha, topological_order


class Planning:
    def __init__(self, env: Env) -> None:
        self.env = env

    # which step -------------------------------------------------------------------------
    def next_step(self) -> Callable[[], None]:
        s = self.env.state
        if s.replan is not None:
            return {
                ReplanStage.PLAN: self.replan,
                ReplanStage.AUDIT: self.audit,
                ReplanStage.GATE: self.gate,
                ReplanStage.APPROVE: self.request_approval,
                ReplanStage.RESTART: self.restart_phase,
            }[s.replan.stage]
        if s.plan_iteration == 0 or (
            s.gated_iteration == s.plan_iteration and s.plan_gate is Decision.REPLAN
        ):
            return self.plan
        if not s.audits or s.audits[-1].iteration < s.plan_iteration:
            return self.audit
        if s.gated_iteration < s.plan_iteration:
            return self.gate
        if s.plan_gate is Decision.GO:
            return self.approve
        return self.request_approval

    # the Planner ------------------------------------------------------------------------
    def plan(self) -> None:
        env, s = self.env, self.env.state
        iteration = s.plan_iteration + 1
        text = s.spec.text
        env.journal.record(
            "delegation",
            {
                "to": "Planner",
                "purpose": Role.PLANNER,
                "iteration": iteration,
                "reason": "write the plan" if iteration == 1 else "revise the plan after its audit",
            },
            agent="Orchestrator",
        )
        prompt = load_prompt(Role.PLANNER)
        if iteration == 1:
            first = prompt.render(
                "task",
                iteration=iteration,
                task=text,
                files=self._file_list(),
                tier_line=(
                    f"Complexity tier (set by the user): {s.spec.tier}"
                    if s.spec.tier
                    else "Choose the complexity tier."
                ),
                context=self._related(text),
            )
        else:
            first = self._revision_request(iteration)
        plan, attempts = self._ask_plan(first, iteration)
        faults.point("plan.after_model")
        env.task.save_plan(plan)
        faults.point("plan.after_save")
        if iteration > 1:
            records.add_revision(env, iteration, self._revision_text(iteration, plan))
        records.set_objective(env, plan)
        self._record_plan(plan, iteration, attempts, scope=Scope.PLAN)

    def _record_plan(
        self,
        plan: dict[str, Any],
        iteration: int,
        attempts: int,
        *,
        scope: Scope,
        phase: int | None = None,
    ) -> None:
        """The whole plan of an iteration goes to the log, the task's source of truth."""
        payload: dict[str, Any] = {
            "kind": "plan",
            "iteration": iteration,
            "plan_sha256": plan_sha(plan),
            "tier": plan["complexity_tier"],
            "phases": len(plan["phases"]),
            "schema_attempts": attempts,
            "summary": plan["summary"],
            "plan": plan,
            "scope": scope,
        }
        if phase is not None:
            payload["phase"] = phase
        self.env.journal.record("execution_report", payload, agent="Planner")

    def _ask_plan(self, first: str, iteration: int) -> tuple[dict[str, Any], int]:
        env, s = self.env, self.env.state
        role = env.json_role(Role.PLANNER)
        try:
            return role.ask(
                first,
                phase=None,
                check=plan_check(env.slug, s.spec.tier),
                fix=fixer(Role.PLANNER, "schema_errors", iteration=iteration),
                attempts=policy.PLAN_SCHEMA_ATTEMPTS,
            )
        except AnswerInvalid as exc:
            env.journal.record(
                "error",
                {
                    "kind": "plan_invalid",
                    "detail": str(exc),
                    "role": Role.PLANNER,
                    "problems": exc.problems[:10],
                },
            )
            raise Blocked(
                f"the planner's plan did not fit the plan schema after {exc.attempts} tries "
                f"({exc.problems[0]}); `orch resume` asks again"
            ) from None
        except ModelError as exc:
            self._model_failed(Role.PLANNER, exc)
            raise StepAgain() from None

    def _model_failed(self, role: Role, exc: ModelError) -> None:
        s = self.env.state
        decision = policy.decide_retry(list(s.planning_failures), exc.failure_class)
        self.env.journal.record(
            "error",
            {
                "kind": f"{role}_failed",
                "detail": exc.message,
                "failure_class": exc.failure_class,
                "role": role,
            },
        )
        if not decision.retry:
            raise Blocked(
                f"the {role} model failed ({exc.failure_class}: {exc.message}); "
                f"{decision.reason}. Fix the model access, then `orch resume`",
                failure_class=exc.failure_class,
            )

    def _file_list(self) -> str:
        return self.env.read_tools().listing()

    def _related(self, text: str) -> str:
        related = self.env.parts.retrieval.related(self.env.layout, self.env.slug, text)
        if not related:
            return ""
        return "Related past experience:\n" + "\n".join(f"- {r}" for r in related)

    def _revision_request(self, iteration: int) -> str:
        env, s = self.env, self.env.state
        previous = env.plan_of_iteration(iteration - 1) or env.plan()
        audit = s.audits[-1] if s.audits else None
        findings = self._findings(iteration - 1)
        notes = "".join(f"\nA person asked: {n}" for n in s.human_revisions)
        regressed = audit.regressed if audit else ()
        return load_prompt(Role.PLANNER).render(
            "revise",
            iteration=iteration,
            previous=iteration - 1,
            task=s.spec.text,
            plan=json.dumps(previous, indent=2, ensure_ascii=False),
            verdict=audit.effective_verdict if audit else AuditVerdict.NEEDS_REVISION,
            score=audit.score if audit else 0,
            summary=audit.summary if audit else "",
            findings=(findings or "- none") + notes,
            regressed=(
                "Regressed checks (passed before, fail now; they block approval): "
                + ", ".join(regressed)
            )
            if regressed
            else "",
        )

    def _findings(self, iteration: int) -> str:
        for event in reversed(self.env.journal.events):
            if event.event_type == "plan_audit" and event.payload["iteration"] == iteration:
                return "\n".join(
                    f"- [{f.get('severity')}] {f.get('id')}"
                    + (f" (phase {f['phase_id']})" if f.get("phase_id") else "")
                    + f": {f.get('description')}"
                    + (f" Recommendation: {f['recommendation']}" if f.get("recommendation") else "")
                    for f in event.payload.get("findings") or []
                )
        return ""

    def _revision_text(self, iteration: int, plan: dict[str, Any]) -> str:
        s = self.env.state
        before = self.env.plan_of_iteration(iteration - 1) or {}
        audit = s.audits[-1] if s.audits else None
        why = self._findings(iteration - 1) or "- (no findings recorded)"
        notes = "".join(f"\n- a person asked: {n}" for n in s.human_revisions)
        verdict = f"{audit.effective_verdict} (score {audit.score})" if audit else "? (score ?)"
        changes = phase_changes(before.get("phases", []), plan["phases"])
        return (
            f"Why: the audit of iteration {iteration - 1} said {verdict}.\n"
            f"{why}{notes}\n\nWhat changed:\n" + ("\n".join(changes) or "- wording only")
        )

    # the PlanAuditor ----------------------------------------------------------------------
    def audit(self) -> None:
        env, s = self.env, self.env.state
        iteration = s.plan_iteration
        scope = Scope.REPLAN if s.replan is not None else Scope.PLAN
        plan = env.plan()
        budget = policy.audit_budget(s.tier, len(s.human_revisions))
        if plan["status"] == "ABSTAIN":
            raise NeedsApproval(
                ApprovalKind.PLAN,
                "the planner abstained: " + ("; ".join(plan["open_questions"]) or plan["summary"]),
                gate=GateEvent(
                    Gate.PLAN_GATE,
                    WorkflowState.PLANNING,
                    Decision.ABSTAIN,
                    "the planner abstained from planning this task",
                    "a person answers the open questions (orch approve --deny --note ...) "
                    "or approves the plan as it is",
                    requires_human_approval=True,
                    iteration_index=iteration,
                    max_iterations=budget,
                    confidence=plan["confidence"],
                ),
            )
        env.journal.record(
            "delegation",
            {
                "to": "PlanAuditor",
                "purpose": Role.AUDITOR,
                "iteration": iteration,
                "reason": f"audit plan iteration {iteration}",
            },
        )
        verdict = self._ask_verdict(plan, iteration, budget)
        faults.point("audit.after_model")
        history = verified.plan_check_history(env.journal.events)
        regressed = (
            [c["id"] for c in verdict["checks"] if not c["passed"] and history.get(c["id"])]
            if iteration >= 2
            else []
        )
        effective = AuditVerdict(verdict["verdict"])
        if effective is AuditVerdict.APPROVED and regressed:
            effective = AuditVerdict.NEEDS_REVISION
        scores = [a.score for a in s.audits] + [float(verdict["score"])]
        env.journal.record(
            "plan_audit",
            {
                "iteration": iteration,
                "max_iterations": budget,
                "verdict": verdict["verdict"],
                "effective_verdict": effective,
                "score": float(verdict["score"]),
                "summary": verdict["summary"],
                "findings": verdict["findings"],
                "checks": verdict["checks"],
                "regressed": regressed,
                "stagnated": policy.stagnated(scores),
                "plan_sha256": plan_sha(plan),
                "scope": scope,
            },
            agent="PlanAuditor",
        )
        faults.point("audit.after_record")
        records.write_verified(env)

    def _ask_verdict(self, plan: dict[str, Any], iteration: int, budget: int) -> dict[str, Any]:
        env, s = self.env, self.env.state
        previous = ""
        if s.audits:
            last = s.audits[-1]
            previous = (
                f"\nYour previous verdict (iteration {last.iteration}): "
                f"{last.verdict} (score {last.score}). {last.summary}\n"
                f"Findings then:\n{self._findings(last.iteration) or '- none'}\n"
            )
        items = [r for r in verified.rows(env.journal.events) if r.item_id.startswith("PLAN-")]
        listed = "".join(f"\n- {r.item_id[5:]}: {r.description} ({r.status})" for r in items)
        role = env.json_role(Role.AUDITOR)
        first = load_prompt(Role.AUDITOR).render(
            "audit",
            iteration=iteration,
            max_iterations=budget,
            task=s.spec.text,
            plan=json.dumps(plan, indent=2, ensure_ascii=False),
            previous=previous,
            verified=f"\nChecks verified so far (re-check each):{listed}\n" if listed else "",
        )
        try:
            verdict = role.verdict(first, "audit_verdict", phase=None)
        except AnswerInvalid as exc:
            env.journal.record(
                "error", {"kind": "verdict_invalid", "detail": str(exc), "role": Role.AUDITOR}
            )
            return {
                "verdict": AuditVerdict.ABSTAIN,
                "score": s.audits[-1].score if s.audits else 0.0,
                "summary": f"no valid verdict: {exc.problems[0]}",
                "findings": [],
                "checks": [],
            }
        except ModelError as exc:
            self._model_failed(Role.AUDITOR, exc)
            raise StepAgain() from None
        return verdict

    # the PLAN_GATE ---------------------------------------------------------------------
    def gate(self) -> None:
        env, s = self.env, self.env.state
        audit = s.audits[-1]
        replan = s.replan is not None
        verdict = audit.effective_verdict
        if verdict is AuditVerdict.APPROVED:
            self._approved(audit)
            return
        exhausted = audit.iteration >= audit.max_iterations or replan
        if verdict is AuditVerdict.NEEDS_REVISION and not exhausted and not audit.stagnated:
            env.journal.gate(
                plan_gate(
                    audit,
                    replan,
                    Decision.REPLAN,
                    f"the PlanAuditor asks for a revision (score {audit.score})"
                    + (f"; regressed: {', '.join(audit.regressed)}" if audit.regressed else ""),
                    f"the Planner revises the plan (iteration {audit.iteration + 1})",
                )
            )
            return
        why, decision = _stop_reason(audit)
        reason = f"{why} at iteration {audit.iteration}: {audit.summary}".strip()
        raise NeedsApproval(
            ApprovalKind.PLAN,
            reason + "; a person decides",
            gate=plan_gate(
                audit,
                replan,
                decision,
                reason,
                "a person approves the plan as it is (orch approve) or asks for changes "
                "(orch approve --deny --note ...)",
                requires_human_approval=True,
            ),
        )

    def _approved(self, audit: AuditRecord) -> None:
        env, s = self.env, self.env.state
        replan = s.replan is not None
        auto = s.spec.auto_approve
        if replan:
            next_action = "continue with the revised plan"
        elif auto:
            next_action = "approved by --yes"
        else:
            next_action = "a person approves the plan: orch approve " + env.slug
        env.journal.gate(
            plan_gate(
                audit,
                replan,
                Decision.GO,
                f"the PlanAuditor approved iteration {audit.iteration} (score {audit.score})",
                next_action,
                requires_human_approval=not auto,
            )
        )
        if replan and not auto:
            raise NeedsApproval(
                ApprovalKind.PLAN,
                f"the replanned plan (iteration {audit.iteration}) passed its audit; a "
                f"person approves it: orch approve {env.slug}",
            )

    def approve(self) -> None:
        env, s = self.env, self.env.state
        if s.spec.auto_approve:
            env.journal.change(
                StateChange(
                    WorkflowState.PLAN_REVIEW,
                    Step.PLAN_APPROVED,
                    "the plan was approved by --yes",
                    by="--yes",
                )
            )
            faults.point("plan.approved")
            return
        self.request_approval()

    def request_approval(self) -> None:
        s = self.env.state
        audit = s.audits[-1] if s.audits else None
        judged = f"{audit.effective_verdict}, score {audit.score}" if audit else "?, score ?"
        raise NeedsApproval(
            ApprovalKind.PLAN,
            f"the plan (iteration {s.plan_iteration}, {judged}) waits for a person: "
            f"orch approve {self.env.slug}",
        )

    # after approval: PLAN_REVIEW ----------------------------------------------------------
    def review_plan(self) -> None:
        """Re-read plan.json (a person may have edited it while it waited) and fix the order."""
        env = self.env
        plan = env.plan()
        order = topological_order(plan)
        records.set_objective(env, plan)
        env.journal.change(
            StateChange(
                WorkflowState.ACTING,
                Step.PLAN_READY,
                f"executing {len(order)} phase(s) in order " + ", ".join(map(str, order)),
                order=tuple(order),
                plan_sha256=plan_sha(plan),
            )
        )

    # a targeted replan (failure class needs_replan) ----------------------------------------
    def replan(self) -> None:
        env, s = self.env, self.env.state
        assert s.replan is not None
        pid = s.replan.phase
        current = env.plan()
        iteration = s.plan_iteration + 1
        env.journal.record(
            "delegation",
            {
                "to": "Planner",
                "purpose": Role.PLANNER,
                "iteration": iteration,
                "phase": pid,
                "reason": f"targeted replan from phase {pid}",
            },
        )
        first = load_prompt(Role.PLANNER).render(
            "replan",
            phase=pid,
            task=s.spec.text,
            diagnosis=s.replan.diagnosis,
            plan=json.dumps(current, indent=2, ensure_ascii=False),
        )
        plan, attempts = self._ask_plan(first, iteration)
        kept = [p for p in current["phases"] if p["phase_id"] < pid]
        if plan["phases"][: len(kept)] != kept:
            plan["phases"] = kept + [p for p in plan["phases"] if p["phase_id"] >= pid]
            if plan_problems(plan):
                raise Blocked(
                    f"the replanned plan changes committed phases 1..{pid - 1} and cannot be "
                    "repaired; edit plan.json, then `orch resume`",
                    phase=pid,
                )
        faults.point("plan.after_model")
        env.task.save_plan(plan)
        faults.point("plan.after_save")
        records.add_revision(
            env,
            iteration,
            f"Targeted replan from phase {pid}: {s.replan.diagnosis}\n\nPhases now: "
            + ", ".join(f"{p['phase_id']}. {p['title']}" for p in plan["phases"]),
        )
        self._record_plan(plan, iteration, attempts, scope=Scope.REPLAN, phase=pid)

    def restart_phase(self) -> None:
        env, s = self.env, self.env.state
        assert s.replan is not None
        pid = s.replan.phase
        plan = env.plan()
        ph = s.phase(pid)
        env.journal.change(
            StateChange(
                WorkflowState.ACTING,
                Step.PHASE_RESTARTED,
                f"phase {pid} starts again on the replanned plan",
                phase=pid,
                attempt=ph.attempt,
                order=tuple(topological_order(plan)),
                plan_sha256=plan_sha(plan),
            )
        )


def plan_gate(
    audit: AuditRecord,
    replan: bool,
    decision: Decision,
    reason: str,
    next_action: str,
    *,
    requires_human_approval: bool = False,
) -> GateEvent:
    """The PLAN_GATE's record for the newest audit."""
    return GateEvent(
        Gate.PLAN_GATE,
        WorkflowState.PLANNING,
        decision,
        reason,
        next_action,
        requires_human_approval=requires_human_approval,
        iteration_index=audit.iteration,
        max_iterations=audit.max_iterations,
        confidence=audit.score,
        diagnosis=Diagnosis(
            scope=Scope.REPLAN if replan else Scope.PLAN,
            verdict=audit.verdict,
            regressed=audit.regressed,
        ),
    )


def _stop_reason(audit: AuditRecord) -> tuple[str, Decision]:
    """Why the plan loop stops for a person, and the gate's decision."""
    if audit.effective_verdict is AuditVerdict.NEEDS_REVISION:
        if audit.stagnated:
            why = "the revision stagnated (less than 0.05 score gain over two iterations)"
        else:
            why = f"the iteration budget ({audit.max_iterations}) is used up"
        return why, Decision.BLOCKED
    if audit.effective_verdict is AuditVerdict.REJECTED:
        return "the PlanAuditor rejected the plan", Decision.BLOCKED
    return "the PlanAuditor abstained", Decision.ABSTAIN


def phase_changes(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[str]:
    """revisions.md's lines for what a new plan iteration changed in the phases."""
    old = {p["phase_id"]: p for p in before}
    new = {p["phase_id"]: p for p in after}
    changes = []
    for pid in sorted(set(old) | set(new)):
        if pid not in new:
            changes.append(f"- phase {pid} removed ({old[pid]['title']})")
        elif pid not in old:
            changes.append(f"- phase {pid} added: {new[pid]['title']}")
        elif old[pid]["title"] != new[pid]["title"]:
            changes.append(f"- phase {pid}: {old[pid]['title']} -> {new[pid]['title']}")
    for p in after:
        prior = old.get(p["phase_id"])
        if prior is not None and prior != p and prior["title"] == p["title"]:
            changes.append(f"- phase {p['phase_id']} ({p['title']}) revised")
    return changes
