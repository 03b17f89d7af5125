"""The search index: `.orch/search.sqlite`, an SQLite FTS5 table over the layout's documents.

The index is a cache of files. Writers tell it about a file they wrote (`sync_file`), or
put a document in directly (`update`); `refresh` finds files changed behind its back (by
size, mtime and inode) and `rebuild` reads everything again. A missing, corrupt or older
index is rebuilt when it is opened, never reported as an error: the files are the truth.

Ranking lives in `orchestrator.retrieval.ranking`; this module stores and fetches.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from orchestrator.checks.secrets import redact, redact_data
from orchestrator.retrieval.ranking import Ranking, rank
from orchestrator.retrieval.sources import (
    KINDS,
    Doc,
    folder_sources,
    kind_of,
    read_docs,
    source_files,
    source_folders,
)
from orchestrator.retrieval.text import TOKENIZER, compact_json, fts_phrase
from orchestrator.store.layout import Layout

log = logging.getLogger(__name__)
T = TypeVar("T")

DB_NAME = "search.sqlite"
SCHEMA_VERSION = 2
BATCH = 500  # document ids a query names at most
# A folder changed this recently may change again within one tick of a coarse file system
# clock without its signature changing: its signature is not kept until it is older.
RACY_NS = 2_000_000_000


def schema(tokenizer: str) -> tuple[str, ...]:
    return (
        "CREATE TABLE doc ("
        " id INTEGER PRIMARY KEY, kind TEXT NOT NULL, ref TEXT NOT NULL, text TEXT NOT NULL,"
        " meta TEXT NOT NULL, source TEXT, grp TEXT, pos INTEGER, UNIQUE (kind, ref))",
        "CREATE INDEX doc_source ON doc (source)",
        "CREATE INDEX doc_seq ON doc (grp, pos)",
        "CREATE TABLE source (path TEXT PRIMARY KEY, sig TEXT NOT NULL)",
        "CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE folder (path TEXT PRIMARY KEY, sig TEXT NOT NULL)",
        f"CREATE VIRTUAL TABLE fts USING fts5(title, body, date, tokenize = '{tokenizer}')",
    )


@dataclass(frozen=True)
class Hit:
    kind: str
    ref: str
    text: str
    score: float
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "ref": self.ref,
            "score": float(f"{self.score:.6g}"),
            "text": self.text,
            "meta": self.meta,
        }


def sequence_of(kind: str, ref: str) -> tuple[str | None, int | None]:
    """A transcript turn's place: (`<slug>/<n>`, line) from ref `<slug>/<n>:<line>`."""
    if kind != "transcript":
        return None, None
    group, _, pos = ref.rpartition(":")
    return (group, int(pos)) if group and pos.isdigit() else (None, None)


def file_sig(st: os.stat_result) -> str:
    return f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"


