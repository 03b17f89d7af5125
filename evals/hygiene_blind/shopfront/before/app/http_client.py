"""Outbound HTTP with a timeout and retries for idempotent requests."""

from __future__ import annotations

import time

import httpx

from app.config import REQUEST_TIMEOUT_SECONDS

RETRYABLE_STATUSES = (502, 503, 504)
MAX_REDIRECTS = 5


def fetch_page(url: str, *, method: str = "GET", attempts: int = 3) -> httpx.Response:
    retryable = method == "GET"
    with httpx.Client(timeout=REQUEST_TIMEOUT_SECONDS, max_redirects=MAX_REDIRECTS) as client:
        for attempt in range(attempts if retryable else 1):
            response = client.request(method, url, follow_redirects=True)
            if not retryable or response.status_code not in RETRYABLE_STATUSES:
                return response
            time.sleep(0.5 * 2**attempt)
    return response
