"""A past commit's tree, for asking whether a claim that fails now held back then.

Staleness means a claim held and no longer does. A memory records the commit it was
verified at (`verified.commit`); a claim that fails now is checked again on that commit's
tree, and one that fails there too was never confirmed (`verify`). The tree is not checked
out: it is a git repository of its own in a temporary folder that borrows the
repository's objects (an `alternates` file: nothing is copied), with the commit as HEAD
(so its history is the commit's history) and as its index, every file marked unchanged
(`assume-unchanged`) and none written but git's own per-folder files (`.gitignore`,
`.gitattributes`, `.gitmodules`), which git reads from disk only. Git answers there as in a
checkout (`git grep` reads the files from the objects), and the verifier reads a file's
text by its blob id (`TreeState.stored`), so the cost scales with the files read, not with
the tree: on a tree of 50,000 files, a quarter of a second instead of writing them all.
Git runs there without the user's or the system's configuration (no filter, no hook of
theirs runs). What a claim was at a commit never changes, so each answer is cached (table
`past-claims`) and a commit's repository is made at most once a run, only for claims not
answered before.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

from orchestrator.memory.claims import Claim
from orchestrator.memory.codeindex import git
from orchestrator.store.cache import Cache

PAST_TABLE = "past-claims"  # sha1 of (commit, claim) -> "" (held) or why it failed
PAST_VERSION = 2
GIT_OWN = (".gitignore", ".gitattributes", ".gitmodules")  # read by git from disk only


def _env() -> dict[str, str]:
    return {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _run(into: Path, *args: str, input: bytes | None = None) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=into, env=_env(), input=input, capture_output=True
        )
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def stage(root: Path, commit: str, into: Path) -> bool:
    """Make the empty folder `into` a repository whose HEAD and index are commit `commit`
    of the repository at `root`, its files unwritten but git's own (see above); False when
    git cannot."""
    objects = git(root, "rev-parse", "--path-format=absolute", "--git-path", "objects")
    objects_dir = objects.decode().strip()
    if not objects_dir or _run(into, "init", "-q") is None:
        return False
    alternates = into / ".git" / "objects" / "info" / "alternates"
    alternates.write_text(objects_dir + "\n", encoding="utf-8")
    sha = (_run(into, "rev-parse", "--verify", "-q", f"{commit}^{{commit}}") or b"").strip()
    if not sha or _run(into, "update-ref", "--no-deref", "HEAD", sha.decode()) is None:
        return False
    if _run(into, "read-tree", "HEAD") is None:
        return False
    paths = _run(into, "ls-files", "-z")
    if (
        paths is None
        or _run(into, "update-index", "-z", "--assume-unchanged", "--stdin", input=paths) is None
    ):
        return False
    own = b"\0".join(
        p
        for p in paths.split(b"\0")
        if p and p.rsplit(b"/", 1)[-1].decode("utf-8", "replace") in GIT_OWN
    )
    return not own or _run(into, "checkout-index", "-f", "-z", "--stdin", input=own) is not None


class PastTrees:
    """Temporary repositories of past commits (made on first need, removed by `close`:
    see `stage`), and the cached answers of claims checked on them."""

    def __init__(self, root: Path, cache: Cache | None) -> None:
        self.root = root
        self.table = cache.table(PAST_TABLE, PAST_VERSION) if cache is not None else None
        self._dirs: dict[str, tempfile.TemporaryDirectory[str] | None] = {}

    def tree(self, commit: str) -> Path | None:
        """The folder holding `commit`'s tree (None: git does not know the commit)."""
        if commit not in self._dirs:
            tmp = tempfile.TemporaryDirectory(prefix="orch-past-")
            if stage(self.root, commit, Path(tmp.name)):
                self._dirs[commit] = tmp
            else:
                tmp.cleanup()
                self._dirs[commit] = None
        held = self._dirs[commit]
        return Path(held.name) if held is not None else None

    @staticmethod
    def key(commit: str, claim: Claim) -> str:
        raw = json.dumps([commit, claim.to_dict()], sort_keys=True)
        return hashlib.sha1(raw.encode()).hexdigest()

    def known(self, commit: str, claims: list[Claim]) -> dict[Claim, str | None]:
        """The cached answers: claim -> None (it held) or why it failed."""
        if self.table is None:
            return {}
        keys = {self.key(commit, c): c for c in claims}
        found = self.table.get_many(list(keys))
        return {keys[k]: (v or None) for k, v in found.items()}

    def remember(self, commit: str, answers: dict[Claim, str | None]) -> None:
        if self.table is not None and answers:
            self.table.put_many([(self.key(commit, c), r or "") for c, r in answers.items()])

    def close(self) -> None:
        for held in self._dirs.values():
            if held is not None:
                held.cleanup()
        self._dirs.clear()
