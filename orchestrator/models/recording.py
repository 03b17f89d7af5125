"""Recorded requests: every model call's request as one JSON file, to read and to measure.

On when `ORCH_RECORD_REQUESTS=DIR` is set (it wins) or `[debug] record_requests = "DIR"`
is configured. Each call writes `DIR/NNNN-<role>.json`, numbered in call order (a later
process, e.g. `orch resume`, goes on from the highest number already there):

    {"params": {...}, "provider": "anthropic", "role": "executor", "phase": 1,
     "model": "anthropic:claude-sonnet-4-6"}

`params` is what the adapter sends: for Anthropic and scripted models the keyword
arguments of `client.beta.messages.create` (built by `anthropic_request.build_params`, the
cache marks included), for `openai:` models those of `client.chat.completions.create`.
Every string in it is redacted with orch's secret detector (`checks.secrets.redact_data`);
the redaction is deterministic, so equal prefixes stay equal. Nothing is recorded unless
asked for, and only into the folder asked for.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from orchestrator.checks.secrets import redact_data
from orchestrator.config import Config

ENV = "ORCH_RECORD_REQUESTS"
_NUMBERED = re.compile(r"^(\d{4,})-")


def record_dir(config: Config | None) -> Path | None:
    """Where requests are recorded (None: not recorded)."""
    where = os.environ.get(ENV) or (config.debug.record_requests if config else None)
    return Path(where).expanduser().absolute() if where else None


class Recorder:
    """Writes one numbered JSON file a request into `folder` (created when first needed)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def record(
        self,
        params: dict[str, Any],
        *,
        provider: str,
        role: str,
        phase: int | None,
        model: str = "",
    ) -> Path:
        data = {
            "params": redact_data(params),
            "provider": provider,
            "role": role,
            "phase": phase,
            "model": model,
        }
        body = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
        self.folder.mkdir(parents=True, exist_ok=True)
        safe_role = re.sub(r"[^a-z0-9_]+", "-", role.lower()) or "model"
        while True:  # claim the next number; another process may take it first
            number = self._next()
            path = self.folder / f"{number:04d}-{safe_role}.json"
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(body)
            return path

    def _next(self) -> int:
        highest = 0
        for name in os.listdir(self.folder):
            found = _NUMBERED.match(name)
            if found:
                highest = max(highest, int(found[1]))
        return highest + 1


def recorder_for(config: Config | None) -> Recorder | None:
    where = record_dir(config)
    return Recorder(where) if where else None


def recorded(folder: Path) -> list[dict[str, Any]]:
    """The requests recorded in `folder`, in call order (each with its `file`)."""
    out = []
    files = [p for p in folder.iterdir() if _NUMBERED.match(p.name) and p.suffix == ".json"]
    for path in sorted(files, key=lambda p: int(_NUMBERED.match(p.name)[1])):  # type: ignore[index]
        data = json.loads(path.read_text(encoding="utf-8"))
        data["file"] = path.name
        out.append(data)
    return out
