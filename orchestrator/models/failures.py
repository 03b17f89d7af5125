"""Replies that are failures, never successes (docs/design.md, States), for every model.

- an empty reply (no tool call, no text but whitespace): `transient`, retried;
- a reply cut at `max_tokens` (or at the context window) in the middle of a tool call:
  `fixable` (the call's input is incomplete; retry with more room or a smaller step);
- a refusal: `escalate` (asking again will not change the answer; a human decides);
- with `check_tools`: a call to a tool the request did not offer, or an input that is not
  an object matching the tool's input schema: `fixable`.

Every adapter also shares `one_line` (an error detail on one line) and
`retry_after_seconds` (the wait a 429 or 5xx answer asks for).
"""

from __future__ import annotations

import email.utils
import time
from typing import Any

from orchestrator.errors import ModelError
from orchestrator.messages import Reply, Request, ToolCall

CUT_STOPS = ("max_tokens", "model_context_window_exceeded")


def check_reply(
    reply: Reply,
    request: Request,
    *,
    check_tools: bool = False,
    tool_schemas: dict[str, dict[str, Any]] | None = None,
) -> Reply:
    """`reply` unchanged, or the ModelError it stands for."""
    if reply.stop_reason == "refusal":
        raise ModelError(
            f"{reply.model or 'the model'} declined to answer (stop_reason refusal)", "escalate"
        )
    if reply.stop_reason in CUT_STOPS and reply.content and isinstance(reply.content[-1], ToolCall):
        call = reply.content[-1]
        raise ModelError(
            f"the reply was cut at {reply.stop_reason} in the middle of a call to {call.name!r} "
            f"(max_tokens {request.max_tokens}): raise max_tokens or ask for a smaller step",
            "fixable",
        )
    if not reply.tool_calls and not reply.text.strip():
        raise ModelError(
            f"{reply.model or 'the model'} returned an empty reply (stop_reason "
            f"{reply.stop_reason})",
            "transient",
        )
    if check_tools:
        schemas = dict(tool_schemas or {})
        schemas.update({t.name: t.input_schema for t in request.tools})
        for call in reply.tool_calls:
            problem = tool_input_problem(call, schemas)
            if problem:
                raise ModelError(problem, "fixable")
    return reply


def tool_input_problem(call: ToolCall, schemas: dict[str, dict[str, Any]]) -> str | None:
    """Why `call` cannot be run as given, or None."""
    if call.name not in schemas:
        offered = ", ".join(sorted(schemas)) or "none"
        return f"the model called tool {call.name!r}, which was not offered (offered: {offered})"
    if not isinstance(call.input, dict):
        return f"the input of the call to {call.name!r} is not a JSON object"
    from jsonschema import Draft202012Validator

    errors = sorted(
        Draft202012Validator(schemas[call.name]).iter_errors(call.input),
        key=lambda e: [str(p) for p in e.path],
    )
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "input"
        return (
            f"the input of the call to {call.name!r} does not fit its schema: "
            f"{where}: {errors[0].message}"
        )
    return None


def one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    if headers is None:
        return None
    try:
        return max(0.0, float(headers.get("retry-after-ms")) / 1000)
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))
