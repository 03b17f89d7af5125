"""JSON Schemas shipped with the package, and cached validators for them.

`memory` (repo memory frontmatter), `event` (the NDJSON envelope), `plan` (plan.json) and
one schema per event payload under `payloads/<event_type>.schema.json`, read from the
package's folder when first needed (not through `importlib.resources`, whose import costs
`orch status` ~8 ms: the package is always installed as files). jsonschema is
imported on first use only: it costs ~100 ms and most commands never validate. A
validator is built once a process, when something is first validated against its
schema; the schemas themselves are checked against their meta-schema by the tests
(`shipped_schemas()`), not each time a process builds a validator.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

HERE = Path(__file__).parent
SUFFIX = ".schema.json"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The schema `name` (e.g. "memory", "payloads/gate_event")."""
    text = (HERE / f"{name}{SUFFIX}").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def has_schema(name: str) -> bool:
    return (HERE / f"{name}{SUFFIX}").is_file()


def shipped_schemas() -> list[str]:
    """The name of every schema in the package (`plan`, `payloads/gate_event`...)."""
    names = [p.name.removesuffix(SUFFIX) for p in HERE.glob(f"*{SUFFIX}")]
    names += [f"payloads/{p.name.removesuffix(SUFFIX)}" for p in HERE.glob(f"payloads/*{SUFFIX}")]
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
