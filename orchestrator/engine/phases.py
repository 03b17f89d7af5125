"""One phase: PREFLECT_GATE, the executor's agent loop, the quality gates and the reviewer
(PHASE_REVIEW_GATE), the failure class and its retry, the commit, the phase's records.

A phase moves pending -> acting -> reviewing -> passed -> committed -> closed; `advance`
runs the one step its status asks for. Every step records its decision before acting:
the gate's GO (with the tree that passed) before the commit, the commit's id after it
(and a commit whose record was lost is found again by its trailers).
"""

from __future__ import annotations

import json
from typing import Any

from orchestrator.context import CompactionStalled
from orchestrator.engine import faults, policy, records, shell, tasklist, verified
from orchestrator.engine.agent import Checkpoint
from orchestrator.engine.claude_executor import CLAUDE_CODE, ClaudeCodeSession
from orchestrator.engine.enums import (
    ApprovalKind,
    CheckStatus,
    Decision,
    Gate,
    PhaseStatus,
    Role,
    SafetyCheck,
    Scope,
    Step,
    WorkflowState,
)
from orchestrator.engine.env import Env
from orchestrator.engine.exceptions import Blocked, LimitsExceeded, NeedsApproval
from orchestrator.engine.executor import ExecutorSetup, first_line, open_context
from orchestrator.engine.gates import (
    GateContext,
    GateResult,
    gate_runs,
    issues_hint,
    program_exists,
    review_verdict,
    run_gates,
)
from orchestrator.engine.payloads import Diagnosis, GateEvent, StateChange
from orchestrator.engine.prompts import load_prompt
from orchestrator.engine.roles import AnswerInvalid
from orchestrator.engine.state import Failure, PhaseState
from orchestrator.errors import FailureClass, InvalidFile, ModelError
from orchestrator.messages import Message, TextBlock
from orchestrator.store.plans import plan_problems

# the failure that decides a phase's retry when several gates fail: the first in this order
CLASS_ORDER = (
    FailureClass.ESCALATE,
    FailureClass.NEEDS_REPLAN,
    FailureClass.TRANSIENT,
    FailureClass.MODEL_UNAVAILABLE,
    FailureClass.FIXABLE,
)
PREFLECT_CHECKS = (SafetyCheck.SCOPE, SafetyCheck.TODO)
REVIEW_CHECKS = (SafetyCheck.SCOPE, SafetyCheck.POLICY, SafetyCheck.DESTRUCTIVE_ACTION)


