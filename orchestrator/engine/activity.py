"""What runs now, for a person watching: the engine says when a model call, a tool or a gate
starts, and what a running gate's command prints.

The event log records what happened, once it happened; this says what is happening, for a
live display (`orch run` on a terminal). Nothing of it is logged or replayed, and a
listener that fails here must not change what the task does: the commands' listeners
never raise.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol


class Doing(StrEnum):
    """The kinds of work that take time."""

    MODEL = "model"  # a model call (a role asks its model)
    TOOL = "tool"  # one of the executor's tool calls
    GATE = "gate"  # a quality gate (its command, when it has one)


class Activity(Protocol):
    def begin(self, kind: Doing, what: str) -> None:
        """`what` (one line) starts now; it runs until the next `begin` or event."""

    def output(self, text: str) -> None:
        """A piece of what the running gate's command prints (not cut at lines)."""


class NoActivity:
    """Nobody watches."""

    def begin(self, kind: Doing, what: str) -> None:
        return None

    def output(self, text: str) -> None:
        return None
