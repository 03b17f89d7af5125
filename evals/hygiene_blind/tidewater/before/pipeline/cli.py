"""`tidewater run`: one pipeline run over a date range."""

from __future__ import annotations

import argparse
import datetime as dt


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tidewater")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--since", required=True)
    run.add_argument("--until")
    run.add_argument("--tables", nargs="*")
    run.add_argument("--full-refresh", action="store_true", help="replace the partitions")
    run.add_argument("--dry-run", action="store_true", help="list what would be loaded")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    since = dt.date.today() - dt.timedelta(days=1) if args.since == "yesterday" else dt.date.fromisoformat(args.since)
    from pipeline.extract import extract_orders

    if args.dry_run:
        print(f"would load orders since {since}")
        return
    extract_orders(since)


if __name__ == "__main__":
    main()