class Phases:
    def __init__(self, env: Env) -> None:
        self.env = env

    def advance(self, pid: int) -> None:
        faults.FAULTS.phase = pid
        ph = self.env.state.phase(pid)
        if ph.pending_failure is not None:
            self.decide(pid, ph.pending_failure)
        elif ph.status is PhaseStatus.PENDING:
            self.preflect(pid)
        elif ph.status is PhaseStatus.ACTING and not ph.submitted:
            self.execute(pid)
        elif ph.status is PhaseStatus.ACTING:
            self.env.journal.change(
                StateChange(
                    WorkflowState.REVIEWING,
                    Step.GATES_STARTED,
                    f"phase {pid}: the executor is done; the gates run",
                    phase=pid,
                    attempt=ph.attempt,
                )
            )
        elif ph.status is PhaseStatus.REVIEWING:
            self.review(pid)
        elif ph.status is PhaseStatus.PASSED:
            self.commit(pid)
        elif ph.status is PhaseStatus.COMMITTED:
            self.close(pid)

    # PREFLECT_GATE ------------------------------------------------------------------------
    def preflect(self, pid: int) -> None:
        env = self.env
        phase = env.plan_phase(pid)
        self._check_gate_commands(pid, phase)
        problems = self._preflect_problems(pid, phase)
        if problems:
            reason = f"phase {pid} cannot start: " + "; ".join(problems)
            raise NeedsApproval(
                ApprovalKind.PREFLECT,
                reason + ". Put it right and `orch approve` (approving keeps "
                "the changes in this phase)",
                phase=pid,
                gate=GateEvent(
                    Gate.PREFLECT_GATE,
                    WorkflowState.ACTING,
                    Decision.BLOCKED,
                    reason,
                    "a person puts the tree right and approves",
                    phase=pid,
                    requires_human_approval=True,
                    safety_checks=PREFLECT_CHECKS,
                ),
            )
        env.journal.gate(
            GateEvent(
                Gate.PREFLECT_GATE,
                WorkflowState.ACTING,
                Decision.GO,
                f"phase {pid}: dependencies met, working tree as expected",
                f"execute phase {pid}: {phase['title']}",
                phase=pid,
                safety_checks=PREFLECT_CHECKS,
            )
        )
        env.journal.change(
            StateChange(
                WorkflowState.ACTING,
                Step.PHASE_STARTED,
                f"phase {pid}: {phase['title']}",
                phase=pid,
                attempt=1,
            )
        )
        records.session_state(env, f"Phase {pid} ({phase['title']}) is under way.")
        faults.point("phase.started")

    def _check_gate_commands(self, pid: int, phase: dict[str, Any]) -> None:
        """A configured test or lint program that does not exist blocks before any work."""
        env = self.env
        for gate, command in (
            ("tests_pass", env.config.test_command),
            ("lint_clean", env.config.lint_command),
        ):
            if gate not in phase["quality_gates"] or not command:
                continue
            if program_exists(command, env.layout.root):
                continue
            raise Blocked(
                f"phase {pid}: the {gate} gate's command `{command}` cannot run (program "
                "not found); fix test_command/lint_command in orch.toml or [tool.orch], "
                "then `orch resume`",
                phase=pid,
                gate=GateEvent(
                    Gate.PREFLECT_GATE,
                    WorkflowState.ACTING,
                    Decision.BLOCKED,
                    f"`{command}` not found",
                    "fix the configuration, then orch resume",
                    phase=pid,
                    safety_checks=(SafetyCheck.SCOPE, SafetyCheck.POLICY),
                    diagnosis=Diagnosis(command=command, blocked=True),
                ),
            )

    def _preflect_problems(self, pid: int, phase: dict[str, Any]) -> list[str]:
        env, s = self.env, self.env.state
        problems: list[str] = []
        missing = [d for d in phase["dependencies"] if s.phase(d).status is not PhaseStatus.CLOSED]
        if missing:
            problems.append(f"dependencies not done: phases {', '.join(map(str, missing))}")
        base = s.spec.base_commit
        if base and not env.repo.is_ancestor(base):
            problems.append(f"HEAD no longer contains the task's first commit {base[:12]}")
        dirty = env.repo.dirty_paths()
        if dirty and not s.phase(pid).preflect_override:
            problems.append(f"the working tree has changes orch did not make: {_shown(dirty)}")
        return problems

    # the executor -----------------------------------------------------------------------------
    def checkpoint(self, pid: int) -> Checkpoint:
        ph = self.env.state.phase(pid)
        return Checkpoint(
            self.env.task.conversation(pid),
            self.env.repo,
            self.env.task.tasklist,
            pid,
            ph.attempt,
            ph.generation,
        )

    def execute(self, pid: int) -> None:
        env, s = self.env, self.env.state
        ph = s.phase(pid)
        phase = env.plan_phase(pid)
        checkpoint = self.checkpoint(pid)
        messages = checkpoint.load()
        resumed_from = None
        if messages is None:
            messages = self._first_turn(checkpoint, ph, phase)
        else:
            checkpoint.restore_files()
            resumed_from = sum(1 for m in messages if m.role == "assistant")
            if checkpoint.data.get("attempt", 1) < ph.attempt:
                messages = self._start_attempt(checkpoint, messages, ph.attempt)
            elif messages[-1].role == "assistant" and not messages[-1].tool_calls:
                self._submitted(pid, messages[-1].text, resumed_from)
                return
        session = (
            ClaudeCodeSession(env, pid, checkpoint) if s.spec.executor == CLAUDE_CODE else None
        )
        env.journal.record(
            "delegation",
            {
                "to": "Executor",
                "purpose": Role.EXECUTOR,
                "phase": pid,
                "attempt": ph.attempt,
                "reason": f"phase {pid}: {phase['title']}",
                "model": s.model,
                **({"resumed_from_turn": resumed_from} if resumed_from is not None else {}),
                **(session.delegation() if session is not None else {}),
            },
            phase=pid,
        )
        try:
            if session is not None:
                text, turns = session.run(messages)
            else:
                loop = ExecutorSetup(env, pid, checkpoint).loop(
                    sum(1 for m in messages if m.role == "assistant")
                )
                text = loop.run(messages)
                turns = loop.turn
        except ModelError as exc:
            self._executor_failed(
                pid, f"{exc.failure_class}: {exc.message}", exc.failure_class, blocked=True
            )
            return
        except CompactionStalled as exc:
            # the context part cannot keep the conversation within its budget (seam: Context)
            env.journal.record("error", exc.payload, phase=pid)
            raise NeedsApproval(
                ApprovalKind.ESCALATION,
                f"phase {pid}: {exc.line()}; a person decides (`orch approve` "
                "tries again, `orch compact` compacts by hand first)",
                phase=pid,
            ) from None
        except LimitsExceeded as exc:
            self._executor_failed(pid, str(exc), FailureClass.ESCALATE, blocked=False)
            return
        faults.point("executor.done")
        self._submitted(pid, text, turns)

    def _first_turn(
        self, checkpoint: Checkpoint, ph: PhaseState, phase: dict[str, Any]
    ) -> list[Message]:
        """The attempt's opening message, checkpointed with the files it starts from."""
        env = self.env
        if ph.generation > 0:
            env.repo.restore(env.repo.head_tree())
        start = load_prompt(Role.EXECUTOR).render(
            "start", phase=ph.phase_id, title=phase["title"], objective=phase["objective"]
        )
        messages = [Message.user(start)]
        checkpoint.last_instruction = start
        checkpoint.mark(messages)
        checkpoint.save()
        return messages

    def _executor_failed(
        self, pid: int, detail: str, failure_class: FailureClass, *, blocked: bool
    ) -> None:
        self.env.journal.record(
            "error",
            {
                "kind": "executor_failed",
                "detail": detail,
                "failure_class": failure_class,
                "role": Role.EXECUTOR,
                "attempt": self.env.state.phase(pid).attempt,
                "blocked": blocked,
            },
            phase=pid,
        )

    def _start_attempt(
        self, checkpoint: Checkpoint, messages: list[Message], attempt: int
    ) -> list[Message]:
        """Continue the conversation into a new attempt, with the gate's feedback if any."""
        ph = self.env.state.phase(checkpoint.phase)
        checkpoint.attempt = attempt
        if ph.hint:
            text = load_prompt(Role.EXECUTOR).render(
                "retry",
                previous=attempt - 1,
                failure_class=ph.failure_class or "failure",
                reason=first_line(ph.hint),
                hint=ph.hint,
            )
            checkpoint.last_instruction = text
            if messages[-1].role == "user":
                messages = [
                    *messages[:-1],
                    Message("user", [*messages[-1].content, TextBlock(text)]),
                ]
            else:
                messages = [*messages, Message.user(text)]
        checkpoint.mark(messages)
        checkpoint.save()
        return messages

    def _submitted(self, pid: int, text: str, turns: int) -> None:
        env = self.env
        ph = env.state.phase(pid)
        changed = env.repo.changed_paths(env.repo.head_tree(), env.repo.snapshot())
        env.journal.record(
            "execution_report",
            {
                "kind": "phase",
                "phase": pid,
                "attempt": ph.attempt,
                "turns": turns,
                "summary": text.strip()[:4000] or "(no summary)",
                "outcome": "submitted",
                "files_changed": [p for _, p in changed],
            },
            agent="Executor",
            phase=pid,
        )

    # gates and review: PHASE_REVIEW_GATE -----------------------------------------------------
    def review(self, pid: int) -> None:
        env, s = self.env, self.env.state
        ph = s.phase(pid)
        phase = env.plan_phase(pid)
        checkpoint = self.checkpoint(pid)
        if checkpoint.load() is not None:
            checkpoint.restore_files()
        head = env.repo.head_tree()
        tree = env.repo.snapshot()
        changed = env.repo.changed_paths(head, tree)
        diff = env.repo.diff(head, tree)
        empty = nothing_changed(phase, changed)
        if empty is not None:
            self._nothing_changed(ReviewGate(pid, ph, dryrun=CheckStatus.NOT_RUN), empty)
            return
        ctx = GateContext(
            root=env.layout.root,
            test_command=env.config.test_command,
            lint_command=env.config.lint_command,
            timeout=env.config.gate_timeout,
            output_cap=env.config.policy.shell_output_cap,
            changed=changed,
            diff=diff,
            phase=ph,
            sandbox=shell.sandbox_for(env.layout, env.config.policy),
            activity=env.journal.activity,
            validate_files=[self._validate_own_files],
        )
        results = run_gates(list(phase["quality_gates"]), ctx)
        for result in results:
            env.journal.record(
                "verdict", result.payload(ph.attempt), agent="QualityGate", phase=pid
            )
        records.write_verified(env)
        failed = [r for r in results if not r.passed]
        gate = ReviewGate(pid, ph, dryrun=CheckStatus.FAIL if failed else CheckStatus.PASS)
        if failed:
            self._gate_failed(gate, results)
            return
        review = self._ask_review(gate, phase, results, diff)
        if review is None:
            return
        faults.point("review.after_model")
        payload, blocking, demoted = review_verdict("review", review, changed)
        self.env.journal.record(
            "verdict", {**payload, "attempt": ph.attempt}, agent="CodeReviewer", phase=pid
        )
        records.write_verified(self.env)
        env.journal.gate(review_decision(gate, review, blocking, demoted, results, tree, changed))
        faults.point("gate.after_decision")

    def _nothing_changed(self, gate: ReviewGate, why: str) -> None:
        """The phase's executor changed no file the plan expects changed: a fixable failure,
        so the retry starts with that said (and no test or lint run is spent on it)."""
        self.env.journal.gate(
            gate.event(
                Decision.BLOCKED,
                f"phase {gate.pid} {why}",
                "decide the retry for this failure class",
                failure_class=FailureClass.FIXABLE,
                skeptic=CheckStatus.NOT_RUN,
                diagnosis=Diagnosis(
                    hint=f"The phase {why}. Make the phase's changes with the file tools "
                    "(and check that each tool call succeeded), then finish.",
                    scope=Scope.EXECUTOR,
                    blocked=False,
                ),
            )
        )
        faults.point("gate.after_decision")

    def _gate_failed(self, gate: ReviewGate, results: list[GateResult]) -> None:
        env = self.env
        failed = [r for r in results if not r.passed]
        worst = min(
            failed, key=lambda r: CLASS_ORDER.index(r.failure_class or FailureClass.FIXABLE)
        )
        regressed = verified.regressed(env.journal.events)
        hint = "\n\n".join(
            f"{r.gate}: {r.summary}\n{r.output_tail.strip()}".strip() for r in failed
        )
        if regressed:
            hint += "\n\nRegressed (verified before, failing now): " + ", ".join(regressed)
        transient = worst.failure_class is FailureClass.TRANSIENT
        env.journal.gate(
            gate.event(
                Decision.BLOCKED,
                f"phase {gate.pid}: " + "; ".join(r.summary for r in failed),
                "decide the retry for this failure class",
                failure_class=worst.failure_class or FailureClass.FIXABLE,
                skeptic=CheckStatus.NOT_RUN,
                diagnosis=Diagnosis(
                    hint=hint[-6000:],
                    scope=Scope.GATES if transient else Scope.EXECUTOR,
                    blocked=worst.blocked,
                    gates=tuple(r.gate for r in failed),
                    regressed=tuple(regressed),
                    runs=gate_runs(results),
                ),
            )
        )
        faults.point("gate.after_decision")

    def _ask_review(
        self,
        gate: ReviewGate,
        phase: dict[str, Any],
        results: list[GateResult],
        diff: str,
    ) -> dict[str, Any] | None:
        """The reviewer's verdict on the phase's diff, or None when the gate recorded why not."""
        env, pid, ph = self.env, gate.pid, gate.ph
        env.journal.record(
            "delegation",
            {
                "to": "CodeReviewer",
                "purpose": Role.REVIEWER,
                "phase": pid,
                "attempt": ph.attempt,
                "reason": f"review the diff of phase {pid}",
            },
            phase=pid,
        )
        role = env.json_role(Role.REVIEWER, pid)
        first = load_prompt(Role.REVIEWER).render(
            "phase",
            phase=pid,
            attempt=ph.attempt,
            title=phase["title"],
            objective=phase["objective"],
            criteria="\n".join(f"- {c}" for c in phase["acceptance_criteria"]),
            gates="\n".join(f"- {r.gate}: {r.status} ({r.summary})" for r in results) or "- none",
            diff=diff or "(no change)",
        )
        try:
            review: dict[str, Any] = role.verdict(first, "review_verdict", phase=pid)
            return review
        except AnswerInvalid as exc:
            failure = FailureClass.TRANSIENT
            reason = f"phase {pid}: no valid review verdict ({exc.problems[0]})"
            action = "ask the reviewer again"
            diagnosis = Diagnosis(hint=str(exc), scope=Scope.GATES)
        except ModelError as exc:
            failure = exc.failure_class
            reason = f"phase {pid}: the reviewer model failed: {exc.message}"
            action = "retry the review"
            diagnosis = Diagnosis(hint=exc.message, scope=Scope.GATES, blocked=True)
        env.journal.gate(
            gate.event(
                Decision.BLOCKED,
                reason,
                action,
                failure_class=failure,
                skeptic=CheckStatus.ABSTAIN,
                diagnosis=diagnosis,
                checked=False,
            )
        )
        return None

    def _validate_own_files(self) -> list[str]:
        problems = []
        try:
            plan = json.loads(self.env.task.plan_json.read_text(encoding="utf-8"))
            problems += [f"plan.json: {p}" for p in plan_problems(plan)[:3]]
        except (OSError, ValueError) as exc:
            problems.append(f"plan.json: {exc}")
        try:
            tasklist.load(self.env.task.tasklist)
        except InvalidFile as exc:
            problems.append(str(exc))
        return problems

    # the retry decision ------------------------------------------------------------------------
    def decide(self, pid: int, failure: Failure) -> None:
        env, s = self.env, self.env.state
        ph = s.phase(pid)
        klass = failure.failure_class
        cause = first_line(failure.reason).removeprefix(f"phase {pid}: ")
        decision = policy.decide_retry(list(ph.failures), klass)
        if decision.retry:
            scope = Scope.REPLAN if klass is FailureClass.NEEDS_REPLAN else failure.scope
            with_hint = klass in (FailureClass.FIXABLE, FailureClass.NEEDS_REPLAN)
            env.journal.change(
                StateChange(
                    RETRY_STATE[scope],
                    Step.PHASE_RETRY,
                    f"phase {pid}: {decision.reason}: {cause}",
                    phase=pid,
                    attempt=ph.attempt + 1,
                    failure_class=klass,
                    hint=failure.hint if with_hint else None,
                    scope=scope,
                )
            )
            records.session_note(
                env,
                "Errors & Corrections",
                f"phase {pid} attempt {ph.attempt - 1}: {klass}: {cause[:200]}",
            )
            return
        reason = f"phase {pid} stopped: {cause} ({decision.reason})"
        if failure.blocked:
            raise Blocked(
                reason + "; fix the cause, then `orch resume`", phase=pid, failure_class=klass
            )
        raise NeedsApproval(
            ApprovalKind.ESCALATION,
            reason + "; a person decides: `orch approve` retries the phase with a fresh budget",
            phase=pid,
            failure_class=klass,
        )

    # commit and close --------------------------------------------------------------------------
    def commit(self, pid: int) -> None:
        env, s = self.env, self.env.state
        ph = s.phase(pid)
        phase = env.plan_phase(pid)
        found = env.repo.phase_commits(env.slug, s.trace_id, s.spec.base_commit).get(pid)
        if found is None:
            env.repo.wait_for_index_lock()
            if ph.passed_tree:
                env.repo.restore(ph.passed_tree)
            faults.point("commit.before")
            sha = env.repo.commit_phase(
                slug=env.slug,
                trace_id=s.trace_id,
                phase=pid,
                subject=f"Phase {pid}: {phase['title']}"[:72],
                body=phase["objective"],
            )
            faults.point("commit.after")
            reconciled = False
        else:
            sha, reconciled = found.sha, True
        env.journal.change(
            StateChange(
                WorkflowState.REVIEWING,
                Step.PHASE_COMMITTED,
                f"phase {pid} committed as {sha[:12]}"
                + (" (found by its trailers)" if reconciled else ""),
                phase=pid,
                commit=sha,
                reconciled=reconciled,
            )
        )

    def close(self, pid: int) -> None:
        env, s = self.env, self.env.state
        shell.kill_leftovers(env.layout)  # nothing a command started outlives its phase
        ph = s.phase(pid)
        phase = env.plan_phase(pid)
        self._write_report(pid, ph)
        sha = (ph.commit or "")[:12]
        records.session_note(env, "Worklog", f"phase {pid} committed {sha}: {phase['title']}")
        records.session_note(
            env, "Key Results", f"phase {pid}: {_gate_summary_from_events(env, pid)}"
        )
        env.parts.retrieval.index_file(env.layout, env.task.phase_report(pid))
        messages = self.checkpoint(pid).load()
        context = open_context(env, pid) if messages else None
        if context is not None and messages:
            context.close_phase(messages, phase=pid)  # the phase's last turns saved and folded
        promoted = env.parts.memory.promote(env.layout, env.task, env.journal.as_log(), pid)
        if promoted is not None:
            env.journal.record(
                "execution_report",
                {"kind": "promotion", "phase": pid, "summary": promoted},
                phase=pid,
            )
        remaining = [p for p in s.order if s.phase(p).status is not PhaseStatus.CLOSED and p != pid]
        env.journal.change(
            StateChange(
                WorkflowState.ACTING if remaining else WorkflowState.REVIEWING,
                Step.PHASE_CLOSED,
                f"phase {pid} closed: report written"
                + (f"; next: phase {remaining[0]}" if remaining else "; all phases done"),
                phase=pid,
            )
        )
        records.update_pending(env)
        records.session_state(
            env,
            f"Phase {pid} is committed ({sha})."
            + (f" Next: phase {remaining[0]}." if remaining else " All phases are done."),
        )

    def _write_report(self, pid: int, ph: PhaseState) -> None:
        env = self.env
        parent = f"{ph.commit}^" if ph.commit else "HEAD"
        changed = env.repo.changed_paths(
            env.repo.tree_of(parent), env.repo.tree_of(ph.commit or "HEAD")
        )
        env.task.write_phase_report(pid, records.phase_report(env, pid, changed))
        faults.point("phase.after_report")
        records.write_verified(env)


