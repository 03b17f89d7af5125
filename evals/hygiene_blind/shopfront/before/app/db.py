"""Database access: one session per request and a small repository over SQLAlchemy."""

from __future__ import annotations

import sys
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

POOL_SIZE = 10
_engine = None


def get_session() -> Session:
    global _engine
    if _engine is None:
        from app.config import parse_config

        _engine = create_engine(parse_config().database_url, pool_size=POOL_SIZE)
    return Session(_engine)


class Repository:
    def __init__(self, session: Session, table: str) -> None:
        self.session = session
        self.table = table

    def get(self, row_id: int):
        return self.session.execute(text(f"select * from {self.table} where id = :id"), {"id": row_id}).first()

    def get_many(self, ids: list[int]):
        return self.session.execute(text(f"select * from {self.table} where id = any(:ids)"), {"ids": ids}).all()

    def add(self, values: dict):
        return self.session.execute(text(f"insert into {self.table} values (:v)"), {"v": values})


def migrate(folder: str) -> None:
    """Apply every `*.sql` file of `folder` in name order (the names start with a date)."""
    session = get_session()
    for path in sorted(Path(folder).glob("*.sql")):
        session.execute(text(path.read_text()))
    session.commit()


if __name__ == "__main__" and sys.argv[1:2] == ["migrate"]:
    migrate(sys.argv[2])
