"""Resume: rebuild a task's state from its event log, then reconcile it with disk and git.

The event log is the source of truth. `load()` folds it into a `TaskState` (a torn last
line is reported and skipped; the log's writer cuts it on the next append). `reconcile()`
then brings the two other witnesses in line before any step runs:

1. the task list first: a phase that was under way gets its task list (and its project
   files) back from its last checkpoint, so list, files and conversation agree;
2. git: a phase whose commit exists (found by its trailers) but whose `phase_committed`
   event was lost gets that event now, marked `reconciled`; it is never committed again;
3. a git index lock left by a git process that outlived a crash is waited for.

The workflow then continues from the first unfinished step.
"""

from __future__ import annotations

from orchestrator.engine.agent import Checkpoint
from orchestrator.engine.enums import PhaseStatus, Step, WorkflowState
from orchestrator.engine.env import Env
from orchestrator.engine.payloads import StateChange
from orchestrator.store.fs import sweep_temps


def reconcile(env: Env) -> list[str]:
    """Bring the task list, the project files and git in line with the log; what was done."""
    s = env.state
    done: list[str] = []
    if s.task is None or not s.trace_id:
        return done
    env.repo.wait_for_index_lock()
    for folder in (env.layout.root, env.layout.repo_memories, env.task.path):
        for temp in sweep_temps(folder):  # a write cut by the crash: its target is intact
            done.append(f"removed {temp.relative_to(env.layout.root)}, left by a cut write")
    for pid, ph in sorted(s.phases.items()):
        if ph.status in (PhaseStatus.ACTING, PhaseStatus.REVIEWING) and not ph.commit:
            checkpoint = Checkpoint(
                env.task.conversation(pid),
                env.repo,
                env.task.tasklist,
                pid,
                ph.attempt,
                ph.generation,
            )
            if checkpoint.load() is not None:
                restored = checkpoint.restore_files()
                done.append(
                    f"phase {pid}: task list and {len(restored)} file(s) restored "
                    f"from the checkpoint at turn {checkpoint.data.get('turn', 0)}"
                )
    commits = env.repo.phase_commits(env.slug, s.trace_id, s.task.base_commit)
    for pid, found in sorted(commits.items()):
        ph = s.phase(pid)
        if ph.commit is None and ph.status is PhaseStatus.PASSED:
            env.journal.change(
                StateChange(
                    WorkflowState.REVIEWING,
                    Step.PHASE_COMMITTED,
                    f"phase {pid} committed as {found.sha[:12]} (found by its trailers; its "
                    "event was lost in a crash)",
                    phase=pid,
                    commit=found.sha,
                    reconciled=True,
                )
            )
            done.append(f"phase {pid}: commit {found.sha[:12]} reconciled from git")
    return done
