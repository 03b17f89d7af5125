"""One phase: PREFLECT_GATE, the executor's agent loop, the quality gates and the reviewer
(PHASE_REVIEW_GATE), the failure class and its retry, the commit, the phase's records.

A phase moves pending -> acting -> reviewing -> passed -> committed -> closed; `advance`
runs the one step its status asks for. Every step records its decision before acting:
the gate's GO (with the tree that passed) before the commit, the commit's id after it
(and a commit whose record was lost is found again by its trailers).
"""

from __future__ import annotations

import json
import shlex
import shutil
from typing import Any

from orchestrator.engine import faults, policy, records, shell, verified
from orchestrator.engine.agent import Checkpoint
from orchestrator.engine.env import Env
from orchestrator.engine.exceptions import Blocked, LimitsExceeded, NeedsApproval
from orchestrator.engine.executor import ExecutorSetup, context_manager, first_line
from orchestrator.engine.gates import (
    GateContext,
    GateResult,
    issues_hint,
    run_gates,
    validate_blocking,
)
from orchestrator.engine.prompts import load_prompt
from orchestrator.engine.roles import AnswerInvalid, JsonRole
from orchestrator.errors import InvalidFile, ModelError, OrchError
from orchestrator.messages import Message, TextBlock
from orchestrator.store.plans import plan_problems

CLASS_ORDER = ("escalate", "needs_replan", "transient", "model_unavailable", "fixable")


