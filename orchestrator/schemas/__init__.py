"""JSON Schemas shipped with the package, and cached validators for them.

`memory` (repo memory frontmatter), `event` (the NDJSON envelope), `plan` (plan.json) and
one schema per event payload under `payloads/<event_type>.schema.json`. jsonschema is
imported on first use only: it costs ~100 ms and most commands never validate. A
validator is built once a process, when something is first validated against its
schema; the schemas themselves are checked against their meta-schema by the tests
(`shipped_schemas()`), not each time a process builds a validator.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.protocols import Validator


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The schema `name` (e.g. "memory", "payloads/gate_event")."""
    text = resources.files(__package__).joinpath(f"{name}.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def has_schema(name: str) -> bool:
    return resources.files(__package__).joinpath(f"{name}.schema.json").is_file()


def shipped_schemas() -> list[str]:
    """The name of every schema in the package (`plan`, `payloads/gate_event`...)."""
    suffix = ".schema.json"
    root = resources.files(__package__)
    names = [p.name[: -len(suffix)] for p in root.iterdir() if p.name.endswith(suffix)]
    payloads = root.joinpath("payloads")
    names += [
        f"payloads/{p.name[: -len(suffix)]}" for p in payloads.iterdir() if p.name.endswith(suffix)
    ]
    return sorted(names)


@cache
def validator(name: str) -> Validator:
    from jsonschema import Draft202012Validator

    schema = load_schema(name)
    v: Validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return v


def errors(name: str, instance: Any) -> list[str]:
    """Every schema error for `instance`, as `path: message` lines, in path order."""
    found = []
    for err in sorted(
        validator(name).iter_errors(instance), key=lambda e: [str(p) for p in e.path]
    ):
        where = "/".join(str(p) for p in err.absolute_path)
        found.append(f"{where or '(root)'}: {err.message}")
    return found
