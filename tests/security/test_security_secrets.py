"""No secret is ever stored: twelve formats through every write path and through a file the
agent reads (the table of `python -m evals.security --section secrets`), and the detector's
redaction itself."""

from __future__ import annotations

import json

import pytest

from evals.security_secrets import PATHS, fake_secrets, pieces, secrets_table
from orchestrator.checks.secrets import placeholder, redact, redact_data, secret_kind

pytestmark = pytest.mark.slow


def test_every_format_through_every_path_leaves_nothing_behind() -> None:
    rows = secrets_table()
    assert len(rows) == len(fake_secrets()) * (len(PATHS) + 1)
    bad = [r for r in rows if not r["ok"]]
    assert bad == [], json.dumps(bad, indent=1)
    refusals = [r for r in rows if r["path"] in ("memory add", "supersede", "notes set")]
    for r in refusals:  # one line naming the field and the kind, never the secret itself
        assert "holds a secret (" in r["message"] and not r["echoed"], r


def test_redaction_is_deterministic_and_keeps_the_text_around() -> None:
    for name, secret in fake_secrets().items():
        text = f"before {secret} after"
        once = redact(text)
        assert once == redact(text) and once.startswith("before ") and once.endswith(" after")
        assert "[REDACTED:" in once and not any(p in once for p in pieces(secret)), name
        assert redact(once) == once  # a placeholder is no secret
        nested = redact_data({"a": [text, {"b": text}], "n": 3})
        assert nested == {"a": [once, {"b": once}], "n": 3}
    assert placeholder("AWS Access Key") == "[REDACTED:aws-access-key]"


@pytest.mark.parametrize(
    "text",
    [
        "the password is stored in Vault and rotated monthly",
        "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed the parser",
        "the HandlerFactoryBuilderImpl2024 class builds handlers",
        "use AKIAIOSFODNN7EXAMPLE in the docs' examples",
        "set STRIPE_KEY=${STRIPE_KEY} in the environment",
    ],
)
def test_what_only_looks_like_a_secret_is_kept(text: str) -> None:
    assert secret_kind(text) is None and redact(text) == text
