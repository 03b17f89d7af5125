"""Secrets the audit finds in prose, and placeholders it leaves alone (real files, real
git repositories)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from orchestrator.checks import secrets
from orchestrator.checks.secrets import is_placeholder, scan_text
from orchestrator.memory.audit import AuditReport, audit
from orchestrator.store.layout import Layout

Put = Callable[..., Any]


def kinds(report: AuditReport, kind: str) -> list[tuple[str | None, tuple[str, ...]]]:
    return sorted((f.memory, f.related) for f in report.findings if f.kind == kind)


@pytest.mark.parametrize(
    "text",
    [
        "The billing sandbox password for the reconciliation job is Plover-9931-Kite.",
        "Sign in to the replica with password Tg5#wQ2!pL.",
        "Unlock the archive with the passphrase amber-Fjord-204.",
        "The wrapper is published with npm_NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnA by CI.",
    ],
)
def test_passwords_in_words_and_npm_tokens_are_secrets(text: str) -> None:
    assert scan_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "The linter rejects example keys such as AKIAIOSFODNN7EXAMPLE in fixtures.",
        "Tokens look like ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX and live in the vault.",
        "Mail goes through smtp://USER:PASSWORD@mail.internal:587 in the staging docs.",
        "The password field must be at least 12 characters long.",
        "The passphrase rotation runs every quarter.",
        "Use `STRIPE_KEY=${STRIPE_KEY}` in the compose file.",
    ],
)
def test_placeholders_and_talk_about_passwords_are_not_secrets(text: str) -> None:
    assert scan_text(text) == []


@pytest.mark.parametrize(
    ("value", "placeholder"),
    [
        ("AKIAIOSFODNN7EXAMPLE", True),
        ("sk_live_XXXXXXXXXXXXXXXXXXXXXXXX", True),
        ("<your-token>", True),
        ("PASSWORD", True),
        ("0000000000000000", True),
        ("AKIAZ7Q4V3HLM2XKPD5N", False),
        ("Plover-9931-Kite", False),
    ],
)
def test_placeholder_values(value: str, placeholder: bool) -> None:
    assert is_placeholder(value) is placeholder


def test_placeholder_keys_are_no_secret_findings(layout: Layout, put: Put) -> None:
    put("example-key", "Localstack accepts AWS's example key AKIAIOSFODNN7EXAMPLE.")
    put("real-key", "The uploads job signs with AKIAZ7Q4V3HLM2XKPD5N.")
    assert kinds(audit(layout), "secret") == [("real-key", ())]


@pytest.mark.parametrize(
    "text",
    [
        "The relay signs requests with Qm7xT2vLp9RzK4wN8bYc3HdF for now.",
        "Fetch https://relay.internal/hook?sig=Qm7xT2vLp9RzK4wN8bYc3HdF&v=2 nightly.",
        "deploy:\n  token: 'Qm7xT2vLp9RzK4wN8bYc3HdF'\n",
        "Build 4f9c2e1a7b3d5f6e8a0c1b2d3e4f5a6b7c8d9e0f is the last green one.",
        "The constant HANDLERREGISTRYFACTORY2024X names the table.",
        "Reading mixedCaseIdentifierWithoutDigits is fine.",
    ],
)
def test_the_word_screen_never_hides_a_high_entropy_token(text: str) -> None:
    """A text passes the cheap word screen whenever the token pattern finds a token in it,
    and the tokens found are the same with the screen as without."""
    tokens = secrets._tokens(text)
    assert secrets._may_hold_token(text) or not tokens
    kinds_found = {s.kind for s in secrets.find_secrets([text])[0]}
    assert ("High-entropy token" in kinds_found) == bool(tokens)


@pytest.mark.parametrize(
    "text",
    [
        "Load it with: export LEDGER_API_KEY=$(grep LEDGER_API_KEY .env | cut -d'=' -f2)",
        "export ORBIT_TOKEN=$(cat ~/.orbit/token) && npm run sync",
    ],
)
def test_a_command_substitution_is_no_secret(text: str) -> None:
    # the shell computes the value from elsewhere; no secret is written in the text
    assert scan_text(text) == []


def test_a_written_value_beside_a_substitution_is_still_found() -> None:
    assert scan_text("export LEDGER_API_KEY=Q7vLm2Xr9TkB4wZp8NcY1dHs") != []
