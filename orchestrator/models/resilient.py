"""Retries and fallback around any model: the one place the model layer's retry policy lives.

- `transient` failures (429, 529, 5xx, timeouts, a cut stream, an empty reply) are retried
  up to `max_retries` times, waiting `retry_after` when the failure carries one and an
  exponential backoff otherwise (base_delay, 2x per retry, at most max_delay).
- `model_unavailable` (an unknown or retired model) switches to the fallback model once and
  stays there for the rest of this object's life; the switch costs an attempt, not a retry.
- Every other class is raised at once. The final `ModelError` carries `attempts`: how many
  calls were made, over both models.

The Anthropic SDK's own retries are off (max_retries=0) so that this is the only policy.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from orchestrator.errors import ModelError, OrchError
from orchestrator.messages import Reply, Request
from orchestrator.protocols import Model

FallbackSource = Model | Callable[[], Model]


@dataclass
class CallRecord:
    """How the last `complete` went: read by `LoggedModel` for the `model_call` event."""

    attempts: int = 0
    model: str = ""
    fallback_from: str | None = None
    waits: list[float] = field(default_factory=list)


class ResilientModel:
    """A `Model` that retries `transient` failures and falls back on `model_unavailable`.

    `fallback` is a model or a zero-argument factory for one, built only when first needed
    (so a fallback that needs the SDK or an API key costs nothing until it is used).
    """

    def __init__(
        self,
        primary: Model,
        fallback: FallbackSource | None = None,
        *,
        max_retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.primary = primary
        self._fallback = fallback
        self.max_retries = max_retries
        self.sleep = sleep
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.active: Model = primary
        self.name: str = primary.name
        self.last_call = CallRecord()

    def backoff(self, retry: int) -> float:
        """The wait before retry number `retry` (0-based) when the failure names none."""
        return float(min(self.base_delay * (2**retry), self.max_delay))

    def complete(self, request: Request) -> Reply:
        record = CallRecord()
        self.last_call = record
        retries = 0
        while True:
            model = self.active
            record.attempts += 1
            record.model = model.name
            try:
                return model.complete(request)
            except ModelError as err:
                if err.failure_class == "transient" and retries < self.max_retries:
                    wait = err.retry_after if err.retry_after is not None else self.backoff(retries)
                    wait = max(0.0, float(wait))
                    retries += 1
                    record.waits.append(wait)
                    if wait:
                        self.sleep(wait)
                    continue
                if err.failure_class == "model_unavailable" and record.fallback_from is None:
                    fallback = self._take_fallback(err, record)
                    if fallback is not None:
                        record.fallback_from = model.name
                        self.active = fallback
                        self.name = fallback.name
                        continue
                err.attempts = record.attempts
                raise

    def _take_fallback(self, err: ModelError, record: CallRecord) -> Model | None:
        source = self._fallback
        if source is None:
            return None
        if isinstance(source, Model):
            fallback = source
        else:
            try:
                fallback = source()
            except OrchError as exc:
                raise ModelError(
                    f"{err.message}; the fallback model cannot be used either: {exc.message}",
                    "escalate",
                    status=err.status,
                    attempts=record.attempts,
                ) from exc
        self._fallback = fallback
        if fallback is self.active or fallback.name == self.active.name:
            return None
        return fallback

    def count_tokens(self, request: Request) -> int:
        return self.active.count_tokens(request)
