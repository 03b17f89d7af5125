"""Load transformed rows into the warehouse."""

from __future__ import annotations

from collections.abc import Sequence

BATCH_SIZE = 5000


class WarehouseLoader:
    def __init__(self, connection) -> None:
        self.connection = connection

    def merge(self, table: str, rows: Sequence[dict], key: str) -> int:
        """Upsert `rows` by `key`, BATCH_SIZE rows at a time, one transaction per table."""
        with self.connection.begin():
            for start in range(0, len(rows), BATCH_SIZE):
                batch = rows[start : start + BATCH_SIZE]
                self.connection.execute(f"merge into {table} using batch on {key}", batch)
        return len(rows)

    def truncate_and_load(self, table: str, rows: Sequence[dict]) -> int:
        """For small dimension tables only."""
        with self.connection.begin():
            self.connection.execute(f"truncate table {table}")
            self.connection.execute(f"insert into {table} values", rows)
        return len(rows)


def load_to_warehouse(loader: WarehouseLoader, table: str, rows: Sequence[dict]) -> int:
    return loader.merge(table, rows, key="id")
