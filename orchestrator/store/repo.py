"""Repo memory (tier 3): `memories/repo/<name>.md` files and their MEMORY.md index.

The store reads memory files (through the parse cache), says whether a memory may be
written (`validation_errors`, the one rule set for every writer), and writes in a
`Transaction`: under the store's lock, each file atomically, MEMORY.md regenerated at the
end, and the files written handed to `on_write` (the caller's hook: the search index).
Memories are superseded, never overwritten.

The store holds no memory policy: Checklist A, promotion and the index hook live above it,
in `orchestrator.memory.writer`, which is what every writer uses.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.checks.secrets import secret_kind
from orchestrator.errors import InvalidFile, OrchError, SecretRefused, UsageError, WriteFailed
from orchestrator.store.cache import Cache, Table, stat_key
from orchestrator.store.fs import atomic_write, confine, file_lock, readable
from orchestrator.store.index import INDEX_FIELDS, render_index
from orchestrator.store.layout import INDEX_FILE, Layout
from orchestrator.store.memfile import (
    CARD_KEYS,
    KEBAB,
    MEMORY_TYPES,
    NEEDS_CITATIONS,
    Memory,
    Parsed,
    Problem,
    from_frontmatter,
    frontmatter_problems,
    now_iso,
    parse_memory,
    plain_reader,
    serialize_memory,
)
from orchestrator.store.plainfront import PlainReader

LOCK_NAME = "memories"
MAX_MEMORY_BYTES = 64 * 1024  # a memory file larger than this is not read (audit: invalid)
INTENT_FILE = "memory-intent.json"  # in .orch/: what a transaction is changing, to undo
PARSE_TABLE = "memory-files"  # cache table: memory file path -> "<stat key>\t<parse result>"
PARSE_VERSION = 2
# A file changed twice within one tick of the file system's clock could keep its stat key,
# so, as git does with its index, a file whose timestamps are younger than this is parsed
# but its result is not cached until it is older.
RACY_NS = 2_000_000_000  # coarse file system clocks tick in milliseconds; some in seconds

OnWrite = Callable[[list[Path]], None]


def refuse_secrets(memory: Memory) -> None:
    """Refuse a memory whose text holds a secret: one line naming the field and the kind."""
    fields = [
        ("fact", memory.body),
        ("description", memory.description),
        ("subject", memory.subject or ""),
        ("reason", memory.reason or ""),
        *((f"citation {c.path}", f"{c.path} {c.symbol or ''}") for c in memory.citations),
        *((key, str(getattr(memory, key) or "")) for key in CARD_KEYS),
        *((key, json.dumps(value)) for key, value in memory.extra.items()),
    ]
    for field, text in fields:
        kind = secret_kind(text)
        if kind is not None:
            raise SecretRefused(f"memory {memory.name!r}", field, kind)


def _text_or_none(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


class InvalidMemory(UsageError):
    """A memory that may not be written, with every reason."""

    def __init__(self, name: str, reasons: list[str]) -> None:
        self.reasons = reasons
        super().__init__(f"memory {name!r} not written: {'; '.join(reasons)}")


@dataclass
class LoadResult:
    memories: list[Memory]
    problems: list[Problem]

    def by_name(self) -> dict[str, Memory]:
        return {m.name: m for m in self.memories}

    @property
    def active(self) -> list[Memory]:
        return [m for m in self.memories if m.active]


def parse_file(
    path: str, texts: dict[str, str] | None = None, reader: PlainReader | None = None
) -> Parsed:
    """One memory file, read and parsed (problems name the file by `path`); its text goes
    into `texts` when given. `reader`: the listing's frontmatter reader, if any."""
    stem = os.path.basename(path)[: -len(".md")]
    try:
        with open(path, "rb") as fh:  # bytes decoded in one go: cheaper than a text file
            text = fh.read().decode("utf-8")
    except UnicodeDecodeError:
        return Parsed(None, (Problem(path, "invalid_file", "not UTF-8 text"),))
    except OSError as exc:
        reason = f"unreadable: {exc.strerror or exc}"
        return Parsed(None, (Problem(path, "invalid_file", reason),))
    if "\r" in text:  # universal newlines, as a file opened as text reads
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if texts is not None:
        texts[path] = text
    return parse_memory(text, stem, path=path, reader=reader)


