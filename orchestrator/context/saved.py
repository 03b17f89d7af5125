"""Compacting the executor's saved conversation by hand (`orch compact SLUG`).

The engine saves each phase's conversation to `TaskFolder.conversation(phase)` after every
step (docs/seams.md, "The executor's saved conversation"). This module loads the current
phase's file under the task lock, compacts it with `ContextManager.compact`, and writes it
back atomically; a failed compaction leaves the file as it was.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.checks.secrets import redact_data
from orchestrator.config import Config
from orchestrator.context.compaction import reinjected
from orchestrator.context.manager import CompactionResult, ContextManager
from orchestrator.errors import InvalidFile, OrchError, UsageError
from orchestrator.messages import Message
from orchestrator.models import get_model
from orchestrator.models.logging import LoggedModel
from orchestrator.protocols import Model
from orchestrator.store.fs import atomic_write
from orchestrator.store.tasks import TaskFolder

_PHASE_FILE = re.compile(r"^phase-(\d+)\.json$")


@dataclass
class SavedConversation:
    path: Path
    phase: int
    data: dict[str, Any]
    messages: list[Message]


def saved_phases(task: TaskFolder) -> list[int]:
    folder = task.conversation(1).parent
    if not folder.is_dir():
        return []
    return sorted(
        int(m[1]) for m in map(_PHASE_FILE.match, (p.name for p in folder.iterdir())) if m
    )


def load_conversation(task: TaskFolder, phase: int | None = None) -> SavedConversation:
    """The saved conversation of `phase` (default: the latest phase that has one)."""
    phases = saved_phases(task)
    if phase is None:
        if not phases:
            raise UsageError(f"task {task.slug!r} has no saved conversation to compact yet")
        phase = phases[-1]
    path = task.conversation(phase)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        known = ", ".join(map(str, phases)) or "none"
        raise UsageError(
            f"task {task.slug!r} has no saved conversation for phase {phase} (phases: {known})"
        ) from None
    except ValueError as exc:
        raise InvalidFile(path, f"not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise InvalidFile(path, "not a saved conversation (no `messages` list)")
    try:
        messages = [Message.from_dict(m) for m in data["messages"]]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InvalidFile(path, f"a message does not parse: {exc}") from None
    return SavedConversation(path, phase, data, messages)


def compact_saved(
    task: TaskFolder,
    config: Config,
    *,
    model: Model | None = None,
    phase: int | None = None,
    reason: str = "compacted by hand",
) -> tuple[SavedConversation, CompactionResult]:
    """Compact a saved conversation in place; OrchError (file unchanged) if it fails.

    `model` defaults to the configured compactor model (with retries, fallback and
    `model_call` events), built once the conversation is known to exist.
    """
    with task.lock(wait=0):
        saved = load_conversation(task, phase)
        log = task.events()
        if model is None:
            built = get_model(config.model_for("compactor"), config)
            model = LoggedModel(built, log, agent="Compactor", phase=saved.phase)
        earlier = reinjected(saved.messages)
        manager = ContextManager(
            task,
            model,
            config.context,
            log,
            rules=str(saved.data.get("rules") or earlier.get("repository-rules", "")),
            phase_card=str(saved.data.get("phase_card") or earlier.get("phase-card", "")),
        )
        last_instruction = str(
            saved.data.get("last_instruction") or earlier.get("last-instruction", "")
        )
        messages = manager.compact(
            saved.messages,
            phase=saved.phase,
            last_instruction=last_instruction,
            reason=reason,
            kind="manual",
        )
        result = manager.last_result
        assert result is not None
        if result.outcome == "failed":
            raise OrchError(
                f"compaction failed: {result.error}; {saved.path.name} is unchanged",
            )
        if result.outcome == "ok":
            data = {**saved.data, "messages": [m.to_dict() for m in messages]}
            atomic_write(
                saved.path, json.dumps(redact_data(data), indent=2, ensure_ascii=False) + "\n"
            )
        return saved, result
