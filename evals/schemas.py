"""Regenerate the JSON Schemas that are derived from a record's declaration.

    python -m evals.schemas [--check]

`orchestrator/schemas/memory.schema.json` is `memory_json_schema()` of the `Memory` model
(orchestrator/store/memfile.py): this writes it, or with `--check` exits 1 when the shipped
file differs (a test holds the two equal too).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from orchestrator.store.memfile import SCHEMA_FILE, memory_json_schema


def schema_text() -> str:
    return json.dumps(memory_json_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.schemas", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    path: Path = SCHEMA_FILE
    text = schema_text()
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    if current == text:
        print(f"{path.name}: up to date")
        return 0
    if args.check:
        print(f"{path.name}: stale (run python -m evals.schemas)", file=sys.stderr)
        return 1
    path.write_text(text, encoding="utf-8")
    print(f"{path.name}: rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
