"""The repo memory file format (DESIGN.md section 2): pure parse and serialize.

A memory file is YAML frontmatter between `---` lines, then a markdown body whose first
paragraph is the fact. These functions do no I/O.

- `parse_memory` tolerates broken or partial frontmatter: it returns the memory it could
  read (or None) and a list of problems, never raises on bad content.
- `serialize_memory` emits only non-default keys in a fixed order and, given the original
  text, keeps every top-level key whose value did not change byte-for-byte, so that a
  status change is a one-line git diff.
- Timestamps stay strings (the YAML loader here does not turn them into datetimes), so a
  load and a save never reformat them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import yaml

MEMORY_TYPES = ("user", "feedback", "project", "reference")
STATUSES = ("active", "superseded", "stale")
NEEDS_CITATIONS = ("project", "reference")
KEY_ORDER = (
    "name",
    "description",
    "type",
    "subject",
    "reason",
    "citations",
    "status",
    "supersedes",
    "superseded_by",
    "created",
    "updated",
    "source",
    "verified",
)
FLOW_KEYS = frozenset({"source", "verified"})
KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_TOP_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:")


class _Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """Safe loader that leaves timestamps as strings."""


class _Dumper(yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") else yaml.SafeDumper):  # type: ignore[misc]
    """Safe dumper that does not quote timestamp-looking strings."""


for _cls in (_Loader, _Dumper):
    _cls.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


@dataclass(frozen=True)
class Citation:
    path: str
    line: int | None = None
    symbol: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.line is not None:
            out["line"] = self.line
        if self.symbol is not None:
            out["symbol"] = self.symbol
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Citation:
        return cls(path=str(raw["path"]), line=raw.get("line"), symbol=raw.get("symbol"))


@dataclass(frozen=True)
class Memory:
    name: str
    description: str
    type: str
    body: str = ""
    subject: str | None = None
    reason: str | None = None
    citations: tuple[Citation, ...] = ()
    status: str = "active"
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    created: str | None = None
    updated: str | None = None
    source: dict[str, Any] | None = None
    verified: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def fact(self) -> str:
        """The body's first paragraph: the concrete, falsifiable claim."""
        return first_paragraph(self.body)

    @property
    def active(self) -> bool:
        return self.status == "active"

    def frontmatter(self) -> dict[str, Any]:
        """Keys in canonical order, defaults left out."""
        values: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "type": self.type,
            "subject": self.subject,
            "reason": self.reason,
            "citations": [c.to_dict() for c in self.citations] or None,
            "status": self.status,
            "supersedes": list(self.supersedes) or None,
            "superseded_by": self.superseded_by,
            "created": self.created,
            "updated": self.updated,
            "source": self.source,
            "verified": self.verified,
        }
        out = {k: v for k, v in values.items() if v is not None}
        out.update(self.extra)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used by `--json` output: every field, defaults included."""
        return {
            "name": self.name,
            "description": self.description,
            "type": self.type,
            "subject": self.subject,
            "reason": self.reason,
            "citations": [c.to_dict() for c in self.citations],
            "status": self.status,
            "supersedes": list(self.supersedes),
            "superseded_by": self.superseded_by,
            "created": self.created,
            "updated": self.updated,
            "source": self.source,
            "verified": self.verified,
            "fact": self.fact,
            "body": self.body,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Memory:
        """Inverse of `to_dict` (used by the load cache)."""
        return cls(
            name=raw["name"],
            description=raw["description"],
            type=raw["type"],
            body=raw.get("body", ""),
            subject=raw.get("subject"),
            reason=raw.get("reason"),
            citations=tuple(Citation.from_dict(c) for c in raw.get("citations") or ()),
            status=raw.get("status") or "active",
            supersedes=tuple(raw.get("supersedes") or ()),
            superseded_by=raw.get("superseded_by"),
            created=raw.get("created"),
            updated=raw.get("updated"),
            source=raw.get("source"),
            verified=raw.get("verified"),
            extra=dict(raw.get("extra") or {}),
        )

    def with_changes(self, **changes: Any) -> Memory:
        return replace(self, **changes)


@dataclass(frozen=True)
class Problem:
    """Something wrong with one file. `kind` is an audit finding kind."""

    path: str
    kind: str  # invalid_file | missing_field
    detail: str
    severity: str = "error"  # error | warning

    def line(self) -> str:
        return f"{self.path}: {self.detail}"

    def to_dict(self) -> dict[str, str]:
        return {
            "path": self.path,
            "kind": self.kind,
            "detail": self.detail,
            "severity": self.severity,
        }


@dataclass(frozen=True)
class Parsed:
    memory: Memory | None
    problems: tuple[Problem, ...] = ()
    frontmatter_text: str | None = None


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def first_paragraph(body: str) -> str:
    lines: list[str] = []
    for line in body.strip().splitlines():
        if not line.strip():
            if lines:
                break
            continue
        lines.append(line.strip())
    return " ".join(lines)


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(frontmatter text without the fences, body); (None, text) when there is none."""
    if not text.startswith("---"):
        return None, text
    first_nl = text.find("\n")
    if first_nl == -1 or text[:first_nl].strip() != "---":
        return None, text
    rest = text[first_nl + 1 :]
    match = re.search(r"^---[ \t]*$", rest, flags=re.MULTILINE)
    if match is None:
        return None, text
    fm = rest[: match.start()]
    body = rest[match.end() :]
    if body.startswith("\r\n"):
        body = body[2:]
    elif body.startswith("\n"):
        body = body[1:]
    return fm, body


def load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)  # a safe loader subclass


