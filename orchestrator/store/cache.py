"""A rebuildable parse cache for repo memory files, in `.orch/cache.sqlite`.

Parsing a file costs far more than reading a cached row; listing 10,000 memories must take
well under a second. The cache keeps each file's parse result keyed by its path and
(mtime_ns, ctime_ns, size, inode): a write changes that key (orch's writes even replace the
inode). A file changed twice within one tick of the file system's clock could keep its key,
so, as git does with its index, a file whose timestamps are younger than `RACY_NS` is parsed
but not cached until it is older. A broken, locked or unwritable cache is ignored (a broken
one is rebuilt), never fatal.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

Key = tuple[int, int, int, int]
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS memfile ("
    " path TEXT PRIMARY KEY, mtime_ns INTEGER, ctime_ns INTEGER, size INTEGER, ino INTEGER,"
    " parsed TEXT NOT NULL)"
)
CACHE_VERSION = 1
RACY_NS = 2_000_000_000  # coarse file system clocks tick in milliseconds; some in seconds
PARALLEL_FROM = 2000  # files to parse from which two processes share the work


def file_key(st: os.stat_result) -> Key:
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def parse_all(paths: list[str], parse: Callable[[str], dict[str, Any]]) -> list[dict[str, Any]]:
    """`parse` of every path, in order. With `PARALLEL_FROM` files or more and two cores, a
    forked child parses the second half while this process parses the first: a fresh clone
    of a large store lists (and audits) in a little over half the time. `parse` must be a
    module-level function (the child gets it by name) that never raises."""
    if len(paths) < PARALLEL_FROM or (os.cpu_count() or 1) < 2:
        return [parse(path) for path in paths]
    import multiprocessing  # only here: start-up stays light

    if (
        "fork" not in multiprocessing.get_all_start_methods()
        or multiprocessing.current_process().daemon  # a pool's worker may not have children
    ):
        return [parse(path) for path in paths]
    half = len(paths) // 2
    try:
        pool = multiprocessing.get_context("fork").Pool(1)
    except OSError:  # no process to spare: do it all here
        return [parse(path) for path in paths]
    try:
        theirs = pool.map_async(parse, paths[half:], chunksize=len(paths) - half)
        mine = [parse(path) for path in paths[:half]]
        return mine + theirs.get()
    finally:
        pool.terminate()
        pool.join()


class ParseCache:
    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection | None:
        if self._conn is not None:
            return self._conn
        if not self.db_path.parent.is_dir():
            return None
        try:
            conn = sqlite3.connect(self.db_path, timeout=10)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version != CACHE_VERSION:
                conn.execute("DROP TABLE IF EXISTS memfile")
                conn.execute(f"PRAGMA user_version = {CACHE_VERSION}")
            conn.execute(SCHEMA)
            conn.commit()
        except sqlite3.OperationalError:
            return None  # locked by another process for too long, or read-only: skip it
        except sqlite3.DatabaseError:  # not a database (a torn or foreign file): rebuild
            with contextlib.suppress(OSError):
                self.db_path.unlink()
            return None
        self._conn = conn
        return conn

    def load(
        self,
        files: Iterable[tuple[str, os.stat_result]],
        parse: Callable[[str], dict[str, Any]],
    ) -> dict[str, dict[str, Any]]:
        """{path: parsed} for every file, parsing only those whose key changed."""
        conn = self._connect()
        cached: dict[str, tuple[Key, str]] = {}
        if conn is not None:
            try:
                for path, m, c, s, i, parsed in conn.execute("SELECT * FROM memfile"):
                    cached[path] = ((m, c, s, i), parsed)
            except sqlite3.DatabaseError:
                cached = {}
        out: dict[str, dict[str, Any]] = {}
        fresh: list[tuple[str, Key, str]] = []
        seen: set[str] = set()
        racy_after = time.time_ns() - RACY_NS
        stale: list[tuple[str, os.stat_result]] = []
        hits: list[tuple[str, os.stat_result, str]] = []
        for path, st in files:
            seen.add(path)
            hit = cached.get(path)
            if hit is not None and hit[0] == file_key(st):
                hits.append((path, st, hit[1]))
            else:
                stale.append((path, st))
        out.update(self._decode(hits, stale))
        results = parse_all([path for path, _ in stale], parse)
        for (path, st), result in zip(stale, results, strict=True):
            key = file_key(st)
            out[path] = result
            if max(st.st_mtime_ns, st.st_ctime_ns) < racy_after:
                fresh.append((path, key, json.dumps(result, ensure_ascii=False, default=str)))
        gone = [p for p in cached if p not in seen]
        if conn is not None and (fresh or gone):
            try:
                with conn:
                    conn.executemany(
                        "INSERT OR REPLACE INTO memfile VALUES (?, ?, ?, ?, ?, ?)",
                        [(p, *k, d) for p, k, d in fresh],
                    )
                    conn.executemany("DELETE FROM memfile WHERE path = ?", [(p,) for p in gone])
            except sqlite3.DatabaseError:
                pass  # the cache is an optimisation only
        return out

    @staticmethod
    def _decode(
        hits: list[tuple[str, os.stat_result, str]], stale: list[tuple[str, os.stat_result]]
    ) -> dict[str, dict[str, Any]]:
        """Decode cached rows in one go (one JSON array: far cheaper than a call a row);
        a row that does not decode goes back to `stale` to be parsed again."""
        try:
            values = json.loads("[" + ",".join(text for _, _, text in hits) + "]")
            if len(values) == len(hits) and all(isinstance(v, dict) for v in values):
                return {path: value for (path, _, _), value in zip(hits, values, strict=True)}
        except ValueError:
            pass
        out: dict[str, dict[str, Any]] = {}
        for path, st, text in hits:
            try:
                value = json.loads(text)
            except ValueError:
                value = None
            if isinstance(value, dict):
                out[path] = value
            else:
                stale.append((path, st))
        return out

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
