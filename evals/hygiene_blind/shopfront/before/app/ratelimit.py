"""Per-key rate limiting for the public API."""

from __future__ import annotations

import time

DEFAULT_RATE = 100  # requests per minute per API key


class RateLimiter:
    def __init__(self, rate: int = DEFAULT_RATE) -> None:
        self.rate = rate
        self.buckets: dict[str, tuple[float, float]] = {}

    def allow(self, api_key: str) -> bool:
        tokens, stamp = self.buckets.get(api_key, (float(self.rate), time.monotonic()))
        now = time.monotonic()
        tokens = min(float(self.rate), tokens + (now - stamp) * self.rate / 60)
        if tokens < 1:
            self.buckets[api_key] = (tokens, now)
            return False
        self.buckets[api_key] = (tokens - 1, now)
        return True
