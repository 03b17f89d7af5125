"""Claude Code's hooks, answered by orch: `orch hook claude-code EVENT`.

Claude Code runs a hook command with the event's JSON on stdin and reads a JSON answer on
stdout (its hook output format). orch answers three events:

- `SessionStart` (sources startup, resume, clear, compact): `hookSpecificOutput.
  additionalContext` holds NOTES.md, the active task's brief and the verified memory index
  (capped at `CONTEXT_CHARS`; stale memories withheld), so what matters survives a
  compaction or a new session. The memories served are recorded as used (`via="hook"`).
- `PreCompact`: saves the transcript's path, the trigger and a snapshot of the session
  scratch (memories/session/) into the active task's folder, or the session folder when no
  task is active, before Claude Code summarises the conversation.
- `Stop`: verifies the memories whose cited files this session changed (the working tree
  against HEAD) and reports the stale ones as a `systemMessage`. It never blocks, and does
  nothing when `stop_hook_active` is set (Claude Code is already continuing after a hook).

A hook must never break the user's session: bad or missing input, an uninitialised
repository or any failure is one line on stderr and exit code 0 (`commands/hook.py`).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from orchestrator.checks.secrets import redact_data
from orchestrator.config import load_config
from orchestrator.integrations.brief import active_task, task_brief
from orchestrator.memory.usage import record_use
from orchestrator.memory.use import memories_for_prompt
from orchestrator.memory.verify import verify_store
from orchestrator.store.fs import atomic_write
from orchestrator.store.layout import Layout
from orchestrator.store.notes import NotesFile
from orchestrator.store.repo import RepoMemoryStore

EVENTS = ("SessionStart", "PreCompact", "Stop")
CONTEXT_CHARS = 12_000  # what SessionStart adds to the context, at most


class HookInputError(ValueError):
    """The hook's stdin is not what Claude Code sends."""


def read_payload(raw: str) -> dict[str, Any]:
    if not raw.strip():
        raise HookInputError("no hook input on stdin (Claude Code sends the event as JSON)")
    try:
        payload = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise HookInputError(f"hook input is not JSON ({exc.msg} at {exc.pos})") from None
    if not isinstance(payload, dict):
        raise HookInputError("hook input is not a JSON object")
    return payload


def handle(layout: Layout, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The hook's answer (an empty object: nothing to say)."""
    if event == "SessionStart":
        return session_start(layout, payload)
    if event == "PreCompact":
        return pre_compact(layout, payload)
    if event == "Stop":
        return stop(layout, payload)
    raise HookInputError(f"orch answers {', '.join(EVENTS)}, not {event!r}")


def session_start(layout: Layout, payload: dict[str, Any]) -> dict[str, Any]:
    config = load_config(layout.root)
    brief = task_brief(layout, config=config.memory)
    found = memories_for_prompt(layout, config.memory)
    parts = [
        "# orch: what this repository keeps for you",
        f"(session {payload.get('source') or 'startup'}; memory below was checked against "
        "the code just now; stale memories are withheld)",
    ]
    notes = NotesFile(layout).text()
    if notes:
        parts += ["", notes.strip()]
    parts += ["", "## Task", brief.text().strip(), "", "## Verified memory index"]
    parts.append(found.index_text.strip() or "(no repo memory yet)")
    parts += [
        "",
        "Read a memory with the orch MCP server's memory_get, or memories/repo/<name>.md.",
    ]
    text = "\n".join(parts)
    if len(text) > CONTEXT_CHARS:
        text = text[: CONTEXT_CHARS - 60].rsplit("\n", 1)[0] + "\n(cut here: orch memory list)"
    served = [m.name for m in found.memories if f"[{m.name}]" in text]
    record_use(layout, served, via="hook")
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def pre_compact(layout: Layout, payload: dict[str, Any]) -> dict[str, Any]:
    task = active_task(layout)
    folder = (task.path / "claude-code") if task else layout.session / "claude-code"
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    scratch = {
        p.name: p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(layout.session.glob("*.md"))
        if p.is_file() and not p.is_symlink()
    }
    record = {
        "v": 1,
        "saved": stamp,
        "session_id": payload.get("session_id"),
        "transcript_path": payload.get("transcript_path"),
        "trigger": payload.get("trigger"),
        "task": task.slug if task else None,
        "session_scratch": scratch,
    }
    atomic_write(
        folder / f"precompact-{stamp}.json", json.dumps(redact_data(record), indent=1) + "\n"
    )
    return {}


def _changed_files(root: Path) -> set[str]:
    """Files the working tree changed against HEAD, untracked ones included."""
    out: set[str] = set()
    for args in (["diff", "--name-only", "HEAD"], ["ls-files", "--others", "--exclude-standard"]):
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        out |= {line for line in done.stdout.splitlines() if line}
    return out


def stop(layout: Layout, payload: dict[str, Any]) -> dict[str, Any]:
    if payload.get("stop_hook_active"):
        return {}
    changed = _changed_files(layout.root)
    if not changed:
        return {}
    citing = {
        m.name
        for m in RepoMemoryStore(layout).load_all().active
        if any(c.path in changed for c in m.citations)
    }
    if not citing:
        return {}
    results, _ = verify_store(layout)
    stale = [r for r in results if r.name in citing and r.stale]
    if not stale:
        return {}
    listed = "; ".join(f"{r.name} ({r.summary()})" for r in stale[:10])
    return {
        "systemMessage": (
            f"orch: {len(stale)} repo memories cite files this session changed and no longer "
            f"hold: {listed}. Supersede them (orch memory supersede) or fix the code."
        )
    }