class Phases:
    def __init__(self, env: Env) -> None:
        self.env = env

    def advance(self, pid: int) -> None:
        faults.FAULTS.phase = pid
        ph = self.env.state.phase(pid)
        if ph.pending_failure is not None:
            self.decide(pid)
        elif ph.status == "pending":
            self.preflect(pid)
        elif ph.status == "acting" and not ph.submitted:
            self.execute(pid)
        elif ph.status == "acting":
            self.env.journal.change(
                "REVIEWING",
                "gates_started",
                f"phase {pid}: the executor is done; the gates run",
                phase=pid,
                attempt=ph.attempt,
            )
        elif ph.status == "reviewing":
            self.review(pid)
        elif ph.status == "passed":
            self.commit(pid)
        elif ph.status == "committed":
            self.close(pid)

    # PREFLECT_GATE ------------------------------------------------------------------------
    def preflect(self, pid: int) -> None:
        env, s = self.env, self.env.state
        phase = env.plan_phase(pid)
        ph = s.phase(pid)
        problems: list[str] = []
        missing = [d for d in phase["dependencies"] if s.phase(d).status != "closed"]
        if missing:
            problems.append(f"dependencies not done: phases {', '.join(map(str, missing))}")
        for gate, command in (
            ("tests_pass", env.config.test_command),
            ("lint_clean", env.config.lint_command),
        ):
            if (
                gate in phase["quality_gates"]
                and command
                and not _program_exists(command, env.layout.root)
            ):
                raise Blocked(
                    f"phase {pid}: the {gate} gate's command `{command}` cannot run (program "
                    "not found); fix test_command/lint_command in orch.toml or [tool.orch], "
                    "then `orch resume`",
                    phase=pid,
                    gate=dict(
                        gate="PREFLECT_GATE",
                        workflow_state="ACTING",
                        decision="BLOCKED",
                        reason=f"`{command}` not found",
                        phase=pid,
                        next_action="fix the configuration, then orch resume",
                        safety_checks=["scope_checked", "policy_checked"],
                    ),
                )
        base = s.task.get("base_commit")
        if base and not env.repo.is_ancestor(base):
            problems.append(f"HEAD no longer contains the task's first commit {base[:12]}")
        dirty = env.repo.dirty_paths()
        if dirty and not ph.preflect_override:
            shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
            problems.append(f"the working tree has changes orch did not make: {shown}")
        checks = ["scope_checked", "todo_verified"]
        if problems:
            reason = f"phase {pid} cannot start: " + "; ".join(problems)
            raise NeedsApproval(
                "preflect",
                reason + ". Put it right and `orch approve` (approving keeps "
                "the changes in this phase)",
                phase=pid,
                gate=dict(
                    gate="PREFLECT_GATE",
                    workflow_state="ACTING",
                    decision="BLOCKED",
                    reason=reason,
                    phase=pid,
                    requires_human_approval=True,
                    next_action="a person puts the tree right and approves",
                    safety_checks=checks,
                ),
            )
        env.journal.gate(
            "PREFLECT_GATE",
            workflow_state="ACTING",
            decision="GO",
            phase=pid,
            reason=f"phase {pid}: dependencies met, working tree as expected",
            next_action=f"execute phase {pid}: {phase['title']}",
            safety_checks=checks,
        )
        env.journal.change(
            "ACTING", "phase_started", f"phase {pid}: {phase['title']}", phase=pid, attempt=1
        )
        records.session_state(env, f"Phase {pid} ({phase['title']}) is under way.")
        faults.point("phase.started")

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
        prompt = load_prompt("executor")
        checkpoint = self.checkpoint(pid)
        messages = checkpoint.load()
        resumed_from = None
        if messages is None:
            if ph.generation > 0:
                env.repo.restore(env.repo.head_tree())
            start = prompt.render(
                "start", phase=pid, title=phase["title"], objective=phase["objective"]
            )
            messages = [Message.user(start)]
            checkpoint.last_instruction = start
            checkpoint.mark(messages)
            checkpoint.save()
        else:
            checkpoint.restore_files()
            resumed_from = sum(1 for m in messages if m.role == "assistant")
            if checkpoint.data.get("attempt", 1) < ph.attempt:
                messages = self._start_attempt(checkpoint, messages, ph.attempt)
            elif messages[-1].role == "assistant" and not messages[-1].tool_calls:
                self._submitted(pid, messages[-1].text, resumed_from)
                return
        env.journal.record(
            "delegation",
            {
                "to": "Executor",
                "purpose": "executor",
                "phase": pid,
                "attempt": ph.attempt,
                "reason": f"phase {pid}: {phase['title']}",
                "model": s.task["model"],
                **({"resumed_from_turn": resumed_from} if resumed_from is not None else {}),
            },
            phase=pid,
        )
        loop = ExecutorSetup(env, pid, checkpoint).loop(
            sum(1 for m in messages if m.role == "assistant")
        )
        try:
            text = loop.run(messages)
        except ModelError as exc:
            env.journal.record(
                "error",
                {
                    "kind": "executor_failed",
                    "detail": f"{exc.failure_class}: {exc.message}",
                    "failure_class": exc.failure_class,
                    "role": "executor",
                    "attempt": ph.attempt,
                    "blocked": True,
                },
                phase=pid,
            )
            return
        except OrchError as exc:
            stalled = getattr(exc, "payload", None)
            if getattr(exc, "event_type", None) != "error" or not isinstance(stalled, dict):
                raise
            # the context part cannot keep the conversation within its budget (seam: Context)
            env.journal.record("error", stalled, phase=pid)
            raise NeedsApproval(
                "escalation",
                f"phase {pid}: {exc.line()}; a person decides (`orch approve` "
                "tries again, `orch compact` compacts by hand first)",
                phase=pid,
            ) from None
        except LimitsExceeded as exc:
            env.journal.record(
                "error",
                {
                    "kind": "executor_failed",
                    "detail": str(exc),
                    "failure_class": "escalate",
                    "role": "executor",
                    "attempt": ph.attempt,
                    "blocked": False,
                },
                phase=pid,
            )
            return
        faults.point("executor.done")
        self._submitted(pid, text, loop.turn)

    def _start_attempt(
        self, checkpoint: Checkpoint, messages: list[Message], attempt: int
    ) -> list[Message]:
        """Continue the conversation into a new attempt, with the gate's feedback if any."""
        ph = self.env.state.phase(checkpoint.phase)
        checkpoint.attempt = attempt
        if ph.hint:
            text = load_prompt("executor").render(
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
            validate_files=[self._validate_own_files],
        )
        results = run_gates(list(phase["quality_gates"]), ctx)
        for result in results:
            env.journal.record(
                "verdict", result.payload(ph.attempt), agent="QualityGate", phase=pid
            )
        records.write_verified(env)
        failed = [r for r in results if not r.passed]
        common: dict[str, Any] = dict(
            gate="PHASE_REVIEW_GATE",
            workflow_state="REVIEWING",
            phase=pid,
            iteration_index=len(ph.failures),
            max_iterations=policy.MAX_RETRIES_PER_PHASE,
            safety_checks=["scope_checked", "policy_checked", "destructive_action_checked"],
            dryrun_status="FAIL" if failed else "PASS",
        )
        if failed:
            self._gate_failed(pid, failed, common)
            return
        review = self._ask_review(pid, phase, results, diff, changed)
        if review is None:
            return
        faults.point("review.after_model")
        blocking, demoted = validate_blocking(review, changed)
        env.journal.record(
            "verdict",
            {
                "kind": "review",
                "passed": not blocking and not review.get("needs_replan"),
                "verdict": review["verdict"],
                "summary": review["summary"],
                "blocking_issues": review["blocking_issues"],
                "validated_blocking_issues": blocking,
                "demoted": demoted,
                "non_blocking": review["non_blocking"],
                "criteria": review["criteria"],
                "attempt": ph.attempt,
            },
            agent="CodeReviewer",
            phase=pid,
        )
        records.write_verified(env)
        if review.get("needs_replan"):
            why = review.get("replan_reason") or review["summary"]
            env.journal.gate(
                **common,
                decision="REPLAN",
                failure_class="needs_replan",
                skeptic_status="COMPLETE",
                reason=f"the reviewer says phase {pid} needs a new plan: {why}",
                next_action="a targeted replan of this phase",
                diagnosis_packet={"hint": why, "scope": "replan"},
            )
        elif blocking:
            env.journal.gate(
                **common,
                decision="BLOCKED",
                failure_class="fixable",
                skeptic_status="COMPLETE",
                reason=f"the reviewer found {len(blocking)} validated blocking "
                f"issue(s) in phase {pid}",
                next_action="the executor fixes them (fix hint attached)",
                diagnosis_packet={"hint": issues_hint(blocking), "scope": "executor"},
            )
        else:
            env.journal.gate(
                **common,
                decision="GO",
                skeptic_status="COMPLETE",
                confidence=1.0 if all(r.status == "PASS" for r in results) else 0.8,
                reason=f"phase {pid}: gates passed ({_gate_summary(results)}); review "
                f"{review['verdict']}"
                + (f", {len(demoted)} unvalidated issue(s) not blocking" if demoted else ""),
                next_action=f"commit phase {pid}",
                diagnosis_packet={"tree": tree, "changed": [p for _, p in changed]},
            )
        faults.point("gate.after_decision")

    def _gate_failed(self, pid: int, failed: list[GateResult], common: dict[str, Any]) -> None:
        env = self.env
        worst = min(failed, key=lambda r: CLASS_ORDER.index(r.failure_class or "fixable"))
        regressed = verified.regressed(env.journal.events)
        hint = "\n\n".join(
            f"{r.gate}: {r.summary}\n{r.output_tail.strip()}".strip() for r in failed
        )
        if regressed:
            hint += "\n\nRegressed (verified before, failing now): " + ", ".join(regressed)
        scope = "gates" if worst.failure_class == "transient" else "executor"
        env.journal.gate(
            **common,
            decision="BLOCKED",
            failure_class=worst.failure_class or "fixable",
            skeptic_status="NOT_RUN",
            reason=f"phase {pid}: " + "; ".join(r.summary for r in failed),
            next_action="decide the retry for this failure class",
            diagnosis_packet={
                "hint": hint[-6000:],
                "scope": scope,
                "blocked": worst.blocked,
                "gates": [r.gate for r in failed],
                "regressed": regressed,
            },
        )
        faults.point("gate.after_decision")

    def _ask_review(
        self,
        pid: int,
        phase: dict[str, Any],
        results: list[GateResult],
        diff: str,
        changed: list[tuple[str, str]],
    ) -> dict[str, Any] | None:
        env = self.env
        ph = env.state.phase(pid)
        env.journal.record(
            "delegation",
            {
                "to": "CodeReviewer",
                "purpose": "reviewer",
                "phase": pid,
                "attempt": ph.attempt,
                "reason": f"review the diff of phase {pid}",
            },
            phase=pid,
        )
        role = JsonRole(
            "reviewer",
            env.model("reviewer", pid),
            env.read_tools(),
            env.config.max_tokens,
            env.memory_context(pid),
        )
        first = load_prompt("reviewer").render(
            "phase",
            phase=pid,
            attempt=ph.attempt,
            title=phase["title"],
            objective=phase["objective"],
            criteria="\n".join(f"- {c}" for c in phase["acceptance_criteria"]),
            gates="\n".join(f"- {r.gate}: {r.status} ({r.summary})" for r in results) or "- none",
            diff=diff or "(no change)",
        )
        common: dict[str, Any] = dict(
            gate="PHASE_REVIEW_GATE",
            workflow_state="REVIEWING",
            phase=pid,
            iteration_index=len(ph.failures),
            max_iterations=policy.MAX_RETRIES_PER_PHASE,
            skeptic_status="ABSTAIN",
        )
        try:
            review = role.verdict(first, "review_verdict", phase=pid)
        except AnswerInvalid as exc:
            env.journal.gate(
                **common,
                decision="BLOCKED",
                failure_class="transient",
                reason=f"phase {pid}: no valid review verdict ({exc.problems[0]})",
                next_action="ask the reviewer again",
                diagnosis_packet={"hint": str(exc), "scope": "gates"},
            )
            return None
        except ModelError as exc:
            env.journal.gate(
                **common,
                decision="BLOCKED",
                failure_class=exc.failure_class,
                reason=f"phase {pid}: the reviewer model failed: {exc.message}",
                next_action="retry the review",
                diagnosis_packet={"hint": exc.message, "scope": "gates", "blocked": True},
            )
            return None
        return review

    def _validate_own_files(self) -> list[str]:
        problems = []
        try:
            plan = json.loads(self.env.task.plan_json.read_text(encoding="utf-8"))
            problems += [f"plan.json: {p}" for p in plan_problems(plan)[:3]]
        except (OSError, ValueError) as exc:
            problems.append(f"plan.json: {exc}")
        from orchestrator.engine import tasklist

        try:
            tasklist.load(self.env.task.tasklist)
        except InvalidFile as exc:
            problems.append(str(exc))
        return problems

    # the retry decision ------------------------------------------------------------------------
    def decide(self, pid: int) -> None:
        env, s = self.env, self.env.state
        ph = s.phase(pid)
        failure = ph.pending_failure
        assert failure is not None
        klass = failure["failure_class"]
        cause = first_line(failure["reason"]).removeprefix(f"phase {pid}: ")
        decision = policy.decide_retry(ph.failures, klass)
        if decision.retry:
            scope = failure.get("scope", "executor")
            if klass == "needs_replan":
                scope = "replan"
            env.journal.change(
                "PLANNING"
                if scope == "replan"
                else ("REVIEWING" if scope == "gates" else "ACTING"),
                "phase_retry",
                f"phase {pid}: {decision.reason}: {cause}",
                phase=pid,
                attempt=ph.attempt + 1,
                failure_class=klass,
                hint=failure["hint"] if klass in ("fixable", "needs_replan") else None,
                scope=scope,
            )
            records.session_note(
                env,
                "Errors & Corrections",
                f"phase {pid} attempt {ph.attempt - 1}: {klass}: {cause[:200]}",
            )
            return
        reason = f"phase {pid} stopped: {cause} ({decision.reason})"
        if failure.get("blocked"):
            raise Blocked(
                reason + "; fix the cause, then `orch resume`", phase=pid, failure_class=klass
            )
        raise NeedsApproval(
            "escalation",
            reason + "; a person decides: `orch approve` retries the phase with a fresh budget",
            phase=pid,
            failure_class=klass,
        )

    # commit and close --------------------------------------------------------------------------
    def commit(self, pid: int) -> None:
        env, s = self.env, self.env.state
        ph = s.phase(pid)
        phase = env.plan_phase(pid)
        found = env.repo.phase_commits(env.slug, s.trace_id, s.task.get("base_commit")).get(pid)
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
            "REVIEWING",
            "phase_committed",
            f"phase {pid} committed as {sha[:12]}"
            + (" (found by its trailers)" if reconciled else ""),
            phase=pid,
            commit=sha,
            reconciled=reconciled,
        )

    def close(self, pid: int) -> None:
        env, s = self.env, self.env.state
        shell.kill_leftovers(env.layout)  # nothing a command started outlives its phase
        ph = s.phase(pid)
        phase = env.plan_phase(pid)
        parent = f"{ph.commit}^" if ph.commit else "HEAD"
        changed = env.repo.changed_paths(
            env.repo.tree_of(parent), env.repo.tree_of(ph.commit or "HEAD")
        )
        report = records.phase_report(env, pid, changed)
        env.task.write_phase_report(pid, report)
        faults.point("phase.after_report")
        records.write_verified(env)
        sha = (ph.commit or "")[:12]
        records.session_note(env, "Worklog", f"phase {pid} committed {sha}: {phase['title']}")
        records.session_note(
            env, "Key Results", f"phase {pid}: {_gate_summary_from_events(env, pid)}"
        )
        if env.parts.index_file is not None:
            env.parts.index_file(env.layout, env.task.phase_report(pid))
        checkpoint = self.checkpoint(pid)
        messages = checkpoint.load()
        context = context_manager(env, pid) if messages else None
        if context is not None and messages:
            context.close_phase(messages, phase=pid)  # the phase's last turns saved and folded
        if env.parts.promote is not None:
            outcome = env.parts.promote(env.layout, env.task, env.journal.as_log(), pid)
            env.journal.record(
                "execution_report",
                {"kind": "promotion", "phase": pid, "summary": describe_outcome(outcome)},
                phase=pid,
            )
        remaining = [p for p in s.order if s.phase(p).status != "closed" and p != pid]
        env.journal.change(
            "ACTING" if remaining else "REVIEWING",
            "phase_closed",
            f"phase {pid} closed: report written"
            + (f"; next: phase {remaining[0]}" if remaining else "; all phases done"),
            phase=pid,
        )
        records.update_pending(env)
        records.session_state(
            env,
            f"Phase {pid} is committed ({sha})."
            + (f" Next: phase {remaining[0]}." if remaining else " All phases are done."),
        )


