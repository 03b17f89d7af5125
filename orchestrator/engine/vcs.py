"""Git, as the engine needs it: the project's files, snapshots, phase commits, trailers.

"The project" is the repository minus orch's own records (plans/, memories/, NOTES.md,
.orch/): those change all the time while a task runs and are never part of a phase
commit. Their paths come from `Layout`.

- `snapshot()` writes the project's working tree as a git tree object (through a private
  index, so the user's index is not touched) and returns its id. The executor stores it
  with each checkpoint; `restore(tree)` puts the project back exactly as it was then.
  The private index is kept in the git folder between snapshots (`KeptIndex`), so a
  snapshot re-hashes only the files whose stat data changed, as `git status` does.
- `commit_phase()` makes the one commit of a phase, with trailers naming the task, the
  phase and the trace, so `phase_commits()` can find a commit whose log event was lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from git import GitCommandError, InvalidGitRepositoryError, Repo

from orchestrator.errors import OrchError
from orchestrator.store.fs import atomic_write
from orchestrator.store.layout import Layout

TRAILER_TASK = "Orch-Task"
TRAILER_PHASE = "Orch-Phase"
TRAILER_TRACE = "Orch-Trace"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ZERO_SHA = "0" * 40
KEPT_INDEX_DIR = "orch-snapshot"  # in the git folder: never in the work tree, never tracked
STALE_WORK_SECONDS = 3600  # a work copy this old was left by a process that died


class GitError(OrchError):
    """A git operation failed (the message says which and why)."""


@dataclass(frozen=True)
class PhaseCommit:
    sha: str
    phase: int
    subject: str


class ProjectRepo:
    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        try:
            self.repo: Repo = Repo(layout.root)
        except InvalidGitRepositoryError:
            raise GitError(f"{layout.root} is not a git repository") from None
        self._pathspec: list[str] | None = None

    # what belongs to the project ---------------------------------------------------------
    def own_paths(self) -> list[str]:
        """orch's own records, relative to the root (never in a phase commit)."""
        root = self.layout.root
        paths = (self.layout.plans, self.layout.memories, self.layout.notes, self.layout.cache)
        return [p.relative_to(root).as_posix() for p in paths]

    def pathspec(self) -> list[str]:
        if self._pathspec is None:
            # git refuses a pathspec that names an ignored path, even to exclude it
            ignored = set(self._check_ignored(self.own_paths()))
            self._pathspec = [
                ".",
                *(f":(exclude){p}" for p in self.own_paths() if p not in ignored),
            ]
        return self._pathspec

    def _check_ignored(self, paths: list[str]) -> list[str]:
        try:
            out: str = self.repo.git.execute(["git", "check-ignore", "--", *paths])
        except GitCommandError:  # exit 1: none is ignored
            return []
        return out.splitlines()

    def _git(self, *args: str, env: dict[str, str] | None = None, strip: bool = True) -> str:
        try:
            out: str = self.repo.git.execute(["git", *args], env=env, strip_newline_in_stdout=strip)
        except GitCommandError as exc:
            detail = (exc.stderr or exc.stdout or "").strip().splitlines()
            last = detail[-1] if detail else f"exit {exc.status}"
            raise GitError(f"git {args[0]} failed: {last.strip()[:300]}") from None
        return out

    # state --------------------------------------------------------------------------------
    def head(self) -> str | None:
        try:
            return self._git("rev-parse", "--verify", "-q", "HEAD")
        except GitError:
            return None

    def branch(self) -> str | None:
        try:
            return self._git("symbolic-ref", "--short", "-q", "HEAD") or None
        except GitError:
            return None

    def uncommitted_records(self) -> list[str]:
        """orch's records git tracks or could track (plans/, memories/, NOTES.md) with
        changes not yet committed; ignored ones (`.orch/`) are not listed."""
        records = [p for p in self.own_paths() if p != self.layout.cache.name]
        out = self._git(
            "status", "--porcelain", "--untracked-files=all", "--", *records, strip=False
        )
        return [line[3:] for line in out.splitlines() if line.strip()]

    def commit_records(self, message: str) -> bool:
        """Commit orch's records (`uncommitted_records`) and nothing else; False when there
        was nothing to commit."""
        paths = self.uncommitted_records()
        if not paths:
            return False
        ignored = set(self._check_ignored(self.own_paths()))
        records = [p for p in self.own_paths() if p != self.layout.cache.name and p not in ignored]
        self._git("add", "-A", "--", *records)
        self._git("commit", "--no-verify", "-q", "-m", message, "--", *records)
        return True

    def dirty_paths(self) -> list[str]:
        """Project files with uncommitted changes (untracked ones included)."""
        out = self._git(
            "status", "--porcelain", "--untracked-files=all", "--", *self.pathspec(), strip=False
        )
        return [line[3:] for line in out.splitlines() if line.strip()]

    def wait_for_index_lock(self, timeout: float = 10.0) -> None:
        """A git process that outlived a crashed orch may still hold the index lock."""
        lock = Path(self.repo.git_dir) / "index.lock"
        deadline = time.monotonic() + timeout
        while lock.exists():
            if time.monotonic() > deadline:
                raise GitError(
                    f"{lock} exists: another git process is running, or one was killed; "
                    "remove the file if no git command is running, then `orch resume`"
                )
            time.sleep(0.1)

    # snapshots ----------------------------------------------------------------------------
    @property
    def snapshot_index(self) -> Path:
        """The private index kept between snapshots (in the git folder)."""
        return Path(self.repo.git_dir) / KEPT_INDEX_DIR / "index"

    def snapshot(self) -> str:
        """The project's working tree as a tree object (orch's own paths as in HEAD).

        The tree is the one a fresh index gives: HEAD read in, then `git add -A` of the
        project. It is built in the index the last snapshot left (`KeptIndex`), which holds
        the last snapshot's tree: its entries are set to HEAD's where the two trees differ,
        every other entry keeps its stat data, and `git add` re-hashes only the files whose
        stat data changed, as `git status` does.
        """
        with KeptIndex(self.snapshot_index).open() as work:
            env = {"GIT_INDEX_FILE": str(work.path)}
            tree = None
            if work.kept is not None:
                # a GitError: `git gc` pruned an object it names, or there is no commit yet
                with contextlib.suppress(GitError):
                    tree = self._snapshot_from(work.kept.tree, env)
            if tree is None:
                work.path.unlink(missing_ok=True)  # an empty index: every file is hashed
                if self.head() is not None:
                    self._git("read-tree", "HEAD", env=env)
                tree = self._add_project(env)
            work.keep(tree)
        return tree

    def _snapshot_from(self, held: str, env: dict[str, str]) -> str | None:
        """The snapshot, built in an index that holds tree `held`; None when its stat data
        cannot be trusted (a .gitattributes changed: files may hash differently now)."""
        self._set_entries(held, "HEAD", env)
        tree = self._add_project(env)
        return None if self._attributes_changed(held, tree) else tree

    def _add_project(self, env: dict[str, str]) -> str:
        self._git("add", "-A", "--", *self.pathspec(), env=env)
        return self._git("write-tree", env=env)

    def _set_entries(self, held: str, target: str, env: dict[str, str]) -> None:
        """Make an index that holds tree `held` hold tree `target` (a tree or a commit): the
        entries that differ are replaced (and lose their stat data); every other entry
        keeps it."""
        raw = self._git_bytes("diff-tree", "-r", "-z", "--no-renames", held, target)
        fields = raw.split(b"\0")
        removed, added = [], []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            if not meta.startswith(b":"):
                continue
            _old_mode, new_mode, _old_sha, new_sha, _status = meta[1:].split(b" ")
            if new_mode == b"000000":
                removed.append(b"0 " + ZERO_SHA.encode() + b"\t" + path + b"\0")
            else:
                added.append(new_mode + b" " + new_sha + b"\t" + path + b"\0")
        if removed or added:  # removals first: a file may give way to a folder, or back
            entries = b"".join(removed + added)
            self._git_bytes("update-index", "-z", "--index-info", env=env, stdin=entries)

    def _attributes_changed(self, old: str, new: str) -> bool:
        """Whether a .gitattributes differs between two trees (they decide how files hash)."""
        if old == new:
            return False
        raw = self._git_bytes("diff-tree", "-r", "-z", "--no-renames", "--name-only", old, new)
        return any(p.rsplit(b"/", 1)[-1] == b".gitattributes" for p in raw.split(b"\0"))

    def _git_bytes(
        self, *args: str, env: dict[str, str] | None = None, stdin: bytes = b""
    ) -> bytes:
        """A git command with bytes in and out (paths that are not UTF-8 stay intact)."""
        done = subprocess.run(
            ["git", *args],
            cwd=self.layout.root,
            env={**os.environ, **(env or {})},
            input=stdin,
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
            last = detail[-1] if detail else f"exit {done.returncode}"
            raise GitError(f"git {args[0]} failed: {last.strip()[:300]}")
        return done.stdout

    def changed_paths(self, old: str, new: str) -> list[tuple[str, str]]:
        """[(status letter, path)] between two trees, project paths only."""
        out = self._git(
            "diff-tree", "-r", "--no-renames", "--name-status", old, new, "--", *self.pathspec()
        )
        rows = []
        for line in out.splitlines():
            status, _, path = line.partition("\t")
            if path:
                rows.append((status[:1], path))
        return rows

    def restore(self, tree: str) -> list[str]:
        """Make the project's files match `tree`; returns the paths it changed."""
        current = self.snapshot()
        if current == tree:
            return []
        changed = self.changed_paths(current, tree)
        entries = self._tree_entries(tree, [p for _, p in changed])
        root = self.layout.root
        for _status, path in changed:
            target = root / path
            entry = entries.get(path)
            if entry is None:
                with contextlib.suppress(FileNotFoundError):
                    target.unlink()
                self._prune_empty_dirs(target.parent)
                continue
            mode, sha = entry
            data = self.repo.odb.stream(bytes.fromhex(sha)).read()
            if target.is_dir() and not target.is_symlink():
                raise GitError(f"cannot restore {path}: a folder is in the way")
            if mode == "120000":
                with contextlib.suppress(FileNotFoundError):
                    target.unlink()
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(data.decode("utf-8", "surrogateescape"), target)
                continue
            atomic_write(target, data, mode=0o755 if mode == "100755" else 0o644)
        return [p for _, p in changed]

    def _tree_entries(self, tree: str, paths: list[str]) -> dict[str, tuple[str, str]]:
        if not paths:
            return {}
        out = self._git("ls-tree", "-r", "-z", tree, "--", *paths, strip=False)
        entries: dict[str, tuple[str, str]] = {}
        for record in out.split("\0"):
            if not record:
                continue
            meta, _, path = record.partition("\t")
            mode, _kind, sha = meta.split()
            entries[path] = (mode, sha)
        return entries

    def _prune_empty_dirs(self, folder: Path) -> None:
        root = self.layout.root.resolve()
        while folder.resolve() != root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent

    def diff(self, old: str, new: str, *, max_chars: int = 60_000) -> str:
        text = self._git("diff", "--no-color", "--no-renames", old, new, "--", *self.pathspec())
        if len(text) > max_chars:
            text = text[:max_chars] + f"\n[... diff cut at {max_chars} characters ...]"
        return text

    def head_tree(self) -> str:
        return self._git("rev-parse", "HEAD^{tree}") if self.head() else EMPTY_TREE

    def tree_of(self, rev: str) -> str:
        """The tree of commit `rev` (the empty tree when `rev` does not exist, e.g. a root's parent)."""
        try:
            return self._git("rev-parse", "--verify", "-q", f"{rev}^{{tree}}")
        except GitError:
            return EMPTY_TREE

    def subject(self, rev: str) -> str:
        return self._git("log", "-1", "--format=%s", rev)

    # commits ------------------------------------------------------------------------------
    def commit_phase(self, *, slug: str, trace_id: str, phase: int, subject: str, body: str) -> str:
        """Commit the project's changes as phase `phase` of task `slug`; returns the commit id."""
        self.wait_for_index_lock()
        self._git("add", "-A", "--", *self.pathspec())
        trailers = f"{TRAILER_TASK}: {slug}\n{TRAILER_PHASE}: {phase}\n{TRAILER_TRACE}: {trace_id}"
        message = (
            f"{subject}\n\n{body.strip()}\n\n{trailers}\n"
            if body.strip()
            else (f"{subject}\n\n{trailers}\n")
        )
        self._commit(message)
        head = self.head()
        assert head is not None
        return head

    def _commit(self, message: str) -> None:
        # The phase gate already ran the checks: the repository's hooks are not run again.
        # The pathspec keeps anything staged under orch's own folders out of the commit.
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".msg", delete=False) as fh:
            fh.write(message)
            name = fh.name
        try:
            self._git(
                "commit", "--no-verify", "--allow-empty", "-q", "-F", name, "--", *self.pathspec()
            )
        finally:
            os.unlink(name)

    def phase_commits(self, slug: str, trace_id: str, since: str | None) -> dict[int, PhaseCommit]:
        """Commits on HEAD (after `since`) whose trailers name this task and trace."""
        if not self.head():
            return {}
        spec = f"{since}..HEAD" if since else "HEAD"
        out = self._git("log", "--format=%H%x00%s%x00%B%x1e", spec, strip=False)
        found: dict[int, PhaseCommit] = {}
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if not record:
                continue
            sha, subject, body = record.split("\x00", 2)
            trailers = _trailers(body)
            if trailers.get(TRAILER_TASK) != slug or trailers.get(TRAILER_TRACE) != trace_id:
                continue
            try:
                phase = int(trailers.get(TRAILER_PHASE, ""))
            except ValueError:
                continue
            found.setdefault(phase, PhaseCommit(sha, phase, subject))
        return found

    def is_ancestor(self, commit: str, of: str = "HEAD") -> bool:
        try:
            self._git("merge-base", "--is-ancestor", commit, of)
        except GitError:
            return False
        return True

    # branches -----------------------------------------------------------------------------
    def stash_and_branch(self, branch: str, message: str) -> str | None:
        """Put uncommitted project changes in a stash, then check out a new `branch`.

        Idempotent: a second call when `branch` is already checked out does nothing.
        """
        if self.branch() == branch:
            return None
        stash = None
        if self.dirty_paths():
            self._git("stash", "push", "--include-untracked", "-m", message, "--", *self.pathspec())
            stash = self._git("rev-parse", "-q", "--verify", "refs/stash")
        self._git("checkout", "-q", "-B", branch)
        return stash