def cache_row(parsed: Parsed) -> dict[str, Any]:
    """A parse result as the cache stores it: the frontmatter mapping the model accepted
    (as the file holds it: nothing to convert on the way in) and the body."""
    memory = parsed.memory
    front = None if memory is None else {"frontmatter": parsed.frontmatter, "body": memory.body}
    return {"memory": front, "problems": [pr.to_dict() for pr in parsed.problems]}


def from_cache_row(row: dict[str, Any]) -> Parsed:
    front = row["memory"]
    memory = None if front is None else from_frontmatter(front["frontmatter"], front["body"])
    return Parsed(memory, tuple(Problem(**p) for p in row["problems"]))


def parse_all(
    table: Table, files: list[tuple[str, os.stat_result]], texts: dict[str, str] | None = None
) -> dict[str, Parsed]:
    """{path: parse result} of every file: from the cache where the file's stat key is the
    one cached, else parsed (and cached once the file is older than `RACY_NS`). The text
    of each file read goes into `texts` when given."""
    cached = table.items()
    keys = {path: stat_key(st) for path, st in files}
    hits: list[tuple[str, os.stat_result, str]] = []
    todo: list[tuple[str, os.stat_result]] = []
    for path, st in files:
        key, _, data = cached.get(path, "").partition("\t")
        if data and key == keys[path]:
            hits.append((path, st, data))
        else:
            todo.append((path, st))
    out = {path: from_cache_row(row) for path, row in _decode(hits, todo).items()}
    racy_after = time.time_ns() - RACY_NS
    fresh = []
    reader = plain_reader()
    encoder = json.JSONEncoder(ensure_ascii=False, default=str)  # as json.dumps(...) with these
    for path, st in todo:
        out[path] = parse_file(path, texts, reader)
        if max(st.st_mtime_ns, st.st_ctime_ns) < racy_after:
            data = encoder.encode(cache_row(out[path]))
            fresh.append((path, f"{keys[path]}\t{data}"))
    table.put_many(fresh, drop=[p for p in cached if p not in keys])
    return out


def _decode(
    hits: list[tuple[str, os.stat_result, str]], todo: list[tuple[str, os.stat_result]]
) -> dict[str, Any]:
    """Cached rows decoded in one go (one JSON array: far cheaper than a call a row); a row
    that does not decode goes to `todo`, to be parsed again."""
    try:
        values = json.loads("[" + ",".join(data for _, _, data in hits) + "]")
        if len(values) == len(hits) and all(isinstance(v, dict) for v in values):
            return {path: value for (path, _, _), value in zip(hits, values, strict=True)}
    except ValueError:
        pass
    out: dict[str, Any] = {}
    for path, st, data in hits:
        try:
            value = json.loads(data)
        except ValueError:
            value = None
        if isinstance(value, dict):
            out[path] = value
        else:
            todo.append((path, st))
    return out


