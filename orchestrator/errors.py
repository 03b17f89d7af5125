"""Errors a user sees: one line, a fixed exit code, never a traceback.

Every error that reaches the CLI is an `OrchError`. Exit codes: 1 for findings and failed
operations, 2 for usage errors (bad arguments, bad input the user gave on the command line),
3 for a task that is locked by another process.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path


class OrchError(Exception):
    """A failure to report to the user as one line."""

    exit_code = 1

    def __init__(self, message: str, *, path: Path | str | None = None) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        super().__init__(self.line())

    def line(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class UsageError(OrchError):
    """The command was called wrongly (bad argument, unknown name, empty task)."""

    exit_code = 2


class NotARepository(UsageError):
    def __init__(self, where: Path) -> None:
        super().__init__(
            f"not inside a git repository ({where}); run `git init` first or cd into one"
        )


class NotInitialised(UsageError):
    def __init__(self, root: Path) -> None:
        super().__init__(f"orch is not set up in {root}; run `orch init` first")


class InvalidFile(OrchError):
    """A file on disk does not parse or does not follow its format."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(reason, path=path)


class PathEscape(UsageError):
    """A path points outside the repository (absolute, `..`, or through a symlink)."""

    def __init__(self, path: str, root: Path) -> None:
        super().__init__(f"path {path!r} is outside the repository {root}")


class SecretRefused(OrchError):
    """A write that would store a secret; the message names its kind and field, never it."""

    def __init__(self, what: str, field: str, kind: str) -> None:
        super().__init__(
            f"{what} not written: its {field} holds a secret ({kind}); orch never stores one. "
            "Remove it (keep secrets in the environment or a secret manager)"
        )


class WriteFailed(OrchError):
    """A write the disk refused (full, read-only...); what was begun was undone."""


class Locked(OrchError):
    exit_code = 3

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is locked by another orch process; try again when it ends")


class FailureClass(StrEnum):
    """Why a step failed, which decides its retry (docs/engine.md, "Failures and retries").

    transient: retry the same scope (429, 529, 5xx, timeouts, a cut stream); fixable:
    retry with a hint (a malformed tool input, a failing test); needs_replan: a targeted
    replan; escalate: stop (authentication, a bad request); model_unavailable: use the
    fallback model.
    """

    TRANSIENT = "transient"
    FIXABLE = "fixable"
    NEEDS_REPLAN = "needs_replan"
    ESCALATE = "escalate"
    MODEL_UNAVAILABLE = "model_unavailable"


FAILURE_CLASSES = tuple(FailureClass)


class ModelError(OrchError):
    """A model call that failed, with its `FailureClass`."""

    def __init__(
        self,
        message: str,
        failure_class: FailureClass | str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        attempts: int = 1,
    ) -> None:
        self.failure_class = FailureClass(failure_class)
        self.status = status
        self.retry_after = retry_after
        self.attempts = attempts
        super().__init__(message)
