"""The Messages API request for an orch `Request`, built without the SDK.

`build_params` returns the exact keyword arguments `client.beta.messages.create/stream`
receives. The Anthropic adapter sends them; a scripted model builds the same ones when
requests are recorded (`orchestrator.models.recording`) or when it estimates what a call
would cost, so a scripted run shows what a real one would send.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.config import Config
from orchestrator.messages import MASK_PREFIX, Request
from orchestrator.models.cachesim import chain, min_cacheable

MEMORY_TOOL_BETA = "context-management-2025-06-27"
CONTEXT_EDITING_BETA = "context-management-2025-06-27"
COMPACTION_BETA = "compact-2026-01-12"
# Model id prefixes that accept each server-side feature; other models go without it.
CONTEXT_EDITING_MODELS = ("claude-opus-4", "claude-sonnet-4", "claude-haiku-4", "claude-mythos")
COMPACTION_MODELS = ("claude-opus-4-6", "claude-opus-4-7", "claude-sonnet-4-6", "claude-mythos")
MIN_COMPACTION_TRIGGER = 50_000
MAX_CACHE_BREAKPOINTS = 4
EPHEMERAL = {"type": "ephemeral"}
# The SDK's memory tool definition (`BetaAbstractMemoryTool.to_dict()`), without the SDK.
MEMORY_TOOL = {"type": "memory_20250818", "name": "memory"}

Has = Callable[[str, tuple[str, ...]], bool]
Messages = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def supports(model_id: str, prefixes: tuple[str, ...]) -> bool:
    return model_id.startswith(prefixes)


def build_params(
    request: Request,
    model_id: str,
    config: Config,
    *,
    has: Has | None = None,
    with_compaction: Messages | None = None,
    written: set[str] | None = None,
) -> dict[str, Any]:
    """The keyword arguments of `client.beta.messages.create/stream` for `request`.

    `has(feature, prefixes)` says whether the model takes a server-side feature (default:
    its id starts with one of the prefixes); `with_compaction` puts a compaction block the
    API sent back into the conversation (the adapter's, which remembers it); `written`
    holds the digests of the prefixes this model's earlier requests marked (updated here),
    so that a request puts a breakpoint where it can read one exactly.
    """
    has = has or (lambda _feature, prefixes: supports(model_id, prefixes))
    system: list[dict[str, Any]] = [{"type": "text", "text": p.text} for p in request.system]
    tools: list[dict[str, Any]] = [
        t.to_dict() for t in request.tools if not (request.memory_tool and t.name == "memory")
    ]
    if request.memory_tool:
        tools.append(dict(MEMORY_TOOL))
    messages = [m.to_dict() for m in request.messages]
    if with_compaction is not None:
        messages = with_compaction(messages)
    if config.prompt_caching:
        _mark(request, model_id, tools, system, messages, written)
    if request.volatile:
        _add_volatile(messages, request.volatile)
    params: dict[str, Any] = {
        "model": model_id,
        "max_tokens": request.max_tokens,
        "messages": messages,
    }
    if system:
        params["system"] = system
    if tools:
        params["tools"] = tools
    if request.temperature is not None:
        params["extra_body"] = {"temperature": request.temperature}
    betas: list[str] = [MEMORY_TOOL_BETA] if request.memory_tool else []
    edits: list[dict[str, Any]] = []
    context = config.context
    if context.server_context_editing and has("context editing", CONTEXT_EDITING_MODELS):
        betas.append(CONTEXT_EDITING_BETA)
        edits.append(
            {
                "type": "clear_tool_uses_20250919",
                "keep": {"type": "tool_uses", "value": context.mask_keep_rounds},
                "exclude_tools": ["memory"],
            }
        )
    if context.server_compaction and has("compaction", COMPACTION_MODELS):
        betas.append(COMPACTION_BETA)
        trigger = max(MIN_COMPACTION_TRIGGER, context.compact_threshold_tokens)
        edits.append(
            {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": trigger}}
        )
    if edits:
        params["context_management"] = {"edits": edits}
    if betas:
        params["betas"] = list(dict.fromkeys(betas))
    return params


Block = tuple[str, int, int]  # (where: tools | system | messages, index, block in content)


# Roles whose request is never continued: their conversation is not worth writing.
ONE_SHOT = ("compactor", "extractor")
# Roles whose first request is continued: a tool round always follows (the JSON roles
# mostly answer at once, so their first user turn is written only once a reply came).
CONTINUED = ("executor",)


def _mark(
    request: Request,
    model_id: str,
    tools: list[dict[str, Any]],
    system: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    written: set[str] | None,
) -> None:
    """Put at most four cache breakpoints where a later request can read them.

    In order of worth:
    1. the newest user turn's last block: the moving breakpoint, which the next request of
       the conversation reads;
    2. the longest prefix of this request that an earlier one wrote at a breakpoint
       (`written`, the digests this model's requests wrote), so it is read exactly; without
       that memory (a new process), where the previous request put its moving breakpoint:
       in a request never continued whose newest user turn ends in text after its tool
       results (a summary or fold: the executor's previous request with the task list and
       the ask after them), the block before that text; else the user turn before the
       newest one;
    3. the last user turn holding a masked tool result (the masking frontier: what
       precedes it stays as it is when the next batch of old results is masked);
    4. the end of the system prompt; then the last system part marked `cache` (the stable
       part before parts that change now and then), the last tool, and the stable system
       parts before that one, from the last.
    A breakpoint whose prefix is under the model's minimum cacheable length (estimated)
    is left out: the API would not cache it. The conversation gets no breakpoint 1 or 3
    in a role that is never continued (`ONE_SHOT`), nor before the first reply of a role
    that usually answers at once (not `CONTINUED`).
    """
    blocks: list[Block] = []  # (where, index, block) in prefix order
    blocks += [("tools", i, 0) for i in range(len(tools))]
    blocks += [("system", i, 0) for i in range(len(system))]
    for i, message in enumerate(messages):
        blocks += [("messages", i, j) for j in range(len(message["content"]))]
    c = chain({"model": model_id, "tools": tools, "system": system, "messages": messages})
    position = {key: n for n, key in enumerate(blocks)}
    min_tokens = min_cacheable(model_id)

    read = -1
    if written:
        read = next((n for n in range(len(blocks) - 1, -1, -1) if c.digests[n] in written), -1)
    wanted = _conversation_marks(request, messages, blocks[read] if read >= 0 else None)
    wanted += _prompt_marks(request, tools, system)
    chosen: list[Block] = []
    for key in wanted:
        if key in chosen or len(chosen) >= MAX_CACHE_BREAKPOINTS:
            continue
        if c.upto(position[key]) >= min_tokens:
            chosen.append(key)
    for where, i, j in chosen:
        if written is not None:
            written.add(c.digests[position[(where, i, j)]])
        if where == "tools":
            tools[i] = {**tools[i], "cache_control": dict(EPHEMERAL)}
        elif where == "system":
            system[i]["cache_control"] = dict(EPHEMERAL)
        else:
            content = list(messages[i]["content"])
            content[j] = {**content[j], "cache_control": dict(EPHEMERAL)}
            messages[i] = {**messages[i], "content": content}


def _conversation_marks(
    request: Request, messages: list[dict[str, Any]], read: Block | None
) -> list[Block]:
    """Breakpoints 1 to 3 of `_mark`, in order of worth; `read` is the block ending the
    longest prefix an earlier request wrote."""

    def last_block(i: int) -> Block:
        return ("messages", i, len(messages[i]["content"]) - 1)

    users = [i for i, m in enumerate(messages) if m["role"] == "user" and m["content"]]
    conversation = request.purpose not in ONE_SHOT and (
        request.turn >= 1 or request.purpose in CONTINUED
    )
    wanted: list[Block] = []
    if conversation and users:
        wanted.append(last_block(users[-1]))
    if read is not None:
        wanted.append(read)
    elif not conversation and users and _asked_after(messages[users[-1]]["content"]):
        # a summary or fold: the executor's request, its newest user turn's blocks followed
        # by text (the task list, the ask); the executor marked the last block before those
        content = messages[users[-1]]["content"]
        wanted.append(("messages", users[-1], _asked_after(content) - 1))
    elif len(users) > 1:
        wanted.append(last_block(users[-2]))
    if conversation:
        masked = [i for i in users if any(_masked(b) for b in messages[i]["content"])]
        if masked:
            wanted.append(last_block(masked[-1]))
    return wanted


def _prompt_marks(
    request: Request, tools: list[dict[str, Any]], system: list[dict[str, Any]]
) -> list[Block]:
    """Breakpoint 4 of `_mark` and its fallbacks: the system prompt's end, its last stable
    part, the last tool, the stable parts before, from the last."""
    wanted: list[Block] = []
    stable = [i for i, part in enumerate(request.system) if part.cache]
    if system:
        wanted.append(("system", len(system) - 1, 0))
    if system and stable:
        wanted.append(("system", stable[-1], 0))
    if tools:
        wanted.append(("tools", len(tools) - 1, 0))
    if system and stable:
        wanted += [("system", i, 0) for i in range(stable[-1] - 1, -1, -1)]
    return wanted


def _asked_after(content: list[dict[str, Any]]) -> int:
    """Where the text blocks that end a user turn begin, when a block of another kind (a
    tool result) comes before them; 0 otherwise."""
    start = len(content)
    while start > 0 and content[start - 1].get("type") == "text":
        start -= 1
    return start if 0 < start < len(content) else 0


def _masked(block: dict[str, Any]) -> bool:
    content = block.get("content")
    return block.get("type") == "tool_result" and str(content).startswith(MASK_PREFIX)


def _add_volatile(messages: list[dict[str, Any]], text: str) -> None:
    """What changes every turn goes last, after every breakpoint, in the newest user turn."""
    block = {"type": "text", "text": text}
    if messages and messages[-1]["role"] == "user":
        messages[-1] = {**messages[-1], "content": [*messages[-1]["content"], block]}
    else:
        messages.append({"role": "user", "content": [block]})