class RepoMemoryStore:
    """Repo memory on disk. `on_write` receives the files each transaction wrote."""

    def __init__(self, layout: Layout, *, on_write: OnWrite | None = None) -> None:
        self.layout = layout
        self.dir = layout.repo_memories
        self.on_write = on_write
        self._outside: list[Problem] = []
        self._writing = False  # inside a transaction (which recovers first itself)

    # reading ---------------------------------------------------------------------------

    def files(self) -> Iterator[tuple[str, os.stat_result]]:
        """(path, stat) of every memory file that may be read; what may not (a symlink out
        of the repository or in a loop, a FIFO, socket or device, a file over
        `MAX_MEMORY_BYTES`) is skipped and reported by `load_all`, one problem each."""
        self._outside = []
        self.require_inside()
        try:
            entries = list(os.scandir(self.dir))
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            if not entry.name.endswith(".md") or entry.name == INDEX_FILE:
                continue
            why: str | None
            st: os.stat_result | None
            if entry.is_file(follow_symlinks=False):
                # a plain file in the folder `require_inside` checked: inside by construction
                why, st = None, entry.stat(follow_symlinks=False)
            else:  # a link, a FIFO, a socket...: the full check
                why, st = readable(self.layout.root, Path(entry.path))
            if why is not None:
                self._outside.append(Problem(self._rel(entry.path), "invalid_file", why))
            elif st is not None and st.st_size > MAX_MEMORY_BYTES:
                self._outside.append(
                    Problem(
                        self._rel(entry.path),
                        "invalid_file",
                        f"{st.st_size:,} bytes, over the {MAX_MEMORY_BYTES // 1024} KiB a "
                        "memory may hold; not read",
                    )
                )
            elif st is not None:
                yield entry.path, st

    def require_inside(self) -> None:
        """Refuse a memory folder that is itself a link out of the repository (for reading
        and writing alike)."""
        try:
            inside = self.dir.resolve().is_relative_to(self.layout.root.resolve())
        except (OSError, RuntimeError):
            inside = False
        if not inside:
            raise UsageError(
                f"{self._rel(str(self.dir))} leads outside the repository (a symlink); "
                "orch neither reads nor writes memory there"
            )

    def _inside(self, path: str) -> bool:
        root = self.layout.root.resolve()
        return Path(path).resolve().is_relative_to(root)

    def load_all(
        self,
        files: list[tuple[str, os.stat_result]] | None = None,
        texts: dict[str, str] | None = None,
    ) -> LoadResult:
        """Every memory that loads, and a problem per file that does not (or is incomplete).
        A write a killed process left half-done is rolled back first. `files` is this
        store's last `files()` listing, when the caller has it; the text of each file read
        (not taken from the parse cache) goes into `texts` when given."""
        if not self._writing and self.intent_path.exists():
            self.recover()
            files = None  # the rollback changed the files
        files = list(self.files()) if files is None else files
        with Cache(self.layout.cache) as cache:
            parsed = parse_all(cache.table(PARSE_TABLE, PARSE_VERSION), files, texts)
        memories: list[Memory] = []
        problems: list[Problem] = list(self._outside)
        for path in sorted(parsed):
            item = parsed[path]
            if item.memory is not None:
                memories.append(item.memory)
            rel = self._rel(path)
            problems.extend(Problem(rel, p.kind, p.detail, p.severity) for p in item.problems)
        memories.sort(key=lambda m: m.name)
        problems.sort(key=lambda p: p.path)
        return LoadResult(memories, problems)

    def _rel(self, path: str) -> str:
        root = str(self.layout.root).rstrip(os.sep) + os.sep
        return path[len(root) :].replace(os.sep, "/") if path.startswith(root) else path

    def path_of(self, name: str) -> Path:
        """The file of memory `name`; refused if `name` is not a file name or the file would
        lie outside the repository (a symlinked folder or file)."""
        if (
            not name
            or "/" in name
            or "\\" in name
            or "\x00" in name
            or name.startswith(".")
            or name.upper() == "MEMORY"
        ):
            raise UsageError(f"{name!r} is not a memory name")
        path = self.dir / f"{name}.md"
        confine(self.layout.root, path.relative_to(self.layout.root).as_posix())
        return path

    def read(self, name: str) -> tuple[Memory, str]:
        """(memory `name`, its file's text), read now (not from the cache)."""
        path = self.path_of(name)
        where = self._rel(str(path))
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UsageError(f"no memory named {name!r} (see `orch memory list`)") from None
        except UnicodeDecodeError:
            raise InvalidFile(where, "not UTF-8 text") from None
        except OSError as exc:
            raise InvalidFile(where, f"unreadable: {exc.strerror or exc}") from None
        parsed = parse_memory(text, name, path=where)
        if parsed.memory is None:
            raise InvalidFile(where, parsed.problems[0].detail)
        return parsed.memory, text

    def get(self, name: str) -> Memory:
        return self.read(name)[0]

    # validation ------------------------------------------------------------------------

    def validation_errors(self, memory: Memory) -> list[str]:
        """Why `memory` may not be written ([] when it may). The one rule set for all writers."""
        errs: list[str] = []
        if not KEBAB.match(memory.name) or len(memory.name) > 80:
            errs.append("name must be kebab-case (a-z, 0-9, single dashes), at most 80 characters")
        if memory.name.upper() == "MEMORY":
            errs.append("name 'MEMORY' is reserved for the index")
        if not memory.description.strip() or "\n" in memory.description.strip():
            errs.append("description must be one non-empty line")
        if memory.type not in MEMORY_TYPES:
            errs.append(f"type must be one of {', '.join(MEMORY_TYPES)}")
        if not (memory.subject or "").strip():
            errs.append("subject is required")
        if not (memory.reason or "").strip():
            errs.append("reason is required (why it matters beyond one task)")
        if not memory.fact:
            errs.append("the fact (the body's first paragraph) is empty")
        if memory.type in NEEDS_CITATIONS and not memory.citations:
            errs.append(f"{memory.type} memories need at least one citation")
        carded = [k for k in CARD_KEYS if getattr(memory, k) is not None]
        if carded and memory.type != "user":
            errs.append(f"{', '.join(carded)}: only user memories are cards about a person")
        for citation in memory.citations:
            try:
                target = confine(self.layout.root, citation.path)
            except OrchError as exc:
                errs.append(f"citation {exc.message}")
                continue
            if not target.exists():
                errs.append(f"cited path {citation.path!r} does not exist")
        errs += frontmatter_problems(memory.frontmatter())
        return errs

    def check(self, memory: Memory) -> None:
        errs = self.validation_errors(memory)
        if errs:
            raise InvalidMemory(memory.name, errs)
        refuse_secrets(memory)

    # writing ---------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Write under the store's lock, all or nothing: MEMORY.md is regenerated at the end
        when a write changed what it shows; when anything fails (a full disk, a refused
        write) every file written is put back as it was, and a process killed part-way
        leaves its intent behind, which the next transaction (or listing) rolls back first.
        `on_write` gets the files that changed."""
        self.layout.require_initialised()
        self.require_inside()
        with file_lock(self.layout.locks, LOCK_NAME, what="the memory store"):
            self._recover()
            tx = Transaction(self)
            self._writing = True
            try:
                yield tx
                if tx.index_stale:
                    self.regenerate_index()
            except BaseException as exc:
                tx.roll_back()
                if isinstance(exc, OSError):
                    raise WriteFailed(
                        f"writing repo memory failed ({exc.strerror or exc}); nothing was changed",
                        path=self.layout.repo_memories,
                    ) from None
                raise
            else:
                tx.done()
            finally:
                self._writing = False
                changed = [p for p in dict.fromkeys(tx.written) if p not in tx.undone]
                if changed and self.on_write is not None:
                    self.on_write(changed)

    @property
    def intent_path(self) -> Path:
        return self.layout.cache / INTENT_FILE

    def recover(self) -> bool:
        """Roll back what a killed writer began (under the lock); True if there was any."""
        if not self.intent_path.exists():
            return False
        with file_lock(self.layout.locks, LOCK_NAME, what="the memory store"):
            return self._recover()

    def _recover(self) -> bool:
        try:
            raw = json.loads(self.intent_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return False
        except ValueError:
            raw = {}  # the intent itself was cut: nothing was written after it
        for rel, before in (raw.get("files") or {}).items():
            path = self.layout.root / rel
            if before is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, before)
        writing, self._writing = self._writing, True  # the lock is held: no recovery inside
        try:
            self.regenerate_index()
        finally:
            self._writing = writing
        self.intent_path.unlink(missing_ok=True)
        return True

    def regenerate_index(self) -> bool:
        """Rewrite MEMORY.md from the files; True if it changed (callers hold the lock)."""
        text = render_index(self.load_all().memories)
        try:
            if self.layout.memory_index.read_text(encoding="utf-8") == text:
                return False
        except FileNotFoundError:
            pass
        atomic_write(self.layout.memory_index, text)
        return True

    def index(self) -> bool:
        """Regenerate MEMORY.md under the lock; True if it changed."""
        with self.transaction():
            return self.regenerate_index()

    def supersede(self, old_name: str, new: Memory) -> Memory:
        """Write `new` in place of `old_name` in a transaction of its own."""
        with self.transaction() as tx:
            return tx.supersede(old_name, new)

    def update(self, name: str, **changes: Any) -> Memory:
        """Change fields of memory `name` in place, in a transaction of its own."""
        with self.transaction() as tx:
            return tx.update(name, **changes)


class Transaction:
    """Writes to the store while its lock is held (see `RepoMemoryStore.transaction`)."""

    def __init__(self, store: RepoMemoryStore) -> None:
        self.store = store
        self.written: list[Path] = []
        self.undone: set[Path] = set()
        self.index_stale = False
        self._current: LoadResult | None = None
        self._before: dict[Path, str | None] = {}  # each file's text before this transaction

    @property
    def current(self) -> LoadResult:
        """The store as it is now (read again after each write)."""
        if self._current is None:
            self._current = self.store.load_all()
        return self._current

    def _write(self, memory: Memory, original: str | None = None) -> None:
        path = self.store.path_of(memory.name)
        self._intend(path)
        atomic_write(path, serialize_memory(memory, original))
        self.written.append(path)
        self._current = None

    def _intend(self, path: Path) -> None:
        """Before a file changes: what it was goes into the intent on disk first, so a
        crash after the write can be rolled back."""
        if path in self._before:
            return
        self._before[path] = path.read_text(encoding="utf-8") if path.exists() else None
        self._before.setdefault(
            self.store.layout.memory_index, _text_or_none(self.store.layout.memory_index)
        )
        root = self.store.layout.root
        files = {str(p.relative_to(root)): before for p, before in self._before.items()}
        atomic_write(self.store.intent_path, json.dumps({"v": 1, "files": files}))

    def roll_back(self) -> None:
        """Put every file this transaction wrote back as it was: new files first (on a full
        disk, removing them makes room for the rest)."""
        order = sorted(self._before.items(), key=lambda item: item[1] is not None)
        for path, before in order:
            with contextlib.suppress(OSError):
                if before is None:
                    path.unlink(missing_ok=True)
                elif path.read_text(encoding="utf-8") != before:
                    atomic_write(path, before)
                self.undone.add(path)
        with contextlib.suppress(OSError):
            self.store.intent_path.unlink(missing_ok=True)

    def done(self) -> None:
        if self._before:
            self.store.intent_path.unlink(missing_ok=True)

    def _taken(self, name: str) -> bool:
        return name in self.current.by_name() or self.store.path_of(name).exists()

    def create(self, memory: Memory) -> Memory:
        """Write a new memory (active, stamped); refused when its name is taken."""
        stamp = now_iso()
        memory = memory.with_changes(
            created=memory.created or stamp, updated=memory.updated or stamp, status="active"
        )
        self.store.check(memory)
        if self._taken(memory.name):
            raise UsageError(
                f"a memory named {memory.name!r} exists; memories are superseded, not "
                "overwritten: use `orch memory supersede` or another --name"
            )
        self._write(memory)
        self.index_stale = True
        return memory

    def supersede(self, old_name: str, new: Memory) -> Memory:
        """Write `new` in place of `old_name`: the old file is kept, marked superseded."""
        stamp = now_iso()
        new = new.with_changes(
            created=new.created or stamp, updated=new.updated or stamp, status="active"
        )
        self.store.check(new)
        if old_name not in self.current.by_name():
            raise UsageError(f"no memory named {old_name!r} to supersede")
        old, original = self.store.read(old_name)  # the file as it is now, not the cached copy
        if not old.active:
            raise UsageError(f"memory {old_name!r} is already {old.status}")
        if new.name == old_name:
            raise UsageError("the new memory needs a new name; the old file is kept as superseded")
        if self._taken(new.name):
            raise UsageError(f"a memory named {new.name!r} exists")
        new = new.with_changes(supersedes=tuple(dict.fromkeys((*new.supersedes, old_name))))
        # The new file first: a crash between the two writes leaves both active (the new
        # one naming the old in `supersedes`), never a dangling superseded_by.
        self._write(new)
        marked = old.with_changes(status="superseded", superseded_by=new.name, updated=now_iso())
        self._write(marked, original)
        self.index_stale = True
        return new

    def update(self, name: str, **changes: Any) -> Memory:
        """Change fields of an existing memory in place (status, verified...), keeping the
        bytes of every key that did not change."""
        if "name" in changes:
            raise UsageError("a memory's name is its file name; supersede it instead")
        memory, original = self.store.read(name)
        memory = memory.with_changes(**changes)
        errs = frontmatter_problems(memory.frontmatter())
        if errs:
            raise InvalidMemory(name, errs)
        self._write(memory, original)
        self.index_stale = self.index_stale or bool(INDEX_FIELDS & set(changes))
        return memory
