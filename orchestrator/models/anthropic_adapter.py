"""orch's `Model` on the official `anthropic` SDK: the Messages API, tools, the memory tool.

This is the only module that imports `anthropic` (and its transport, `httpx2`); it is
imported only when an `anthropic:<model id>` model is built, so `orch --help` and
`orch memory ...` never load the SDK.

What a call sends:
- the system prompt as text blocks, the tool definitions (plus the `memory_20250818` tool
  when `Request.memory_tool` is set), the conversation as it stands, and what changes
  every turn (`Request.volatile`) last in the newest user turn;
- with `prompt_caching`: at most four cache breakpoints, on the conversation (a moving
  one on the newest user turn, one where an earlier request's was) and on the stable
  prefix (`anthropic_request.build_params`, docs/models.md "Request layout");
- with `ORCH_RECORD_REQUESTS` or `[debug] record_requests`: each request as it is sent,
  in a JSON file (`orchestrator.models.recording`);
- with `context.server_context_editing` and a model that supports it: the
  `clear_tool_uses_20250919` edit (keeping `context.mask_keep_rounds` tool uses, never
  clearing the memory tool's) and its beta header;
- with `context.server_compaction` and a model that supports it: the `compact_20260112`
  edit (triggered at `context.compact_threshold_tokens`, at least 50,000) and its beta
  header. The compaction block a reply brings is sent back, in place, on the next request
  that continues the same conversation.

The SDK's own retries are off (max_retries=0): `ResilientModel` holds the retry policy.
Every failure leaves as a `ModelError` of one of the failure classes:

| what happened | class |
|---|---|
| 429, 529, 5xx, 408, 409, a timeout, no connection, a stream cut or ended early | transient (retry-after kept) |
| 404 naming the model (unknown or retired) | model_unavailable |
| an empty reply | transient |
| a reply cut at max_tokens inside a tool call, a malformed tool input, an unknown tool | fixable |
| 401 or 403 | escalate, naming ANTHROPIC_API_KEY |
| 400 and other 4xx, a refusal, a server answering something that is not the API | escalate |
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2
from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from orchestrator.config import Config
from orchestrator.errors import ModelError, UsageError
from orchestrator.messages import Reply, Request, TextBlock, ToolCall, Usage
from orchestrator.models.anthropic_request import (
    COMPACTION_BETA,
    COMPACTION_MODELS,
    CONTEXT_EDITING_BETA,
    CONTEXT_EDITING_MODELS,
    EPHEMERAL,
    MAX_CACHE_BREAKPOINTS,
    MEMORY_TOOL_BETA,
    MIN_COMPACTION_TRIGGER,
    build_params,
    supports,
)
from orchestrator.models.failures import check_reply, one_line, retry_after_seconds
from orchestrator.models.memory_tool import INPUT_SCHEMA, MemoryToolHandler, ToolInputError
from orchestrator.models.recording import recorder_for
from orchestrator.tokens import estimate_request

log = logging.getLogger(__name__)

__all__ = [  # the request constants live in anthropic_request; named here as before
    "COMPACTION_BETA",
    "COMPACTION_MODELS",
    "CONTEXT_EDITING_BETA",
    "CONTEXT_EDITING_MODELS",
    "EPHEMERAL",
    "MAX_CACHE_BREAKPOINTS",
    "MEMORY_TOOL_BETA",
    "MIN_COMPACTION_TRIGGER",
    "AnthropicModel",
    "OrchMemoryTool",
    "supports",
]

API_KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
TRANSIENT_ERROR_TYPES = ("overloaded_error", "api_error", "rate_limit_error", "timeout_error")
COUNT_TIMEOUT = 10.0
OFFLINE_PAUSE = 60.0  # after a failed count_tokens, estimate locally for this long


def _digest(messages: list[dict[str, Any]]) -> str:
    raw = json.dumps(messages, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


@dataclass
class _Compaction:
    """The last compaction block and the conversation it belongs to."""

    prefix: str  # digest of the messages of the request that was compacted
    count: int  # how many messages that request held
    reply: list[dict[str, Any]]  # orch's form of the assistant turn the block came with
    block: dict[str, Any]  # the block as the API sent it, to send back unchanged


class OrchMemoryTool(BetaAbstractMemoryTool):
    """The SDK's memory tool (`memory_20250818`) backed by `MemoryToolHandler`.

    Every command goes to the handler, so a model's memory writes pass the same validation
    and Checklist A as `orch memory add`; a refusal becomes the SDK's `ToolError`, which a
    tool runner returns to the model as an error result.
    """

    def __init__(
        self,
        handler: MemoryToolHandler | None = None,
        *,
        cache_control: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)  # type: ignore[arg-type]
        self.handler = handler

    def _run(self, command: Any) -> str:
        if self.handler is None:
            raise ToolError("the memory tool is not connected to a repository")
        try:
            return self.handler.execute(command.to_dict())
        except ToolInputError as exc:
            raise ToolError(exc.message) from exc

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self._run(command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self._run(command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self._run(command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self._run(command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._run(command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self._run(command)


class AnthropicModel:
    """`anthropic:<model id>`. Needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN);
    ANTHROPIC_BASE_URL, when set, points it at another server."""

    def __init__(
        self,
        model_id: str,
        config: Config | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> None:
        if not model_id.strip() or any(c.isspace() for c in model_id):
            raise UsageError(f"{model_id!r} is not a model id: use anthropic:<model id>")
        self.model_id = model_id
        self.name = f"anthropic:{model_id}"
        self.config = config or Config()
        key = api_key or os.environ.get(API_KEY_ENV) or None
        token = None if key else os.environ.get("ANTHROPIC_AUTH_TOKEN") or None
        if key is None and token is None:
            raise UsageError(
                f"{API_KEY_ENV} is not set: export {API_KEY_ENV}=<your key> to use "
                f"{self.name}, or choose a scripted model (scripted:<path>)"
            )
        timeout = float(self.config.api_timeout)
        self.timeout = timeout
        self.client = anthropic.Anthropic(
            api_key=key,
            auth_token=token,
            base_url=base_url or os.environ.get(BASE_URL_ENV) or None,
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
            max_retries=0,
        )
        self.base_url = str(self.client.base_url).rstrip("/")
        self.streaming = self.config.streaming
        self.skipped: set[str] = set()  # configured server features this model lacks
        self._compaction: _Compaction | None = None
        self._offline_until = 0.0
        self._written: set[str] = set()  # prefixes this model's requests marked for caching
        self.recorder = recorder_for(self.config)

    def memory_tool(self, handler: MemoryToolHandler) -> OrchMemoryTool:
        """The SDK memory tool object for `handler` (for the SDK's tool runners)."""
        return OrchMemoryTool(handler)

    # the Model protocol -----------------------------------------------------------------

    def complete(self, request: Request) -> Reply:
        params = self.request_params(request)
        if self.recorder is not None:
            self.recorder.record(
                params,
                provider="anthropic",
                role=request.purpose,
                phase=request.phase,
                model=self.name,
            )
        try:
            message = self._stream(params) if self.streaming else self._create(params)
            reply = self._reply(message, request)
        except ModelError:
            raise
        except anthropic.APIStatusError as exc:
            raise self._status_error(exc) from None
        except anthropic.APITimeoutError:
            raise ModelError(
                f"{self.name}: no answer within {self.timeout:g}s (api_timeout)", "transient"
            ) from None
        except anthropic.APIConnectionError as exc:
            cause = one_line(str(exc.__cause__ or exc.message))
            raise ModelError(
                f"{self.name}: cannot reach {self.base_url} ({cause})", "transient"
            ) from None
        except httpx2.TimeoutException:
            raise ModelError(
                f"{self.name}: the reply stalled for more than {self.timeout:g}s (api_timeout)",
                "transient",
            ) from None
        except httpx2.HTTPError as exc:
            raise ModelError(
                f"{self.name}: the reply stream was cut ({one_line(str(exc)) or type(exc).__name__})",
                "transient",
            ) from None
        except ValueError as exc:
            if "tool parameter JSON" in str(exc):
                raise ModelError(
                    f"{self.name}: the model sent a malformed tool input ({one_line(str(exc), 200)})",
                    "fixable",
                ) from None
            raise self._garbage(one_line(str(exc), 120)) from None
        except (AttributeError, IndexError, KeyError, RuntimeError, TypeError) as exc:
            raise self._garbage(f"{type(exc).__name__}: {one_line(str(exc), 100)}") from None
        memory = {"memory": INPUT_SCHEMA} if request.memory_tool else {}
        return check_reply(reply, request, check_tools=True, tool_schemas=memory)

    def count_tokens(self, request: Request) -> int:
        """The count_tokens endpoint; the local estimate when it cannot be reached."""
        if time.monotonic() < self._offline_until:
            return estimate_request(request)
        params = self.request_params(request, sending=False)
        for key in ("max_tokens", "extra_body"):
            params.pop(key, None)
        try:
            counted = self.client.beta.messages.count_tokens(
                **params, timeout=min(self.timeout, COUNT_TIMEOUT)
            )
            return int(counted.input_tokens)
        except (anthropic.APIConnectionError, httpx2.HTTPError):
            self._offline_until = time.monotonic() + OFFLINE_PAUSE
            log.info("count_tokens unreachable; estimating locally for %ss", OFFLINE_PAUSE)
        except (anthropic.APIError, AttributeError, TypeError, ValueError) as exc:
            log.info("count_tokens failed (%s); estimating locally", one_line(str(exc), 120))
        return estimate_request(request)

    # requests ---------------------------------------------------------------------------

    def request_params(self, request: Request, *, sending: bool = True) -> dict[str, Any]:
        """The keyword arguments of `client.beta.messages.create/stream` for `request`
        (`sending=False`: for counting, so the breakpoints it marks are not remembered)."""
        return build_params(
            request,
            self.model_id,
            self.config,
            has=self._has,
            with_compaction=self._with_compaction,
            written=self._written if sending else set(self._written),
        )

    def _has(self, feature: str, prefixes: tuple[str, ...]) -> bool:
        if supports(self.model_id, prefixes):
            return True
        if feature not in self.skipped:
            self.skipped.add(feature)
            log.warning("%s does not support server-side %s; going without it", self.name, feature)
        return False

    def _with_compaction(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`messages` with the last compaction block put back where the API gave it."""
        saved = self._compaction
        if (
            saved is None
            or len(messages) <= saved.count
            or messages[saved.count] != {"role": "assistant", "content": saved.reply}
            or _digest(messages[: saved.count]) != saved.prefix
        ):
            return messages
        out = list(messages)
        out[saved.count] = {"role": "assistant", "content": [saved.block, *saved.reply]}
        return out

    # transport --------------------------------------------------------------------------

    def _stream(self, params: dict[str, Any]) -> Any:
        started = stopped = False
        with self.client.beta.messages.stream(**params) as stream:
            for event in stream:
                if event.type == "message_start":
                    started = True
                elif event.type == "message_stop":
                    stopped = True
            if not started:
                raise self._garbage("a stream without message_start")
            if not stopped:
                raise ModelError(
                    f"{self.name}: the reply stream ended before message_stop", "transient"
                )
            return stream.current_message_snapshot

    def _create(self, params: dict[str, Any]) -> Any:
        message = self.client.beta.messages.create(**params)
        if not isinstance(getattr(message, "content", None), list):
            raise self._garbage(one_line(repr(message), 80))
        return message

    def _garbage(self, what: str) -> ModelError:
        return ModelError(
            f"{self.base_url} answered with something that is not a Messages API reply "
            f"({what}); check {BASE_URL_ENV} or try again later",
            "escalate",
        )

    # replies and errors -----------------------------------------------------------------

    def _reply(self, message: Any, request: Request) -> Reply:
        content: list[TextBlock | ToolCall] = []
        compaction: dict[str, Any] | None = None
        for block in message.content:
            kind = getattr(block, "type", None)
            if kind == "text":
                content.append(TextBlock(str(block.text)))
            elif kind == "tool_use":
                if not isinstance(block.input, dict):
                    raise ModelError(
                        f"{self.name}: the input of the call to {block.name!r} is not a JSON object",
                        "fixable",
                    )
                content.append(ToolCall(str(block.id), str(block.name), dict(block.input)))
            elif kind == "compaction":
                compaction = block.to_dict(mode="json")
        if compaction is not None:
            sent = [m.to_dict() for m in request.messages]
            self._compaction = _Compaction(
                _digest(sent), len(sent), [b.to_dict() for b in content], compaction
            )
        return Reply(
            content,
            str(getattr(message, "stop_reason", None) or "end_turn"),
            self._usage(getattr(message, "usage", None)),
            f"anthropic:{getattr(message, 'model', None) or self.model_id}",
        )

    @staticmethod
    def _usage(usage: Any) -> Usage:
        if usage is None:
            return Usage()
        total = Usage(
            int(getattr(usage, "input_tokens", 0) or 0),
            int(getattr(usage, "output_tokens", 0) or 0),
            int(getattr(usage, "cache_read_input_tokens", 0) or 0),
            int(getattr(usage, "cache_creation_input_tokens", 0) or 0),
        )
        for step in getattr(usage, "iterations", None) or []:
            if getattr(step, "type", None) == "compaction":  # billed, not in the totals
                total = total + Usage(
                    int(step.input_tokens or 0),
                    int(step.output_tokens or 0),
                    int(step.cache_read_input_tokens or 0),
                    int(step.cache_creation_input_tokens or 0),
                )
        return total

    def _status_error(self, exc: anthropic.APIStatusError) -> ModelError:
        status = exc.status_code
        kind = exc.type if isinstance(exc.type, str) else None
        detail = one_line(exc.api_message or str(exc.message))
        said = f"{status} {kind}" if kind else str(status)
        if status in (401, 403):
            return ModelError(
                f"the Anthropic API refused the credentials ({said}): set {API_KEY_ENV} to a "
                "valid key",
                "escalate",
                status=status,
            )
        if status == 404 and kind:
            return ModelError(
                f"model {self.model_id!r} is not available ({said}: {detail}); choose another "
                "model or set fallback_model",
                "model_unavailable",
                status=status,
            )
        if status == 404:
            return self._garbage(f"404 {one_line(str(exc.body), 80)}")
        if status in (408, 409, 429) or status >= 500 or kind in TRANSIENT_ERROR_TYPES:
            return ModelError(
                f"{self.name}: {said}: {detail}",
                "transient",
                status=status,
                retry_after=retry_after_seconds(exc.response.headers),
            )
        if status == 200:  # an error event inside a stream, of a kind not worth retrying
            return ModelError(f"{self.name}: the stream reported {said}: {detail}", "escalate")
        return ModelError(
            f"{self.name}: the API rejected the request ({said}): {detail}",
            "escalate",
            status=status,
        )
