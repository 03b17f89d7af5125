"""One `model_call` event per model call, with its usage and cost, in the task's event log.

`LoggedModel` wraps any model (usually a `ResilientModel`): it times the call, then appends
an event holding the purpose, the model that answered, the token usage (cache reads and
writes included), an estimated cost, the latency, how many attempts the call took and the
stop reason; or, when the call failed, its failure class and message. It re-raises the
failure unchanged.

Costs come from `PRICES`, list prices in USD per million tokens by model family; a model
it does not know gets `cost_usd: null`, and scripted models cost 0. `estimated_cost_usd`
is what the call would cost: the same as `cost_usd` for a priced model, and for a scripted
model its estimated usage priced as `ESTIMATE_AS` (so a scripted run shows what a real one
would spend; the spending cap counts `cost_usd` only).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from orchestrator.errors import ModelError
from orchestrator.messages import Reply, Request, Usage

if TYPE_CHECKING:
    from orchestrator.events.log import EventLog
    from orchestrator.protocols import Model

# (model id prefix, input, output) in USD per million tokens; the longest prefix wins. A
# model missing here is logged with cost_usd null: add its family when its price is known.
PRICES: tuple[tuple[str, float, float], ...] = (
    ("claude-opus-4-6", 5.0, 25.0),
    ("claude-opus-4-5", 5.0, 25.0),
    ("claude-opus-4-1", 15.0, 75.0),
    ("claude-opus-4-0", 15.0, 75.0),
    ("claude-opus-4-2025", 15.0, 75.0),
    ("claude-3-opus", 15.0, 75.0),
    ("claude-sonnet-4", 3.0, 15.0),
    ("claude-3-7-sonnet", 3.0, 15.0),
    ("claude-3-5-sonnet", 3.0, 15.0),
    ("claude-haiku-4-5", 1.0, 5.0),
    ("claude-3-5-haiku", 0.8, 4.0),
    ("claude-3-haiku", 0.25, 1.25),
)
ESTIMATE_AS = "claude-sonnet-4-6"  # how a scripted model's calls are priced and cached
CACHE_WRITE_FACTOR = 1.25  # a 5-minute cache write costs 1.25x the input price
CACHE_READ_FACTOR = 0.10  # a cache hit costs a tenth of it


def price_of(model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for `model` ("anthropic:" prefix allowed)."""
    model_id = model.split(":", 1)[1] if model.startswith("anthropic:") else model
    best: tuple[str, float, float] | None = None
    for prefix, inp, out in PRICES:
        if model_id.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, inp, out)
    return (best[1], best[2]) if best else None


def cost_usd(model: str, usage: Usage) -> float | None:
    """The estimated cost of one call, or None for a model without a known price."""
    if model.startswith("scripted"):
        return 0.0
    price = price_of(model)
    if price is None:
        return None
    inp, out = price
    total = (
        usage.input_tokens * inp
        + usage.cache_write_tokens * inp * CACHE_WRITE_FACTOR
        + usage.cache_read_tokens * inp * CACHE_READ_FACTOR
        + usage.output_tokens * out
    )
    return round(total / 1_000_000, 6)


def estimated_cost_usd(model: str, usage: Usage) -> float | None:
    """What the call would cost: a scripted model's usage priced as `ESTIMATE_AS`."""
    return cost_usd(ESTIMATE_AS if model.startswith("scripted") else model, usage)


class LoggedModel:
    """A `Model` that appends one `model_call` event to `log` for every `complete`."""

    def __init__(
        self,
        inner: Model,
        log: EventLog,
        *,
        agent: str = "Orchestrator",
        phase: int | None = None,
        clock: Any = time.perf_counter,
    ) -> None:
        self.inner = inner
        self.log = log
        self.agent = agent
        self.phase = phase
        self.clock = clock

    @property
    def name(self) -> str:
        return self.inner.name

    def complete(self, request: Request) -> Reply:
        started = self.clock()
        try:
            reply = self.inner.complete(request)
        except ModelError as err:
            self._append(request, self._failure_payload(request, err, started))
            raise
        self._append(request, self._reply_payload(request, reply, started))
        return reply

    def count_tokens(self, request: Request) -> int:
        return self.inner.count_tokens(request)

    # payloads -------------------------------------------------------------------------

    def _base(self, request: Request, started: float) -> dict[str, Any]:
        record = getattr(self.inner, "last_call", None)
        payload: dict[str, Any] = {
            "purpose": request.purpose,
            "model": self.inner.name,
            "turn": request.turn,
            "latency_ms": max(0, round((self.clock() - started) * 1000)),
            "attempts": getattr(record, "attempts", 1) or 1,
        }
        fallback_from = getattr(record, "fallback_from", None)
        if fallback_from:
            payload["fallback_from"] = fallback_from
        return payload

    def _reply_payload(self, request: Request, reply: Reply, started: float) -> dict[str, Any]:
        payload = self._base(request, started)
        model = reply.model or payload["model"]
        payload["model"] = model
        payload.update(
            stop_reason=reply.stop_reason,
            usage=reply.usage.to_dict(),
            cost_usd=reply.cost_usd if reply.cost_usd is not None else cost_usd(model, reply.usage),
            estimated_cost_usd=estimated_cost_usd(model, reply.usage),
            tool_calls=[call.name for call in reply.tool_calls],
        )
        return payload

    def _failure_payload(self, request: Request, err: ModelError, started: float) -> dict[str, Any]:
        payload = self._base(request, started)
        payload.update(
            attempts=err.attempts,
            failure_class=err.failure_class,
            message=err.message,
        )
        if err.status is not None:
            payload["status"] = err.status
        return payload

    def _append(self, request: Request, payload: dict[str, Any]) -> None:
        phase = request.phase if request.phase is not None else self.phase
        self.log.append("model_call", payload, agent=self.agent, phase=phase)
