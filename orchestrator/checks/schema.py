"""Records declared once: the check, the builder and the JSON Schema all come from it.

A record is a frozen dataclass, and its annotations are the only place its fields, their
types and their order are written. What a record may declare:

| annotation | in a mapping read from a file | JSON Schema |
|---|---|---|
| `str`, `int`, `float`, `bool` | that scalar (an `int` also as a whole float: `2.0`) | string, integer, number, boolean |
| `Annotated[str, OneOf(("a", "b"))]` | one of the values | enum |
| `tuple[X, ...]` | a list of X | array |
| `dict[str, Any]` | any mapping | object |
| another record | a mapping of its fields (other keys allowed) | object |
| `Annotated[X, Pattern(rx)]` (`MinLen`, `MaxLen`, `Minimum`) | X, and the constraint | pattern (minLength...) |

A field without a default is required; a field with one may be missing or null, either
meaning its default. Fields declared with `metadata=NOT_IN_SCHEMA` are not part of the
mapping (a memory's body and the keys orch does not know).

- `problems(cls, raw)`: why `raw` is not a valid `cls`, one line each ([] when it is);
- `build(cls, raw)`: the record, from a mapping `problems` accepted;
- `json_schema(cls)`: the JSON Schema (draft 2020-12) that accepts exactly what
  `problems` accepts (a property test holds the two together);
- `declared(cls)`: each field's declared shape, for code that converts values itself (the
  configuration, read from TOML and from environment variables).
"""

from __future__ import annotations

import dataclasses
import enum
import re
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache, cached_property
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin, get_type_hints

NOT_IN_SCHEMA: Mapping[str, bool] = types.MappingProxyType({"schema": False})
R = TypeVar("R")


@dataclass(frozen=True)
class OneOf:
    """The value is one of `values` (a closed set of names: a memory's type, a policy)."""

    values: tuple[Any, ...]


@dataclass(frozen=True)
class Pattern:
    """The text matches `regex` (searched, as JSON Schema does)."""

    regex: str

    def holds(self, value: Any) -> bool:
        return re.search(self.regex, value) is not None

    def problem(self, value: Any, where: str) -> str | None:
        if self.holds(value):
            return None
        return f"{where} {value!r} does not match {self.regex}"

    def schema(self) -> dict[str, Any]:
        return {"pattern": self.regex}


@dataclass(frozen=True)
class MinLen:
    length: int

    def holds(self, value: Any) -> bool:
        return len(value) >= self.length

    def problem(self, value: Any, where: str) -> str | None:
        if self.holds(value):
            return None
        if self.length == 1:
            return f"{where} must not be empty"
        return f"{where} must be at least {self.length} characters long"

    def schema(self) -> dict[str, Any]:
        return {"minLength": self.length}


@dataclass(frozen=True)
class MaxLen:
    length: int

    def holds(self, value: Any) -> bool:
        return len(value) <= self.length

    def problem(self, value: Any, where: str) -> str | None:
        if self.holds(value):
            return None
        return f"{where} is longer than {self.length} characters"

    def schema(self) -> dict[str, Any]:
        return {"maxLength": self.length}


@dataclass(frozen=True)
class Minimum:
    least: int

    def holds(self, value: Any) -> bool:
        return bool(value >= self.least)

    def problem(self, value: Any, where: str) -> str | None:
        return None if self.holds(value) else f"{where} must be at least {self.least}"

    def schema(self) -> dict[str, Any]:
        return {"minimum": self.least}


Constraint = Pattern | MinLen | MaxLen | Minimum


class Kind(enum.Enum):
    """What a declared type asks of a value (the value: its JSON Schema type)."""

    TEXT = "string"
    INTEGER = "integer"
    NUMBER = "number"
    BOOLEAN = "boolean"
    CHOICE = "enum"
    LIST = "array"
    MAPPING = "object"
    RECORD = "record"  # an object whose fields are declared

    @property
    def json_type(self) -> str:
        return "object" if self is Kind.RECORD else self.value

    @property
    def noun(self) -> str:
        return NOUNS[self]

    def accepts(self, value: Any) -> bool:
        """Whether `value` has this kind's type (as JSON Schema's type keyword judges)."""
        if self is Kind.TEXT:
            return isinstance(value, str)
        if self is Kind.INTEGER:
            whole_float = isinstance(value, float) and value.is_integer()
            return whole_float or (isinstance(value, int) and not isinstance(value, bool))
        if self is Kind.NUMBER:
            return isinstance(value, int | float) and not isinstance(value, bool)
        if self is Kind.BOOLEAN:
            return isinstance(value, bool)
        if self is Kind.LIST:
            return isinstance(value, list)
        return isinstance(value, dict)  # MAPPING, RECORD (a CHOICE is checked by value)


