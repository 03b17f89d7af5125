"""HMAC-signed query strings for mobile clients older than 4.0."""

import hashlib
import hmac


def verify_signed_query(query: str, signature: str, secret: bytes) -> bool:
    expected = hmac.new(secret, query.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)
