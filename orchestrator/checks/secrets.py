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
token that could be a credential (long and mixed, or after a keyword), and a text's lines
go only when one of them holds what some enabled detect-secrets plugin needs to match at
all (`plugin_trace`: prose that mentions a token or an API holds none). detect-secrets is
imported then, and only then: its import costs about 100 ms (it pulls in `requests`), as
much as a model SDK's, and `orch memory list` must start in under 150 ms. It is, with the
SDKs, the one import left inside a function.

The audit reports what `scan_texts` finds (and caches it by the text's digest); refusing
a secret on every write belongs here too, beside the detection.
"""

from __future__ import annotations

import math
import re
from typing import Any

from msgspec import Struct

# What a match of an enabled detect-secrets plugin holds, other than `plugin_shapes`: the
# keyword detector's words (and the AWS, Cloudant, IBM and SoftLayer detectors': pw, pass,
# key), a URL or npm registry line, a JWT, a Slack token, Artifactory's and GitLab's prefixes
PLUGIN_WORDS = (
    "key", "pass", "pw", "secret", "contrase", "//", "eyj", "xox", "akc", "gr1348941",
    "glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "glagent-",
    "gloas-",
)  # fmt: skip


class Patterns:
    """Named regular expressions, each compiled the first time it is used.

    Everything that writes imports this module (the event log, task folders), and so do
    `orch status` and `orch log`, which scan no text: compiling the patterns below when the
    module is imported cost each of those commands ~6 ms of start-up. A pattern is compiled
    on its first use, then kept as a plain attribute: later uses are one attribute look-up.
    """

    def __init__(self, **sources: str | tuple[str, int]) -> None:
        self._sources = sources

    def __getattr__(self, name: str) -> re.Pattern[str]:  # only names not compiled yet
        source = self.__dict__.get("_sources", {}).get(name)
        if source is None:
            raise AttributeError(name)
        pattern, flags = (source, 0) if isinstance(source, str) else source
        compiled = re.compile(pattern, flags)
        setattr(self, name, compiled)
        return compiled


_RX = Patterns(
    private_key=r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d",
    key_end=r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
    anthropic=r"\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{20,}",
    generic_sk=r"\bsk-(?:proj-|live_|test_)?[A-Za-z0-9_-]{32,}",
    npm=r"\bnpm_[A-Za-z0-9]{36}\b",
    env_assign=(
        r"\b([A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|CREDENTIALS?))[ \t]*[=:][ \t]*"
        r"['\"]?([^\s'\"`]{8,})"
    ),
    said_password=(
        r"\b(?:[a-z0-9]+_)*(?:password|passphrase|passwd|pwd|secret|api[ _-]?key|access[ _-]?token|"
        r"auth[ _-]?token)(?:[ \t]+(?:for|of|on)(?:[ \t]+[\w.@-]+){1,4}?)?"
        r"(?:[ \t]+(?:is|was|equals)[ \t]+|[ \t]*[=:][ \t]*)"
        r"[`'\"]?([^\s`'\",;]{6,})",
        re.I,
    ),
    # "with password X", "the passphrase X": the value follows the word itself
    bare_password=(
        r"\b(?:password|passphrase|passwd)[ \t]+(?!(?:is|was|are|for|of|and|or|to|from|in|on|at|"
        r"with|that|the|a|an|policy|policies|manager|hash|hashes|hashing|reset|field|prompt|"
        r"rotation|protected|protection|strength|complexity|requirements?|recovery|changes?|"
        r"expiry|expiration|length|rules?)\b)[`'\"]?([^\s`'\",;]{6,})",
        re.I,
    ),
    google=r"\bAIza[0-9A-Za-z_-]{35}",
    low_assign=(
        r"\b([a-z][a-z0-9_]*(?:key|token|secret|password|passwd|pwd|credentials?))[ \t]*[=:][ \t]*"
        r"['\"]([^\s'\"`]{12,})['\"]"
    ),
    token=r"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9]{24,}(?![A-Za-z0-9+/_=-])",
    public_block=(
        r"-----BEGIN ((?:[A-Z0-9]+ )*(?:PUBLIC KEY|CERTIFICATE))-----.*?-----END \1-----",
        re.S,
    ),
    wordish=r"[A-Z]?[a-z]{3,}",
    # a word one of the whole-text patterns needs (the line filter below covers the rest)
    needs=(r"private key|putty|sk-|aiza|npm_|pass|pwd|secret|key|token|credential", re.I),
    long=r"[A-Za-z0-9+/_=.:-]{16,}",
    keyword=r"\b(?:pass|pwd|secret|token|key|auth|credential|bearer|api)",
    generated=r"^(?:verified|created|updated|status|type|name|supersedes|superseded_by):\s",
    separators=r"[._:/-]",
    placeholder=(
        r"^(?:x+|\*+|\.+|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%\w+%|your[_-]?\w*|changeme|"
        r"redacted|example\w*|placeholder|dummy|none|null|true|false|env|secret|password|"
        r"os\.environ.*|getenv.*)$",
        re.I,
    ),
    # words that mark a whole value as an example, wherever they stand in it
    placeholder_part=(
        r"example|placeholder|changeme|change[_-]me|redacted|dummy|your[_-]|<[^>]*>|\$\{|\$\(|\{\{|"
        r"xxxx|\*\*\*\*|\.\.\.",
        re.I,
    ),
    vendor_prefix=r"^(?:[A-Za-z]{2,8}[_-]){1,2}",
    capitals=r"[A-Z][A-Z_]{2,}",
    # the rest of what `plugin_trace` looks for: AWS access key ids and Artifactory's passwords,
    # Cloudant's 24-letter API key, and a run of 32 or more characters (every other
    # detector's secret is at least that long); a run is tried from its start only
    plugin_shapes=(
        r"(?-i:AP[\dA-F][a-zA-Z0-9]{8}|(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16})|"
        r"(?<![a-z])[a-z]{24}|(?<![\w+/=.-])[\w+/=.-]{32}",
        re.I,
    ),
    plugin_words=("|".join(map(re.escape, PLUGIN_WORDS)), re.I),  # for text beyond ASCII
)
ENTROPY_BITS = 4.2  # a random 24-character mix of cases and digits has about 4.4
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


def is_placeholder(value: str) -> bool:
    """A value that stands for a secret without being one: `AKIA...EXAMPLE`,
    `sk_live_XXXXXXXX`, `<your-token>`, `${STRIPE_KEY}`, `PASSWORD`, `changeme`."""
    value = value.strip("`'\".,;:()[]")
    if not value or _RX.placeholder.match(value) or _RX.placeholder_part.search(value):
        return True
    core = _RX.vendor_prefix.sub("", value)
    if len(core) >= 8 and len(set(core.lower())) <= 2:
        return True  # XXXXXXXXXXXX, 000000000000, abababab
    # USER:PASSWORD, ACCOUNT: words in capitals name what goes there
    return bool(_RX.capitals.fullmatch(value))


class SecretHit(Struct, frozen=True):
    """A line of a scanned text that holds a secret, and what kind."""

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
    mixed_case = len(value) >= 8 and value != value.lower() and value != value.upper()
    return has_alpha and (has_digit or has_other or (mixed_case and not value.istitle()))


class Found(Struct, frozen=True):
    """Where a secret stands in a text: the characters [start, end) and what it is."""

    start: int
    end: int
    kind: str


def _ours(text: str) -> list[Found]:
    """What detect-secrets misses, searched over the whole text (one pass per pattern, and
    only when a word the pattern needs is there at all); the secret's own span each."""
    found: list[Found] = []
    if "PRIVATE KEY" in text or "PuTTY" in text:
        for match in _RX.private_key.finditer(text):
            found.append(Found(match.start(), _key_block_end(text, match.end()), "Private Key"))
    for rx, kind, need in (
        (_RX.anthropic, "Anthropic API Key", "sk-ant-"),
        (_RX.generic_sk, "Secret Key (sk-)", "sk-"),
        (_RX.google, "Google API Key", "AIza"),
        (_RX.npm, "npm Access Token", "npm_"),
    ):
        if need in text:
            for match in rx.finditer(text):
                if not is_placeholder(match.group(0)):
                    found.append(Found(match.start(), match.end(), kind))
    if any(
        word in text
        for word in ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PWD", "CREDENTIAL")
    ):
        found += _assignments(_RX.env_assign, text)
    if any(word in text for word in ("key", "token", "secret", "passw", "pwd", "credential")):
        found += _assignments(_RX.low_assign, text)
    if _may_hold_token(text):
        found += _tokens(text)
    if _may_state_password(text):
        for rx in (_RX.said_password, _RX.bare_password):
            for match in rx.finditer(text):
                if _looks_real(match.group(1)):
                    found.append(
                        Found(match.start(1), match.end(1), "Password or key stated in text")
                    )
    return found


def _may_hold_token(text: str) -> bool:
    """Whether `_tokens` could find any: a token lies within one word between spaces, 24
    characters long at least and mixing capitals, small letters and digits. Most texts'
    only long word is a commit id, in small letters: the word test is far cheaper than the
    token pattern over the whole text."""
    return any(
        len(word) >= 24
        and not word.islower()
        and not word.isupper()
        and sum(map(str.isdigit, word)) >= 3
        for word in text.split()
    )


def _tokens(text: str) -> list[Found]:
    """Long random-looking runs of letters and digits (`_high_entropy`), outside public
    key blocks and certificates."""
    public = [m.span() for m in _RX.public_block.finditer(text)] if "-----BEGIN" in text else []
    found = []
    for match in _RX.token.finditer(text):
        if any(a <= match.start() < b for a, b in public):
            continue  # a public key or a certificate is meant to be shown
        if _high_entropy(match.group(0)):
            found.append(Found(match.start(), match.end(), "High-entropy token"))
    return found


def _assignments(rx: re.Pattern[str], text: str) -> list[Found]:
    """`NAME_KEY=value` and `api_key = "value"` assignments whose value looks real."""
    return [
        Found(match.start(2), match.end(2), f"Credential assignment ({match.group(1)})")
        for match in rx.finditer(text)
        if _looks_real(match.group(2))
    ]


def _may_state_password(text: str) -> bool:
    """Whether `said_password` or `bare_password` could match: a word each match holds is
    there. On ASCII text lower-casing does what the patterns' ignoring of case does, so
    the exact words are looked for; other text needs only one of the shorter words."""
    low = text.lower()
    if not any(word in low for word in ("pass", "pwd", "secret", "key", "token")):
        return False
    if not text.isascii():
        return True
    return (
        any(word in low for word in ("pass", "pwd", "secret"))
        or ("key" in low and "api" in low)
        or ("token" in low and ("access" in low or "auth" in low))
    )


def _high_entropy(token: str) -> bool:
    """A long run of mixed-case letters and digits as random as a generated key (not a hex
    digest, not an identifier made of words: those repeat letters and have few digits)."""
    if not (
        any(map(str.isupper, token))
        and any(map(str.islower, token))
        and sum(map(str.isdigit, token)) >= 3
    ) or is_placeholder(token):
        return False  # the cheap tests first: most tokens are digests, in one case
    words = sum(len(w) for w in _RX.wordish.findall(token))
    if words >= len(token) / 2:
        return False  # HandlerFactoryBuilder2024: an identifier made of words
    counts = [token.count(c) for c in set(token)]
    entropy = -sum(n / len(token) * math.log2(n / len(token)) for n in counts)
    return entropy >= ENTROPY_BITS


def _key_block_end(text: str, after: int) -> int:
    """The end of a private key block: its END line, or the end of the text."""
    end = _RX.key_end.search(text, after)
    return end.end() if end else len(text)


def _line_hits(text: str, spans: list[Found]) -> dict[int, SecretHit]:
    out: dict[int, SecretHit] = {}
    for s in sorted(spans, key=lambda s: s.start):
        n = text.count("\n", 0, s.start) + 1
        out.setdefault(n, SecretHit(n, s.kind))
    return out


def _detect_secrets(batches: list[list[tuple[int, str]]]) -> list[list[tuple[int, str, str]]]:
    """detect-secrets' line plugins over each batch of candidate lines, in one settings
    context (imported here: see the module docstring): (line, kind, value) per secret."""
    from detect_secrets.core import scan
    from detect_secrets.settings import default_settings

    out: list[list[tuple[int, str, str]]] = []
    with default_settings() as settings:
        settings.disable_plugins("Base64HighEntropyString", "HexHighEntropyString")
        settings.disable_plugins("IPPublicDetector")
        for lines in batches:
            text = dict(lines)
            found = scan._process_line_based_plugins(lines, filename="memory.yaml")
            out.append(
                [
                    (secret.line_number, secret.type, secret.secret_value or "")
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


def plugin_trace(text: str) -> bool:
    """Whether `text` holds what some enabled detect-secrets plugin needs to match at all
    (False: none of them can find anything in it)."""
    if text.isascii():  # lower-cased, as the plugins' case-insensitive patterns read it
        low = text.lower()
        if any(word in low for word in PLUGIN_WORDS):
            return True
    elif _RX.plugin_words.search(text):
        return True
    if any(prefix in text for prefix in ("AP", "A3T", "ABIA", "ACCA", "AKIA", "ASIA")):
        return bool(_RX.plugin_shapes.search(text))
    # without those prefixes, a shape is a run of 24 or more characters, none of them a
    # space: only the words that long are searched (the search is slow on prose)
    return any(_RX.plugin_shapes.search(word) for word in text.split() if len(word) >= 24)


def _candidate(line: str) -> bool:
    """Could detect-secrets find anything on this line? A keyword, a known key prefix, a
    long token mixing cases and digits, or a very long letters-and-digits token."""
    if _RX.generated.match(line):
        return False  # frontmatter orch writes itself: ids, dates, status
    if "://" in line and "@" in line:
        return True  # credentials in a URL
    if _RX.keyword.search(line.lower()):
        return True  # what the keyword detector looks for
    for match in _RX.long.finditer(line):
        token = match.group(0)
        if token.lower().startswith(_PREFIXES):
            return True  # a vendor's key prefix
        # keys are long unbroken runs; `Handler161.run_0` is an identifier, not a key
        for part in _RX.separators.split(token):
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


def _value_span(text: str, starts: list[int], line: int, value: str) -> tuple[int, int]:
    """Where detect-secrets' `value` stands on `line`: the whole token that holds it (some
    plugins report a part), or the whole line when the value is not written out there."""
    begin = starts[line - 1]
    end = text.find("\n", begin)
    end = len(text) if end < 0 else end
    at = text.find(value, begin, end) if value else -1
    if at < 0:
        return begin, end
    left = at
    while left > begin and not text[left - 1].isspace() and text[left - 1] not in "`'\"":
        left -= 1
    right = at + len(value)
    while right < end and not text[right].isspace() and text[right] not in "`'\",;":
        right += 1
    return left, right


def find_secrets(texts: list[str]) -> list[list[Found]]:
    """Every secret in each text, with its span (overlapping finds merged to the widest)."""
    found = [_ours(text) for text in texts]
    batches: list[list[tuple[int, str]]] = []
    owners: list[int] = []
    for i, text in enumerate(texts):
        lines = text.splitlines()
        # no plugin can match unless a line it may read holds its trace: a memory file's
        # only one is often its `verified:` commit id, on a line orch wrote itself
        if not plugin_trace("\n".join(line for line in lines if not _RX.generated.match(line))):
            continue
        candidates = [(n, line) for n, line in enumerate(lines, 1) if _candidate(line)]
        # a text's candidate lines go together or not at all: detect-secrets reads a line's
        # neighbours in its batch (the allowlist pragma of the line before)
        if any(plugin_trace(line) for _, line in candidates):
            batches.append(candidates)
            owners.append(i)
    if batches:
        for owner, hits in zip(owners, _detect_secrets(batches), strict=True):
            text = texts[owner]
            starts = [0] + [m.end() for m in re.finditer("\n", text)]
            for line, kind, value in hits:
                found[owner].append(Found(*_value_span(text, starts, line, value), kind))
    return [_merged(spans) for spans in found]


def _merged(spans: list[Found]) -> list[Found]:
    out: list[Found] = []
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        if out and s.start < out[-1].end:
            last = out[-1]
            out[-1] = Found(last.start, max(last.end, s.end), last.kind)
        else:
            out.append(s)
    return out


def scan_texts(texts: list[str]) -> list[list[SecretHit]]:
    """Every secret in each text, one hit per line (the first kind found on it)."""
    out = []
    for text, spans in zip(texts, find_secrets(texts), strict=True):
        by_line = _line_hits(text, spans)
        out.append([by_line[n] for n in sorted(by_line)])
    return out


def scan_text(text: str) -> list[SecretHit]:
    return scan_texts([text])[0]


def secret_word(word: str) -> bool:
    """Whether one word (an identifier-like token of code) is a key: a vendor's prefix on a
    long token, or a long random-looking mix of cases and digits. Indexes of words keep
    none (`memory.codeindex`)."""
    if len(word) < 16:
        return False
    if word.lower().startswith(_PREFIXES) and sum(c.isdigit() for c in word) >= 2:
        return not is_placeholder(word)
    return len(word) >= 24 and _high_entropy(word)


def placeholder(kind: str) -> str:
    """What stands in a secret's place: `[REDACTED:aws-access-key]`, the same for the same kind."""
    return f"[REDACTED:{re.sub(r'[^a-z0-9]+', '-', kind.lower()).strip('-')}]"


def might_hold_secret(text: str) -> bool:
    """A cheap first look: False means `find_secrets` would find nothing in `text`."""
    if _RX.needs.search(text) or "://" in text:
        return True
    return any(_candidate(line) for line in text.splitlines())


def redact(text: str) -> str:
    """`text` with every secret replaced by its `placeholder` (deterministic)."""
    if not text or not might_hold_secret(text):
        return text
    spans = find_secrets([text])[0]
    for s in reversed(spans):
        text = text[: s.start] + placeholder(s.kind) + text[s.end :]
    return text


def redact_data(value: Any) -> Any:
    """A JSON-like value with every string in it redacted (keys left as they are)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value


def secret_kind(text: str) -> str | None:
    """The kind of the first secret in `text`, or None."""
    if not text or not might_hold_secret(text):
        return None
    spans = find_secrets([text])[0]
    return spans[0].kind if spans else None
