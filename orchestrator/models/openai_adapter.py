"""orch's `Model` on the official `openai` SDK: Chat Completions with function tools.

`openai:<model>` talks to any server that speaks the Chat Completions protocol: OpenAI
itself, Ollama, vLLM, LM Studio, llama.cpp's server. Where it is served comes from
`[models.openai]` in the configuration (`base_url`, else `$OPENAI_BASE_URL`, else the
OpenAI API) and the key from the environment variable named by `api_key_env`
(`OPENAI_API_KEY` by default; a server that checks no key takes any value).

This is the only module that imports `openai`; it is imported only when an `openai:` model
is built, so `orch --help` and `orch memory ...` never load the SDK.

How orch's messages map (`request_params` builds the exact keyword arguments of
`client.chat.completions.create`, and nothing else does):

| orch | Chat Completions |
|---|---|
| the system parts | one `system` message, the parts joined by a blank line |
| a `ToolSpec` | a `function` tool (`parameters` is the input schema) |
| an assistant turn's `ToolCall`s | the assistant message's `tool_calls` (ids kept, input as JSON) |
| a `ToolResult` | a `tool` message with the same `tool_call_id` (an error result starts `Error: `) |
| `max_tokens` | `max_completion_tokens`, or `max_tokens` when `max_tokens_field` says so |
| `streaming` | `stream: true` with `include_usage`; tool-call arguments split across chunks are joined |

Replies come back with the finish reason mapped (`tool_calls` -> `tool_use`, `length` ->
`max_tokens`, `stop` -> `end_turn`, `content_filter` -> `refusal`) and the usage as orch
counts it (`input_tokens` without the cached prompt tokens, which are `cache_read_tokens`).

What the provider lacks degrades, with one warning per process: prompt-cache breakpoints
(a server that caches prefixes by itself still reports cached tokens), the API memory
tool (offered instead as the plain function tool `memory`, `MemoryToolHandler.spec()`),
and server-side context editing and compaction (orch's own masking and compaction work as
always). Token counts are the local estimate.

The SDK's own retries are off (max_retries=0): `ResilientModel` holds the retry policy.
Every failure leaves as a `ModelError` of one of the failure classes:

| what happened | class |
|---|---|
| 429 (not `insufficient_quota`), 5xx, 408, 409, a timeout, no connection, a stream cut or ended early, an error in the stream | transient (retry-after kept) |
| the model is unknown (`model_not_found`, or a 404 about the model) | model_unavailable |
| an empty reply | transient |
| tool-call arguments that are not a JSON object, a call cut at max_tokens, an unknown tool | fixable |
| 401 or 403 | escalate, naming the key's variable |
| 400 and other 4xx, `insufficient_quota`, a content filter, a server that does not speak the protocol | escalate |
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai

from orchestrator.config import Config
from orchestrator.errors import ModelError, UsageError
from orchestrator.messages import Message, Reply, Request, TextBlock, ToolCall, ToolSpec, Usage
from orchestrator.models.failures import check_reply, one_line, retry_after_seconds
from orchestrator.models.memory_tool import INPUT_SCHEMA, MemoryToolHandler
from orchestrator.models.recording import recorder_for
from orchestrator.tokens import estimate_request

log = logging.getLogger(__name__)

MAX_TOKENS_FIELDS = ("max_completion_tokens", "max_tokens")
STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
TRANSIENT_STATUSES = (408, 409, 429)
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ERROR_PREFIX = "Error: "

# What this provider lacks, said once per process (a run builds a model for each role).
_warned: set[str] = set()


def warn_once(topic: str, message: str) -> None:
    if topic not in _warned:
        _warned.add(topic)
        log.warning("%s", message)


# orch's messages -> Chat Completions ---------------------------------------------------


def function_tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.input_schema,
        },
    }


def chat_messages(request: Request) -> list[dict[str, Any]]:
    """The conversation of `request` as Chat Completions messages."""
    out: list[dict[str, Any]] = []
    system = request.system_text()
    if system:
        out.append({"role": "system", "content": system})
    for message in request.messages:
        out.extend(_chat_message(message))
    if request.volatile:  # what changes every turn goes last (docs/models.md)
        if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], str):
            out[-1] = {**out[-1], "content": f"{out[-1]['content']}\n\n{request.volatile}"}
        else:
            out.append({"role": "user", "content": request.volatile})
    return out


def _chat_message(message: Message) -> list[dict[str, Any]]:
    if message.role == "assistant":
        turn: dict[str, Any] = {"role": "assistant", "content": message.text or None}
        calls = message.tool_calls
        if calls:
            turn["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": json.dumps(call.input, ensure_ascii=False),
                    },
                }
                for call in calls
            ]
        elif turn["content"] is None:
            turn["content"] = ""
        return [turn]
    # a user turn: its tool results first (they must follow the assistant's calls), then text
    out: list[dict[str, Any]] = [
        {
            "role": "tool",
            "tool_call_id": result.tool_use_id,
            "content": ERROR_PREFIX + result.content if result.is_error else result.content,
        }
        for result in message.tool_results
    ]
    if message.text or not out:
        out.append({"role": "user", "content": message.text})
    return out


# Chat Completions -> orch's reply -------------------------------------------------------


def stop_reason(finish_reason: str | None, has_tool_calls: bool) -> str:
    """orch's stop reason for a Chat Completions finish reason."""
    mapped = STOP_REASONS.get(finish_reason or "", "end_turn")
    if has_tool_calls and mapped == "end_turn":  # some servers finish tool calls with "stop"
        return "tool_use"
    return mapped


