"""Readers for the raw exports: CSV in chunks, Parquet whole."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd

CHUNK_ROWS = 50_000


def read_csv(path: str, *, chunk_rows: int = CHUNK_ROWS) -> Iterator[pd.DataFrame]:
    """Yield `path` in chunks of `chunk_rows`; the CRM export's byte order mark is stripped."""
    yield from pd.read_csv(path, chunksize=chunk_rows, encoding="utf-8-sig")


def read_parquet(path: str) -> pd.DataFrame:
    return pd.read_parquet(path)
