"""Secrets in text orch would write: detect-secrets' detectors, plus what they miss.

detect-secrets knows the shapes of many vendors'
keys and tokens (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, JWTs, npm, PyPI...) and
`password = "..."` style assignments. Its two entropy detectors are left out: on memory
text they flag commit ids, blob ids and long identifiers. Added here, because detect-secrets
misses them on prose: Anthropic keys, npm access tokens (`npm_...`; detect-secrets knows
only `.npmrc` lines), a private key block spread over several lines, `NAME_KEY=value`
environment assignments, and passwords stated in words ("the staging password is
hunter2", "the password for the partner drop is ...", "log in with password ...").

A value that is a placeholder is no secret, whoever found it: AWS's documented example
keys (`...EXAMPLE`), `sk_live_XXXXXXXX`, `<your-token>`, `${VAR}`, `USER:PASSWORD`,
`changeme` (detect-secrets' own filters already drop templates, UUIDs and sequences).

To stay fast on thousands of files, a line goes to detect-secrets only when it holds a
token that could be a credential (long and mixed, or after a keyword). detect-secrets is
imported then, and only then: its import costs about 100 ms (it pulls in `requests`), as
much as a model SDK's, and `orch memory list` must start in under 150 ms. It is, with the
SDKs, the one import left inside a function.

The audit reports what `scan_texts` finds (and caches it by the text's digest); refusing
a secret on every write belongs here too, beside the detection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d"
)
_ANTHROPIC = re.compile(r"\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{20,}")
_GENERIC_SK = re.compile(r"\bsk-(?:proj-|live_|test_)?[A-Za-z0-9_-]{32,}")
_NPM = re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")
_ENV_ASSIGN = re.compile(
    r"\b([A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|CREDENTIALS?))[ \t]*[=:][ \t]*"
    r"['\"]?([^\s'\"`]{8,})"
)
_SAID_PASSWORD = re.compile(
    r"\b(?:[a-z0-9]+_)*(?:password|passphrase|passwd|pwd|secret|api[ _-]?key|access[ _-]?token|"
    r"auth[ _-]?token)(?:[ \t]+(?:for|of|on)(?:[ \t]+[\w.@-]+){1,4}?)?"
    r"(?:[ \t]+(?:is|was|equals)[ \t]+|[ \t]*[=:][ \t]*)"
    r"[`'\"]?([^\s`'\",;]{6,})",
    re.I,
)
# "with password X", "the passphrase X": the value follows the word itself
_BARE_PASSWORD = re.compile(
    r"\b(?:password|passphrase|passwd)[ \t]+(?!(?:is|was|are|for|of|and|or|to|from|in|on|at|"
    r"with|that|the|a|an|policy|policies|manager|hash|hashes|hashing|reset|field|prompt|"
    r"rotation|protected|length|rules?)\b)[`'\"]?([^\s`'\",;]{6,})",
    re.I,
)
_GOOGLE = re.compile(r"\bAIza[0-9A-Za-z_-]{35}")
_LONG = re.compile(r"[A-Za-z0-9+/_=.:-]{16,}")
_KEYWORD = re.compile(r"\b(?:pass|pwd|secret|token|key|auth|credential|bearer|api)")
_GENERATED = re.compile(
    r"^(?:verified|created|updated|status|type|name|supersedes|superseded_by):\s"
)
_PREFIXES = (
    "akia",
    "asia",
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xox",
    "sk_",
    "rk_",
    "pk_",
    "npm_",
    "pypi-",
    "sg.",
    "eyj",
    "sq0",
    "akc",
)
_SEPARATORS = re.compile(r"[._:/-]")
_PLACEHOLDER = re.compile(
    r"^(?:x+|\*+|\.+|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%\w+%|your[_-]?\w*|changeme|"
    r"redacted|example\w*|placeholder|dummy|none|null|true|false|env|secret|password|"
    r"os\.environ.*|getenv.*)$",
    re.I,
)
# words that mark a whole value as an example, wherever they stand in it
_PLACEHOLDER_PART = re.compile(
    r"example|placeholder|changeme|change[_-]me|redacted|dummy|your[_-]|<[^>]*>|\$\{|\{\{|"
    r"xxxx|\*\*\*\*|\.\.\.",
    re.I,
)
_VENDOR_PREFIX = re.compile(r"^(?:[A-Za-z]{2,8}[_-]){1,2}")


def is_placeholder(value: str) -> bool:
    """A value that stands for a secret without being one: `AKIA...EXAMPLE`,
    `sk_live_XXXXXXXX`, `<your-token>`, `${STRIPE_KEY}`, `PASSWORD`, `changeme`."""
    value = value.strip("`'\".,;:()[]")
    if not value or _PLACEHOLDER.match(value) or _PLACEHOLDER_PART.search(value):
        return True
    core = _VENDOR_PREFIX.sub("", value)
    if len(core) >= 8 and len(set(core.lower())) <= 2:
        return True  # XXXXXXXXXXXX, 000000000000, abababab
    # USER:PASSWORD, ACCOUNT: words in capitals name what goes there
    return bool(re.fullmatch(r"[A-Z][A-Z_]{2,}", value))


@dataclass(frozen=True)
class SecretHit:
    line: int  # 1-based, within the scanned text
    kind: str  # what was found (detect-secrets' type names, or ours)

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "kind": self.kind}


def _looks_real(value: str) -> bool:
    value = value.strip("`'\".,;)")
    if is_placeholder(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    has_other = any(not c.isalnum() for c in value)
    return has_alpha and (has_digit or has_other)


def _ours(text: str) -> list[SecretHit]:
    """What detect-secrets misses, searched over the whole text (one pass per pattern, and
    only when a word the pattern needs is there at all)."""
    found: dict[int, SecretHit] = {}

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    for rx, kind, needs in (
        (_PRIVATE_KEY, "Private Key", ("PRIVATE KEY", "PuTTY")),
        (_ANTHROPIC, "Anthropic API Key", ("sk-ant-",)),
        (_GENERIC_SK, "Secret Key (sk-)", ("sk-",)),
        (_GOOGLE, "Google API Key", ("AIza",)),
        (_NPM, "npm Access Token", ("npm_",)),
    ):
        if any(n in text for n in needs):
            for match in rx.finditer(text):
                if kind != "Private Key" and is_placeholder(match.group(0)):
                    continue
                n = line_of(match.start())
                found.setdefault(n, SecretHit(n, kind))
    if any(
        k in text for k in ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PWD", "CREDENTIAL")
    ):
        for match in _ENV_ASSIGN.finditer(text):
            if _looks_real(match.group(2)):
                n = line_of(match.start())
                found.setdefault(n, SecretHit(n, f"Credential assignment ({match.group(1)})"))
    low = text.lower()
    if any(k in low for k in ("pass", "pwd", "secret", "key", "token")):
        for rx in (_SAID_PASSWORD, _BARE_PASSWORD):
            for match in rx.finditer(text):
                if _looks_real(match.group(1)):
                    n = line_of(match.start())
                    found.setdefault(n, SecretHit(n, "Password or key stated in text"))
    return [found[n] for n in sorted(found)]


def _detect_secrets(batches: list[list[tuple[int, str]]]) -> list[list[SecretHit]]:
    """detect-secrets' line plugins over each batch of candidate lines, in one settings
    context (imported here: see the module docstring)."""
    from detect_secrets.core import scan
    from detect_secrets.settings import default_settings

    out: list[list[SecretHit]] = []
    with default_settings() as settings:
        settings.disable_plugins("Base64HighEntropyString", "HexHighEntropyString")
        settings.disable_plugins("IPPublicDetector")
        for lines in batches:
            text = dict(lines)
            found = scan._process_line_based_plugins(lines, filename="memory.yaml")
            out.append(
                [
                    SecretHit(secret.line_number, secret.type)
                    for secret in found
                    if not _placeholder_hit(secret.secret_value or "", text[secret.line_number])
                ]
            )
    return out


def _placeholder_hit(value: str, line: str) -> bool:
    """Whether a detect-secrets hit is a placeholder. Some plugins report only part of the
    token (the GitHub one: its prefix), so the whole token around it is judged too."""
    if is_placeholder(value):
        return True
    tokens = [t for t in re.split(r"[\s`'\"]+", line) if value and value in t]
    return bool(tokens) and all(is_placeholder(t) for t in tokens)


def _candidate(line: str) -> bool:
    """Could detect-secrets find anything on this line? A keyword, a known key prefix, a
    long token mixing cases and digits, or a very long letters-and-digits token."""
    if _GENERATED.match(line):
        return False  # frontmatter orch writes itself: ids, dates, status
    if "://" in line and "@" in line:
        return True  # credentials in a URL
    if _KEYWORD.search(line.lower()):
        return True  # what the keyword detector looks for
    for match in _LONG.finditer(line):
        token = match.group(0)
        if token.lower().startswith(_PREFIXES):
            return True  # a vendor's key prefix
        # keys are long unbroken runs; `Handler161.run_0` is an identifier, not a key
        for part in _SEPARATORS.split(token):
            if len(part) < 16:
                continue
            digits = any(c.isdigit() for c in part)
            upper = any(c.isupper() for c in part)
            lower = any(c.islower() for c in part)
            if digits and upper and lower:
                return True
            if len(part) >= 32 and digits and (upper or lower):
                return True
    return False


def scan_texts(texts: list[str]) -> list[list[SecretHit]]:
    """Every secret in each text, one hit per line (the first kind found on it)."""
    found: list[dict[int, SecretHit]] = []
    batches: list[list[tuple[int, str]]] = []
    owners: list[int] = []
    for i, text in enumerate(texts):
        lines = text.splitlines()
        hits = {h.line: h for h in _ours(text)}
        found.append(hits)
        candidates = [
            (n, line) for n, line in enumerate(lines, start=1) if n not in hits and _candidate(line)
        ]
        if candidates:
            batches.append(candidates)
            owners.append(i)
    if batches:
        for owner, batch_hits in zip(owners, _detect_secrets(batches), strict=True):
            for hit in batch_hits:
                found[owner].setdefault(hit.line, hit)
    return [[by_line[n] for n in sorted(by_line)] for by_line in found]


def scan_text(text: str) -> list[SecretHit]:
    return scan_texts([text])[0]