class SearchIndex:
    """Search over repo memories, episodes, L3 items, phase reports, transcripts, summaries.

    Open it, use it, `close()` it (or use `with`). Every method heals a broken index by
    rebuilding it from the files.
    """

    def __init__(
        self,
        layout: Layout,
        *,
        ranking: Ranking | None = None,
        path: Path | None = None,
        tokenizer: str = TOKENIZER,
    ) -> None:
        """`path` and `tokenizer` other than the defaults are for evaluations (a new file)."""
        self.layout = layout
        self.path = path or layout.cache / DB_NAME
        self.ranking = ranking or Ranking()
        self.tokenizer = tokenizer
        self._conn: sqlite3.Connection | None = None
        self._refreshed = False
        # what ranking has read of documents, while the index is unchanged (`_load_docs`)
        self._docs: dict[int, tuple[str, str | None, int | None]] | None = None
        self._seq: dict[tuple[str, int], int | None] = {}
        self._total = 0
        self._data_version = -1

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # opening and healing ---------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        try:
            conn, fresh = self._open()
        except sqlite3.DatabaseError as exc:
            log.warning("search index %s is unusable (%s); rebuilding it", self.path, exc)
            self._discard()
            conn, fresh = self._open()
        self._conn = conn
        if fresh:
            self._rebuild(conn)
        return conn

    def _open(self) -> tuple[sqlite3.Connection, bool]:
        """A connection, and whether the index is new (and so must be built from the files)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if (
                version == SCHEMA_VERSION
                and conn.execute("SELECT 1 FROM state WHERE key = 'built'").fetchone()
            ):
                return conn, False
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if tables:  # another version, or a build that never finished: start again
                conn.close()
                self._discard()
                return self._open()
            with _transaction(conn):
                for statement in schema(self.tokenizer):
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            conn.close()
            raise
        return conn, True

    def _discard(self) -> None:
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")

    def _run(self, action: str, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(connection)`; on a database error, discard the index, rebuild it, try again."""
        try:
            return work(self._db())
        except sqlite3.DatabaseError as exc:
            log.warning(
                "search index %s failed during %s (%s); rebuilding it", self.path, action, exc
            )
        self._discard()
        self._docs = None
        return work(self._db())

    # writing ---------------------------------------------------------------------------

    def update(self, kind: str, ref: str, text: str, meta: dict[str, Any] | None = None) -> None:
        """Put one document in the index (replacing the one with the same kind and ref)."""
        self.update_many([Doc(kind, ref, text, dict(meta or {}))])

    def update_many(self, docs: Iterable[Doc]) -> int:
        """Put many documents in, in one transaction; returns how many (any secret in them
        replaced by its placeholder)."""
        batch = [Doc(d.kind, d.ref, redact(d.text), redact_data(d.meta)) for d in docs]
        for doc in batch:
            if doc.kind not in KINDS:
                raise ValueError(f"unknown document kind {doc.kind!r}")

        def work(conn: sqlite3.Connection) -> None:
            with _transaction(conn):
                for doc in batch:
                    self._delete(conn, doc.kind, doc.ref)
                    self._insert(conn, doc, None)

        self._run("update", work)
        self._docs = None
        return len(batch)

    def remove(self, kind: str, ref: str) -> None:
        def work(conn: sqlite3.Connection) -> None:
            with _transaction(conn):
                self._delete(conn, kind, ref)

        self._run("remove", work)
        self._docs = None

    def sync_file(self, path: Path) -> int:
        """Index what `path` holds now (nothing if it is gone); returns its document count."""
        path = Path(path)
        if not path.is_absolute():
            path = self.layout.root / path
        if kind_of(self.layout, path) is None:
            return 0

        def work(conn: sqlite3.Connection) -> int:
            with _transaction(conn):
                return self._sync(conn, path)

        count = self._run("sync", work)
        self._docs = None
        return count

    def refresh(self) -> int:
        """Re-read files that changed since they were indexed, drop those that are gone.

        Only folders whose signature changed (a file added, removed or replaced whole, as
        orch's atomic writes and git do) are listed again, and folders of files appended in
        place (transcripts): an unchanged store costs one `stat` a folder, not one a file.
        A file another program rewrites in place, its folder untouched, is read again when
        a search returns it (`search`), or by `rebuild`.
        """

        def work(conn: sqlite3.Connection) -> int:
            kept = dict(conn.execute("SELECT path, sig FROM folder").fetchall())
            changed: list[Path] = []
            signatures: list[tuple[str, str]] = []
            current: set[str] = set()
            for folder, appended in source_folders(self.layout):
                rel = self._rel(folder)
                current.add(rel)
                sig = _folder_sig(folder)
                if sig is not None and not appended and kept.get(rel) == sig:
                    continue
                changed += self._changed_in(conn, folder)
                if sig is not None:
                    signatures.append((rel, sig))
            gone = [rel for rel in kept if rel not in current]
            for rel in gone:
                changed += [self.layout.root / p for p, _ in self._sources_in(conn, rel)]
            signatures = [(rel, sig) for rel, sig in signatures if kept.get(rel) != sig]
            if changed or gone or signatures:
                with _transaction(conn):
                    for path in changed:
                        self._sync(conn, path)
                    conn.executemany("DELETE FROM folder WHERE path = ?", [(r,) for r in gone])
                    conn.executemany("INSERT OR REPLACE INTO folder VALUES (?, ?)", signatures)
            return len(changed)

        count = self._run("refresh", work)
        if count:
            self._docs = None
        self._refreshed = True
        return count

    def _changed_in(self, conn: sqlite3.Connection, folder: Path) -> list[Path]:
        """Files of `folder` (not of its subfolders) whose signature differs from the one
        indexed, new ones, and indexed ones that are gone."""
        known = dict(self._sources_in(conn, self._rel(folder)))
        changed: list[Path] = []
        for path in folder_sources(self.layout, folder):
            try:
                sig = file_sig(path.stat())
            except OSError:
                continue
            if known.pop(self._rel(path), None) != sig:
                changed.append(path)
        return changed + [self.layout.root / rel for rel in known]

    @staticmethod
    def _sources_in(conn: sqlite3.Connection, rel: str) -> list[tuple[str, str]]:
        """(path, signature) of the indexed files directly in folder `rel`."""
        rows = conn.execute(
            "SELECT path, sig FROM source WHERE path > ? AND path < ?", (rel + "/", rel + "0")
        ).fetchall()
        return [(p, sig) for p, sig in rows if "/" not in p[len(rel) + 1 :]]

    def rebuild(self) -> int:
        """Read every file of the layout again; returns the number of documents."""
        count = self._run("rebuild", self._rebuild)
        self._docs = None
        self._refreshed = True
        return count

    def _rebuild(self, conn: sqlite3.Connection) -> int:
        count = 0
        with _transaction(conn):
            conn.execute("DELETE FROM doc")
            conn.execute("DELETE FROM source")
            conn.execute("DELETE FROM fts")
            conn.execute("DELETE FROM folder")
            signatures = [
                (self._rel(folder), sig)
                for folder, _ in source_folders(self.layout)
                if (sig := _folder_sig(folder)) is not None
            ]
            for path in source_files(self.layout):
                count += self._sync(conn, path, fresh=True)
            conn.executemany("INSERT INTO folder VALUES (?, ?)", signatures)
            conn.execute("INSERT OR REPLACE INTO state VALUES ('built', datetime('now'))")
        return count

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.layout.root).as_posix()

    def _sync(self, conn: sqlite3.Connection, path: Path, *, fresh: bool = False) -> int:
        """Make the index hold what `path` holds now, touching only documents that changed."""
        rel = self._rel(path)
        existing: dict[tuple[str, str], tuple[int, str, str]] = {}
        if not fresh:
            for doc_id, kind, ref, text, meta in conn.execute(
                "SELECT id, kind, ref, text, meta FROM doc WHERE source = ?", (rel,)
            ):
                existing[(kind, ref)] = (doc_id, text, meta)
        try:
            sig = file_sig(path.stat())
            docs = read_docs(self.layout, path)
        except OSError:
            sig, docs = None, []
        for doc in docs:
            old = existing.pop((doc.kind, doc.ref), None)
            if old is not None:
                if old[1] == doc.text and old[2] == compact_json(doc.meta):
                    continue  # unchanged (an appended transcript keeps its earlier lines)
                self._delete_id(conn, old[0])
            elif not fresh:
                self._delete(conn, doc.kind, doc.ref)
            self._insert(conn, doc, rel)
        for doc_id, _, _ in existing.values():
            self._delete_id(conn, doc_id)
        if sig is None:
            conn.execute("DELETE FROM source WHERE path = ?", (rel,))
        else:
            conn.execute("INSERT OR REPLACE INTO source VALUES (?, ?)", (rel, sig))
        return len(docs)

    @staticmethod
    def _delete_id(conn: sqlite3.Connection, doc_id: int) -> None:
        conn.execute("DELETE FROM fts WHERE rowid = ?", (doc_id,))
        conn.execute("DELETE FROM doc WHERE id = ?", (doc_id,))

    @staticmethod
    def _delete(conn: sqlite3.Connection, kind: str, ref: str) -> None:
        row = conn.execute("SELECT id FROM doc WHERE kind = ? AND ref = ?", (kind, ref)).fetchone()
        if row is not None:
            SearchIndex._delete_id(conn, row[0])

    @staticmethod
    def _insert(conn: sqlite3.Connection, doc: Doc, source: str | None) -> None:
        group, pos = sequence_of(doc.kind, doc.ref)
        cur = conn.execute(
            "INSERT INTO doc (kind, ref, text, meta, source, grp, pos) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (doc.kind, doc.ref, doc.text, compact_json(doc.meta), source, group, pos),
        )
        title, date = doc.meta.get("title"), doc.meta.get("date")
        conn.execute(
            "INSERT INTO fts (rowid, title, body, date) VALUES (?, ?, ?, ?)",
            (
                cur.lastrowid,
                title if isinstance(title, str) else "",
                doc.text,
                date if isinstance(date, str) else "",
            ),
        )

    # reading ---------------------------------------------------------------------------

    def count(self) -> int:
        def work(conn: sqlite3.Connection) -> int:
            total: int = conn.execute("SELECT count(*) FROM doc").fetchone()[0]
            return total

        return self._run("count", work)

    def search(self, query: str, *, k: int = 10, kinds: set[str] | None = None) -> list[Hit]:
        """The `k` best documents for `query` (of the given kinds), best first.

        The first search of an open index re-reads files changed since they were indexed.
        """
        if k <= 0:
            return []
        if not self._refreshed:
            self.refresh()

        def work(conn: sqlite3.Connection) -> list[Hit]:
            self._load_docs(conn)
            ranked = rank(self, query, k=k, kinds=kinds)
            if self._resync(conn, [doc_id for doc_id, _ in ranked]):
                self._load_docs(conn)
                ranked = rank(self, query, k=k, kinds=kinds)
            return self._hits(conn, ranked)

        return self._run("search", work)

    def _resync(self, conn: sqlite3.Connection, doc_ids: list[int]) -> bool:
        """Read again the files of these documents that changed since they were indexed
        (rewritten in place, so `refresh` did not see them); True if any had."""
        if not doc_ids:
            return False
        marks = ",".join("?" * len(doc_ids))
        rows = conn.execute(
            "SELECT DISTINCT source.path, source.sig FROM doc JOIN source"
            f" ON doc.source = source.path WHERE doc.id IN ({marks})",
            doc_ids,
        ).fetchall()
        changed = []
        for rel, sig in rows:
            path = self.layout.root / rel
            try:
                now = file_sig(path.stat())
            except OSError:
                now = None
            if now != sig:
                changed.append(path)
        if not changed:
            return False
        with _transaction(conn):
            for path in changed:
                self._sync(conn, path)
        self._docs = None
        return True

    def _load_docs(self, conn: sqlite3.Connection) -> None:
        """Forget what was read of documents if the index changed since (ranking reads only
        the documents a query matches, never the whole table)."""
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if self._docs is not None and version == self._data_version:
            return
        self._docs = {}
        self._seq = {}
        self._total = conn.execute("SELECT count(*) FROM doc").fetchone()[0]
        self._data_version = version

    def _hits(self, conn: sqlite3.Connection, ranked: list[tuple[int, float]]) -> list[Hit]:
        if not ranked:
            return []
        marks = ",".join("?" * len(ranked))
        rows = {
            row[0]: row[1:]
            for row in conn.execute(
                f"SELECT id, kind, ref, text, meta FROM doc WHERE id IN ({marks})",
                [doc_id for doc_id, _ in ranked],
            )
        }
        return [
            Hit(rows[i][0], rows[i][1], rows[i][2], score, json.loads(rows[i][3]))
            for i, score in ranked
            if i in rows
        ]

    # what the ranking reads ------------------------------------------------------------

    def term_scores(self, term: str, column: str | None = None) -> list[tuple[int, float]]:
        """BM25 of one query term (FTS5's, with the ranking's column weights) for every match."""
        r = self.ranking
        match = f"{{{column}}} : {fts_phrase(term)}" if column else fts_phrase(term)
        conn = self._db()
        return conn.execute(
            "SELECT rowid, -bm25(fts, ?, ?, ?) FROM fts WHERE fts MATCH ?",
            (r.title_weight, r.body_weight, r.date_weight, match),
        ).fetchall()

    def term_count(self, term: str) -> int:
        """How many documents match one query term."""
        row = (
            self._db()
            .execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (fts_phrase(term),))
            .fetchone()
        )
        return int(row[0])

    def total(self) -> int:
        """How many documents the index holds."""
        return self._total

    def doc_info(self, doc_ids: Iterable[int]) -> dict[int, tuple[str, str | None, int | None]]:
        """(kind, group, position) of documents, these ones among them."""
        assert self._docs is not None
        missing = [i for i in doc_ids if i not in self._docs]
        conn = self._db()
        for start in range(0, len(missing), BATCH):
            chunk = missing[start : start + BATCH]
            marks = ",".join("?" * len(chunk))
            for doc_id, kind, group, pos in conn.execute(
                f"SELECT id, kind, grp, pos FROM doc WHERE id IN ({marks})", chunk
            ):
                self._docs[doc_id] = (kind, group, pos)
        return self._docs

    def neighbour(self, group: str, pos: int) -> int | None:
        """The turn at `pos` of sequence `group` (the latest indexed, if several)."""
        key = (group, pos)
        if key not in self._seq:
            row = (
                self._db()
                .execute(
                    "SELECT id FROM doc WHERE grp = ? AND pos = ? ORDER BY id DESC LIMIT 1",
                    key,
                )
                .fetchone()
            )
            self._seq[key] = row[0] if row else None
        return self._seq[key]

    def doc_texts(self, doc_ids: list[int]) -> list[tuple[int, str]]:
        """The body text of some documents (for pseudo-relevance feedback)."""
        if not doc_ids:
            return []
        marks = ",".join("?" * len(doc_ids))
        rows: list[tuple[int, str]] = (
            self._db()
            .execute(f"SELECT id, text FROM doc WHERE id IN ({marks})", doc_ids)
            .fetchall()
        )
        return rows


def _folder_sig(folder: Path) -> str | None:
    """A folder's signature (None when it is missing, or changed too recently to trust)."""
    try:
        st = folder.stat()
    except OSError:
        return None
    if max(st.st_mtime_ns, st.st_ctime_ns) > time.time_ns() - RACY_NS:
        return None
    return f"{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


def index_written(layout: Layout, *paths: Path) -> None:
    """Bring the index up to date with files just written or deleted. Never raises.

    The hook for writers: the index is a cache, so a failure here is logged and the write
    still stands (the next `refresh` or `rebuild` catches up).
    """
    try:
        with SearchIndex(layout) as index:
            for path in paths:
                index.sync_file(path)
    except Exception as exc:
        log.warning("search index not updated for %s: %s", ", ".join(map(str, paths)), exc)


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


__all__ = ["Doc", "Hit", "SearchIndex", "index_written"]