def usage_of(raw: Any) -> Usage:
    """orch's usage: input without the cached prompt tokens, which count as cache reads."""
    if raw is None:
        return Usage()
    prompt = _int(getattr(raw, "prompt_tokens", 0))
    details = getattr(raw, "prompt_tokens_details", None)
    cached = min(_int(getattr(details, "cached_tokens", 0)), prompt)
    return Usage(prompt - cached, _int(getattr(raw, "completion_tokens", 0)), cached, 0)


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # a few servers answer a list of content parts
        return "".join(str(getattr(p, "text", None) or _get(p, "text") or "") for p in content)
    return ""


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


@dataclass
class _PendingCall:
    index: Any
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class ChunkAccumulator:
    """One streamed reply put back together: text, tool calls (by index, with arguments
    split across chunks), the finish reason, the usage chunk and the model name."""

    text: list[str] = field(default_factory=list)
    calls: list[_PendingCall] = field(default_factory=list)
    finish_reason: str | None = None
    finished: bool = False
    refusal: str = ""
    usage: Any = None
    model: str = ""
    events: int = 0
    chunks: int = 0  # events shaped like chunks (with a `choices` list)

    def add(self, chunk: Any) -> None:
        self.events += 1
        choices = getattr(chunk, "choices", None)
        if not isinstance(choices, list):
            return
        self.chunks += 1
        self.model = str(getattr(chunk, "model", None) or self.model)
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage
        for choice in choices:
            if _int(getattr(choice, "index", 0)) != 0:
                continue
            delta = getattr(choice, "delta", None)
            if delta is not None:
                self._delta(delta)
            if getattr(choice, "finish_reason", None):
                self.finish_reason = str(choice.finish_reason)
                self.finished = True

    def _delta(self, delta: Any) -> None:
        piece = _text(getattr(delta, "content", None))
        if piece:
            self.text.append(piece)
        self.refusal += str(getattr(delta, "refusal", None) or "")
        for part in getattr(delta, "tool_calls", None) or []:
            index = getattr(part, "index", None)
            call_id = str(getattr(part, "id", None) or "")
            pending = next((c for c in reversed(self.calls) if c.index == index), None)
            # a new id at a known index is a new call (servers that number every call 0)
            if pending is None or (call_id and pending.id and call_id != pending.id):
                pending = _PendingCall(index)
                self.calls.append(pending)
            pending.id = pending.id or call_id
            function = getattr(part, "function", None)
            if function is not None:
                # the name comes whole, once (a server that repeats it is not doubled)
                pending.name = pending.name or str(getattr(function, "name", None) or "")
                pending.arguments.append(str(getattr(function, "arguments", None) or ""))


