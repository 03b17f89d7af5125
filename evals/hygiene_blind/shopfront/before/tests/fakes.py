"""In-memory stand-ins used by the unit tests."""


class FakeRepository:
    def __init__(self) -> None:
        self.rows: dict[int, dict] = {}

    def get(self, row_id: int):
        return self.rows.get(row_id)

    def add(self, values: dict):
        row_id = len(self.rows) + 1
        self.rows[row_id] = {"id": row_id, **values}
        return self.rows[row_id]