SHELL_WORDS = {
    "cd",
    "test",
    "[",
    "[[",
    "echo",
    "true",
    "false",
    "exit",
    "export",
    "set",
    "source",
    ".",
    "exec",
    "eval",
    "command",
    "if",
    "for",
    "while",
    "case",
    "(",
    "{",
    "time",
    "!",
    "builtin",
    "type",
}


def _program_exists(command: str, root: Any) -> bool:
    """False only when the command's program is surely missing (the gate sees exit 127 too)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return True
    while words and "=" in words[0] and not words[0].startswith(("/", ".")):
        words = words[1:]
    if not words or words[0] in SHELL_WORDS:
        return True
    program = words[0]
    if "/" in program:
        from pathlib import Path

        path = Path(program) if program.startswith("/") else root / program
        return path.exists()
    return shutil.which(program) is not None


def _gate_summary(results: list[GateResult]) -> str:
    return ", ".join(f"{r.gate} {r.status}" for r in results) or "no gates"


def _gate_summary_from_events(env: Env, pid: int) -> str:
    lines = records.gate_lines([e for e in env.journal.events if e.phase == pid])
    return "; ".join(line.removeprefix("- ").split(" (")[0] for line in lines) or "no gates ran"


def describe_outcome(outcome: Any) -> str:
    if outcome is None:
        return "Checklist C ran"
    for attr in ("summary", "describe"):
        value = getattr(outcome, attr, None)
        if callable(value):
            value = value()
        if isinstance(value, str):
            return value
    return str(outcome)[:500]