# the model ------------------------------------------------------------------------------


class OpenAIModel:
    """`openai:<model>` on any Chat Completions server; see the module docstring."""

    def __init__(
        self,
        model_id: str,
        config: Config | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> None:
        if not model_id.strip() or any(c.isspace() for c in model_id):
            raise UsageError(f"{model_id!r} is not a model name: use openai:<model>")
        self.model_id = model_id
        self.name = f"openai:{model_id}"
        self.config = config or Config()
        settings = self.config.models.openai
        self.key_env = settings.api_key_env
        if not isinstance(self.key_env, str) or not ENV_NAME.fullmatch(self.key_env):
            raise UsageError(
                f"[models.openai] api_key_env {self.key_env!r} is not the name of an "
                "environment variable (e.g. OPENAI_API_KEY)"
            )
        if settings.max_tokens_field not in MAX_TOKENS_FIELDS:
            raise UsageError(
                f"[models.openai] max_tokens_field {settings.max_tokens_field!r}: use one of "
                f"{', '.join(MAX_TOKENS_FIELDS)}"
            )
        self.max_tokens_field = str(settings.max_tokens_field)
        url = base_url or settings.base_url or os.environ.get("OPENAI_BASE_URL") or None
        if url is not None and (
            not isinstance(url, str) or not url.startswith(("http://", "https://"))
        ):
            raise UsageError(
                f"[models.openai] base_url {url!r} is not an http:// or https:// URL "
                "(e.g. http://localhost:11434/v1)"
            )
        key = api_key or os.environ.get(self.key_env) or None
        if key is None:
            raise UsageError(
                f"{self.key_env} is not set: export {self.key_env}=<your key> to use "
                f"{self.name} (a local server that checks no key takes any value, e.g. "
                f"{self.key_env}=unused), or choose another model"
            )
        timeout = float(self.config.api_timeout)
        self.timeout = timeout
        self.client = openai.OpenAI(
            api_key=key,
            base_url=url,
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
            max_retries=0,
        )
        self.base_url = str(self.client.base_url).rstrip("/")
        self.streaming = self.config.streaming
        self.recorder = recorder_for(self.config)

    # the Model protocol -----------------------------------------------------------------

    def complete(self, request: Request) -> Reply:
        params = self.request_params(request)
        if self.recorder is not None:
            self.recorder.record(
                params,
                provider="openai",
                role=request.purpose,
                phase=request.phase,
                model=self.name,
            )
        try:
            reply = self._stream(params) if self.streaming else self._create(params)
        except ModelError:
            raise
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from None
        except openai.APITimeoutError:
            raise ModelError(
                f"{self.name}: no answer within {self.timeout:g}s (api_timeout)", "transient"
            ) from None
        except openai.APIConnectionError as exc:
            raise ModelError(
                f"{self.name}: cannot reach {self.base_url} ({self._cause(exc)})", "transient"
            ) from None
        except openai.APIError as exc:  # an error reported inside a stream
            raise self._stream_error(exc) from None
        except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
            raise self._garbage(f"{type(exc).__name__}: {one_line(str(exc), 100)}") from None
        memory = {"memory": INPUT_SCHEMA} if request.memory_tool else {}
        return check_reply(reply, request, check_tools=True, tool_schemas=memory)

    def count_tokens(self, request: Request) -> int:
        """The local estimate: Chat Completions servers have no counting endpoint."""
        return estimate_request(request)

    # requests ---------------------------------------------------------------------------

    def request_params(self, request: Request) -> dict[str, Any]:
        """The keyword arguments of `client.chat.completions.create` for `request`."""
        self._say_what_degrades(request)
        specs = list(request.tools)
        if request.memory_tool and not any(t.name == "memory" for t in specs):
            specs.append(MemoryToolHandler.spec())
        params: dict[str, Any] = {
            "model": self.model_id,
            "messages": chat_messages(request),
            self.max_tokens_field: request.max_tokens,
        }
        if specs:
            params["tools"] = [function_tool(t) for t in specs]
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if self.streaming:
            params["stream"] = True
            params["stream_options"] = {"include_usage": True}
        return params

    def _say_what_degrades(self, request: Request) -> None:
        if self.config.prompt_caching:
            warn_once(
                "prompt_caching",
                "openai: models have no prompt-cache breakpoints, so prompt_caching does "
                "nothing here; cached prompt tokens are counted when the server reports them",
            )
        if request.memory_tool:
            warn_once(
                "memory_tool",
                "openai: models have no API memory tool (memory_20250818); memory is offered "
                "as the plain function tool `memory`, with the same commands and checks",
            )
        context = self.config.context
        if context.server_context_editing:
            warn_once(
                "server_context_editing",
                "openai: models have no server-side context editing; orch's own masking "
                "of old tool results does the work",
            )
        if context.server_compaction:
            warn_once(
                "server_compaction",
                "openai: models have no server-side compaction; orch's own compaction does "
                "the work",
            )

    # transport --------------------------------------------------------------------------

    def _stream(self, params: dict[str, Any]) -> Reply:
        acc = ChunkAccumulator()
        stream = self.client.chat.completions.create(**params)
        if not isinstance(stream, openai.Stream):
            raise self._garbage(f"{type(stream).__name__} instead of an event stream")
        kind = stream.response.headers.get("content-type", "")
        if "text/event-stream" not in kind:
            stream.close()
            raise self._garbage(f"content-type {kind or 'none'} instead of text/event-stream")
        try:
            with stream:
                for chunk in stream:
                    acc.add(chunk)
        except openai.APITimeoutError:
            raise ModelError(
                f"{self.name}: the reply stalled for more than {self.timeout:g}s (api_timeout)",
                "transient",
            ) from None
        except openai.APIConnectionError as exc:
            raise ModelError(
                f"{self.name}: the reply stream was cut ({self._cause(exc)})", "transient"
            ) from None
        if acc.events and not acc.chunks:
            raise self._garbage(f"{acc.events} events, none of them a chat.completion.chunk")
        if not acc.finished:
            raise ModelError(
                f"{self.name}: the reply stream ended before its finish_reason", "transient"
            )
        calls = [
            self._tool_call(c.id, c.name, "".join(c.arguments), acc.finish_reason)
            for c in acc.calls
        ]
        return self._reply("".join(acc.text), calls, acc, acc.refusal)

    def _create(self, params: dict[str, Any]) -> Reply:
        completion = self.client.chat.completions.create(**params)
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise self._garbage(one_line(repr(completion), 80))
        choice = choices[0]
        message = choice.message
        finish = getattr(choice, "finish_reason", None)
        calls = [
            self._tool_call(
                str(getattr(c, "id", None) or ""),
                str(getattr(c.function, "name", None) or ""),
                str(getattr(c.function, "arguments", None) or ""),
                finish,
            )
            for c in getattr(message, "tool_calls", None) or []
            if getattr(c, "function", None) is not None
        ]
        acc = ChunkAccumulator(
            finish_reason=finish,
            usage=getattr(completion, "usage", None),
            model=str(getattr(completion, "model", None) or ""),
        )
        refusal = str(getattr(message, "refusal", None) or "")
        return self._reply(_text(getattr(message, "content", None)), calls, acc, refusal)

    def _reply(
        self, text: str, calls: list[ToolCall], acc: ChunkAccumulator, refusal: str
    ) -> Reply:
        content: list[TextBlock | ToolCall] = [TextBlock(text)] if text else []
        content.extend(calls)
        reason = "refusal" if refusal else stop_reason(acc.finish_reason, bool(calls))
        return Reply(
            content,
            reason,
            usage_of(acc.usage),
            f"openai:{acc.model or self.model_id}",
        )

    def _tool_call(self, call_id: str, name: str, arguments: str, finish: str | None) -> ToolCall:
        if not name:
            raise self._garbage("a tool call without a function name")
        try:
            value = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            if finish == "length":
                raise ModelError(
                    f"the reply was cut at max_tokens in the middle of a call to {name!r}: "
                    "raise max_tokens or ask for a smaller step",
                    "fixable",
                ) from None
            raise ModelError(
                f"{self.name}: the model sent malformed JSON arguments for {name!r} "
                f"({one_line(str(exc), 120)})",
                "fixable",
            ) from None
        if not isinstance(value, dict):
            raise ModelError(
                f"{self.name}: the arguments of the call to {name!r} are not a JSON object",
                "fixable",
            )
        return ToolCall(call_id or f"call_{uuid.uuid4().hex[:24]}", name, value)

    # errors -----------------------------------------------------------------------------

    @staticmethod
    def _cause(exc: BaseException) -> str:
        cause = exc.__cause__ or exc
        return one_line(str(cause)) or type(cause).__name__

    def _garbage(self, what: str) -> ModelError:
        return ModelError(
            f"{self.base_url} answered with something that is not a Chat Completions reply "
            f"({what}); check base_url under [models.openai] (it usually ends in /v1)",
            "escalate",
        )

    @staticmethod
    def _detail(exc: openai.APIError) -> str:
        body = exc.body
        if isinstance(body, dict):
            for key in ("message", "detail", "error"):
                if isinstance(body.get(key), str) and body[key].strip():
                    return one_line(body[key])
        if isinstance(body, str) and body.strip():
            return one_line(body, 120)
        return one_line(exc.message)

    def _status_error(self, exc: openai.APIStatusError) -> ModelError:
        status = exc.status_code
        code = exc.code or (exc.type if isinstance(exc.type, str) else None)
        detail = self._detail(exc)
        said = f"{status} {code}" if code else str(status)
        if status in (401, 403):
            return ModelError(
                f"{self.base_url} refused the credentials ({said}: {detail}): set "
                f"{self.key_env} to a valid key",
                "escalate",
                status=status,
            )
        if exc.code == "model_not_found" or (status == 404 and "model" in detail.lower()):
            return ModelError(
                f"model {self.model_id!r} is not available at {self.base_url} ({said}: "
                f"{detail}); choose another model or set fallback_model",
                "model_unavailable",
                status=status,
            )
        if status == 404:
            return self._garbage(f"404 {detail}")
        if exc.code == "insufficient_quota":
            return ModelError(
                f"{self.name}: the account has no quota left ({said}: {detail})",
                "escalate",
                status=status,
            )
        if status in TRANSIENT_STATUSES or status >= 500:
            return ModelError(
                f"{self.name}: {said}: {detail}",
                "transient",
                status=status,
                retry_after=retry_after_seconds(exc.response.headers),
            )
        return ModelError(
            f"{self.name}: the server rejected the request ({said}): {detail}",
            "escalate",
            status=status,
        )

    def _stream_error(self, exc: openai.APIError) -> ModelError:
        """An error object in the middle of a stream: a client error escalates, the rest
        (overload, a server fault) is transient."""
        code = exc.code or ""
        detail = self._detail(exc)
        said = f" {code}" if code else ""
        client_fault = exc.type == "invalid_request_error" or (
            code.isdigit() and 400 <= int(code) < 500 and int(code) not in (408, 409, 429)
        )
        return ModelError(
            f"{self.name}: the stream reported an error{said}: {detail}",
            "escalate" if client_fault else "transient",
        )
