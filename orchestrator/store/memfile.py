"""The repo memory file format: the `Memory` model, and pure parse and serialize.

A memory file is YAML frontmatter between `---` lines, then a markdown body whose first
paragraph is the fact. `Memory` (with `Citation`) is the only place the frontmatter's
fields, their types and their order are declared; everything else is derived from it:
the check of a file's frontmatter and the building of the record (`orchestrator.checks.
schema`), the JSON form of `--json` and the parse cache (`to_dict`/`from_dict`), the key
order of a written file, and `orchestrator/schemas/memory.schema.json`
(`python -m orchestrator.store.memfile` rewrites it; a test holds the two equal).

- `parse_memory` reads frontmatter with PyYAML's safe loader (its C parser when PyYAML has
  one) and checks it against the model. It tolerates broken or partial frontmatter: it
  returns the memory it could read (or None) and a list of problems, and never raises on
  bad content.
- `serialize_memory` is the one writer. It emits only the keys that hold something, in
  the declared order, and, given the original text, keeps every top-level key whose value
  did not change byte-for-byte (defaults such as `supersedes: []` included), so that a
  status change is a small git diff.
- Timestamps stay strings (the loader here does not turn them into datetimes), so a load
  and a save never reformat them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any

import yaml

from orchestrator.checks.schema import (
    NOT_IN_SCHEMA,
    MaxLen,
    Minimum,
    MinLen,
    OneOf,
    Pattern,
    build,
    json_schema,
    problems,
    schema_fields,
)
from orchestrator.store.plainfront import PlainReader

try:  # libyaml's C parser and emitter, when PyYAML was built with them
    from yaml import CSafeDumper as SafeDumper
    from yaml import CSafeLoader as SafeLoader
except ImportError:  # pragma: no cover - a PyYAML without libyaml
    from yaml import SafeDumper, SafeLoader  # type: ignore[assignment]

MEMORY_TYPES = ("user", "feedback", "project", "reference")
STATUSES = ("active", "superseded", "stale")
NEEDS_CITATIONS = ("project", "reference")
CARD_KEYS = ("person", "relationship", "backstory", "observed")  # user memories only
SAFE_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
FLOW_KEYS = frozenset({"source", "verified"})  # written on one line: {task: x, phase: 2}
SCHEMA_FILE = Path(__file__).parent.parent / "schemas" / "memory.schema.json"
_TOP_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:")
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class TextTimestampLoader(SafeLoader):
    """Safe loading, with timestamps left as the text they are."""


class TextTimestampDumper(SafeDumper):
    """Safe dumping that does not quote timestamp-like text (it reads back as text here)."""


TextTimestampLoader.yaml_implicit_resolvers = TextTimestampDumper.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in found if tag != _TIMESTAMP]
    for first, found in SafeLoader.yaml_implicit_resolvers.items()
}


class _TextTimestampResolver(yaml.resolver.Resolver):
    """How `TextTimestampLoader` types a plain scalar, for `plainfront`."""

    yaml_implicit_resolvers = TextTimestampLoader.yaml_implicit_resolvers


_RESOLVER = _TextTimestampResolver()


@dataclass(frozen=True)
class Citation:
    path: Annotated[str, MinLen(1)]  # repository-relative
    line: Annotated[int, Minimum(1)] | None = None
    symbol: str | None = None  # a function, class or flag the fact names

    def to_dict(self) -> dict[str, Any]:
        """The citation as a file holds it: the path, and line and symbol when given."""
        values = {f.name: getattr(self, f.name) for f in schema_fields(Citation)}
        return {k: v for k, v in values.items() if v is not None or k == "path"}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Citation:
        return build(cls, raw)

    @classmethod
    def loosely(cls, raw: dict[str, Any]) -> Citation | None:
        """The citation a loosely written mapping gives (a model's candidate, an imported
        file): the fields that pass the model's check; None without a usable path."""
        kept = {
            key: value for key, value in raw.items() if not problems(cls, {"path": "-", key: value})
        }
        return build(cls, kept) if kept.get("path") else None


