"""A real local Chat Completions server for tests: the `openai` SDK talks to it over HTTP.

`ChatServer` listens on 127.0.0.1 (port 0: the system picks one), answers
`POST /v1/chat/completions` from a per-test script, and records every request (method,
path, headers, JSON body). Point the SDK at `server.base_url` (`.../v1`). A step of a
script is one of:

- `Reply(completion)`: the completion as one JSON body, or, when the request asked for
  `stream: true`, as server-sent events the way the protocol sends them (a role chunk,
  content deltas, tool calls opened with their id and name and their arguments split over
  several chunks, a finish chunk, a usage chunk when `stream_options.include_usage` is
  set, then `data: [DONE]`), each event in its own HTTP chunk;
- `Error(status, message, type, code, headers)`: an error body with its status code and
  headers (e.g. retry-after);
- `Slow(seconds, then)`: waits before answering `then` (for client timeouts);
- `Stall(completion, after_chunks, seconds)`: streams that many events, then goes quiet
  (a stream that stalls mid-way);
- `CutStream(completion, after_chunks)`: sends that many events, then half of the next
  one, then drops the connection without ending the chunked body;
- `EndEarly(completion, after_chunks)`: sends that many events, then ends the body
  cleanly, with neither a finish reason nor `[DONE]`;
- `StreamError(completion, after_chunks, error)`: an error object in the middle of a stream;
- `Chunks(chunks)`: any list of chunk objects as a complete stream (e.g. broken arguments);
- `Raw(status, body, content_type)`: any bytes at all (a server answering something else).

`on_chat(*steps)` queues steps for any request; `on_chat_when(marker, *steps)` queues them
for requests whose system message contains `marker` (e.g. one role's prompt), which are
served from that queue first. Unexpected requests (no step left) are answered 500 and recorded in `unexpected`, which
the fixture turns into a test failure.
"""

from __future__ import annotations

import itertools
import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from orchestrator.models.local_server import LocalServer, Recorded, ScriptedHandler
from orchestrator.models.local_server import Slow as Slow  # a script step like those below

CHAT = "/v1/chat/completions"
_ids = itertools.count(1)


# completion builders ------------------------------------------------------------------


