"""Row-level transforms applied between extract and load."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

FX_TABLE = "fx_rates_daily"


def dedupe_rows(rows: Iterable[dict], key: tuple[str, ...] = ("order_id",)) -> list[dict]:
    """Keep the last row seen for each key: corrections arrive after the original."""
    latest: dict[tuple, dict] = {}
    for row in rows:
        latest[tuple(row[k] for k in key)] = row
    return list(latest.values())


def normalize_ts(value: str) -> dt.datetime:
    """Parse an ISO timestamp and convert it to UTC (naive timestamps are taken as UTC)."""
    parsed = dt.datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


def clean_currency(amount: str, currency: str, rates: dict[tuple[str, str], float], day: str) -> float:
    """Strip symbols and convert to EUR at the rate of the order's day (from FX_TABLE)."""
    value = float(amount.replace("€", "").replace("$", "").replace(",", ""))
    return value * rates[(currency, day)]
