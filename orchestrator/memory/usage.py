"""Memory use: when a memory reached a prompt, was served, verified, superseded or cited.

Kept in `.orch/usage.sqlite`, never by rewriting memory files on a read. Unlike the cache
(`.orch/cache.sqlite`), this is not computed again from the repository: deleting it
forgets the history (every memory then looks unused, and nothing is decayed for lack of
use until the history has built up again; see `importance.WINDOW`).

One row per (memory, way, task, phase) with a count and the first and last time keeps
the file small however many turns a phase takes: a prompt of 300 memories is one
`executemany` of 300 upserts in one transaction (`python -m evals.aging --bench` times
it). Writes never fail a command: a locked or broken file is skipped (a use not recorded
costs some accuracy in a score, never a task).

Ways (`via`): `prompt` (its index line reached one of orch's prompts), `hook` (a
Claude Code hook put the index in an agent's context), `read` (the agent viewed the memory
through the memory tool), `mcp` (the MCP server served it whole: memory_get, a search
hit). Every active memory's index line reaches every prompt, so `prompt` and `hook` say
nothing about which memory mattered: they are recorded (and give the `outcome` part its
phases), while `read` and `mcp` are the uses the importance score counts. Verification
results, phase outcomes and links (superseded by, cited by) have tables of their own.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.store.layout import Layout

USAGE_FILE = "usage.sqlite"
FORMAT = 1
BUSY_TIMEOUT = 2.0  # seconds: a use is worth less than a stalled command
WAYS = ("prompt", "hook", "read", "mcp")
READS = frozenset({"read", "mcp"})  # the ways that count as use in the importance score
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS uses (name TEXT NOT NULL, via TEXT NOT NULL,"
    " task TEXT NOT NULL, phase INTEGER NOT NULL, first REAL NOT NULL, last REAL NOT NULL,"
    " count INTEGER NOT NULL, PRIMARY KEY (name, via, task, phase)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS outcomes (task TEXT NOT NULL, phase INTEGER NOT NULL,"
    " passed INTEGER NOT NULL, at REAL NOT NULL, PRIMARY KEY (task, phase)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS checks (name TEXT PRIMARY KEY, result TEXT NOT NULL,"
    " at REAL NOT NULL, ok_since REAL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS links (name TEXT NOT NULL, other TEXT NOT NULL,"
    " kind TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (name, other, kind)) WITHOUT ROWID",
)
NO_PHASE = -1  # uses outside a task's phase (a task-level prompt, the MCP server, a hook)
DAY = "@"  # the `task` of a use outside any task is its day, "@2026-11-24" (no slug has "@")


@dataclass
class Use:
    """What is known of one memory's use (`UsageLog.summary`)."""

    reached: int = 0  # times its index line reached a prompt or an agent's context
    count: int = 0  # times it was read or served whole
    tasks: set[str] = field(default_factory=set)  # tasks it was read in
    last: float | None = None  # when it was last read or served (epoch seconds)
    weight: float = 0.0  # sum over tasks (or days outside tasks) of 0.5 ** (age / half-life)
    recency: float = 0.0  # 0.5 ** (age of the last use / half-life); 0 if never used
    phases_used: int = 0  # (task, phase) pairs with a known outcome that used it
    phases_passed: int = 0  # of those, the ones that passed their gates
    check: str | None = None  # the latest verification: ok | changed | stale
    ok_since: float | None = None  # verified ok without a break since then
    superseded: bool = False
    cited_by: int = 0  # newer memories that name it


