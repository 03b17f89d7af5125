"""Git, as the engine needs it: the project's files, snapshots, phase commits, trailers.

"The project" is the repository minus orch's own records (plans/, memories/, NOTES.md,
.orch/): those change all the time while a task runs and are never part of a phase
commit. Their paths come from `Layout`.

- `snapshot()` writes the project's working tree as a git tree object (through a private
  index, so the user's index is not touched) and returns its id. The executor stores it
  with each checkpoint; `restore(tree)` puts the project back exactly as it was then.
- `commit_phase()` makes the one commit of a phase, with trailers naming the task, the
  phase and the trace, so `phase_commits()` can find a commit whose log event was lost.
"""

from __future__ import annotations

import contextlib
import os
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
    @contextlib.contextmanager
    def _private_index(self) -> Iterator[dict[str, str]]:
        with tempfile.TemporaryDirectory(prefix="orch-index-") as tmp:
            env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
            yield env

    def snapshot(self) -> str:
        """The project's working tree as a tree object (orch's own paths as in HEAD)."""
        with self._private_index() as env:
            if self.head():
                self._git("read-tree", "HEAD", env=env)
            self._git("add", "-A", "--", *self.pathspec(), env=env)
            return self._git("write-tree", env=env)

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
