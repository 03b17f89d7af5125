"""The event log's tamper table: every attack detected and refused.

    python -m evals.security_log [--json]

Each attack runs on a fresh task (the demo's sample, waiting for its plan's approval) with
real `orch` processes and a state folder of its own; see `evals/tamper.py`.
`tamper_table()` is what a wider security table plugs in. Exit 1 unless every row is ok.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from evals.tamper import tamper_table

__all__ = ["main", "tamper_table"]


def render(rows: list[dict[str, Any]]) -> str:
    width = max(len(r["attack"]) for r in rows)
    out = [
        f"{'attack':<{width}}  {'line':>4}  {'check':>5}  {'resume':>6}  result",
        f"{'-' * width}  ----  -----  ------  ------",
    ]
    for r in rows:
        line = "-" if r["expected_line"] is None else str(r["expected_line"])
        result = "ok" if r["ok"] else "FAILED"
        out.append(
            f"{r['attack']:<{width}}  {line:>4}  {r['check_exit']:>5}  {r['resume_exit']:>6}  "
            f"{result}: {r['verdict']}"
        )
        out += [f"{'':<{width}}  {note}" for note in r["notes"]]
    passed = sum(1 for r in rows if r["ok"])
    out.append(f"\n{passed} of {len(rows)} rows as required")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the event log's tamper table")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    rows = tamper_table()
    print(json.dumps(rows, indent=1) if args.json else render(rows))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