NOUNS = {
    Kind.TEXT: "text",
    Kind.INTEGER: "a whole number",
    Kind.NUMBER: "a number",
    Kind.BOOLEAN: "true or false",
    Kind.CHOICE: "one of its values",
    Kind.LIST: "a list",
    Kind.MAPPING: "a mapping",
    Kind.RECORD: "a mapping",
}
SCALARS = {str: Kind.TEXT, int: Kind.INTEGER, float: Kind.NUMBER, bool: Kind.BOOLEAN}
# the one type whose values a kind always accepts (`Shape.plainly_accepts`)
EXACT_TYPES = {
    Kind.TEXT: str,
    Kind.INTEGER: int,
    Kind.BOOLEAN: bool,
    Kind.LIST: list,
    Kind.MAPPING: dict,
    Kind.RECORD: dict,
}


@dataclass(frozen=True)
class Shape:
    """A declared type, read: its kind, whether null is allowed, and what else it asks."""

    kind: Kind
    nullable: bool = False
    constraints: tuple[Constraint, ...] = ()
    choices: tuple[Any, ...] = ()  # CHOICE
    item: Shape | None = None  # LIST
    record: type | None = None  # RECORD

    @cached_property
    def exact_type(self) -> type | None:
        """The one type whose values this kind always accepts (None for a choice, a number)."""
        return EXACT_TYPES.get(self.kind)

    @cached_property
    def _typed_choices(self) -> frozenset[tuple[type, Any]]:
        return frozenset((type(c), c) for c in self.choices)

    def is_choice(self, value: Any) -> bool:
        """Whether `value` is one of the choices, equal as a JSON value (True is not 1)."""
        try:
            return (type(value), value) in self._typed_choices
        except TypeError:  # an unhashable value (a list, a mapping) is no choice
            return False

    def plainly_accepts(self, value: Any) -> bool:
        """Whether `value` passes on sight: null where null is allowed, one of the choices,
        or a value of the very type its kind asks for that meets every constraint (a list's
        items and a record's fields passing on sight too). False says nothing: the full
        check (`problems`) decides, and says why."""
        if value is None:
            return self.nullable
        if self.kind is Kind.CHOICE:
            return not self.constraints and self.is_choice(value)
        exact = type(value) is self.exact_type
        if not exact or (self.constraints and not all(c.holds(value) for c in self.constraints)):
            return False
        if self.item is not None:
            return all(self.item.plainly_accepts(v) for v in value)
        if self.record is not None:
            return next(_record_problems(self.record, value, ""), None) is None
        return True


def shape_of(annotation: Any) -> Shape:
    """The shape of one annotation (see the module docstring for what is understood)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *extras = get_args(annotation)
        inner = shape_of(base)
        for extra in extras:
            if isinstance(extra, OneOf):
                inner = replace(inner, kind=Kind.CHOICE, choices=extra.values)
        found = tuple(e for e in extras if isinstance(e, Constraint))
        return replace(inner, constraints=inner.constraints + found)
    if origin in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"a record field is one type or that type | None, not {annotation}")
        return replace(shape_of(rest[0]), nullable=True)
    if origin is tuple:
        args = get_args(annotation)
        if len(args) != 2 or args[1] is not Ellipsis:
            raise TypeError(f"a record's list is tuple[X, ...], not {annotation}")
        return Shape(Kind.LIST, item=shape_of(args[0]))
    if origin is dict or annotation is dict:
        return Shape(Kind.MAPPING)
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return Shape(Kind.RECORD, record=annotation)
    if annotation in SCALARS:
        return Shape(SCALARS[annotation])
    raise TypeError(f"no schema for the type {annotation!r}")


@cache
def schema_fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    """The fields a record's mapping holds, in declaration order."""
    return tuple(f for f in dataclasses.fields(cls) if f.metadata.get("schema", True))


def required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


@cache
def declared(cls: type) -> dict[str, Shape]:
    """{field: shape} as the annotations say, for every field of a record."""
    hints = get_type_hints(cls, include_extras=True)
    return {f.name: shape_of(hints[f.name]) for f in dataclasses.fields(cls)}


@cache
def shapes(cls: type) -> dict[str, Shape]:
    """{field: shape} of a record's mapping; a field with a default may also be null there
    (meaning the default)."""
    out = {}
    for f in schema_fields(cls):
        shape = declared(cls)[f.name]
        out[f.name] = shape if required(f) else replace(shape, nullable=True)
    return out


