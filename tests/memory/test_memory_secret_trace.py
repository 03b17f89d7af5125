"""The cheap look before detect-secrets: a text goes to its plugins only when one of its
lines holds what some enabled plugin needs (`plugin_trace`), and that look never hides a
secret the plugins would find."""

from __future__ import annotations

import random

import pytest
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

from evals.security_secrets import fake_secrets
from orchestrator.checks.secrets import _RX, _detect_secrets, plugin_trace, scan_text

# the plugins `plugin_trace` was written from; a detect-secrets release that adds one
# fails here, and the new plugin's needs go into the pattern before this list changes
PLUGINS = {
    "Artifactory Credentials",
    "AWS Access Key",
    "Azure Storage Account access key",
    "Basic Auth Credentials",
    "Cloudant Credentials",
    "Discord Bot Token",
    "GitHub Token",
    "GitLab Token",
    "Base64 High Entropy String",
    "Hex High Entropy String",
    "IBM Cloud IAM Key",
    "IBM COS HMAC Credentials",
    "Public IP (ipv4)",
    "JSON Web Token",
    "Secret Keyword",
    "Mailchimp Access Key",
    "NPM tokens",
    "OpenAI Token",
    "Private Key",
    "PyPI Token",
    "SendGrid API Key",
    "Slack Token",
    "SoftLayer Credentials",
    "Square OAuth Secret",
    "Stripe Access Key",
    "Telegram Bot Token",
    "Twilio API Key",
}

# one line in each plugin's shape (made up; none is real), and lines around them
LINES = [
    *fake_secrets().values(),
    'artifactory: "AKCp5budTFpbypBqQbGJPz3pGCi28pPivfWczqjfYb9drAmd9LbRZbj6UpKFxJXA8ksWGc9fM"',
    "password: APBbzrsCRnp2mqMhn2dQkBUkfmnrwMzo",
    'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY1"',
    "AccountKey=" + "Zm9vYmFy" * 11,
    "cloudant_password='" + "a1b2c3d4" * 8 + "'",
    "cloudant_api_key: abcdefghijklmnopqrstuvwx",
    "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    "glpat-Zx8b2Mn4Kp6Qr8St0Uv2",
    "ibm_cloud_iam_key = 'abcd1234abcd1234abcd1234abcd1234abcd1234abcd'",
    "ibm_cos_hmac secret_access_key = '" + "ab12" * 12 + "'",
    "c2d1e8f0a4b6c2d1e8f0a4b6c2d1e8f0-us14",
    "//registry.npmjs.org/:_authToken=npm_" + "a" * 36,
    "sk-" + "A1b2C3d4E5" * 2 + "T3BlbkFJ" + "Q9r8S7t6U5" * 2,
    "pypi-AgEIcHlwaS5vcmc" + "Ab1" * 25,
    "SG." + "a" * 22 + "." + "B" * 43,
    "https://hooks.slack.com/services/TAB12345/BCD67890/abcdefghijklmno",
    "softlayer_api_key: " + "a1b2c3d4" * 8,
    "sq0csp-" + "A1b2C3d4E5" * 4 + "ABC",
    "123456789:" + "AbCdEfGhIj" * 3 + "AbCdE",
    "AC" + "a1b2c3d4" * 4,
    "SK" + "a1b2c3d4" * 4,
    "db_pass = 'hunter22'",
    "contraseña: 'gato-azul-77'",
    # prose that talks about tokens and APIs, as memories do
    "The `token_refresh()` job renews the API session every hour.",
    "Auth goes through `AuthMiddleware.check_bearer` before the router.",
    "description: Fifipami `token_order_43_5_gone()` and `Handler43.run_0` handler",
]


def test_the_plugins_are_the_ones_the_trace_was_written_from() -> None:
    assert set(get_mapping_from_secret_type_to_class()) == PLUGINS


@pytest.mark.parametrize("line", LINES)
def test_every_line_a_plugin_flags_holds_the_trace(line: str) -> None:
    """detect-secrets run on the line as it stands (no look before it): whatever it finds
    is on a line `plugin_trace` lets through."""
    hits = _detect_secrets([list(enumerate(line.splitlines(), 1))])[0]
    lines = line.splitlines()
    for number, kind, _ in hits:
        assert plugin_trace(lines[number - 1]), (kind, lines[number - 1])


def test_the_trace_finds_the_plugins_shapes_and_passes_prose_by() -> None:
    flagged = [line for line in LINES if _detect_secrets([[(1, line)]])[0]]
    assert len(flagged) >= 20  # the shapes above are ones the plugins know
    prose = LINES[-3:]
    assert not any(plugin_trace(line) for line in prose)
    assert all(scan_text(line) == [] for line in prose)


def test_the_lower_case_look_at_ascii_text_is_the_case_insensitive_pattern() -> None:
    rng = random.Random(5)
    pieces = [*"aAkKeEyYpPsSwWcCrRtT/+=._-0129 \n", "Key", "PASS", "Pw", "EyJ", "Xox", "GLPAT-"]
    hits = 0
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30)))
        by_pattern = _RX.plugin_words.search(text) or _RX.plugin_shapes.search(text)
        assert plugin_trace(text) == bool(by_pattern), text
        hits += bool(by_pattern)
    assert 500 < hits < 4500  # both answers are well represented
