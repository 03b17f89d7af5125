"""`.orch/cache.sqlite`: every cache orch keeps, in one SQLite file, each in its own table.

A cache holds what orch can compute again from the repository's files: deleting `.orch/`
costs time, never data. Each user opens its table by name and version (`Cache.table`) and
says what its keys are; a table whose version changed is emptied. The tables, their keys
and what each saves are listed in docs/storage.md.

The file (and `.orch/` with it) is created by the first write, so a fresh clone has its
caches from the first command that fills one. Reading an absent cache costs nothing and
creates nothing. A broken cache file is removed (the next write starts a new one); a cache
locked by another process for too long, or on a read-only disk, is skipped. Neither is an
error: a cache is an optimisation only. For the same reason SQLite does not wait for the
disk at each commit (`synchronous = OFF`): a crash of the process loses nothing, a crash
of the machine may break the file, and a broken file is removed.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable
from operator import itemgetter
from pathlib import Path

CACHE_FILE = "cache.sqlite"
FORMAT = 2  # the file's own layout (PRAGMA user_version); each table has its own version
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS tables (name TEXT PRIMARY KEY, version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS entries (tab TEXT NOT NULL, key TEXT NOT NULL,"
    " value TEXT NOT NULL, PRIMARY KEY (tab, key)) WITHOUT ROWID",
)
BATCH = 500  # keys a query names at most
BUSY_TIMEOUT = 10.0  # seconds to wait for another process's write before skipping the cache


def stat_key(st: os.stat_result) -> str:
    """A file's identity for caches keyed by file: any write changes it (orch's writes
    even replace the inode), except a second write within one tick of a coarse file
    system clock (see `store.repo.RACY_NS` for how the parse cache deals with that)."""
    return f"{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_size}:{st.st_ino}"


class Cache:
    """One connection to `<folder>/cache.sqlite`, opened on first use."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / CACHE_FILE
        self._conn: sqlite3.Connection | None = None
        self._broken = False

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def table(self, name: str, version: int) -> Table:
        return Table(self, name, version)

    def connection(self, *, create: bool) -> sqlite3.Connection | None:
        """The open connection; None when there is no cache to read (`create=False` and no
        file yet) or it cannot be used."""
        if self._conn is not None or self._broken:
            return self._conn
        if not create and not self.path.is_file():
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT)
            conn.execute("PRAGMA synchronous = OFF")  # a cache: see the module docstring
            if conn.execute("PRAGMA user_version").fetchone()[0] != FORMAT:
                conn.execute("DROP TABLE IF EXISTS entries")
                conn.execute("DROP TABLE IF EXISTS tables")
                conn.execute(f"PRAGMA user_version = {FORMAT}")
            for statement in SCHEMA:
                conn.execute(statement)
            conn.commit()
        except sqlite3.DatabaseError as exc:
            self.failed(exc)
            return None
        except OSError:  # no folder can be made here (a read-only checkout)
            self._broken = True
            return None
        self._conn = conn
        return conn

    def failed(self, exc: sqlite3.DatabaseError) -> None:
        """Stop using the cache for this run; a file that is not a sound database (rather
        than a busy or read-only one) is removed, so the next write starts a new one."""
        self.close()
        self._broken = True
        if not isinstance(exc, sqlite3.OperationalError):
            with contextlib.suppress(OSError):
                self.path.unlink()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class Table:
    """Rows of text values under text keys, in one table of the cache."""

    def __init__(self, cache: Cache, name: str, version: int) -> None:
        self.cache = cache
        self.name = name
        self.version = version
        self._checked = False

    def _conn(self, *, create: bool = False) -> sqlite3.Connection | None:
        conn = self.cache.connection(create=create)
        if conn is None or self._checked:
            return conn
        try:
            row = conn.execute("SELECT version FROM tables WHERE name = ?", (self.name,)).fetchone()
            if row is None or row[0] != self.version:
                with conn:
                    conn.execute("DELETE FROM entries WHERE tab = ?", (self.name,))
                    conn.execute(
                        "INSERT OR REPLACE INTO tables VALUES (?, ?)", (self.name, self.version)
                    )
        except sqlite3.DatabaseError as exc:
            self.cache.failed(exc)
            return None
        self._checked = True
        return conn

    def get(self, key: str) -> str | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(keys))
        conn = self._conn()
        if conn is None or not wanted:
            return {}
        out: dict[str, str] = {}
        try:
            for start in range(0, len(wanted), BATCH):
                chunk = wanted[start : start + BATCH]
                marks = ",".join("?" * len(chunk))
                out.update(
                    conn.execute(
                        f"SELECT key, value FROM entries WHERE tab = ? AND key IN ({marks})",
                        (self.name, *chunk),
                    )
                )
        except sqlite3.DatabaseError as exc:
            self.cache.failed(exc)
            return {}
        return out

    def items(self) -> dict[str, str]:
        """Every row of the table."""
        conn = self._conn()
        if conn is None:
            return {}
        try:
            return dict(conn.execute("SELECT key, value FROM entries WHERE tab = ?", (self.name,)))
        except sqlite3.DatabaseError as exc:
            self.cache.failed(exc)
            return {}

    def put_many(self, rows: Iterable[tuple[str, str]], *, drop: Iterable[str] = ()) -> None:
        """Add or replace `rows` and delete the keys in `drop`, in one transaction."""
        rows, drop = list(rows), list(drop)
        if not rows and not drop:
            return
        self._write(rows, drop, replace_all=False)

    def replace_all(self, rows: Iterable[tuple[str, str]]) -> None:
        """The table holds exactly `rows` afterwards."""
        self._write(list(rows), [], replace_all=True)

    def _write(self, rows: list[tuple[str, str]], drop: list[str], *, replace_all: bool) -> None:
        """Rows go in in key order (of one key's rows the last given wins): the table is a
        B-tree by key, where rows in a listing's random order each touch another page and
        rows in key order fill one page after another (half the time at 10,000 rows)."""
        conn = self._conn(create=True)
        if conn is None:
            return
        rows = sorted(rows, key=itemgetter(0))
        drop = sorted(drop)
        try:
            with conn:
                if replace_all:
                    conn.execute("DELETE FROM entries WHERE tab = ?", (self.name,))
                conn.executemany(
                    "DELETE FROM entries WHERE tab = ? AND key = ?",
                    ((self.name, key) for key in drop),
                )
                conn.executemany(
                    "INSERT OR REPLACE INTO entries VALUES (?, ?, ?)",
                    ((self.name, key, value) for key, value in rows),
                )
        except sqlite3.DatabaseError as exc:
            self.cache.failed(exc)  # locked for too long, a full disk, a broken file
