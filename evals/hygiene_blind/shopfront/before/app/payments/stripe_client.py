"""Card payments through Stripe. Amounts are integer cents, never floats."""

from __future__ import annotations

import os

import stripe


def _client() -> None:
    stripe.api_key = os.environ["STRIPE_SECRET_KEY"]


def charge(amount_cents: int, currency: str, source: str) -> str:
    """Charge once; a declined card raises and is not retried here."""
    _client()
    result = stripe.Charge.create(amount=amount_cents, currency=currency, source=source)
    return result["id"]


def refund(charge_id: str, amount_cents: int | None = None) -> str:
    _client()
    return stripe.Refund.create(charge=charge_id, amount=amount_cents)["id"]


def verify_webhook(payload: bytes, signature: str) -> dict:
    secret = os.environ["STRIPE_WEBHOOK_SECRET"]
    return stripe.Webhook.construct_event(payload, signature, secret)
