"""Moves: a path a memory names is gone, but what it named lives elsewhere.

A move is not staleness: the fact holds, its citation wants repairing. Where a gone path
went is found by git's rename detection on the commit that removed it (a folder follows
its files), else the one tracked file of the same name, else (a citation with a symbol)
the one file that defines the symbol now. `verify` decides whether a failing claim is
explained by a move (the claim holds at the new place); this module holds what a move is,
how git is asked, and how a memory is repaired (`repaired`, for `orch memory verify
--fix`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.memory.codeindex import git
from orchestrator.store.memfile import Citation, Memory, now_iso


@dataclass(frozen=True)
class Move:
    """A path the memory gives (`origin`: a citation, or its body) and where it is now;
    for a citation, the cited line at the new place where it could be found again."""

    path: str
    to: str
    origin: str = "citation"  # citation | body
    line: int | None = None
    symbol: str | None = None
    renamed: str | None = None  # the symbol's name at the new place, when the move changed it

    def describe(self) -> str:
        where = self.to + (f":{self.line}" if self.line else "")
        named = f" as {self.renamed}" if self.renamed else ""
        return f"{self.path} moved to {where}{named}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "to": self.to, "origin": self.origin}
        if self.line is not None:
            out["line"] = self.line
        if self.symbol is not None:
            out["symbol"] = self.symbol
        if self.renamed is not None:
            out["renamed"] = self.renamed
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Move:
        return cls(
            raw["path"],
            raw["to"],
            raw.get("origin", "citation"),
            raw.get("line"),
            raw.get("symbol"),
            raw.get("renamed"),
        )


def removed_in(root: Path, path: str) -> str | None:
    """The last commit that removed `path` (a file, or every file of a folder)."""
    # every branch: a file whose whole life was on a merged branch is pruned from the
    # simplified history the default walk gives
    found = git(root, "log", "-1", "--format=%H", "--full-history", "--diff-filter=D", "--", path)
    sha = found.decode().strip()
    return sha or None


def renamed(
    root: Path, path: str, exists: Callable[[str], bool], hops: int = 3
) -> tuple[str | None, bool]:
    """Where git's rename detection says `path` (a file or a folder) went, in the commit
    that removed it, following a file that was renamed again (`js/index.js` ->
    `lib/index.js` -> `lib/index.ts`) up to `hops` times (None when it says none, or the
    last place is gone too), and whether some commit removed it at all. A folder went
    where its files were moved, unless they were split up (`_folder_went`)."""
    sha = removed_in(root, path)
    if sha is None:
        return None, False
    diff = git(root, "diff", "-M", "--name-status", "-z", f"{sha}^", sha).decode()
    fields = diff.split("\0")
    changes: list[tuple[str, str, str]] = []  # (status, old path, new path or "")
    i = 0
    while i < len(fields) - 1:
        status = fields[i]
        if status.startswith(("R", "C")) and i + 2 < len(fields):
            changes.append((status, fields[i + 1], fields[i + 2]))
            i += 3
        else:
            changes.append((status, fields[i + 1], ""))
            i += 2
    for status, old, new in changes:
        if old == path and new and exists(new):
            return new, True
        if old == path and status.startswith("R") and hops > 1:
            return renamed(root, new, exists, hops - 1)[0], True
    return _folder_went(root, path, changes, exists, hops), True


def _folder_went(
    root: Path,
    path: str,
    changes: list[tuple[str, str, str]],
    exists: Callable[[str], bool],
    hops: int,
) -> str | None:
    """The one folder the files `path` lost in one commit were moved into, keeping their
    place below it (`old/a/b.py` -> `new/a/b.py`); files deleted beside them do not
    count. A folder whose moved files were spread over several places (more than a tenth
    of them outside the one most went to) was split up, and went nowhere. A folder that
    went on to somewhere else later is followed through one of its files."""
    votes: dict[str, int] = {}
    moved = [(old, new) for status, old, new in changes if status.startswith("R")]
    moved = [(old, new) for old, new in moved if old.startswith(path + "/")]
    for old, new in moved:
        rest = old[len(path) + 1 :]
        if new.endswith("/" + rest):
            folder = new[: -len(rest) - 1]
            votes[folder] = votes.get(folder, 0) + 1
    if not votes:
        return None
    folder = max(votes.items(), key=lambda item: item[1])[0]
    inside = sum(new.startswith(folder + "/") for _, new in moved)
    if 10 * inside < 9 * len(moved):
        return None
    if exists(folder):
        return folder
    if hops <= 1:
        return None
    return _followed(root, folder, changes, path, exists, hops)


def _followed(
    root: Path,
    folder: str,
    changes: list[tuple[str, str, str]],
    path: str,
    exists: Callable[[str], bool],
    hops: int,
) -> str | None:
    """Where `folder` (the place `path`'s files went, gone too) went next: where one of
    those files is now, when it kept its name below the folder."""
    for status, old, new in changes:
        rest = old[len(path) + 1 :]
        if status.startswith("R") and old.startswith(path + "/") and new == f"{folder}/{rest}":
            later = renamed(root, new, exists, hops - 1)[0]
            if later is not None and later.endswith("/" + rest):
                return later[: -len(rest) - 1]
            return None
    return None


def unqualified(symbol: str) -> str | None:
    """A namespaced name's last part (`Account::Balance` -> `Balance`, `App\\Models\\User`
    -> `User`): in languages whose namespaces follow folders (Ruby, PHP), a file that moves
    to another folder changes its namespace. None for a name with no namespace."""
    for sep in ("::", "\\"):
        if sep in symbol:
            return symbol.rsplit(sep, 1)[1] or None
    return None


def text_before_removal(root: Path, path: str) -> str | None:
    """The file's text just before the commit that removed it (None: never removed)."""
    sha = removed_in(root, path)
    if sha is None:
        return None
    data = git(root, "show", f"{sha}^:{path}")
    return data.decode("utf-8", "replace") if data else None


