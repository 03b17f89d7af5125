"""A local token estimate, for budgets and when the count_tokens endpoint is out of reach.

About four characters a token for English and code, plus a small overhead per message and
per tool definition. It errs on the high side, which is the safe side for a budget.
"""

from __future__ import annotations

import json
import math

from orchestrator.messages import Message, Request, ToolSpec

CHARS_PER_TOKEN = 3.5
MESSAGE_OVERHEAD = 4
TOOL_OVERHEAD = 16


def estimate_text(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def estimate_message(message: Message) -> int:
    body = json.dumps([b.to_dict() for b in message.content], ensure_ascii=False)
    return MESSAGE_OVERHEAD + estimate_text(body)


def estimate_tools(tools: list[ToolSpec]) -> int:
    return sum(TOOL_OVERHEAD + estimate_text(json.dumps(t.to_dict())) for t in tools)


def estimate_request(request: Request) -> int:
    return (
        estimate_text(request.system_text())
        + sum(estimate_message(m) for m in request.messages)
        + estimate_tools(request.tools)
        + estimate_text(request.volatile)
    )