class UsageLog:
    """`.orch/usage.sqlite` for one repository. Use as a context manager, or `close()`."""

    def __init__(self, layout: Layout) -> None:
        self.path = layout.cache / USAGE_FILE
        self._conn: sqlite3.Connection | None = None

    def __enter__(self) -> UsageLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connect(self, *, create: bool) -> sqlite3.Connection | None:
        if self._conn is not None:
            return self._conn
        if not create and not self.path.is_file():
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            if conn.execute("PRAGMA user_version").fetchone()[0] != FORMAT:
                for statement in SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {FORMAT}")
        except (sqlite3.Error, OSError):
            return None
        self._conn = conn
        return conn

    @contextlib.contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection | None]:
        conn = self._connect(create=True)
        if conn is None:
            yield None
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")

    # writes ----------------------------------------------------------------------------------

    def record_use(
        self,
        names: Iterable[str],
        *,
        via: str,
        task: str | None = None,
        phase: int | None = None,
        at: float | None = None,
    ) -> None:
        now = time.time() if at is None else at
        where = task or time.strftime(f"{DAY}%Y-%m-%d", time.gmtime(now))  # outside tasks: a day
        rows = [
            (name, via, where, NO_PHASE if phase is None else phase, now, now)
            for name in dict.fromkeys(names)
        ]
        if not rows:
            return
        with self._writing() as conn:
            if conn is not None:
                conn.executemany(
                    "INSERT INTO uses VALUES (?, ?, ?, ?, ?, ?, 1) ON CONFLICT DO UPDATE SET"
                    " count = count + 1, last = excluded.last",
                    rows,
                )

    def record_outcome(
        self, task: str, phase: int | None, *, passed: bool, at: float | None = None
    ) -> None:
        now = time.time() if at is None else at
        with self._writing() as conn:
            if conn is not None:
                conn.execute(
                    "INSERT OR REPLACE INTO outcomes VALUES (?, ?, ?, ?)",
                    (task, NO_PHASE if phase is None else phase, int(passed), now),
                )

    def record_checks(self, results: Iterable[tuple[str, str]], *, at: float | None = None) -> None:
        """The latest verification result of each memory (ok | changed | moved | stale)."""
        now = time.time() if at is None else at
        rows = [(name, result, now, now if result == "ok" else None) for name, result in results]
        if not rows:
            return
        with self._writing() as conn:
            if conn is not None:
                conn.executemany(
                    "INSERT INTO checks VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
                    " result = excluded.result, at = excluded.at,"
                    " ok_since = CASE WHEN excluded.result = 'ok'"
                    " THEN coalesce(checks.ok_since, excluded.at) ELSE NULL END",
                    rows,
                )

    def record_link(self, name: str, other: str, kind: str, *, at: float | None = None) -> None:
        """`name` was superseded by `other` (kind `superseded`) or is cited by it (`cited`)."""
        now = time.time() if at is None else at
        with self._writing() as conn:
            if conn is not None:
                conn.execute(
                    "INSERT OR IGNORE INTO links VALUES (?, ?, ?, ?)", (name, other, kind, now)
                )

    # reads -----------------------------------------------------------------------------------

    def since(self) -> float | None:
        """When use was first recorded here (None: never): decay needs history this old."""
        conn = self._connect(create=False)
        if conn is None:
            return None
        try:
            found = conn.execute(
                "SELECT min(t) FROM (SELECT min(first) AS t FROM uses"
                " UNION ALL SELECT min(at) FROM outcomes)"
            ).fetchone()
        except sqlite3.Error:
            return None
        return found[0] if found else None

    def summary(self, *, now: float | None = None, half_life_days: float = 30.0) -> dict[str, Use]:
        """What is known of every memory that has a row anywhere, by name."""
        conn = self._connect(create=False)
        out: dict[str, Use] = {}
        if conn is None:
            return out
        now = time.time() if now is None else now
        half_life = max(half_life_days, 0.01) * 86400.0
        try:
            outcomes = {
                (task, phase): bool(passed)
                for task, phase, passed in conn.execute("SELECT task, phase, passed FROM outcomes")
            }
            latest: dict[tuple[str, str], float] = {}  # (name, task or day) -> its last use
            phases: dict[str, set[tuple[str, int]]] = {}  # name -> phases with an outcome
            for name, via, task, phase, last, count in conn.execute(
                "SELECT name, via, task, phase, last, count FROM uses"
            ):
                use = out.setdefault(name, Use())
                if (task, phase) in outcomes:
                    phases.setdefault(name, set()).add((task, phase))
                if via not in READS:
                    use.reached += count
                    continue
                use.count += count
                if not task.startswith(DAY):
                    use.tasks.add(task)
                use.last = last if use.last is None else max(use.last, last)
                latest[(name, task)] = max(latest.get((name, task), last), last)
            for name, seen in phases.items():
                out[name].phases_used = len(seen)
                out[name].phases_passed = sum(outcomes[p] for p in seen)
            for (name, _), last in latest.items():
                out[name].weight += 0.5 ** (max(0.0, now - last) / half_life)
            for use in out.values():
                if use.last is not None:
                    use.recency = 0.5 ** (max(0.0, now - use.last) / half_life)
            for name, result, ok_since in conn.execute("SELECT name, result, ok_since FROM checks"):
                use = out.setdefault(name, Use())
                use.check, use.ok_since = result, ok_since
            for name, kind, at in conn.execute("SELECT name, kind, at FROM links"):
                use = out.setdefault(name, Use())
                if kind == "superseded":
                    use.superseded = True
                elif kind == "cited":  # a newer memory naming it is a use of it
                    use.cited_by += 1
                    use.last = at if use.last is None else max(use.last, at)
                    use.weight += 0.5 ** (max(0.0, now - at) / half_life)
        except sqlite3.Error:
            return {}
        return out


def record_use(
    layout: Layout,
    names: Iterable[str],
    *,
    via: str,
    task: str | None = None,
    phase: int | None = None,
    outcome: str | None = None,
) -> None:
    """Record that `names` were used (`via` prompt | mcp | hook) in `task`'s `phase`.
    `outcome`, when given, is the verification result the memories were served with."""
    names = list(names)
    with UsageLog(layout) as log:
        log.record_use(names, via=via, task=task, phase=phase)
        if outcome is not None:
            log.record_checks((name, outcome) for name in names)


def usage_path(layout: Layout) -> Path:
    return layout.cache / USAGE_FILE
