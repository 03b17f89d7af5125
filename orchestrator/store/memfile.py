"""The repo memory file format (DESIGN.md section 2): pure parse and serialize.

A memory file is YAML frontmatter between `---` lines, then a markdown body whose first
paragraph is the fact. These functions do no I/O.

- `parse_memory` tolerates broken or partial frontmatter: it returns the memory it could
  read (or None) and a list of problems, and never raises on bad content.
- `serialize_memory` emits only non-default keys in a fixed order and, given the original
  text, keeps every top-level key whose value did not change byte-for-byte (defaults such
  as `supersedes: []` included), so that a status change is a small git diff.
- Timestamps stay strings (the YAML loader here does not turn them into datetimes), so a
  load and a save never reformat them.

Reading is on the path of `orch memory list`: frontmatter goes through PyYAML's C loader
(a listing served from the parse cache needs no YAML at all), and `quick_schema_ok`
accepts only what the JSON Schema accepts, so jsonschema (slow to import) is asked only
about a file it doubts, for the exact reasons. A property test holds the quick check to
jsonschema.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from typing import Any

from orchestrator.store import quickyaml

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


@cache
def _yaml() -> tuple[Any, Any, Any]:
    """(yaml module, Loader, Dumper), imported on first use: PyYAML costs ~25 ms to import."""
    import yaml

    base_loader = yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader
    base_dumper = yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") else yaml.SafeDumper
    resolvers = {
        first: [(tag, rx) for tag, rx in found if tag != "tag:yaml.org,2002:timestamp"]
        for first, found in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    # Safe loader and dumper that leave timestamps as strings (no datetime round trip).
    loader = type("_Loader", (base_loader,), {"yaml_implicit_resolvers": resolvers})
    dumper = type("_Dumper", (base_dumper,), {"yaml_implicit_resolvers": resolvers})
    return yaml, loader, dumper


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

    @cached_property
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

    def to_dict(self, *, body: bool = True) -> dict[str, Any]:
        """The JSON form used by `--json` output and the parse cache: every field, defaults
        included, keys orch does not know under `extra` (`body=False` leaves the body out,
        as listings do)."""
        out = {
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
            "extra": self.extra,
        }
        if not body:
            del out["body"]
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Memory:
        """Inverse of `to_dict` (used by the load cache, 10,000 times a listing: so it fills
        the frozen instance's fields directly instead of through the dataclass __init__)."""
        memory = object.__new__(cls)
        memory.__dict__.update(
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
        if isinstance(raw.get("fact"), str):  # the cache already holds the first paragraph
            memory.__dict__["fact"] = raw["fact"]
        return memory

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
    from datetime import UTC, datetime

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
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        return None, text
    first_nl = text.find("\n")
    if first_nl == -1 or text[:first_nl].strip() != "---":
        return None, text
    rest = text[first_nl + 1 :]
    match = re.search(r"^---[ \t]*\r?$", rest, flags=re.MULTILINE)
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
    """PyYAML's safe load, timestamps kept as strings. Raises yaml.YAMLError (and, on some
    malformed input, other exceptions: callers that read user files catch Exception)."""
    yaml, loader, _ = _yaml()
    return yaml.load(text, Loader=loader)  # a safe loader subclass


def dump_yaml(data: Any, *, flow: bool = False) -> str:
    yaml, _, dumper = _yaml()
    text: str = yaml.dump(
        data,
        Dumper=dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=flow,
        width=10_000,
    )
    return text


def read_frontmatter(fm_text: str) -> Any:
    """The frontmatter as data. Raises on broken YAML. Text in the shape orch writes is
    read by `quickyaml` (the same result, about three times faster); the rest by PyYAML."""
    quick = quickyaml.read(fm_text)
    return quick if quick is not None else load_yaml(fm_text)


# -- validation -----------------------------------------------------------------------------
_NAME_RX = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _opt_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _int_ok(value: Any) -> bool:
    return value is None or (type(value) is int and value >= 1)


def quick_schema_ok(raw: Any) -> bool:
    """True only when memory.schema.json surely accepts `raw` (False: ask jsonschema)."""
    if not isinstance(raw, dict):
        return False
    name, desc = raw.get("name"), raw.get("description")
    if not (isinstance(name, str) and len(name) <= 120 and _NAME_RX.fullmatch(name)):
        return False
    if not (isinstance(desc, str) and desc) or raw.get("type") not in MEMORY_TYPES:
        return False
    if raw.get("status") not in (*STATUSES, None):
        return False
    for key in ("subject", "reason", "superseded_by", "created", "updated"):
        if not _opt_str(raw.get(key)):
            return False
    for key in ("source", "verified"):
        if not (raw.get(key) is None or isinstance(raw[key], dict)):
            return False
    supersedes = raw.get("supersedes")
    if supersedes is not None and not (
        isinstance(supersedes, list) and all(isinstance(s, str) for s in supersedes)
    ):
        return False
    citations = raw.get("citations")
    if citations is None:
        return True
    if not isinstance(citations, list):
        return False
    return all(
        isinstance(c, dict)
        and isinstance(c.get("path"), str)
        and c["path"]
        and _int_ok(c.get("line"))
        and _opt_str(c.get("symbol"))
        for c in citations
    )


def schema_problems(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """JSON Schema errors for a frontmatter mapping, as (kind, one-line detail)."""
    from orchestrator.schemas import validator

    out: list[tuple[str, str]] = []
    for err in sorted(validator("memory").iter_errors(raw), key=lambda e: [str(p) for p in e.path]):
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
            out.append(("invalid_file", f"{where or 'frontmatter'}: {_short(err.message)}"))
    return out


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _yaml_reason(exc: Exception) -> str:
    """PyYAML's complaint in a few words, with the line of the file it points at."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if isinstance(problem, str) and problem:
        where = f" (line {mark.line + 2}, column {mark.column + 1})" if mark is not None else ""
        return _short(problem + where)  # + 2: the frontmatter starts on the file's line 2
    return _short(str(exc) or type(exc).__name__)


def memory_from_frontmatter(raw: dict[str, Any], body: str) -> Memory:
    """A Memory from a frontmatter mapping that passed the schema."""
    known = {k: raw[k] for k in KEY_ORDER if k in raw}
    return Memory(
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
        extra={k: v for k, v in raw.items() if k not in known},
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
        raw = read_frontmatter(fm_text)
    except RecursionError:
        return Parsed(None, (Problem(where, "invalid_file", "broken YAML frontmatter: too deep"),))
    except Exception as exc:  # PyYAML raises more than YAMLError on some malformed input
        reason = _yaml_reason(exc)
        return Parsed(None, (Problem(where, "invalid_file", f"broken YAML frontmatter: {reason}"),))
    if not isinstance(raw, dict):
        return Parsed(None, (Problem(where, "invalid_file", "frontmatter is not a mapping"),))
    if any(not isinstance(k, str) for k in raw):
        return Parsed(None, (Problem(where, "invalid_file", "frontmatter keys must be text"),))

    problems: list[Problem] = []
    if not quick_schema_ok(raw):
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
    memory = memory_from_frontmatter(raw, body)
    problems.extend(Problem(where, "missing_field", d, "warning") for d in completeness(memory))
    return Parsed(memory, tuple(problems), fm_text)


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


# -- writing --------------------------------------------------------------------------------
def _top_level_chunks(fm_text: str) -> tuple[str, dict[str, str]]:
    """(lines before the first key, {key: the exact lines of that key})."""
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
    return "".join(preamble), {k: "".join(v) for k, v in chunks.items()}


def _dump_key(key: str, value: Any) -> str:
    if key in FLOW_KEYS and isinstance(value, dict):  # `source: {task: x, phase: 2}`
        return f"{key}: {dump_yaml(value, flow=True).strip()}\n"
    return dump_yaml({key: value})


def _view(memory: Memory) -> dict[str, Any]:
    """Every key's value, defaults included, in the form the file would hold."""
    values: dict[str, Any] = {
        "name": memory.name,
        "description": memory.description,
        "type": memory.type,
        "subject": memory.subject,
        "reason": memory.reason,
        "citations": [c.to_dict() for c in memory.citations],
        "status": memory.status,
        "supersedes": list(memory.supersedes),
        "superseded_by": memory.superseded_by,
        "created": memory.created,
        "updated": memory.updated,
        "source": memory.source,
        "verified": memory.verified,
    }
    values.update(memory.extra)
    return values


def _same(a: Any, b: Any) -> bool:
    """Equal as data, types included (True is not 1, 1.0 is not 1)."""

    def canon(x: Any) -> str:
        return json.dumps(x, sort_keys=True, default=repr, ensure_ascii=False)

    try:
        return canon(a) == canon(b)
    except (TypeError, ValueError, RecursionError):
        return False


def _old_memory(original: str) -> tuple[Memory | None, str | None, str | None]:
    """(the memory the original text holds, its frontmatter text, its body)."""
    fm_text, body = split_frontmatter(original)
    if fm_text is None:
        return None, None, None
    try:
        raw = read_frontmatter(fm_text)
        if not isinstance(raw, dict) or not all(isinstance(k, str) for k in raw):
            return None, fm_text, body
        for key in ("name", "description", "type"):
            raw.setdefault(key, "")
        return memory_from_frontmatter(raw, body), fm_text, body
    except Exception:
        return None, fm_text, body


def serialize_memory(memory: Memory, original: str | None = None) -> str:
    """The file text for `memory`; keys whose value did not change keep their original bytes.

    The result always reads back as `memory`: if keeping original bytes would change what
    the file says (odd YAML in the original), the canonical form is written instead.
    """
    canonical = _render(memory, "", {}, set(), None)
    if original is None:
        return canonical
    old, fm_text, old_body = _old_memory(original)
    if old is None or fm_text is None:
        return canonical
    preamble, chunks = _top_level_chunks(fm_text)
    old_view, new_view = _view(old), _view(memory)
    unchanged = {k for k in new_view if _same(old_view.get(k), new_view[k])}
    kept = {k: c for k, c in chunks.items() if k in unchanged}
    # a default the original left out (status: active on a minimal file) stays left out
    text = _render(memory, preamble, kept, unchanged - set(chunks), old_body)
    try:
        again = _old_memory(text)[0]
    except Exception:
        again = None
    if (
        again is None
        or not _same(_view(again), new_view)
        or again.body != _body_text(memory.body, old_body)
    ):
        return canonical
    return text


def _body_text(body: str, old_body: str | None) -> str:
    if old_body is not None and old_body == body:
        return old_body
    return body + "\n" if body and not body.endswith("\n") else body


def _render(
    memory: Memory, preamble: str, kept: dict[str, str], omit: set[str], old_body: str | None
) -> str:
    new = {k: v for k, v in memory.frontmatter().items() if k not in omit}
    rank = {k: i for i, k in enumerate(KEY_ORDER)}
    order = list(kept)
    for key in new:  # new or changed keys go to their canonical place among the kept ones
        if key in order:
            continue
        mine = rank.get(key, len(KEY_ORDER))
        later = [i for i, k in enumerate(order) if rank.get(k, len(KEY_ORDER)) > mine]
        order.insert(later[0] if later else len(order), key)
    parts = [preamble]
    for key in order:
        chunk = kept.get(key)
        if chunk is not None:
            parts.append(chunk if chunk.endswith("\n") else chunk + "\n")
        else:
            parts.append(_dump_key(key, new[key]))
    return "---\n" + "".join(parts) + "---\n" + _body_text(memory.body, old_body)