def tool_call(name: str, arguments: dict[str, Any] | str, id: str | None = None) -> dict[str, Any]:
    """A tool call; `arguments` as a string is sent as it is (e.g. malformed JSON)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "id": id or f"call_{next(_ids):04d}",
        "type": "function",
        "function": {"name": name, "arguments": raw},
    }


def completion(
    text: str | None = None,
    *calls: dict[str, Any],
    finish_reason: str | None = None,
    model: str = "gpt-test-1",
    prompt_tokens: int = 20,
    completion_tokens: int = 9,
    cached_tokens: int | None = None,
    refusal: str | None = None,
) -> dict[str, Any]:
    if finish_reason is None:
        finish_reason = "tool_calls" if calls else "stop"
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": refusal}
    if calls:
        message["tool_calls"] = list(calls)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return {
        "id": f"chatcmpl-{next(_ids):06d}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
        ],
        "usage": usage,
    }


def _chunk(
    done: dict[str, Any], delta: dict[str, Any], finish: str | None = None
) -> dict[str, Any]:
    return {
        "id": done["id"],
        "object": "chat.completion.chunk",
        "created": done["created"],
        "model": done["model"],
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }


def stream_chunks(done: dict[str, Any], include_usage: bool = True) -> list[dict[str, Any]]:
    """The chunks a server streams for the completion `done`, in order."""
    message = done["choices"][0]["message"]
    chunks = [_chunk(done, {"role": "assistant", "content": ""})]
    for piece in _pieces(message.get("content") or ""):
        if piece:
            chunks.append(_chunk(done, {"content": piece}))
    if message.get("refusal"):
        chunks.append(_chunk(done, {"refusal": message["refusal"]}))
    for index, call in enumerate(message.get("tool_calls") or []):
        opening = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        chunks.append(_chunk(done, {"tool_calls": [opening]}))
        for piece in _pieces(call["function"]["arguments"]):
            part = {"index": index, "function": {"arguments": piece}}
            chunks.append(_chunk(done, {"tool_calls": [part]}))
    chunks.append(_chunk(done, {}, done["choices"][0]["finish_reason"]))
    if include_usage:
        chunks.append({**_chunk(done, {}), "choices": [], "usage": done["usage"]})
    return chunks


def _pieces(value: str, size: int = 5) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)]


def encode(data: dict[str, Any] | str) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"data: {payload}\n\n".encode()


# script steps -------------------------------------------------------------------------


@dataclass
class Reply:
    completion: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Error:
    status: int
    message: str
    type: str = "invalid_request_error"
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Stall:
    completion: dict[str, Any]
    after_chunks: int
    seconds: float


@dataclass
class CutStream:
    completion: dict[str, Any]
    after_chunks: int


@dataclass
class EndEarly:
    completion: dict[str, Any]
    after_chunks: int


@dataclass
class StreamError:
    completion: dict[str, Any]
    after_chunks: int
    error: dict[str, Any] = field(
        default_factory=lambda: {"message": "the model crashed", "type": "server_error"}
    )


@dataclass
class Chunks:
    """Any chunks sent as a complete stream, ending with [DONE]."""

    chunks: list[dict[str, Any]]


@dataclass
class Raw:
    status: int
    body: bytes
    content_type: str = "text/html"


# the server ---------------------------------------------------------------------------


def _system_text(body: Any) -> str:
    messages = body.get("messages") if isinstance(body, dict) else None
    return "\n".join(
        str(m.get("content") or "")
        for m in messages or []
        if isinstance(m, dict) and m.get("role") == "system"
    )


class _Handler(ScriptedHandler):
    request_id_header = "x-request-id"

    def answer(self, step: Any, body: Any) -> None:
        streaming = isinstance(body, dict) and body.get("stream") is True
        options = body.get("stream_options") if isinstance(body, dict) else None
        usage = isinstance(options, dict) and options.get("include_usage") is True
        if step is None:
            self.send_json(500, {"error": {"message": "no scripted reply", "type": "server_error"}})
        elif isinstance(step, Reply):
            if streaming:
                self._stream(stream_chunks(step.completion, usage), extra=step.headers)
            else:
                self.send_json(200, step.completion, step.headers)
        elif isinstance(step, Error):
            error = {"message": step.message, "type": step.type, "param": None, "code": step.code}
            self.send_json(step.status, {"error": error}, step.headers)
        elif isinstance(step, Raw):
            self.send_bytes(step.status, step.body, step.content_type)
        elif isinstance(step, CutStream):
            chunks = stream_chunks(step.completion, usage)
            tail = encode(chunks[step.after_chunks])
            self._stream(chunks[: step.after_chunks], cut=tail[: len(tail) // 2])
        elif isinstance(step, Stall):
            chunks = stream_chunks(step.completion, usage)
            self._stream(chunks[: step.after_chunks], stall=step.seconds)
        elif isinstance(step, EndEarly):
            self._stream(stream_chunks(step.completion, usage)[: step.after_chunks], done=False)
        elif isinstance(step, StreamError):
            chunks: list[dict[str, Any]] = stream_chunks(step.completion, usage)
            self._stream([*chunks[: step.after_chunks], {"error": step.error}])
        elif isinstance(step, Chunks):
            self._stream(step.chunks)
        else:
            raise TypeError(f"unknown step {step!r}")

    def _stream(
        self,
        chunks: list[dict[str, Any]],
        *,
        cut: bytes | None = None,
        stall: float = 0.0,
        done: bool = True,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.open_stream(extra)
        self.send_chunks(encode(data) for data in chunks)
        if stall and self.owner.wait(stall):
            return
        if done and cut is None:
            self.send_chunks([encode("[DONE]")])
        self.close_stream(cut)


class ChatServer(LocalServer):
    handler = _Handler

    def __init__(self) -> None:
        self.script: deque[Any] = deque()
        self.routes: list[tuple[str, deque[Any]]] = []
        super().__init__()

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def on_chat(self, *steps: Any) -> None:
        with self._lock:
            self.script.extend(steps)

    def on_chat_when(self, marker: str, *steps: Any) -> None:
        """Steps for the requests whose system message contains `marker`."""
        with self._lock:
            self.routes.append((marker, deque(steps)))

    def next_step(self, path: str, body: Any) -> Any:
        with self._lock:
            if path == CHAT:
                system = _system_text(body)
                for marker, queue in self.routes:
                    if marker in system and queue:
                        return queue.popleft()
                if self.script:
                    return self.script.popleft()
            self.unexpected.append(f"{path} ({_system_text(body)[:60]!r})")
            return None

    @property
    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == CHAT]