def _trailers(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in body.strip().splitlines()[::-1]:
        key, sep, value = line.partition(": ")
        if not sep or " " in key:
            if out:
                break
            continue
        out.setdefault(key.strip(), value.strip())
    return out


@dataclass(frozen=True)
class Kept:
    """What the kept index held when it was saved: the tree `write-tree` gave, and the
    index file's identity then (a file that is not that one is not trusted)."""

    tree: str
    stat: tuple[int, int, int]  # inode, size, mtime in nanoseconds


@dataclass
class WorkIndex:
    """The copy of the kept index one snapshot works on."""

    path: Path
    kept: Kept | None  # None: `path` does not exist yet, and the index starts empty
    owner: KeptIndex

    def keep(self, tree: str) -> None:
        """Make this copy, which holds `tree`, the kept index."""
        record = {"v": 1, "tree": tree, "stat": list(_identity(self.path.stat()))}
        # no fsync: a record lost with the machine no longer matches, and is not used
        written = self.path.with_name(self.path.name + ".json")
        written.write_text(json.dumps(record) + "\n", encoding="utf-8")
        os.replace(written, self.owner.record)
        os.replace(self.path, self.owner.path)


class KeptIndex:
    """The snapshots' private index, kept between snapshots in the git folder.

    A snapshot works on a copy (`index.<pid>.<random>.tmp`, with its own `.lock`): the
    kept index is only ever replaced whole, by `os.replace`, after its record
    (`index.json`: the tree it holds and the file's identity) is written. A crash at any
    point leaves a kept index with its record, or one that does not match its record and
    is not used (the next snapshot starts from an empty index, as every snapshot once did).
    Concurrent snapshots each work on their own copy; the last to finish is kept.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.record = path.with_name(path.name + ".json")

    def load(self) -> Kept | None:
        try:
            raw = json.loads(self.record.read_text("utf-8"))
            st = self.path.stat()
            kept = Kept(str(raw["tree"]), tuple(raw["stat"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return kept if kept.stat == _identity(st) else None

    @contextlib.contextmanager
    def open(self) -> Iterator[WorkIndex]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._sweep()
        work_path = self.path.with_name(f"{self.path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        kept = self.load()
        if kept is not None:
            try:
                shutil.copy2(self.path, work_path)  # mtime kept: git's racy-file check holds
            except OSError:
                kept = None
        try:
            yield WorkIndex(work_path, kept, self)
        finally:
            for leftover in (work_path, *work_path.parent.glob(work_path.name + ".*")):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()

    def _sweep(self) -> None:
        """Remove work copies that processes which died left behind."""
        now = time.time()
        for leftover in self.path.parent.glob(f"{self.path.name}.*.tmp*"):
            with contextlib.suppress(OSError):
                if now - leftover.stat().st_mtime > STALE_WORK_SECONDS:
                    leftover.unlink()


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)