# where a retry of each scope starts
RETRY_STATE = {
    Scope.REPLAN: WorkflowState.PLANNING,
    Scope.GATES: WorkflowState.REVIEWING,
    Scope.EXECUTOR: WorkflowState.ACTING,
    Scope.PLAN: WorkflowState.PLANNING,
}


class ReviewGate:
    """The PHASE_REVIEW_GATE records of one phase attempt (what they share, said once)."""

    def __init__(self, pid: int, ph: PhaseState, *, dryrun: CheckStatus) -> None:
        self.pid = pid
        self.ph = ph
        self.dryrun = dryrun

    def event(
        self,
        decision: Decision,
        reason: str,
        next_action: str,
        *,
        skeptic: CheckStatus,
        diagnosis: Diagnosis,
        failure_class: FailureClass | None = None,
        confidence: float = 1.0,
        checked: bool = True,
    ) -> GateEvent:
        """The gate's record; `checked` False leaves out the safety checks and the quality
        gates' status (a review that did not happen says nothing about them)."""
        return GateEvent(
            Gate.PHASE_REVIEW_GATE,
            WorkflowState.REVIEWING,
            decision,
            reason,
            next_action,
            phase=self.pid,
            confidence=confidence,
            iteration_index=len(self.ph.failures),
            max_iterations=policy.MAX_RETRIES_PER_PHASE,
            safety_checks=REVIEW_CHECKS if checked else None,
            dryrun_status=self.dryrun if checked else None,
            failure_class=failure_class,
            skeptic_status=skeptic,
            diagnosis=diagnosis,
        )


