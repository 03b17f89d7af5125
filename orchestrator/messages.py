"""The messages that cross the model seam: requests in, replies out.

Plain dataclasses with `to_dict`/`from_dict` in the Messages API's own JSON shape, so a
transcript line, a scripted model's script and an API request body all read the same.
Nothing here imports a vendor SDK.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant"]
# How a masked tool result begins (orchestrator.context.masking): the conversation up to
# the last one stays byte-stable until the next compaction, so a cache breakpoint there
# is read again after the next batch of masking.
MASK_PREFIX = "[masked tool result]"


@dataclass(frozen=True)
class TextBlock:
    text: str
    type: Literal["text"] = "text"

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ToolCall:
    """A `tool_use` block: the model asks to run tool `name` with `input`."""

    id: str
    name: str
    input: dict[str, Any]
    type: Literal["tool_use"] = "tool_use"

    def to_dict(self) -> dict[str, Any]:
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.input}


@dataclass(frozen=True)
class ToolResult:
    """A `tool_result` block answering the ToolCall with id `tool_use_id`."""

    tool_use_id: str
    content: str
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": self.tool_use_id,
            "content": self.content,
        }
        if self.is_error:
            out["is_error"] = True
        return out


Block = TextBlock | ToolCall | ToolResult


def block_from_dict(raw: dict[str, Any]) -> Block:
    kind = raw.get("type")
    if kind == "text":
        return TextBlock(str(raw["text"]))
    if kind == "tool_use":
        return ToolCall(str(raw["id"]), str(raw["name"]), dict(raw.get("input") or {}))
    if kind == "tool_result":
        content = raw.get("content", "")
        if isinstance(content, list):  # the API also allows a list of text blocks
            content = "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
        return ToolResult(str(raw["tool_use_id"]), str(content), bool(raw.get("is_error", False)))
    raise ValueError(f"unknown content block type {kind!r}")


@dataclass
class Message:
    role: Role
    content: list[Block]

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", [TextBlock(text)])

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls("assistant", [TextBlock(text)])

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if isinstance(b, ToolCall)]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [b for b in self.content if isinstance(b, ToolResult)]

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": [b.to_dict() for b in self.content]}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Message:
        content = raw.get("content", [])
        if isinstance(content, str):
            blocks: list[Block] = [TextBlock(content)]
        else:
            blocks = [block_from_dict(b) for b in content]
        role = raw.get("role")
        if role not in ("user", "assistant"):
            raise ValueError(f"unknown role {role!r}")
        return cls(role, blocks)


@dataclass(frozen=True)
class SystemPart:
    """One part of the system prompt. `cache` marks the end of the stable, cacheable prefix."""

    text: str
    cache: bool = False
    label: str = ""  # what this part is (base, tools, memory-index, l3, phase-card...), for logs


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


@dataclass
class Request:
    """Everything one model call needs. `purpose` names the role (planner, executor...)."""

    system: list[SystemPart]
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int = 4096
    purpose: str = "executor"  # planner | auditor | executor | reviewer | compactor | extractor
    phase: int | None = None
    temperature: float | None = None
    memory_tool: bool = False  # offer the API memory tool (memory_20250818)
    # What changes every turn (the task list, notes, reminders, counters): sent as the last
    # text of the newest user turn, after every cache breakpoint, so the prefix before it
    # stays byte-stable from turn to turn. It is not part of `messages` (nor of a checkpoint).
    volatile: str = ""

    @property
    def turn(self) -> int:
        """How many assistant turns the conversation already holds."""
        return sum(1 for m in self.messages if m.role == "assistant")

    @property
    def last_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.role == "user" and message.text:
                return message.text
        return ""

    def system_text(self) -> str:
        return "\n\n".join(p.text for p in self.system)


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"]


@dataclass
class Reply:
    content: list[TextBlock | ToolCall]
    stop_reason: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    cost_usd: float | None = None  # what the provider says the call cost (Claude Code does)

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if isinstance(b, ToolCall)]

    def message(self) -> Message:
        return Message("assistant", list(self.content))
