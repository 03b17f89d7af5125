"""Checks that stop a run before bad data reaches the warehouse."""

from __future__ import annotations

from collections.abc import Iterable


class QualityError(Exception):
    pass


def check_nulls(rows: Iterable[dict], columns: tuple[str, ...]) -> None:
    for row in rows:
        for column in columns:
            if row.get(column) is None:
                raise QualityError(f"null {column}")


class RowCountCheck:
    tolerance = 0.02

    def __init__(self, yesterday: int) -> None:
        self.yesterday = yesterday

    def check(self, today: int) -> None:
        if self.yesterday and abs(today - self.yesterday) / self.yesterday > self.tolerance:
            raise QualityError(f"row count moved from {self.yesterday} to {today}")