def review_decision(
    gate: ReviewGate,
    review: dict[str, Any],
    blocking: list[dict[str, Any]],
    demoted: list[dict[str, Any]],
    results: list[GateResult],
    tree: str,
    changed: list[tuple[str, str]],
) -> GateEvent:
    """The PHASE_REVIEW_GATE's decision once the gates passed and the reviewer answered."""
    pid = gate.pid
    if review.get("needs_replan"):
        why = review.get("replan_reason") or review["summary"]
        return gate.event(
            Decision.REPLAN,
            f"the reviewer says phase {pid} needs a new plan: {why}",
            "a targeted replan of this phase",
            failure_class=FailureClass.NEEDS_REPLAN,
            skeptic=CheckStatus.COMPLETE,
            diagnosis=Diagnosis(hint=why, scope=Scope.REPLAN),
        )
    if blocking:
        return gate.event(
            Decision.BLOCKED,
            f"the reviewer found {len(blocking)} validated blocking issue(s) in phase {pid}",
            "the executor fixes them (fix hint attached)",
            failure_class=FailureClass.FIXABLE,
            skeptic=CheckStatus.COMPLETE,
            diagnosis=Diagnosis(hint=issues_hint(blocking), scope=Scope.EXECUTOR),
        )
    return gate.event(
        Decision.GO,
        f"phase {pid}: gates passed ({_gate_summary(results)}); review {review['verdict']}"
        + (f", {len(demoted)} unvalidated issue(s) not blocking" if demoted else ""),
        f"commit phase {pid}",
        skeptic=CheckStatus.COMPLETE,
        confidence=1.0 if all(r.status == "PASS" for r in results) else 0.8,
        diagnosis=Diagnosis(
            tree=tree, changed=tuple(p for _, p in changed), runs=gate_runs(results)
        ),
    )


# files a phase may list without changing them
UNCHANGED_ACTIONS = frozenset({"reference", "review"})


def nothing_changed(phase: dict[str, Any], changed: list[tuple[str, str]]) -> str | None:
    """Why a phase that changed no file fails its gate, or None: it changed a file, or every
    file its plan lists is only to read (`reference`) or to look over (`review`)."""
    if changed:
        return None
    expected = [f["path"] for f in phase["files"] if f["action"] not in UNCHANGED_ACTIONS]
    if not expected:
        return None
    return (
        "changed nothing: no file changed, but the plan lists "
        f"{_shown(expected)} to create or modify"
    )


def _shown(paths: list[str]) -> str:
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def _gate_summary(results: list[GateResult]) -> str:
    return ", ".join(f"{r.gate} {r.status}" for r in results) or "no gates"


def _gate_summary_from_events(env: Env, pid: int) -> str:
    lines = records.gate_lines([e for e in env.journal.events if e.phase == pid])
    return "; ".join(line.removeprefix("- ").split(" (")[0] for line in lines) or "no gates ran"