@dataclass(frozen=True)
class Memory:
    """One repo memory. The fields down to `verified` are the frontmatter, in file order."""

    name: Annotated[str, Pattern(SAFE_NAME), MaxLen(120)]  # the file's stem
    description: Annotated[str, MinLen(1)]  # one line: what MEMORY.md shows
    type: Annotated[str, OneOf(MEMORY_TYPES)]
    subject: str | None = None  # what the fact is about
    reason: str | None = None  # why it matters beyond one task
    citations: tuple[Citation, ...] = ()  # required for project and reference memories
    status: Annotated[str, OneOf(STATUSES)] = "active"
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    created: str | None = None
    updated: str | None = None
    source: dict[str, Any] | None = None  # provenance: {task, phase}, {imported, file}
    verified: dict[str, Any] | None = None  # {commit, at, result}
    # a user memory may be a card about a person (docs/memory.md, "User cards")
    person: str | None = None  # who it is about
    relationship: str | None = None  # to the project or to another person
    backstory: str | None = None  # what makes the statement make sense
    observed: str | None = None  # when it was said (ISO 8601)
    body: str = field(default="", metadata=NOT_IN_SCHEMA)
    extra: dict[str, Any] = field(default_factory=dict, metadata=NOT_IN_SCHEMA)  # other keys

    @cached_property
    def fact(self) -> str:
        """The body's first paragraph: the concrete, falsifiable claim."""
        return first_paragraph(self.body)

    @property
    def active(self) -> bool:
        return self.status == "active"

    def stored(self) -> dict[str, Any]:
        """Every frontmatter key's value as a file holds it, defaults included, then the
        keys orch does not know."""
        out = {key: _stored(getattr(self, key)) for key in FRONTMATTER_KEYS}
        out.update(self.extra)
        return out

    def frontmatter(self) -> dict[str, Any]:
        """What a written file's frontmatter holds: keys in declared order, empty ones
        (null, an empty list) left out, the keys orch does not know last."""
        known = {f.name for f in schema_fields(Memory)}
        return {
            k: v for k, v in self.stored().items() if k not in known or (v is not None and v != [])
        }

    def to_dict(self, *, body: bool = True) -> dict[str, Any]:
        """The JSON form used by `--json` output and the parse cache: every field, defaults
        included, the fact, the body (`body=False` leaves it out, as listings do) and the
        keys orch does not know under `extra`."""
        out = {key: _stored(getattr(self, key)) for key in FRONTMATTER_KEYS}
        out["fact"] = self.fact
        if body:
            out["body"] = self.body
        out["extra"] = self.extra
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Memory:
        """Inverse of `to_dict` (`fact` is derived from the body, so it is not read)."""
        return build(cls, raw, body=raw.get("body", ""), extra=dict(raw.get("extra") or {}))

    def with_changes(self, **changes: Any) -> Memory:
        return replace(self, **changes)


FRONTMATTER_KEYS = tuple(f.name for f in schema_fields(Memory))  # in file order
_KNOWN_KEYS = frozenset(FRONTMATTER_KEYS)


def _stored(value: Any) -> Any:
    """A field's value as a file holds it: a tuple as a list, a citation as a mapping."""
    if isinstance(value, tuple):
        return [v.to_dict() if isinstance(v, Citation) else v for v in value]
    return value


