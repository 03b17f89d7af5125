"""What a Messages API request costs with prompt caching, from the request alone.

A request (the keyword arguments `anthropic_request.build_params` builds) is read as the
sequence of blocks the API caches over: the model, each tool definition, each system
block, each content block of each message. Tokens are the local estimate
(`orchestrator.tokens`) of each block's JSON.

`CacheSim.bill` prices one request after the ones it saw before, the way the API bills:
the longest prefix ending at one of this request's cache breakpoints that an earlier
request wrote (at one of its breakpoints) is read (0.1); from there up to the last
breakpoint the prefix is written (1.25); the rest is full price (1.0). A breakpoint whose
prefix is shorter than the model's minimum cacheable length is neither written nor read.

`ideal` prices a whole sequence as perfect caching could: a block that a later request
reuses (an equal prefix) is written once (1.25) and read afterwards (0.1); a block never
reused costs 1.0; prefixes under the minimum cacheable length cost 1.0.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.tokens import estimate_text

WRITE = 1.25
READ = 0.10
# (model id prefix, minimum cacheable prompt in tokens); the longest prefix wins
MIN_CACHEABLE: tuple[tuple[str, int], ...] = (
    ("claude-opus-4-5", 4096),
    ("claude-opus-4-6", 4096),
    ("claude-opus-4-7", 4096),
    ("claude-haiku-4-5", 4096),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
)
DEFAULT_MIN_CACHEABLE = 1024  # Sonnet and the older Opus models


def min_cacheable(model: str) -> int:
    model_id = model.split(":", 1)[1] if model.startswith("anthropic:") else model
    best = ("", DEFAULT_MIN_CACHEABLE)
    for prefix, tokens in MIN_CACHEABLE:
        if model_id.startswith(prefix) and len(prefix) > len(best[0]):
            best = (prefix, tokens)
    return best[1]


@dataclass(frozen=True)
class Chain:
    """A request as cacheable blocks: prefix digests, cumulative tokens, breakpoints."""

    digests: tuple[str, ...]  # digest of the prefix ending at block i
    tokens: tuple[int, ...]  # tokens of the prefix ending at block i
    marks: tuple[int, ...]  # indexes of the blocks that carry a cache breakpoint

    @property
    def total(self) -> int:
        return self.tokens[-1] if self.tokens else 0

    def upto(self, end: int) -> int:
        """Tokens of the prefix that ends with block `end` (-1: none)."""
        return self.tokens[end] if end >= 0 else 0


def _blocks(params: dict[str, Any]) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []

    def add(kind: str, block: Any) -> None:
        marked = isinstance(block, dict) and "cache_control" in block
        if marked:
            block = {k: v for k, v in block.items() if k != "cache_control"}
        out.append((kind + json.dumps(block, sort_keys=True, ensure_ascii=False), marked))

    for tool in params.get("tools") or []:
        add("tool:", tool)
    system = params.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    for block in system:
        add("system:", block)
    for message in params.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for i, block in enumerate(content or []):
            add(f"{message.get('role')}{'>' if i == 0 else '+'}:", block)
    return out


def chain(params: dict[str, Any]) -> Chain:
    digest = hashlib.sha256(str(params.get("model", "")).encode("utf-8"))
    digests, tokens, marks = [], [], []
    total = 0
    for i, (text, marked) in enumerate(_blocks(params)):
        digest.update(b"\x00" + text.encode("utf-8"))
        digests.append(digest.copy().hexdigest())
        total += estimate_text(text)
        tokens.append(total)
        if marked:
            marks.append(i)
    return Chain(tuple(digests), tuple(tokens), tuple(marks))


@dataclass(frozen=True)
class Bill:
    input_tokens: int  # the whole prompt
    full: int  # tokens at full price
    write: int  # tokens written to the cache
    read: int  # tokens read from the cache

    @property
    def billed(self) -> float:
        """Full-price token equivalents."""
        return self.full + WRITE * self.write + READ * self.read


class CacheSim:
    """Bills requests in order against what the earlier ones wrote to the cache."""

    def __init__(self, min_tokens: int = DEFAULT_MIN_CACHEABLE) -> None:
        self.min_tokens = min_tokens
        self.written: set[str] = set()

    def bill(self, params: dict[str, Any]) -> Bill:
        return self.bill_chain(chain(params))

    def bill_chain(self, c: Chain) -> Bill:
        read = -1
        for i in reversed(c.marks):
            if c.digests[i] in self.written:
                read = i
                break
        end = read
        for i in c.marks:
            if i > read and c.upto(i) >= self.min_tokens:
                self.written.add(c.digests[i])
                end = max(end, i)
        r, w = c.upto(read), c.upto(end) - c.upto(read)
        return Bill(c.total, c.total - r - w, w, r)


def ideal(chains: Sequence[Chain], min_tokens: int = DEFAULT_MIN_CACHEABLE) -> list[Bill]:
    """What perfect caching would bill for each request of `chains` (in call order)."""
    later: set[str] = set()
    reuse = [-1] * len(chains)
    for n in range(len(chains) - 1, -1, -1):
        c = chains[n]
        reuse[n] = _longest(c, later)
        later.update(c.digests)
    earlier: set[str] = set()
    bills = []
    for n, c in enumerate(chains):
        read = _longest(c, earlier)
        if c.upto(read) < min_tokens:
            read = -1
        end = max(read, reuse[n] if c.upto(reuse[n]) >= min_tokens else -1)
        r, w = c.upto(read), c.upto(end) - c.upto(read)
        bills.append(Bill(c.total, c.total - r - w, w, r))
        earlier.update(c.digests)
    return bills


def _longest(c: Chain, seen: set[str]) -> int:
    """The last index whose prefix digest is in `seen` (prefixes are nested), or -1."""
    lo, hi = 0, len(c.digests) - 1
    found = -1
    while lo <= hi:  # seen prefixes form an initial run: binary search its end
        mid = (lo + hi) // 2
        if c.digests[mid] in seen:
            found, lo = mid, mid + 1
        else:
            hi = mid - 1
    return found
