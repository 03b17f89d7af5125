"""A local Messages API server that answers from a script: for tests, and for
`orch demo --executor claude-code`, where Claude Code's CLI talks to it over HTTP.

`MessagesServer` listens on 127.0.0.1 (port 0: the system picks one), answers
`POST /v1/messages` and `POST /v1/messages/count_tokens` from per-test scripts, and records
every request (method, path, headers, JSON body). A step of a script is one of:

- `Reply(message)`: the message as one JSON body, or, when the request asked for
  `stream: true`, as server-sent events the way the API sends them (message_start,
  content_block_start / delta / stop with text_delta, input_json_delta and
  compaction_delta, ping, message_delta with usage, message_stop), chunked;
- `Error(status, type, message, headers)`: an API error body with its status code and
  headers (e.g. retry-after);
- `Slow(seconds, then)`: waits before answering `then` (for client timeouts);
- `CutStream(message, after_events)`: sends that many events, then half of the next one,
  then drops the connection without ending the chunked body;
- `EndEarly(message, after_events)`: sends that many events, then ends the body cleanly
  without message_stop;
- `StreamError(message, after_events, type)`: an `error` event in the middle of a stream;
- `Events(events)`: any list of events as a complete stream (e.g. a broken tool input);
- `Raw(status, body, content_type)`: any bytes at all (a server answering garbage);
- `Count(tokens)`: a count_tokens answer.

A server may also hold `Conversations` (`MessagesServer(conversations=...)`, or a YAML
file through `Conversations.from_file`): when no queued step is left, a request is answered
by the first conversation whose `contains` phrases all occur in the request's text (its
system prompt and its user messages), reply N answering the request that already holds N
assistant turns. The choice depends only on the request, so a session restarted after a
crash gets the same replies again. A reply is `{text}` and/or `{tool_calls: [{name,
input}]}` (with optional `usage`); `{root}` in any string of a reply stands for the
project's folder, as Claude Code's file tools want absolute paths:

```yaml
conversations:
  - when: {contains: ["phase 1 of 2"]}
    replies:
      - tool_calls: [{name: Read, input: {file_path: "{root}/app.py"}}]
      - tool_calls: [{name: Edit, input: {file_path: "{root}/app.py", old_string: a, new_string: b}}]
      - text: Done.
```

Unexpected requests (no step left) are answered 500 and recorded in `unexpected`, which
the fixture turns into a test failure.
"""

from __future__ import annotations

import itertools
import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from orchestrator.models.local_server import LocalServer, Recorded, ScriptedHandler
from orchestrator.models.local_server import Slow as Slow  # a script step like those below

MESSAGES = "/v1/messages"
COUNT_TOKENS = "/v1/messages/count_tokens"
_ids = itertools.count(1)


# message builders ---------------------------------------------------------------------


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict[str, Any], id: str | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": id or f"toolu_{next(_ids):04d}", "name": name, "input": input}


def compaction(summary: str) -> dict[str, Any]:
    return {"type": "compaction", "content": summary, "encrypted_content": "opaque-blob"}


def message(
    *content: dict[str, Any],
    stop_reason: str | None = None,
    model: str = "claude-sonnet-4-5-20250929",
    input_tokens: int = 12,
    output_tokens: int = 7,
    cache_read: int | None = None,
    cache_write: int | None = None,
    iterations: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    if stop_reason is None:
        stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if cache_read is not None:
        usage["cache_read_input_tokens"] = cache_read
    if cache_write is not None:
        usage["cache_creation_input_tokens"] = cache_write
    if iterations is not None:
        usage["iterations"] = iterations
    return {
        "id": f"msg_{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(content),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def sse_events(msg: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The server-sent events the API streams for `msg`, in order."""
    start = {**msg, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**msg["usage"], "output_tokens": 1}
    start["usage"].pop("iterations", None)
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(msg["content"]):
        kind = block["type"]
        if kind == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": part} for part in _pieces(block["text"])]
        elif kind == "tool_use":
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": part} for part in _pieces(raw)]
        elif kind == "compaction":
            opening = {"type": "compaction", "content": None}
            deltas = [
                {
                    "type": "compaction_delta",
                    "content": block["content"],
                    "encrypted_content": block.get("encrypted_content"),
                }
            ]
        else:
            raise ValueError(f"no stream form for block type {kind!r}")
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            )
        )
        for delta in deltas:
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    final_usage = {k: v for k, v in msg["usage"].items() if k != "input_tokens"}
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                "usage": final_usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _pieces(value: str, size: int = 7) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]


def encode_event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


# script steps -------------------------------------------------------------------------


@dataclass
class Reply:
    message: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Error:
    status: int
    type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class CutStream:
    message: dict[str, Any]
    after_events: int


@dataclass
class EndEarly:
    message: dict[str, Any]
    after_events: int


@dataclass
class StreamError:
    message: dict[str, Any]
    after_events: int
    type: str = "overloaded_error"


@dataclass
class Events:
    """Any list of (event name, data) sent as a complete stream (for malformed streams)."""

    events: list[tuple[str, dict[str, Any]]]


@dataclass
class Raw:
    status: int
    body: bytes
    content_type: str = "text/html"