def line_again(before: str | None, line: int, now: str) -> int | None:
    """Where line `line` of `before` is in `now`: the one line with the same text (blank
    lines and lines repeated in `now` cannot be found again)."""
    if before is None:
        return None
    lines = before.splitlines()
    if not 0 < line <= len(lines) or not lines[line - 1].strip():
        return None
    wanted = lines[line - 1].strip()
    found = [i for i, text in enumerate(now.splitlines(), start=1) if text.strip() == wanted]
    return found[0] if len(found) == 1 else None


def repaired(memory: Memory, moves: Sequence[Move], name: str, commit: str | None) -> Memory:
    """A copy of `memory` named `name` whose citations (path, and line where the cited line
    or symbol was found again) and body paths point where the things live now; `repaired`
    in its frontmatter says what moved, `verified` records the check just made."""
    cited = {(m.path, m.symbol): m for m in moves if m.origin == "citation"}
    citations = []
    for c in memory.citations:
        move = cited.get((c.path, c.symbol))
        symbol = move.renamed or c.symbol if move is not None else c.symbol
        citations.append(c if move is None else Citation(move.to, move.line, symbol))
    body, description = memory.body, memory.description
    for move in (m for m in moves if m.origin == "body"):
        body = _replace_path(body, move)
        description = _replace_path(description, move)
    stamp = now_iso()
    extra = {
        **memory.extra,
        "repaired": {"at": stamp, "from": memory.name, "moves": [m.describe() for m in moves]},
    }
    return memory.with_changes(
        name=name,
        description=description,
        body=body,
        citations=tuple(dict.fromkeys(citations)),
        created=None,
        updated=None,
        supersedes=(),
        superseded_by=None,
        verified={"commit": commit, "at": stamp, "result": "ok"} if commit else None,
        extra=extra,
    )


def _replace_path(text: str, move: Move) -> str:
    """`text` with the moved path replaced where it is written as a path: in a code span,
    or as a link's target (a trailing slash is kept as written)."""
    new = move.to + ("/" if move.path.endswith("/") and not move.to.endswith("/") else "")
    if move.path.startswith("/"):
        new = "/" + new
    old = re.escape(move.path)
    text = re.sub(rf"`{old}`", lambda _: f"`{new}`", text)
    return re.sub(rf"\]\((?:mdc:)?{old}\)", lambda m: m.group(0).replace(move.path, new), text)


def next_name(name: str, taken: Callable[[str], bool]) -> str:
    """A free name for the repaired copy of memory `name`: `name-2`, `name-3`..."""
    base = re.sub(r"-\d+$", "", name)[:110] or "memory"
    n = 2
    while taken(f"{base}-{n}"):
        n += 1
    return f"{base}-{n}"