def memory_json_schema() -> dict[str, Any]:
    """The JSON Schema of a memory file's frontmatter, derived from `Memory`."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://orch.dev/schemas/memory.schema.json",
        "title": "Repo memory frontmatter",
        "description": (
            "YAML frontmatter of memories/repo/<name>.md, generated from "
            "orchestrator.store.memfile.Memory. Only name, description and type are "
            "required to load; the rest are audited as missing fields."
        ),
        **json_schema(Memory),
    }


def frontmatter_problems(raw: Any) -> list[str]:
    """Why a frontmatter mapping is not a valid memory, one line each ([] when it is)."""
    return problems(Memory, raw)


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
    frontmatter: dict[str, Any] | None = None  # the mapping `memory` was built from


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
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        return None, text
    first_nl = text.find("\n")
    if first_nl == -1 or text[:first_nl].strip() != "---":
        return None, text
    rest = text[first_nl + 1 :]
    fence = _closing_fence(rest)
    if fence is None:
        return None, text
    fm = rest[: fence[0]]
    body = rest[fence[1] :]
    if body.startswith("\r\n"):
        body = body[2:]
    elif body.startswith("\n"):
        body = body[1:]
    return fm, body


def _closing_fence(rest: str) -> tuple[int, int] | None:
    """(start, end) of the first line of `rest` that is `---`, then spaces or tabs and at
    most a carriage return (the end before the line's newline); None when there is none."""
    at = rest.find("---")
    while at >= 0:
        if at == 0 or rest[at - 1] == "\n":
            end = rest.find("\n", at)
            end = len(rest) if end < 0 else end
            tail = rest[at + 3 : end]
            if not tail.removesuffix("\r").strip(" \t"):
                return at, end
        at = rest.find("---", at + 1)
    return None


def load_yaml(text: str) -> Any:
    """PyYAML's safe load, timestamps kept as strings. Raises yaml.YAMLError (and, on some
    malformed input, other exceptions: callers that read user files catch Exception)."""
    return yaml.load(text, Loader=TextTimestampLoader)  # a safe loader subclass


def dump_yaml(data: Any, *, flow: bool = False) -> str:
    text: str = yaml.dump(
        data,
        Dumper=TextTimestampDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=flow,
        width=10_000,
    )
    return text


# -- reading --------------------------------------------------------------------------------


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


def plain_reader() -> PlainReader:
    """A reader of the frontmatter shape orch writes, typing as `load_yaml` does; one
    reader serves the files of one listing (see `plainfront`)."""
    return PlainReader(_RESOLVER)


def _read_mapping(fm_text: str, reader: PlainReader | None = None) -> dict[str, Any] | str:
    """The frontmatter as a mapping with text keys, or why it is not one. The shape orch
    writes is read directly (`plainfront`), anything else by PyYAML: the same mapping."""
    plain = (reader or plain_reader()).mapping(fm_text)
    if plain is not None:
        return plain
    try:
        raw = load_yaml(fm_text)
    except RecursionError:
        return "broken YAML frontmatter: too deep"
    except Exception as exc:  # PyYAML raises more than YAMLError on some malformed input
        return f"broken YAML frontmatter: {_yaml_reason(exc)}"
    if not isinstance(raw, dict):
        return "frontmatter is not a mapping"
    if any(not isinstance(k, str) for k in raw):
        return "frontmatter keys must be text"
    return raw


def from_frontmatter(raw: dict[str, Any], body: str) -> Memory:
    """The memory a frontmatter mapping the model accepted describes."""
    extra = {k: v for k, v in raw.items() if k not in _KNOWN_KEYS}
    return build(Memory, raw, body=body, extra=extra)


def parse_memory(
    text: str, stem: str, *, path: str | None = None, reader: PlainReader | None = None
) -> Parsed:
    """Read one memory file. Returns what could be read and every problem found. `reader`
    is the one of the listing the file is in, if any (`plain_reader`)."""
    where = path or f"{stem}.md"
    fm_text, body = split_frontmatter(text)
    if fm_text is None:
        return Parsed(
            None, (Problem(where, "invalid_file", "no YAML frontmatter between --- lines"),)
        )
    raw = _read_mapping(fm_text, reader)
    if isinstance(raw, str):
        return Parsed(None, (Problem(where, "invalid_file", raw),))
    hard = [Problem(where, "invalid_file", _short(d)) for d in frontmatter_problems(raw)]
    name = raw.get("name")
    if isinstance(name, str) and name != stem:
        hard.append(
            Problem(where, "invalid_file", f"name {name!r} is not the file's stem {stem!r}")
        )
    if hard:
        return Parsed(None, tuple(hard), fm_text)
    memory = from_frontmatter(raw, body)
    warnings = [Problem(where, "missing_field", d, "warning") for d in completeness(memory)]
    return Parsed(memory, tuple(warnings), fm_text, raw)


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


def _same(a: Any, b: Any) -> bool:
    """Equal as data, types included (True is not 1, 1.0 is not 1)."""

    def canon(x: Any) -> str:
        return json.dumps(x, sort_keys=True, default=repr, ensure_ascii=False)

    try:
        return canon(a) == canon(b)
    except (TypeError, ValueError, RecursionError):
        return False


def _old_memory(original: str) -> tuple[Memory | None, str | None, str | None]:
    """(the memory the original text holds, its frontmatter text, its body); no memory when
    the original is not a valid memory file (the canonical form is written then)."""
    fm_text, body = split_frontmatter(original)
    if fm_text is None:
        return None, None, None
    raw = _read_mapping(fm_text)
    if isinstance(raw, str) or frontmatter_problems(raw):
        return None, fm_text, body
    return from_frontmatter(raw, body), fm_text, body


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
    old_view, new_view = old.stored(), memory.stored()
    unchanged = {k for k in new_view if _same(old_view.get(k), new_view[k])}
    kept = {k: c for k, c in chunks.items() if k in unchanged}
    # a default the original left out (status: active on a minimal file) stays left out
    text = _render(memory, preamble, kept, unchanged - set(chunks), old_body)
    again, _, _ = _old_memory(text)
    if (
        again is None
        or not _same(again.stored(), new_view)
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
    rank = {key: i for i, key in enumerate(FRONTMATTER_KEYS)}
    last = len(rank)
    order = list(kept)
    for key in new:  # new or changed keys go to their declared place among the kept ones
        if key in order:
            continue
        mine = rank.get(key, last)
        later = [i for i, k in enumerate(order) if rank.get(k, last) > mine]
        order.insert(later[0] if later else len(order), key)
    parts = [preamble]
    for key in order:
        chunk = kept.get(key)
        if chunk is not None:
            parts.append(chunk if chunk.endswith("\n") else chunk + "\n")
        else:
            parts.append(_dump_key(key, new[key]))
    return "---\n" + "".join(parts) + "---\n" + _body_text(memory.body, old_body)