# -- the check ------------------------------------------------------------------------------


def problems(cls: type, raw: Any) -> list[str]:
    """Every reason `raw` is not a valid `cls` mapping, in declaration order ([] if none)."""
    if not isinstance(raw, dict):
        return [f"must be a mapping, not {_describe(raw)}"]
    return list(_record_problems(cls, raw, ""))


@cache
def _checks(cls: type) -> tuple[tuple[str, Shape, bool], ...]:
    """(field, shape, whether required) of each field of a record's mapping, in order."""
    return tuple((f.name, shapes(cls)[f.name], required(f)) for f in schema_fields(cls))


def _record_problems(cls: type, raw: dict[Any, Any], prefix: str) -> Iterator[str]:
    for name, shape, needed in _checks(cls):
        if name in raw:
            value = raw[name]
            if not shape.plainly_accepts(value):
                where = f"{prefix}.{name}" if prefix else name
                yield from _value_problems(shape, value, where)
        elif needed:
            yield f"{prefix + ': ' if prefix else ''}missing required field {name!r}"


def _value_problems(shape: Shape, value: Any, where: str) -> Iterator[str]:
    if value is None:
        if not shape.nullable:
            yield f"{where} must be {shape.kind.noun}, not null"
        return
    if shape.kind is Kind.CHOICE:
        if not shape.is_choice(value):
            yield f"unknown {where} {_short(repr(value))} (one of {', '.join(shape.choices)})"
        return
    if not shape.kind.accepts(value):
        yield f"{where} must be {shape.kind.noun}, not {_describe(value)}"
        return
    for constraint in shape.constraints:
        found = constraint.problem(value, where)
        if found is not None:
            yield found
    if shape.kind is Kind.LIST:
        assert shape.item is not None
        for i, item in enumerate(value):
            yield from _value_problems(shape.item, item, f"{where}.{i}")
    elif shape.kind is Kind.RECORD:
        assert shape.record is not None
        yield from _record_problems(shape.record, value, where)


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, str | int | float):
        return _short(repr(value))
    return f"a {type(value).__name__} ({_short(str(value))})"  # a date, a datetime


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- building -------------------------------------------------------------------------------


def build(cls: type[R], raw: Mapping[str, Any], **more: Any) -> R:
    """The record `raw` describes (a mapping `problems` accepted); keys it does not declare
    are left out, null means the default; `more` gives the fields outside the mapping."""
    record: type = cls
    values = {}
    for name, shape in _conversions(record):
        value = raw.get(name)
        if value is not None:
            values[name] = value if shape is None else _converted(shape, value)
    return cls(**values, **more)


CONVERTED = frozenset({Kind.LIST, Kind.RECORD, Kind.INTEGER})  # a value is not taken as is


@cache
def _conversions(cls: type) -> tuple[tuple[str, Shape | None], ...]:
    """(field, the shape its value is converted by, or None when taken as it is)."""
    return tuple(
        (name, shape if shape.kind in CONVERTED else None) for name, shape in shapes(cls).items()
    )


def _converted(shape: Shape, value: Any) -> Any:
    if shape.kind is Kind.LIST:
        assert shape.item is not None
        item = shape.item
        if item.kind not in CONVERTED:
            return tuple(value)
        return tuple(_converted(item, v) for v in value)
    if shape.kind is Kind.RECORD:
        assert shape.record is not None
        return build(shape.record, value)
    if shape.kind is Kind.INTEGER and isinstance(value, float):
        return int(value)
    return value


# -- the JSON Schema ------------------------------------------------------------------------


def json_schema(cls: type) -> dict[str, Any]:
    """The JSON Schema of a record's mapping: `type`, `required`, `properties`."""
    out: dict[str, Any] = {"type": "object"}
    needed = [f.name for f in schema_fields(cls) if required(f)]
    if needed:
        out["required"] = needed
    out["properties"] = {name: _schema(shape) for name, shape in shapes(cls).items()}
    return out


def _schema(shape: Shape) -> dict[str, Any]:
    out: dict[str, Any]
    if shape.kind is Kind.CHOICE:
        out = {"enum": [*shape.choices, None] if shape.nullable else list(shape.choices)}
    else:
        name = shape.kind.json_type
        out = {"type": [name, "null"] if shape.nullable else name}
        if shape.kind is Kind.LIST:
            assert shape.item is not None
            out["items"] = _schema(shape.item)
        elif shape.kind is Kind.RECORD:
            assert shape.record is not None
            out.update({k: v for k, v in json_schema(shape.record).items() if k != "type"})
    for constraint in shape.constraints:
        out.update(constraint.schema())
    return out
