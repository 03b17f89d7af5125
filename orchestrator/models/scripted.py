"""A scripted model: replies come from a YAML or JSON script; every request is recorded.

It is what `orch demo` and most tests use. Two ways to script it:

```yaml
# 1. a queue: replies in the order they are asked for
replies:
  - text: "hello"
  - tool_calls: [{name: read_file, input: {path: app.py}}]
  - error: {class: transient, status: 529, message: overloaded}

# 2. conversations keyed by the request: a reply is chosen by the request's purpose
#    (planner, auditor, executor, reviewer, compactor, extractor), optional phase and
#    optional `contains` (a substring of the last user message); within a conversation,
#    reply N answers the request that already holds N assistant turns (the first reply
#    answers every request of a role that is never continued: compactor, extractor). The
#    choice depends only on the request, so a run resumed after a crash gets the same
#    replies again.
conversations:
  - when: {purpose: planner}
    replies:
      - text: '{"task_title": ...}'
  - when: {purpose: executor, phase: 1}
    replies:
      - tool_calls: [{name: write_file, input: {path: a.py, content: "..."}}]
      - text: "Phase 1 done."
```

A reply may hold `text`, `tool_calls` (each `{name, input, id?}`), `stop_reason`
(default: tool_use when there are tool calls, else end_turn), `usage` (default: estimated
from the request the Anthropic adapter would send for it, `anthropic_request.build_params`,
billed with prompt caching by `cachesim.CacheSim`: the uncached input, cache reads and
writes, and the reply's own tokens), `model` (the model
id the reply says answered it, as a real API's reply does; a priced id such as
`claude-sonnet-4-6` makes the call cost what `usage` would cost there, to rehearse a
spending cap; default: the script's own name, which costs 0), or `error`
(`{class, message, status?, retry_after?, times?}`: raised `times` times, default 1, for
that request before the script moves on).

Replies obey the same failure rules as a real model (`orchestrator.models.failures`): a
reply with neither text nor tool calls raises `transient`, a `stop_reason: max_tokens`
reply whose last block is a tool call raises `fixable`, `stop_reason: refusal` raises
`escalate`. So a script can rehearse every failure the engine must survive.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from orchestrator.config import Config
from orchestrator.errors import FAILURE_CLASSES, ModelError, UsageError
from orchestrator.messages import Reply, Request, TextBlock, ToolCall, Usage
from orchestrator.models.anthropic_request import ONE_SHOT, build_params
from orchestrator.models.cachesim import CacheSim, min_cacheable
from orchestrator.models.failures import check_reply
from orchestrator.models.logging import ESTIMATE_AS
from orchestrator.models.recording import Recorder
from orchestrator.tokens import estimate_request, estimate_text

REPLY_KEYS = ("text", "tool_calls", "stop_reason", "usage", "model", "error", "note")
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


class ScriptError(UsageError):
    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"model script {where}: {reason}")


@dataclass
class ScriptedModel:
    """`scripted:<path>` (or built from data in tests). `requests` records every call."""

    script: dict[str, Any]
    name: str = "scripted"
    requests: list[Request] = field(default_factory=list)
    _delivered: int = 0  # queue mode: replies handed out so far
    _spent: dict[tuple[int, int], int] = field(
        default_factory=dict
    )  # (list, entry) -> errors raised
    config: Config = field(default_factory=Config)  # caching settings the estimate follows
    recorder: Recorder | None = None  # set: every request is recorded (recording.py)
    _cache: CacheSim = field(default_factory=lambda: CacheSim(min_cacheable(ESTIMATE_AS)))
    _written: set[str] = field(default_factory=set)  # prefixes its requests marked

    def __post_init__(self) -> None:
        check_script(self.script, self.name)

    def params(self, request: Request) -> dict[str, Any]:
        """What the Anthropic adapter would send for `request` (the model id: this name)."""
        return build_params(request, self.name, self.config, written=self._written)

    def send(self, request: Request) -> Usage:
        """Record the request when asked to, and estimate its input usage with caching
        (what `complete` does before it answers)."""
        params = self.params(request)
        if self.recorder is not None:
            self.recorder.record(
                params,
                provider="scripted",
                role=request.purpose,
                phase=request.phase,
                model=self.name,
            )
        bill = self._cache.bill(params)
        return Usage(bill.full, 0, bill.read, bill.write)

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScriptError(str(path), f"cannot read it ({exc.strerror})") from None
        return cls(parse_script(text, str(path)), name=f"scripted:{path}")

    @classmethod
    def from_replies(cls, *replies: dict[str, Any]) -> ScriptedModel:
        return cls({"replies": list(replies)})

    # the Model protocol ----------------------------------------------------------------
    def complete(self, request: Request) -> Reply:
        self.requests.append(request)
        sent = self.send(request)
        if "replies" in self.script:
            which, entries, turn, label = -1, self.script["replies"], self._delivered, "the script"
        else:
            which, conv = self._conversation(request)
            # a one-shot role's request is never continued: the assistant turns it carries
            # are another role's (a compaction sends the executor's), so its first reply answers
            turn = 0 if request.purpose in ONE_SHOT else request.turn
            entries, label = conv["replies"], f"conversation {conv.get('when')}"
        for index in _turn_group(entries, turn):
            raw = entries[index]
            error = raw.get("error")
            if error is None:
                if which == -1:
                    self._delivered += 1
                reply = build_reply(raw, self.name, len(self.requests))
                if not raw.get("usage"):
                    out = estimate_text(json.dumps([b.to_dict() for b in reply.content]))
                    reply.usage = sent + Usage(0, out)
                return check_reply(reply, request)
            if self._spent.get((which, index), 0) < int(error.get("times", 1)):
                self._spent[(which, index)] = self._spent.get((which, index), 0) + 1
                raise ModelError(
                    str(error.get("message", "scripted failure")),
                    str(error["class"]),
                    status=error.get("status"),
                    retry_after=error.get("retry_after"),
                )
        raise ModelError(
            f"{self.name}: {label} has no reply for turn {turn} "
            f"(request {len(self.requests)}, purpose {request.purpose})",
            "escalate",
        )

    def count_tokens(self, request: Request) -> int:
        return estimate_request(request)

    def _conversation(self, request: Request) -> tuple[int, dict[str, Any]]:
        for index, conv in enumerate(self.script["conversations"]):
            if _matches(conv.get("when", {}), request):
                return index, conv
        raise ModelError(
            f"{self.name}: no scripted conversation matches purpose={request.purpose} "
            f"phase={request.phase}",
            "escalate",
        )


def _turn_group(entries: list[dict[str, Any]], turn: int) -> list[int]:
    """Indexes of the entries that answer `turn`: its error entries, then its reply."""
    group: list[int] = []
    replies = 0
    for index, raw in enumerate(entries):
        if replies == turn:
            group.append(index)
        if "error" not in raw:
            replies += 1
            if replies > turn:
                break
    return group


def _matches(when: dict[str, Any], request: Request) -> bool:
    if "purpose" in when and when["purpose"] != request.purpose:
        return False
    if "phase" in when and when["phase"] != request.phase:
        return False
    return not ("contains" in when and str(when["contains"]) not in request.last_user_text)


def build_reply(raw: dict[str, Any], model: str, n: int) -> Reply:
    content: list[TextBlock | ToolCall] = []
    if raw.get("text"):
        content.append(TextBlock(str(raw["text"])))
    for i, call in enumerate(raw.get("tool_calls") or []):
        call_id = str(call.get("id") or f"toolu_scripted_{n:04d}_{i}")
        content.append(ToolCall(call_id, str(call["name"]), dict(call.get("input") or {})))
    stop = raw.get("stop_reason") or ("tool_use" if raw.get("tool_calls") else "end_turn")
    usage = Usage(**raw["usage"]) if raw.get("usage") else Usage(0, 0)
    return Reply(content, str(stop), usage, str(raw.get("model") or model))


def parse_script(text: str, where: str) -> dict[str, Any]:
    data: Any
    if where.endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScriptError(where, f"not valid JSON (line {exc.lineno}: {exc.msg})") from None
    else:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ScriptError(
                where, "not valid YAML (" + " ".join(str(exc).split()) + ")"
            ) from None
    if not isinstance(data, dict):
        raise ScriptError(where, "must be a mapping with `replies` or `conversations`")
    return data


def check_script(script: dict[str, Any], where: str) -> None:
    if ("replies" in script) == ("conversations" in script):
        raise ScriptError(where, "needs exactly one of `replies` or `conversations`")
    if "replies" in script:
        _check_replies(script["replies"], where, "replies")
        return
    convs = script["conversations"]
    if not isinstance(convs, list):
        raise ScriptError(where, "`conversations` must be a list")
    for i, conv in enumerate(convs):
        if not isinstance(conv, dict) or not isinstance(conv.get("when", {}), dict):
            raise ScriptError(where, f"conversations[{i}] must be a mapping with a `when` mapping")
        _check_replies(conv.get("replies"), where, f"conversations[{i}].replies")


def _check_replies(replies: Any, where: str, path: str) -> None:
    if not isinstance(replies, list):
        raise ScriptError(where, f"`{path}` must be a list")
    for i, raw in enumerate(replies):
        at = f"{path}[{i}]"
        if not isinstance(raw, dict):
            raise ScriptError(where, f"{at} must be a mapping")
        unknown = set(raw) - set(REPLY_KEYS)
        if unknown:
            raise ScriptError(where, f"{at} has unknown keys {sorted(unknown)}")
        _check_fields(raw, where, at)
        if (
            "error" not in raw
            and not raw.get("text")
            and not raw.get("tool_calls")
            and "stop_reason" not in raw
        ):
            raise ScriptError(where, f"{at} needs text, tool_calls or error")
        for j, call in enumerate(raw.get("tool_calls") or []):
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise ScriptError(where, f"{at}.tool_calls[{j}] needs a name")
            if not isinstance(call.get("input", {}), dict):
                raise ScriptError(where, f"{at}.tool_calls[{j}].input must be a mapping")


def _check_fields(raw: dict[str, Any], where: str, at: str) -> None:
    """A reply's `error`, `model` and `usage`, each as its kind requires."""
    if "error" in raw:
        err = raw["error"]
        if not isinstance(err, dict) or err.get("class") not in FAILURE_CLASSES:
            raise ScriptError(
                where, f"{at}.error needs a class, one of {', '.join(FAILURE_CLASSES)}"
            )
        for key in ("times", "status"):
            if key in err and (not isinstance(err[key], int) or isinstance(err[key], bool)):
                raise ScriptError(where, f"{at}.error.{key} must be an integer")
        if "retry_after" in err and not isinstance(err["retry_after"], int | float):
            raise ScriptError(where, f"{at}.error.retry_after must be a number of seconds")
    if "model" in raw and (not isinstance(raw["model"], str) or not raw["model"].strip()):
        raise ScriptError(where, f"{at}.model must be a model id, e.g. claude-sonnet-4-6")
    usage = raw.get("usage")
    if usage is not None and (
        not isinstance(usage, dict)
        or set(usage) - set(USAGE_KEYS)
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in usage.values())
    ):
        raise ScriptError(where, f"{at}.usage must map some of {', '.join(USAGE_KEYS)} to integers")