@dataclass
class Count:
    tokens: int


def error_body(kind: str, text: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": text}, "request_id": "req_local"}


# conversations from a script ---------------------------------------------------------


class ScriptInvalid(ValueError):
    pass


@dataclass
class Conversations:
    """Replies chosen by what a request holds (see the module's docstring)."""

    entries: list[dict[str, Any]]
    root: str | Path = ""

    def __post_init__(self) -> None:
        self.root = str(self.root)

    @classmethod
    def from_file(cls, path: Path, root: Path | str = "") -> Conversations:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        entries = data.get("conversations") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise ScriptInvalid(f"{path}: needs a list under `conversations`")
        for number, entry in enumerate(entries, 1):
            when = entry.get("when", {}) if isinstance(entry, dict) else None
            if not isinstance(when, dict) or not isinstance(entry.get("replies"), list):
                raise ScriptInvalid(f"{path}: conversation {number} needs `when` and `replies`")
        return cls(entries, root)

    def reply_for(self, body: Any) -> dict[str, Any] | None:
        """The message answering `body`, or None when no conversation has one."""
        if not isinstance(body, dict):
            return None
        seen = request_text(body)
        turns = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        for entry in self.entries:
            phrases = entry.get("when", {}).get("contains", [])
            phrases = [phrases] if isinstance(phrases, str) else phrases
            if all(phrase in seen for phrase in phrases):
                replies = entry["replies"]
                return self._message(replies[turns]) if turns < len(replies) else None
        return None

    def _message(self, reply: dict[str, Any]) -> dict[str, Any]:
        reply = _fill(reply, str(self.root))
        blocks = [text(reply["text"])] if reply.get("text") else []
        blocks += [
            tool_use(c["name"], c.get("input", {}), c.get("id"))
            for c in reply.get("tool_calls", [])
        ]
        usage = reply.get("usage", {})
        return message(
            *blocks,
            input_tokens=int(usage.get("input_tokens", 12)),
            output_tokens=int(usage.get("output_tokens", 7)),
        )


def request_text(body: dict[str, Any]) -> str:
    """A request's system prompt and user messages as one text (what `contains` searches)."""
    parts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts += [b.get("text", "") for b in system if isinstance(b, dict)]
    for msg in body.get("messages", []):
        if msg.get("role") == "assistant":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [b.get("text", "") for b in content if isinstance(b, dict)]
    return "\n".join(parts)


def _fill(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("{root}", root)
    if isinstance(value, list):
        return [_fill(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, root) for k, v in value.items()}
    return value


# the server ---------------------------------------------------------------------------


class _Handler(ScriptedHandler):
    def answer(self, step: Any, body: Any) -> None:
        streaming = isinstance(body, dict) and body.get("stream") is True
        if step is None:
            self.send_json(500, error_body("api_error", "the local server has no scripted reply"))
        elif isinstance(step, Reply):
            if streaming:
                self._stream(sse_events(step.message), extra=step.headers)
            else:
                self.send_json(200, step.message, step.headers)
        elif isinstance(step, Error):
            self.send_json(step.status, error_body(step.type, step.message), step.headers)
        elif isinstance(step, Count):
            self.send_json(200, {"input_tokens": step.tokens})
        elif isinstance(step, Raw):
            self.send_bytes(step.status, step.body, step.content_type)
        elif isinstance(step, CutStream):
            events = sse_events(step.message)
            tail = encode_event(*events[step.after_events])
            self._stream(events[: step.after_events], cut=tail[: len(tail) // 2])
        elif isinstance(step, EndEarly):
            self._stream(sse_events(step.message)[: step.after_events])
        elif isinstance(step, Events):
            self._stream(step.events)
        elif isinstance(step, StreamError):
            events = sse_events(step.message)[: step.after_events]
            events.append(("error", error_body(step.type, "stream failed")))
            self._stream(events)
        else:
            raise TypeError(f"unknown step {step!r}")

    def _stream(
        self,
        events: list[tuple[str, dict[str, Any]]],
        *,
        cut: bytes | None = None,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.open_stream(extra)
        self.send_chunks(encode_event(name, data) for name, data in events)
        self.close_stream(cut)


class MessagesServer(LocalServer):
    handler = _Handler

    def __init__(self, conversations: Conversations | None = None) -> None:
        self.conversations = conversations
        self.scripts: dict[str, deque[Any]] = {MESSAGES: deque(), COUNT_TOKENS: deque()}
        super().__init__()

    def on_messages(self, *steps: Any) -> None:
        with self._lock:
            self.scripts[MESSAGES].extend(steps)

    def on_count_tokens(self, *steps: Any) -> None:
        with self._lock:
            self.scripts[COUNT_TOKENS].extend(steps)

    def next_step(self, path: str, body: Any = None) -> Any:
        with self._lock:
            queue = self.scripts.get(path)
            if queue:
                return queue.popleft()
            if path == MESSAGES and self.conversations is not None:
                found = self.conversations.reply_for(body)
                if found is not None:
                    return Reply(found)
            self.unexpected.append(path)
            return None

    @property
    def message_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == MESSAGES]