def dump_yaml(data: Any, *, flow: bool = False) -> str:
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=flow,
        width=10_000,
    )


def parse_memory(text: str, stem: str, *, path: str | None = None) -> Parsed:
    """Read one memory file. Returns what could be read and every problem found."""
    where = path or f"{stem}.md"
    fm_text, body = split_frontmatter(text)
    if fm_text is None:
        return Parsed(
            None, (Problem(where, "invalid_file", "no YAML frontmatter between --- lines"),)
        )
    try:
        raw = load_yaml(fm_text)
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())
        return Parsed(None, (Problem(where, "invalid_file", f"broken YAML frontmatter: {reason}"),))
    if not isinstance(raw, dict):
        return Parsed(None, (Problem(where, "invalid_file", "frontmatter is not a mapping"),))

    problems = [Problem(where, kind, detail) for kind, detail in schema_problems(raw)]
    hard = [p for p in problems if p.kind == "invalid_file"]
    name = raw.get("name")
    if isinstance(name, str) and name != stem:
        hard.append(
            Problem(where, "invalid_file", f"name {name!r} is not the file's stem {stem!r}")
        )
    if hard:
        return Parsed(
            None, tuple(hard + [p for p in problems if p.kind != "invalid_file"]), fm_text
        )

    known = {k: raw[k] for k in KEY_ORDER if k in raw}
    extra = {k: v for k, v in raw.items() if k not in known}
    memory = Memory(
        name=known["name"],
        description=known["description"],
        type=known["type"],
        body=body,
        subject=known.get("subject"),
        reason=known.get("reason"),
        citations=tuple(Citation.from_dict(c) for c in known.get("citations") or ()),
        status=known.get("status") or "active",
        supersedes=tuple(known.get("supersedes") or ()),
        superseded_by=known.get("superseded_by"),
        created=known.get("created"),
        updated=known.get("updated"),
        source=known.get("source"),
        verified=known.get("verified"),
        extra=extra,
    )
    problems.extend(Problem(where, "missing_field", d, "warning") for d in completeness(memory))
    return Parsed(memory, tuple(problems), fm_text)


def schema_problems(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """JSON Schema errors for a frontmatter mapping, as (kind, one-line detail)."""
    from orchestrator.schemas import validator

    out: list[tuple[str, str]] = []
    for err in sorted(validator("memory").iter_errors(raw), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in err.path)
        if err.validator == "required":
            missing = err.message.split("'")[1] if "'" in err.message else err.message
            out.append(("invalid_file", f"missing required field {missing!r}"))
        elif err.validator == "enum" and where == "type":
            out.append(
                (
                    "invalid_file",
                    f"unknown type {err.instance!r} (one of {', '.join(MEMORY_TYPES)})",
                )
            )
        else:
            out.append(("invalid_file", f"{where or 'frontmatter'}: {err.message}"))
    return out


def completeness(memory: Memory) -> list[str]:
    """Fields a full memory has that a minimal (name/description/type) one lacks."""
    missing = []
    if not memory.subject:
        missing.append("missing field 'subject'")
    if not memory.reason:
        missing.append("missing field 'reason'")
    if memory.type in NEEDS_CITATIONS and not memory.citations:
        missing.append(f"missing field 'citations' (required for {memory.type} memories)")
    if not memory.fact:
        missing.append("empty body: the first paragraph must state the fact")
    return missing


def _top_level_chunks(fm_text: str) -> dict[str, str]:
    """Split frontmatter text into {key: the exact lines of that key}."""
    chunks: dict[str, list[str]] = {}
    current: str | None = None
    preamble: list[str] = []
    for line in fm_text.splitlines(keepends=True):
        match = _TOP_KEY.match(line)
        if match:
            current = match.group(1)
            chunks[current] = [line]
        elif current is None:
            preamble.append(line)
        else:
            chunks[current].append(line)
    return {k: "".join(v) for k, v in chunks.items()}


def _dump_key(key: str, value: Any) -> str:
    if key in FLOW_KEYS and isinstance(value, dict):
        return f"{key}: " + dump_yaml(value, flow=True)  # `source: {task: x, phase: 2}`
    return dump_yaml({key: value})


def serialize_memory(memory: Memory, original: str | None = None) -> str:
    """The file text for `memory`; unchanged keys keep their original bytes."""
    new = memory.frontmatter()
    old_chunks: dict[str, str] = {}
    old_values: dict[str, Any] = {}
    old_body: str | None = None
    if original is not None:
        fm_text, old_body = split_frontmatter(original)
        if fm_text is not None:
            try:
                parsed = load_yaml(fm_text)
            except yaml.YAMLError:
                parsed = None
            if isinstance(parsed, dict):
                old_values = parsed
                old_chunks = _top_level_chunks(fm_text)

    rank = {k: i for i, k in enumerate(KEY_ORDER)}
    order = [k for k in old_chunks if k in new]
    for key in new:  # new keys go to their canonical place among the kept ones
        if key in order:
            continue
        mine = rank.get(key, len(KEY_ORDER))
        later = [i for i, k in enumerate(order) if rank.get(k, len(KEY_ORDER)) > mine]
        order.insert(later[0] if later else len(order), key)
    parts = []
    for key in order:
        chunk = old_chunks.get(key)
        if chunk is not None and key in old_values and old_values[key] == new[key]:
            parts.append(chunk if chunk.endswith("\n") else chunk + "\n")
        else:
            parts.append(_dump_key(key, new[key]))
    body = memory.body
    if old_body is not None and old_body == body:
        body = old_body
    elif body and not body.endswith("\n"):
        body += "\n"
    return "---\n" + "".join(parts) + "---\n" + body
