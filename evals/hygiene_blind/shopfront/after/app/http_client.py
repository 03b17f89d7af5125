"""Outbound HTTP with a timeout, capped redirects, and retries for idempotent requests."""

from __future__ import annotations

import time

import httpx

from app.config import REQUEST_TIMEOUT_SECONDS

RETRYABLE_STATUSES = (502, 503, 504)
MAX_REDIRECTS = 5
RETRY_BACKOFF_SECONDS = 0.5


def fetch_document(
    url: str, *, method: str = "GET", timeout: float = REQUEST_TIMEOUT_SECONDS, attempts: int = 3
) -> httpx.Response:
    """Fetch `url`. GET is retried on 502, 503 and 504 with backoff; other methods never are."""
    retryable = method == "GET"
    with httpx.Client(timeout=timeout, max_redirects=MAX_REDIRECTS) as client:
        for attempt in range(attempts if retryable else 1):
            response = client.request(method, url, follow_redirects=True)
            if not retryable or response.status_code not in RETRYABLE_STATUSES:
                return response
            time.sleep(RETRY_BACKOFF_SECONDS * 2**attempt)
    return response


# The old name, kept because the payment webhooks still import it.
fetch_page = fetch_document
