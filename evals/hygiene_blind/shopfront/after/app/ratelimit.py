"""Per-key token buckets for the public API."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

DEFAULT_RATE = 100  # requests per minute per API key
BURST = 20


@dataclass
class TokenBucket:
    rate: int = DEFAULT_RATE
    burst: int = BURST
    tokens: float = float(BURST)
    stamp: float = field(default_factory=time.monotonic)

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(float(self.burst), self.tokens + (now - self.stamp) * self.rate / 60)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def retry_after_seconds(self) -> int:
        return max(1, math.ceil((1 - self.tokens) * 60 / self.rate))


_buckets: dict[str, TokenBucket] = {}


def limit_for(api_key: str) -> TokenBucket:
    return _buckets.setdefault(api_key, TokenBucket())
