"""Completion: final review, cross-phase consistency (COMPLETION_GATE), Checklist C, NOTES.md.

Steps, in order: the reviewer's final verdict on the whole change; the COMPLETION_GATE
over the consistency checks and that verdict (final_review.md is written here); Checklist
C promotion; NOTES.md and the session notes; the COMPLETE state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.checks.secrets import redact
from orchestrator.engine import faults, records, shell, verified
from orchestrator.engine.enums import (
    ApprovalKind,
    CheckStatus,
    CompletionStep,
    Decision,
    Gate,
    PhaseStatus,
    Role,
    SafetyCheck,
    Step,
    WorkflowState,
)
from orchestrator.engine.env import Env
from orchestrator.engine.exceptions import Blocked, NeedsApproval
from orchestrator.engine.gates import GateContext, gate_runs, review_verdict, run_gates
from orchestrator.engine.payloads import Diagnosis, GateEvent, StateChange
from orchestrator.engine.prompts import load_prompt
from orchestrator.engine.roles import AnswerInvalid
from orchestrator.engine.vcs import EMPTY_TREE
from orchestrator.errors import ModelError
from orchestrator.store.fs import atomic_write
from orchestrator.store.session import SessionNotes

FINAL_GATES = ("tests_pass", "lint_clean")


class Completion:
    def __init__(self, env: Env) -> None:
        self.env = env

    def next_step(self) -> Callable[[], None]:
        done = self.env.state.completion
        if CompletionStep.FINAL_REVIEW not in done:
            return self.final_review
        if CompletionStep.GATE not in done:
            return self.gate
        if CompletionStep.PROMOTED not in done:
            return self.promote
        return self.complete

    def _final_verdict(self) -> dict[str, Any]:
        for event in reversed(self.env.journal.events):
            if event.event_type == "verdict" and event.payload.get("kind") == "final_review":
                return event.payload
        return {}

    def final_review(self) -> None:
        env, s = self.env, self.env.state
        plan = env.plan()
        faults.point("completion.before_review")
        base = s.spec.base_commit
        base_tree = env.repo.tree_of(base) if base else EMPTY_TREE
        head_tree = env.repo.head_tree()
        changed = env.repo.changed_paths(base_tree, head_tree)
        env.journal.record(
            "delegation",
            {"to": "CodeReviewer", "purpose": Role.REVIEWER, "reason": "final review of the task"},
        )
        role = env.json_role(Role.REVIEWER)
        first = load_prompt(Role.REVIEWER).render(
            "final",
            task=s.spec.text,
            count=len(plan["phases"]),
            phases="\n".join(
                f"- phase {p['phase_id']}: {p['title']} ({(s.phase(p['phase_id']).commit or '')[:12]})"
                for p in plan["phases"]
            ),
            checks="\n".join(self._consistency()[1]),
            diff=env.repo.diff(base_tree, head_tree) or "(no change)",
            success="\n".join(f"- {c}" for c in plan["success_criteria"]),
        )
        try:
            review = role.verdict(first, "review_verdict", phase=None)
        except AnswerInvalid as exc:
            review = {
                "verdict": "FAIL",
                "summary": f"no valid final verdict: {exc.problems[0]}",
                "blocking_issues": [],
                "validated_blocking_issues": [],
                "non_blocking": [],
                "criteria": [],
            }
        except ModelError as exc:
            raise Blocked(
                f"the final review's model failed ({exc.failure_class}: "
                f"{exc.message}); fix the model access, then `orch resume`",
                failure_class=exc.failure_class,
            ) from None
        payload, _, _ = review_verdict("final_review", review, changed)
        env.journal.record("verdict", payload, agent="CodeReviewer")
        env.journal.record(
            "execution_report",
            {"kind": "final_review", "summary": review["summary"], "outcome": review["verdict"]},
            agent="CodeReviewer",
        )

    def _consistency(self) -> tuple[list[str], list[str]]:
        """(problems, lines for the record) of the cross-phase checks that need no command."""
        env, s = self.env, self.env.state
        plan = env.plan()
        problems, lines = [], []
        commits = env.repo.phase_commits(env.slug, s.trace_id, s.spec.base_commit)
        for p in plan["phases"]:
            pid = p["phase_id"]
            ph = s.phase(pid)
            if ph.status is not PhaseStatus.CLOSED or not ph.commit:
                problems.append(f"phase {pid} is not committed")
            elif pid not in commits or commits[pid].sha != ph.commit:
                problems.append(f"phase {pid}'s commit {ph.commit[:12]} is not on this branch")
            elif not env.repo.is_ancestor(ph.commit):
                problems.append(f"phase {pid}'s commit is not an ancestor of HEAD")
        extra = sorted(set(commits) - {p["phase_id"] for p in plan["phases"]})
        if extra:
            problems.append(f"commits for phases not in the plan: {extra}")
        regressed = verified.regressed(env.journal.events)
        if regressed:
            problems.append("regressed verified items: " + ", ".join(regressed))
        dirty = env.repo.dirty_paths()
        if dirty:
            problems.append("uncommitted project changes: " + ", ".join(dirty[:5]))
        lines.append(
            f"- one commit per phase: {len(commits)} commit(s) for {len(plan['phases'])} phase(s)"
        )
        lines.append(f"- verified items regressed: {', '.join(regressed) or 'none'}")
        lines.append(f"- working tree: {'clean' if not dirty else 'changes left'}")
        return problems, lines

    def gate(self) -> None:
        env, s = self.env, self.env.state
        problems, lines = self._consistency()
        ctx = GateContext(
            root=env.layout.root,
            test_command=env.config.test_command,
            lint_command=env.config.lint_command,
            timeout=env.config.gate_timeout,
            output_cap=env.config.policy.shell_output_cap,
            changed=[],
            diff="",
            phase=s.phase(s.order[-1]) if s.order else s.phase(1),
            sandbox=shell.sandbox_for(env.layout, env.config.policy),
            activity=env.journal.activity,
        )
        results = run_gates(list(FINAL_GATES), ctx)
        for result in results:
            lines.append(f"- final {result.gate}: {result.status} ({result.summary})")
            if not result.passed:
                problems.append(f"final {result.gate} failed: {result.summary}")
        review = self._final_verdict()
        for issue in review.get("validated_blocking_issues") or []:
            problems.append(f"final review: {issue['id']}: {issue['description']}")
        env.journal.record(
            "verdict",
            {
                "kind": "consistency",
                "passed": not problems,
                "summary": "; ".join(problems) or "phases consistent, final gates pass",
                "problems": problems,
            },
        )
        atomic_write(env.task.final_review, redact(records.final_review(env, review, lines)))
        faults.point("completion.after_review")

        def gate(
            decision: Decision,
            reason: str,
            next_action: str,
            *,
            requires_human_approval: bool = False,
            diagnosis: Diagnosis | None = None,
        ) -> GateEvent:
            return GateEvent(
                Gate.COMPLETION_GATE,
                WorkflowState.REVIEWING,
                decision,
                reason,
                next_action,
                safety_checks=(SafetyCheck.SCOPE, SafetyCheck.TODO),
                dryrun_status=CheckStatus.FAIL if problems else CheckStatus.PASS,
                skeptic_status=CheckStatus.COMPLETE if review else CheckStatus.NOT_RUN,
                requires_human_approval=requires_human_approval,
                diagnosis=diagnosis,
            )

        if problems and not s.completion_override:
            reason = "completion checks failed: " + "; ".join(problems)
            raise NeedsApproval(
                ApprovalKind.ESCALATION,
                reason + "; a person decides (`orch approve` completes anyway)",
                gate=gate(
                    Decision.BLOCKED,
                    reason,
                    "a person fixes the cause, or approves completion",
                    requires_human_approval=True,
                    diagnosis=Diagnosis(problems=tuple(problems), runs=gate_runs(results)),
                ),
            )
        env.journal.gate(
            gate(
                Decision.GO,
                "all phases committed once, consistent, final gates pass"
                if not problems
                else "a person approved completion despite: " + "; ".join(problems),
                "promote memory (Checklist C) and finish",
                diagnosis=Diagnosis(runs=gate_runs(results)),
            )
        )

    def promote(self) -> None:
        env = self.env
        summary = env.parts.memory.promote(env.layout, env.task, env.journal.as_log(), None)
        outcome = "done"
        if summary is None:
            summary, outcome = "no Checklist C promotion step in this build", "skipped"
        env.journal.record(
            "execution_report", {"kind": "promotion", "summary": summary, "outcome": outcome}
        )

    def complete(self) -> None:
        env = self.env
        records.clear_objective(env)
        records.session_note(env, "Worklog", "task complete")
        faults.point("completion.before_complete")
        env.journal.change(
            StateChange(
                WorkflowState.COMPLETE,
                Step.COMPLETE,
                f"all {len(env.state.order)} phase(s) committed and reviewed",
            )
        )
        SessionNotes(env.layout, env.slug).clear()
        if env.config.records.commit:  # `[records] commit = true`: the record goes with the code
            env.repo.commit_records(f"orch: records of task {env.slug}")
