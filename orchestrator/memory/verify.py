"""Verification: check each memory's claims against the working tree.

Results:
- `ok`: every claim holds;
- `changed`: every claim holds, but a file the memory cites (or names as a path) changed
  since its recorded verification (`verified.commit` in the memory file), per git blob ids;
- `moved`: every claim holds, once the paths that are gone are read where they went
  (`moves`: git's rename detection, the one file of that name, the one file defining a
  cited symbol); `moved` says from where to where, and `orch memory verify --fix`
  supersedes the memory with repaired citations;
- `stale`: a claim fails; `failures` says which and why. A claim that fails now and also
  failed at the memory's recorded `verified.commit` (recorded ok) was never confirmed: it
  is not newly stale, so it does not make the memory stale; it is listed in
  `unconfirmed` (see `Verifier._never_confirmed`).

Checking reads nothing twice: file facts are cached by git blob in `.orch/cache.sqlite`
(see `codeindex`), and each memory's result under its file's stat key and the signature of
the tracked files (table `verifications`). Verification itself writes nothing to memory
files; `record.record` writes `verified: {commit, at, result}` into the memories whose
record would change (what `orch memory verify --record` does).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from orchestrator.errors import PathEscape
from orchestrator.memory import kinds, past, symbols
from orchestrator.memory.claims import (
    CODE_SPAN,
    FILE_EXTENSIONS,
    LINK_TARGET,
    WORD_KINDS,
    Claim,
    body_claims,
    citation_claims,
    claim_paths,
    looks_like_path,
    placeholder_name,
    stand_in_rest,
)
from orchestrator.memory.codeindex import (
    BUILTINS,
    GREP_BATCH,
    INDEX_KINDS,
    SKIP_PREFIXES,
    CodeIndex,
    Facts,
    FileFacts,
    TreeState,
    git,
    index_word,
    index_words,
    is_code,
    python_code_words,
    tree_at,
)
from orchestrator.memory.moves import (
    Move,
    line_again,
    removed_in,
    renamed,
    text_before_removal,
    unqualified,
)
from orchestrator.store.cache import Cache, stat_key
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory
from orchestrator.store.repo import LoadResult, RepoMemoryStore

RESULTS = ("ok", "changed", "moved", "stale")
RESULTS_TABLE = "verifications"  # memory file path -> [key, name, active, Verification]
RESULTS_VERSION = 20
WHOLE_BELOW = 6  # a name shorter than this names a commented-out line only as a whole word
ENOUGH_FILES = 256  # files holding the names asked about, read at once; more are read in batches
FEW_FILES = 8  # files holding a name, at most, that are all read at once (see `answer`)
GROWING = frozenset({"flag", "function", "identifier", "class", "type", "env"})  # see `answer`


@dataclass(frozen=True)
class ClaimFailure:
    claim: Claim
    reason: str

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "claim": self.claim.text,
            "kind": self.claim.kind,
            "reason": self.reason,
        }
        out.update({k: v for k, v in self.claim.to_dict().items() if k not in ("text", "kind")})
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ClaimFailure:
        claim = Claim(
            raw["kind"],
            raw["claim"],
            raw.get("origin", "body"),
            raw.get("path"),
            raw.get("line"),
            raw.get("symbol"),
            raw.get("value"),
        )
        return cls(claim, raw["reason"])


@dataclass(frozen=True)
class Verification:
    name: str
    result: str  # ok | changed | moved | stale
    claims: int
    failures: tuple[ClaimFailure, ...] = ()
    changed: tuple[str, ...] = ()  # paths changed since the recorded verification
    moved: tuple[Move, ...] = ()  # gone paths and where they live now
    unconfirmed: tuple[ClaimFailure, ...] = ()  # failed where the memory was written too

    @property
    def stale(self) -> bool:
        return self.result == "stale"

    def summary(self) -> str:
        if self.failures:
            return "; ".join(f.reason for f in self.failures)
        if self.moved:
            return "; ".join(dict.fromkeys(f"{m.path} moved to {m.to}" for m in self.moved))
        if self.changed:
            return "cited files changed since the last verification: " + ", ".join(self.changed)
        if self.unconfirmed:
            return (
                f"{len(self.unconfirmed)} of {self.claims} claims never confirmed (they failed "
                "where the memory was written too): "
                + "; ".join(f.reason for f in self.unconfirmed)
            )
        return f"{self.claims} claims hold"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "result": self.result,
            "claims": self.claims,
            "failures": [f.to_dict() for f in self.failures],
            "changed": list(self.changed),
            "moved": [m.to_dict() for m in self.moved],
            "unconfirmed": [f.to_dict() for f in self.unconfirmed],
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Verification:
        return cls(
            raw["name"],
            raw["result"],
            raw["claims"],
            tuple(ClaimFailure.from_dict(f) for f in raw["failures"]),
            tuple(raw["changed"]),
            tuple(Move.from_dict(m) for m in raw.get("moved", ())),
            tuple(ClaimFailure.from_dict(f) for f in raw.get("unconfirmed", ())),
        )


@dataclass
class Verifier:
    """Checks memories against one reading of the working tree (read once, then reused)."""

    layout: Layout
    use_cache: bool = True
    shared: Cache | None = None  # a cache to use and leave open (a past tree's checker)
    tree: TreeState | None = None  # the tree as the caller just read it (else read here)
    state: TreeState = field(init=False)
    facts: Facts = field(init=False)

    def __post_init__(self) -> None:
        own = self.use_cache and self.shared is None
        self.cache = Cache(self.layout.cache) if own else self.shared
        self._own_cache = own
        self._past = past.PastTrees(self.layout.root, self.cache)
        self._past_checkers: dict[str, Verifier | None] = {}
        self.state = self.tree or TreeState.read(self.layout.root)
        self.facts = Facts(self.state, self.cache)
        self.shape = self.state.shape()
        self._basenames: set[str] | None = None
        self._trees: dict[str, dict[str, str] | None] = {}
        self._blobs: dict[str, str] = {}  # blob id -> its text
        self._env_readers: dict[tuple[str, str | None], list[str]] = {}  # files reading a variable
        self._suffixes: set[str] | None = None
        self._submodules: tuple[str, ...] | None = None
        self._submodule_added: dict[str, bool] = {}
        self._config_names: set[str] | None = None
        self._ignore_cache: dict[str, bool] = {}
        self._claims: dict[tuple[str, str, tuple[Citation, ...]], list[Claim]] = {}
        self._path_cache: dict[str, bool] = {}
        self._file_cache: dict[str, bool] = {}
        self._project: kinds.Project | None = None
        self._moves: dict[str, str | None] = {}
        self._past_projects: dict[str, kinds.Project | None] = {}
        self._series_seen: dict[str, bool] = {}
        self._ci_hits: dict[tuple[str, str | None], str | None] = {}
        self._same: dict[str, bool] = {}  # commit -> its tracked files are the tree's
        self._born_at: dict[str, str | None] = {}  # a memory's `created` -> HEAD's commit then
        self._notes_only: dict[str, bool] = {}  # commit -> only memory notes changed since
        self._changed: dict[str, list[str]] = {}  # commit -> code files changed since
        self._inner: dict[str | None, dict[str, str]] = {}  # see `_inner_folders`
        self._managers: dict[str | None, set[str]] = {}  # commit (None: now) -> lock files
        self._declared: dict[str | None, set[str]] = {}  # commit -> managers package.json names
        self._prefixes: frozenset[str] | None = None  # see `_template_prefixes`
        self._python_words: dict[str, frozenset[str]] = {}  # path -> words outside comments
        self._held: set[Claim] = set()  # index claims that held on part of the index
        self._by_kind = self._checks()

    def close(self) -> None:
        for checker in self._past_checkers.values():
            if checker is not None and checker is not self:  # self: the same tree as now
                checker.close()
        self._past.close()
        if self.cache is not None and self._own_cache:
            self.cache.close()

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # claims ----------------------------------------------------------------------------

    def claims(self, memory: Memory) -> list[Claim]:
        key = (memory.name, memory.body, memory.citations)
        found = self._claims.get(key)
        if found is None:
            body = self.body_claims(memory.body)
            cited = {c.path for c in memory.citations}
            if len(cited) == 1:  # a size the body states is the one cited file's
                body = [replace(c, path=min(cited)) if c.kind == "size" else c for c in body]
            found = self._claims[key] = citation_claims(memory) + body
        return found

    def body_claims(self, body: str) -> list[Claim]:
        """The claims a memory body makes: the names in its code spans (`claims`), then
        commands, scripts, tasks, folders, patterns, variables and stated values (`kinds`)."""
        found = list(body_claims(body, self.shape))
        seen = {(c.kind, c.text, c.symbol) for c in found}
        more = kinds.text_claims(body) + kinds.link_claims(body)
        return found + [c for c in more if (c.kind, c.text, c.symbol) not in seen]

    def project(self) -> kinds.Project:
        if self._project is None:
            root, paths = self.layout.root, sorted(self.state.blobs)
            self._project = (
                kinds.PastProject(root, paths, blobs={**self.state.blobs, **self.state.links})
                if self.state.stored
                else kinds.Project(root, paths)
            )
        return self._project

    def moved_to(self, path: str) -> str | None:
        """Where a gone path lives now: git's rename detection on the commit that removed
        it, else the one tracked file of the same name, else the one beside it with its
        stem in another format; None when it is not gone or nowhere."""
        path = _relative(path)
        if path in self._moves:
            return self._moves[path]
        found = None
        if path and not self._exists(path):
            found, deleted = renamed(self.layout.root, path, self._exists)
            if found is None and not deleted and "/" in path:
                name = path.rsplit("/", 1)[1]
                same = [p for p in self.state.blobs if p.rsplit("/", 1)[-1] == name]
                if len(same) == 1 and "." in name:
                    found = same[0]
            if found is None and "." in path.rsplit("/", 1)[-1]:
                found = self._sibling_format(path)
            if found is None and path.count("/") >= 2:
                found = self._rewritten_below(path)
        self._moves[path] = found
        return found

    def _added_by_removal(self, path: str) -> list[str]:
        """The files the commit that removed `path` added; none when git knows no such commit."""
        sha = removed_in(self.layout.root, path)
        if sha is None:
            return []
        added = git(self.layout.root, "diff", "--name-only", "--diff-filter=A", f"{sha}^", sha)
        return added.decode("utf-8", "replace").splitlines()

    def _rewritten_below(self, path: str) -> str | None:
        """The one tracked file the commit that removed `path` added with the same folder
        and name at its end (`.prompts/lint/GUIDE.md` -> `.agent/prompts/lint/GUIDE.md`):
        the file rewritten in a folder moved, where git's rename detection cannot follow
        when most lines changed and the name alone (`GUIDE.md` in every folder) is not one."""
        tail = "/" + "/".join(path.rsplit("/", 2)[-2:])
        found = [p for p in self._added_by_removal(path) if p.endswith(tail) and p != path]
        return found[0] if len(found) == 1 and self._exists(found[0]) else None

    def _sibling_format(self, path: str) -> str | None:
        """The one tracked file beside a gone one with its stem and another extension
        (`App.sln` -> `App.slnx`, `setup.js` -> `setup.ts`), added by the commit that
        removed it: the file rewritten in a new format, which git's rename detection cannot
        follow when most lines changed."""
        stem = path.rsplit(".", 1)[0]
        found = [p for p in self.state.blobs if p.rsplit(".", 1)[0] == stem and p != path]
        if len(found) != 1:
            return None
        # the commit that removed the file added the other: a rewrite, not a file that
        # was there all along
        return found[0] if found[0] in self._added_by_removal(path) else None

    def _cited_move(self, citation: Citation) -> Move | None:
        """Where a cited path that is gone went, when its symbol is defined there: git's
        rename detection or the one file of that name (`moved_to`), else the one file that
        defines the cited symbol now; with the cited line found again where it can be."""
        if self._exists(citation.path.strip("/").removeprefix("./")):
            return None
        symbol = (citation.symbol or "").strip().removesuffix("()")
        to = self.moved_to(citation.path)
        new_name = None
        if symbol and to is not None and not self._defines(to, symbol):
            # a namespace that followed the folder (`Account::Balance` -> `Balance`)
            short = unqualified(symbol)
            new_name = short if short and self._defines(to, short) else None
            to = to if new_name else None
        if symbol and to is None:
            to = self._defined_in(symbol)
        if to is None:
            return None
        line = self._line_at(citation, to, new_name) if citation.line else None
        return Move(citation.path, to, "citation", line, citation.symbol, new_name)

    def _defines(self, path: str, symbol: str) -> bool:
        claim = Claim("symbol", symbol, "citation", path=path, symbol=symbol)
        return self._check_cited_symbol(claim) is None

    def _defined_in(self, symbol: str) -> str | None:
        """The one code file whose parsed definitions hold `symbol`."""
        found = self._definers(symbol)
        return found[0] if len(found) == 1 else None

    def _definers(
        self, symbol: str, commit: str | None = None, among: list[str] | None = None
    ) -> list[str]:
        """The code files whose definitions (parsed, or by patterns) hold `symbol` (the
        files that spell each part of its name, `Table` and `columns` for `Table.columns`,
        found by `git grep`, are the only ones read: a member named `id` alone is in
        most files of a project); at `commit`, read from git's objects (nothing checked
        out), else in the working tree; of the files `among` only, when given."""
        *owners, name = symbol.split(".")
        name = name.rstrip("?!")
        if not name.isidentifier():
            return []
        words = [w for w in owners if w.isidentifier()] + [name]
        patterns = [arg for w in words for arg in ("-e", w)]
        at = [commit] if commit else []
        chunks = (
            [[]]
            if among is None
            else [among[i : i + GREP_BATCH] for i in range(0, len(among), GREP_BATCH)]
        )
        listed = b"".join(
            git(
                self.layout.root,
                "--literal-pathspecs",
                "grep",
                "-l",
                "-w",
                "-F",
                "-I",
                "--all-match",
                *patterns,
                *at,
                "--",
                *chunk,
            )
            for chunk in chunks
        )
        found = []
        for path in listed.decode("utf-8", "replace").splitlines():
            path = path.removeprefix(f"{commit}:") if commit else path
            if not is_code(path):
                continue
            facts = self.facts.of(path) if commit is None else self._facts_at(path, commit)
            if facts is not None and (
                symbol in facts.defs or any(d.endswith("." + symbol) for d in facts.defs)
            ):
                found.append(path)
        return found

    def _facts_at(self, path: str, commit: str) -> FileFacts | None:
        """The facts of the file `path` was at `commit` (read from git, cached by blob)."""
        blob = (self._tree(commit) or {}).get(path)
        if blob is None:
            return None
        return self.facts.of_blob(
            blob, path, lambda: git(self.layout.root, "cat-file", "blob", blob)
        )

    def _line_at(self, citation: Citation, to: str, renamed: str | None = None) -> int | None:
        """The cited line's number in the file it moved to: the cited symbol's definition,
        else the one line whose text is the cited line's (None: not found again)."""
        now = self.project().text(to) if self._is_file(to) else None
        if now is None or citation.line is None:
            return None
        if citation.symbol:
            return symbols.symbol_line(now, renamed or citation.symbol, to)
        before = text_before_removal(self.layout.root, citation.path.strip("/"))
        return line_again(before, citation.line, now)

    def moved_since(self, path: str, commit: str | None) -> str | None:
        """Where a gone path lives now (`moved_to`), when `commit` (where the words were
        written or last verified) still had it: a path already gone then did not move
        since, it was wrong when written."""
        if commit is not None and not self._had(_relative(path), commit):
            return None
        return self.moved_to(path)

    def _had(self, path: str, commit: str) -> bool:
        """`commit`'s tree had the path, as a file or a folder, from the root or below
        some folder (as a path the words give is read now); True when git does not know
        the commit."""
        tree = self._tree(commit)
        if tree is None or not path:
            return True
        return any(
            p == path or p.startswith(path + "/") or p.endswith("/" + path) or f"/{path}/" in p
            for p in tree
        )

    def _body_move(self, claim: Claim, commit: str | None) -> Move | None:
        """A gone path the body names, where it went, when the claim holds there (and
        `commit`, the recorded one, had the path)."""
        to = self.moved_since(claim.path or "", commit)
        if to is None or self.check_claim(replace(claim, path=to)) is not None:
            return None
        return Move(claim.path or "", to, "body")

    def _explain_moves(
        self, memory: Memory, failures: list[ClaimFailure]
    ) -> tuple[tuple[Move, ...], list[ClaimFailure]]:
        """The moves that explain failures (every claim of a moved citation holds where it
        went; a body path's claim holds at the new path, and the recorded commit had
        it), and the failures left."""
        recorded = _recorded_ok(memory)
        cited: dict[str, list[Move | None]] = {}
        failing = {f.claim.path for f in failures if f.claim.origin == "citation"}
        for c in memory.citations:
            if c.path in failing:
                cited.setdefault(c.path, []).append(self._cited_move(c))
        moves: list[Move] = []
        for found in cited.values():
            if all(m is not None for m in found):
                moves += [m for m in found if m is not None]
        explained = {m.path for m in moves}
        kept = []
        for f in failures:
            if f.claim.origin == "citation":
                if f.claim.path not in explained:
                    kept.append(f)
                continue
            move = self._body_move(f.claim, recorded) if f.claim.path else None
            if move is None:
                kept.append(f)
            elif move not in moves:
                moves.append(move)
        return tuple(moves), kept

    def _never_confirmed(
        self, memory: Memory, failures: list[ClaimFailure]
    ) -> tuple[tuple[ClaimFailure, ...], list[ClaimFailure]]:
        """The failures that also fail where the memory was written (it was never
        confirmed there: not newly stale), and the failures left. Where it was last
        verified ok, every failure is weighed; a memory with no such record was written
        against the commit HEAD had when it was `created` (`_written_against`), and only a
        bare word (`WORD_KINDS`: a name, a flag, a variable, a pattern) is weighed there,
        as the lint weighs an instruction file's words: a word the code never had was
        another tool's or an example's, not a fact that went stale. Paths, scripts and
        the rest stay failures as they stand."""
        commit = _recorded_ok(memory)
        weighed = failures
        if commit is None:
            commit = self._written_against(memory.created)
            weighed = [f for f in failures if f.claim.kind in WORD_KINDS]
        if commit is None or not weighed:
            return (), failures
        then = self._answers_at(commit, [f.claim for f in weighed])
        if then is None:
            return (), failures
        unconfirmed = tuple(f for f in weighed if then.get(f.claim) is not None)
        return unconfirmed, [f for f in failures if f not in unconfirmed]

    def _written_against(self, created: str | None) -> str | None:
        """The commit HEAD's first-parent line had reached at `created` (a memory's birth
        date; HEAD itself for a memory newer than every commit), or None: no date, or none
        of the line is that old."""
        if not created:
            return None
        if created not in self._born_at:
            found = git(
                self.layout.root, "rev-list", "-1", "--first-parent", f"--before={created}", "HEAD"
            )
            self._born_at[created] = found.decode().strip() or None
        return self._born_at[created]

    def lapsed(
        self, body: str, claims: list[Claim], commit: str, about: str = ""
    ) -> list[ClaimFailure]:
        """What the tree alone cannot judge, judged against `commit`, where the words were
        written or last verified: a dependency the prose names (`kinds.product_claims`)
        that a manifest declared then and none declares now, nor names within its own name
        (`go-sqlite3` still names SQLite); a command (a code span of three words or more,
        with an option) that a CI file ran word for word then and none runs now; a
        script's subcommand the script named then and names nowhere now; a path
        that was tracked then and is gone now while git ignores it (a source folder become
        a build output, not one by design); an environment variable the code read then
        and reads nowhere now (the tests' code, when the words or `about`, the heading
        they sit under, speak of tests); a full version a named or cited file had then and
        has no more; a function or class the code defined then and defines nowhere now,
        while its name lives on in calls, tests or tables; a package name in a code span,
        a name of capitalised parts in prose or in a quoted line of code, a kind of file by
        its extension, a name in capitals the code had then and has no more. When only
        memory notes changed
        since `commit`, no manifest, CI file, script or reader of a variable did: what
        compares those is not looked at, and only a note's text can have changed."""
        in_files = claims
        if self._notes_only_since(commit):
            code: list[ClaimFailure] = []
            read: list[ClaimFailure] = []
            in_files = [c for c in claims if _note(_relative(c.path))]
        else:
            products = kinds.product_claims(body)
            code = (
                self._dropped_dependencies(body, [*products, *_span_products(body)], claims, commit)
                + self._dropped_ci_commands(body, commit)
                + self._dropped_subcommands(body, commit)
                + self._switched_manager(body, commit)
                + self._dropped_gradle_tasks(claims, commit)
                + self._dropped_prose_names([*products, *_code_line_names(body)], commit)
                + self._dropped_extensions(body, commit)
                + self._dropped_constants(body, commit)
                + self._dropped_namespaced(body, commit)
                + self._recounted(body, commit)
                + self._dropped_listed_tasks(body, about, commit)
                + self._dropped_listed_entries(body, about, commit)
                + self._dropped_listed_notes(body, about, commit)
                + self._dropped_ports(body, commit)
                + self._dropped_tops(body, claims, commit)
                + self._dropped_tree_rows(body, commit)
                + self._dropped_projects(body, commit)
                + self._dropped_prose_folders(body, commit)
            )
            tests = bool(_TESTS.search(f"{about}\n{body}"))
            read = self._unread_variables(claims, commit, tests=tests)
        return (
            code
            + self._ignored_since(claims, commit)
            + read
            + self._dropped_members(claims, commit)
            + self._dropped_definitions(claims, commit)
            + self._switched_off(body, in_files, commit)
            + self._unpinned(body, in_files, commit)
        )

    def _unpinned(self, body: str, claims: list[Claim], commit: str) -> list[ClaimFailure]:
        """A full version the words give (three parts, a pre-release too: `1.26.4`,
        `10.0.100-rc.1`) that a file they name or cite, or a file that pins a tool's
        version (`global.json`, `.nvmrc`, `rust-toolchain.toml`, `.tool-versions`...), had
        at `commit` and has no more: the pin moved on."""
        versions = set(_FULL_VERSION.findall(body)) if any(c.isdigit() for c in body) else set()
        if not versions:
            return []
        out: list[ClaimFailure] = []
        seen: set[str] = set()
        pinned = [Claim("path", p, "body", path=p) for p in sorted(_PIN_FILES) if self._is_file(p)]
        for claim in [*claims, *pinned]:
            path = _relative(claim.path)
            if not path or path in seen or not self._is_file(path):
                continue
            seen.add(path)
            blob = self._changed_blob(path, commit)
            if blob is None:
                continue
            then, now = self._blob_text(blob), self.project().text(path) or ""
            for version in sorted(versions):
                if _has_version(then, version) and not _has_version(now, version):
                    reason = f"{path} had {version} at {commit[:10]}; it no longer does"
                    out.append(ClaimFailure(claim, reason))
        return out

    def _dropped_members(self, claims: list[Claim], commit: str) -> list[ClaimFailure]:
        """`account.series`: `Account` defined `series` at `commit`, and no class of that
        name defines it now (parsed, or read by patterns: the same reading at both commits;
        the files of `commit` read from git, not checked out)."""
        out = []
        for claim in claims:
            symbol = claim.symbol or ""
            if claim.kind != "instance" or self._definers(symbol):
                continue
            if self._same_files(commit):
                continue  # nothing was dropped
            if self._definers(symbol, commit):
                owner, _, member = symbol.partition(".")
                reason = f"{owner} defined {member} at {commit[:10]}; no {owner} defines it now"
                out.append(ClaimFailure(claim, reason))
        return out

    def _dropped_definitions(self, claims: list[Claim], commit: str) -> list[ClaimFailure]:
        """`RequestHandlerExtra`, `parse_config()`: a name the code defined at `commit` that
        no file defines now, though some still name it (a call left in a test, an entry of a
        migration table), so the claim holds on the words alone. Only the files changed
        since `commit` can have dropped a definition, so only they are read at `commit`;
        names the code never defined (a library's) are not judged, nor names so common
        that the index read only part of the files holding them (see `answer`)."""
        out = []
        for claim in claims:
            symbol = claim.symbol or ""
            if claim.kind not in ("function", "class") or not symbol.isidentifier():
                continue
            if self._same_files(commit) or claim in self._held:
                continue  # nothing changed since; or a common name, its index not whole
            if self.check_claim(claim) is not None or symbol in self._index(claim).defs:
                continue  # failing already, for its own reason; or parsed as defined now
            then = self._definers(symbol, commit, among=self._changed_since(commit))
            if then and not self._definers(symbol):  # read by patterns, as at `commit`
                reason = (
                    f"{symbol} was defined in {then[0]} at {commit[:10]}; nothing defines it now"
                )
                out.append(ClaimFailure(claim, reason))
        return out

    def _dropped_prose_names(self, products: list[Claim], commit: str) -> list[ClaimFailure]:
        """`the LineStripsVisualizer draws them`: a name of several capitalised parts the
        prose gives outside code spans (`products`, from `kinds.product_claims`), that a
        code file changed since `commit` defined then and no file defines now. A name the
        code never defined (a product's, a library's) is no claim: only definitions are
        compared; nor is the project's own name, that of a package it publishes ("LanceDB"
        beside the package `lancedb`), which names the product, not one class of it."""
        out = []
        changed: list[str] | None = None
        own: set[str] | None = None
        for claim in products:
            name = claim.text
            if not (name.isidentifier() and sum(c.isupper() for c in name) >= 2):
                continue
            if own is None:
                own = self._own_names()
            if name.lower() in own:
                continue
            if changed is None:
                changed = self._changed_since(commit)
            then = self._definers(name, commit, among=changed) if changed else []
            if then and not self._definers(name):
                reason = f"{name} was defined in {then[0]} at {commit[:10]}; nothing defines it now"
                out.append(ClaimFailure(Claim("class", name, "body", symbol=name), reason))
        return out

    def _own_names(self) -> set[str]:
        """The names the project's packages publish under, scope aside (`@acme/ledger` is
        `ledger`), lower case."""
        return {n.rsplit("/", 1)[-1] for n in self.project().package_names}

    def _dropped_extensions(self, body: str, commit: str) -> list[ClaimFailure]:
        """A kind of file named by its extension ("the schemas are `.fbs` files") that
        `commit` tracked and the tree tracks none of now."""
        out = []
        for ext in dict.fromkeys(e.lower() for e in _EXTENSION_FILES.findall(body)):
            suffix = "." + ext
            if any(p.lower().endswith(suffix) for p in self.state.blobs):
                continue
            then = [p for p in self._tree(commit) or {} if p.lower().endswith(suffix)]
            if then:
                reason = f"no {suffix} file is left ({len(then)} at {commit[:10]})"
                claim = Claim("pattern", f"{suffix} files", "body", symbol="*" + suffix)
                out.append(ClaimFailure(claim, reason))
        return out

    def _dropped_constants(self, body: str, commit: str) -> list[ClaimFailure]:
        """`DOTNET_ROLL_FORWARD`, `MAX_UPLOAD_MB`: a name in capitals and underscores in a
        code span (a setting, a constant, a variable a script sets), a Ruby method of
        several words ending in `!` or `?` (`stub_authorization!`), or a linter's rule
        named with its plugin (`react-hooks/exhaustive-deps`, `@stylistic/quote-props`;
        no path of the tree, then or now), that some code file named at `commit` and none
        names now (prose and the instruction files aside)."""
        out = []
        for span in dict.fromkeys(m.group(1).strip() for m in CODE_SPAN.finditer(body)):
            named = bool(_CONSTANT.fullmatch(span) or _RUBY_METHOD.fullmatch(span))
            if not named and _RULE_ID.fullmatch(span):
                named = not self._exists(span) and not self._had(span, commit)
            if not named or self._naming(span, None):
                continue
            then = self._naming(span, commit)
            if then:
                reason = f"{span} was named in {then[0]} at {commit[:10]}; no code names it now"
                out.append(ClaimFailure(Claim("env", span, "body", symbol=span), reason))
        return out

    def _dropped_namespaced(self, body: str, commit: str) -> list[ClaimFailure]:
        """`Shop::Admin::BaseController`, `Shop::Roles.for`: a Ruby constant in a code span
        whose file by the loaders' convention (`shop/admin/base_controller.rb`, under any
        folder) `commit` tracked and nothing tracks now, unless git's rename detection
        says where that file went (the class went with it: not stale); a
        constant no file held by that convention at `commit` is not judged (the
        convention may not be the project's)."""
        out = []
        for span in dict.fromkeys(m.group(1).strip() for m in CODE_SPAN.finditer(body)):
            found = _RUBY_CONSTANT.fullmatch(span)
            if found is None:
                continue
            path = "/".join(_snake(part) for part in found.group(1).split("::")) + ".rb"
            if self._holds_path(path, None):
                continue
            then = self._holds_path(path, commit)
            if then and renamed(self.layout.root, then, self._exists)[0] is None:
                reason = f"{span}: {then} held it at {commit[:10]}; no {path} now"
                out.append(ClaimFailure(Claim("class", span, "body", symbol=span), reason))
        return out

    def _holds_path(self, path: str, commit: str | None) -> str | None:
        """A tracked file (now, or at `commit`) whose path is `path` or ends with it."""
        tree = self.state.blobs if commit is None else (self._tree(commit) or {})
        base = "/" + path
        return next((p for p in tree if p == path or p.endswith(base)), None)

    def _recounted(self, body: str, commit: str) -> list[ClaimFailure]:
        """A count of the folders a folder holds ("15+ packages in `packages/`") that was
        right at `commit` (at least so many, for "15+") and is wrong now."""
        out = []
        for found in _FOLDER_COUNT.finditer(body):
            stated, plus, folder = int(found.group(1)), bool(found.group(2)), found.group(3)
            folder = folder.strip("/")
            then = self._subfolders(folder, commit)
            now = self._subfolders(folder, None)
            if then and _fits(then, stated, plus) and not _fits(now, stated, plus):
                reason = f"{folder}/ holds {now} folders now ({then} at {commit[:10]})"
                out.append(
                    ClaimFailure(Claim("value", found.group(0), "body", path=folder), reason)
                )
        return out

    def _dropped_listed_tasks(self, body: str, about: str, commit: str) -> list[ClaimFailure]:
        """A list item headed by a bare bold or backticked name, under a heading (or in
        words) that speaks of Make targets, just recipes or package scripts ("## Makefile
        commands" then "- **lint**: run the linters"): the name, when some Makefile,
        justfile or package.json of `commit` had it, must still be one now. A name that
        was no such task then is no claim: the list may name what is not one."""
        head = _LISTED_HEAD.match(body)
        if head is None:
            return []
        name, context = head.group(1), f"{about}\n{body}"
        sources = [label for label, words in _TASK_LISTS if words.search(context)]
        then = self._project_at(commit) if sources else None
        if then is None:
            return []
        now = self.project()
        for label in sources:
            if _task_listed(then, label, name) and not _task_listed(now, label, name):
                reason = f"{name}: a {label} at {commit[:10]}, none is named so now"
                return [ClaimFailure(Claim("task", head.group(0), "body", symbol=name), reason)]
        return []

    def _dropped_listed_entries(self, body: str, about: str, commit: str) -> list[ClaimFailure]:
        """A list item headed by a bare bold or backticked name under a heading that names
        one folder in a code span ("### Meta service (`src/meta/`)" then "- **raft-log**:
        the consensus log"): the entry of that folder `commit`'s tree had by that name (a
        folder, or a file of that name and an extension) must still be there. A name the
        folder did not hold then is no claim: the list may name parts that are no files."""
        head = _LISTED_HEAD.match(body) if "`" in about else None
        folders = _FOLDER_SPAN.findall(about) if head is not None else []
        if head is None or len(folders) != 1:
            return []
        name = head.group(1)
        entry = listed_entry(self._tree(commit) or {}, folders[0].removeprefix("./") + name)
        if entry is None or self._exists(entry.rstrip("/")):
            return []
        reason = f"{entry} was in the tree at {commit[:10]}; it is gone now"
        return [ClaimFailure(Claim("path", name, "body", path=entry), reason)]

    def _dropped_listed_notes(self, body: str, about: str, commit: str) -> list[ClaimFailure]:
        """A list item headed by a bare bold or backticked name of several hyphenated parts
        ("- **release-notes** - writing the changelog"), when no heading names its folder
        (`_dropped_listed_entries` judges those): `commit`'s tree had a folder of that
        name or a markdown note of that stem (an agent's skill or role, a rule), and no
        path has one now. A name no folder or note had then is no claim: the list may
        name a script, a package or a task (other files of its name are left aside)."""
        head = _LISTED_HEAD.match(body)
        if head is None or "-" not in head.group(1) or _FOLDER_SPAN.search(about):
            return []
        name = head.group(1)
        then = self._folder_or_note(commit, name)
        if then is None or self._folder_or_note(None, name) is not None:
            return []
        at = f"/{then}".find(f"/{name}/")
        entry = then if at < 0 else then[: at + len(name)]
        reason = f"{entry} was in the tree at {commit[:10]}; it is gone now"
        return [ClaimFailure(Claim("path", name, "body", path=entry), reason)]

    def _dropped_tops(self, body: str, claims: list[Claim], commit: str) -> list[ClaimFailure]:
        """`tools/parser-builder`: a path in a code span (or in bold: `**bin/cli**`) whose
        first part was an entry of the root at `commit` and is none now (the whole folder
        went), which the tree alone reads as no path at all; the path was in `commit`'s
        tree. So is a root folder written bare with its slash in prose (`proto/`) that no
        folder of the tree is named now. A move is found as for any path the words give."""
        if "/" not in body:
            return []
        read = {c.text for c in claims}
        spans = [m.group(1).strip() for m in CODE_SPAN.finditer(body)]
        spans += _BOLD_PATH.findall(body) if "**" in body else []
        spans = [s for s in spans if "/" in s.strip("/") and s not in read]
        # a root folder written bare in prose or a drawn tree ("after modifying proto/",
        # "├── proto/"): the recorded root had it, and no folder of that name is left
        loose = dict.fromkeys(_ROOT_FOLDER.findall(CODE_SPAN.sub(" ", body)))
        # ...or a row of the tree's first level quoted whole ("`├── proto/`")
        loose.update(dict.fromkeys(m.group(1) for m in _TREE_TOP_SPAN.finditer(body)))
        wanted = [s for s in dict.fromkeys([*spans, *loose]) if _top(s) not in self.shape.top_level]
        if not wanted:
            return []
        then = {p.split("/", 1)[0] for p in self._tree(commit) or {}}
        shape = replace(self.shape, top_level=frozenset(then))
        out = []
        for span in wanted:
            path, top = span.strip("/"), _top(span)
            if top not in then or not looks_like_path(span, shape):
                continue
            if self._had(path, commit) and not (span in loose and self._nested(path)):
                reason = f"{path} was in the tree at {commit[:10]}; no {top}/ now"
                out.append(ClaimFailure(Claim("path", span, "body", path=path), reason))
        return out

    def _dropped_tree_rows(self, body: str, commit: str) -> list[ClaimFailure]:
        """`│   └── bench/`: a row of a drawn tree naming a folder below the root (the drawing
        is of some package, so which one is not known) when every folder of that name
        below the root at `commit` is gone now: whichever the drawing meant went. A name
        that was a root entry then is `_dropped_tops`' to judge; a name no folder below the
        root had then is no claim; a folder git's rename detection followed is moved, and one
        renamed to its plural or singular (`prompt/` to `prompts/`) is not judged."""
        if "──" not in body:
            return []
        tree = self._tree(commit) or {}
        out = []
        for name in dict.fromkeys(_TREE_ROW.findall(body)):
            if any(p.startswith(name + "/") for p in tree):
                continue  # a root entry then: `_dropped_tops` judges it
            then = sorted(
                {p[: p.index(f"/{name}/") + len(name) + 1] for p in tree if f"/{name}/" in p}
            )
            if not then or any(self._tracked_folder(f) or self._exists(f) for f in then):
                continue
            if any(self._tracked_folder(f) for f in map(_other_number, then)):
                continue  # `prompt/` beside a new `prompts/`: renamed, its files rewritten
            reason = f"{then[0]}/ was in the tree at {commit[:10]}; no such folder now"
            out.append(ClaimFailure(Claim("path", f"{name}/", "body", path=then[0]), reason))
        return out

    def _dropped_projects(self, body: str, commit: str) -> list[ClaimFailure]:
        """`Ledger.Replication`: a dotted name of capitalised parts (.NET names its projects
        so, and a project is a folder of that name) that was a folder of `commit`'s tree,
        when no path of the tree has a part so named now (the project removed). A dotted
        name no folder had then (a namespace, a type's member) is no claim; a folder git's
        rename detection followed is moved."""
        if "." not in body:
            return []
        out = []
        for name in dict.fromkeys(_PROJECT_NAME.findall(body)):
            inside = f"/{name}/"
            then = self._inner_folders(commit).get(name + "/")
            if then is None or name + "/" in self._inner_folders(None):
                continue
            folder = (
                name if then.startswith(name + "/") else then[: then.index(inside) + len(name) + 1]
            )
            reason = f"{folder}/ was in the tree at {commit[:10]}; no {name} now"
            out.append(ClaimFailure(Claim("path", name, "body", path=folder), reason))
        return out

    def _dropped_prose_folders(self, body: str, commit: str) -> list[ClaimFailure]:
        """ "changes to engines/legacy": a path of two bare parts in prose (outside code
        spans and links), which the tree alone does not read (two parts are as often
        words, "input/output"), that was a folder below a root folder of `commit`'s tree
        and is no folder now. Words no folder was named by then are no claim; a folder
        git's rename detection followed is moved."""
        if "/" not in body:
            return []
        prose = LINK_TARGET.sub(" ", CODE_SPAN.sub(" ", body))
        then = self._project_at(commit)
        out = []
        for pair in dict.fromkeys(_TWO_PARTS.findall(prose)):
            if then is None or pair not in then.folders:
                continue  # no folder then: words, or a path the tree alone judges
            if self._tracked_folder(pair) or self._exists(pair):
                continue
            reason = f"{pair}/ was in the tree at {commit[:10]}; it is gone now"
            out.append(ClaimFailure(Claim("path", pair, "body", path=pair), reason))
        return out

    def _dropped_ports(self, body: str, commit: str) -> list[ClaimFailure]:
        """`http://localhost:3001`: a local port some file of the project (prose and lock
        files aside) named at `commit` and none names now: whatever served there (a dev
        script's `-p 3001`, a compose file) serves elsewhere. A port no file named then is
        no claim (a framework's default needs no setting)."""
        ports = (
            dict.fromkeys(_LOCAL_PORT.findall(body)) if "local" in body or "127." in body else {}
        )
        if not ports or self._same_files(commit):
            return []
        out = []
        for port in ports:
            then = [p for p in self._naming(port, commit) if not _LOCK_NAME.search(p)]
            if then and not [p for p in self._naming(port, None) if not _LOCK_NAME.search(p)]:
                reason = f"port {port}: {then[0]} named it at {commit[:10]}; no file names it now"
                out.append(ClaimFailure(Claim("value", port, "body", value=port), reason))
        return out

    def _subfolders(self, folder: str, commit: str | None) -> int:
        """How many folders `folder` holds (by its tracked files), now or at `commit`."""
        tree = self.state.blobs if commit is None else (self._tree(commit) or {})
        prefix = folder + "/"
        return len(
            {
                p[len(prefix) :].split("/", 1)[0]
                for p in tree
                if p.startswith(prefix) and p.count("/") > folder.count("/") + 1
            }
        )

    def _naming(self, name: str, commit: str | None) -> list[str]:
        """The code files (prose aside) spelling `name` as a whole word, now or at `commit`."""
        at = [commit] if commit else []
        found = git(self.layout.root, "grep", "-l", "-I", "-w", "-F", "-e", name, *at, "--")
        listed = found.decode("utf-8", "replace").splitlines()
        paths = [p.removeprefix(f"{commit}:") for p in listed]
        return [p for p in paths if is_code(p) and not _instructions(p)]

    def _changed_since(self, commit: str) -> list[str]:
        """The code files `commit` had that the working tree no longer has as they were."""
        if commit not in self._changed:
            then = self._tree(commit) or {}
            now = self.state.blobs
            self._changed[commit] = sorted(
                p for p, b in then.items() if now.get(p) != b and is_code(p)
            )
        return self._changed[commit]

    def _inner_folders(self, commit: str | None) -> dict[str, str]:
        """Each name a folder of the tree at `commit` (None: now) has, anywhere, -> the
        first tracked path below such a folder (`Ledger.Replication` -> its
        `src/Ledger.Replication/Program.cs`), and each markdown note's file name -> its
        path; read once per tree, as a whole-tree scan per name is slow on a large one."""
        if commit not in self._inner:
            paths = self.state.blobs if commit is None else (self._tree(commit) or {})
            found: dict[str, str] = {}
            for path in paths:
                *folders, file = path.split("/")
                for part in folders:
                    found.setdefault(part + "/", path)
                if file.endswith((".md", ".mdc")):
                    found.setdefault(file, path)
            self._inner[commit] = found
        return self._inner[commit]

    def _folder_or_note(self, commit: str | None, name: str) -> str | None:
        """A path of the tree at `commit` (None: now) in a folder named `name`, else one of
        a markdown note of that stem (`skills/release-notes/SKILL.md`,
        `agents/release-notes.md`), or None."""
        inner = self._inner_folders(commit)
        return inner.get(name + "/") or inner.get(f"{name}.md") or inner.get(f"{name}.mdc")

    def _notes_only_since(self, commit: str) -> bool:
        """Every tracked file but the memory notes (`.md` files under `memories/`) is in the
        working tree as it was at `commit`, none gone. Known once `commit`'s tree is read
        (the first claim citing a file reads it); False before, so no tree is read for it."""
        if commit not in self._notes_only:
            if commit not in self._trees:
                return False
            then = self._trees[commit]
            self._notes_only[commit] = then is not None and _beside_notes(then) == _beside_notes(
                self.state.blobs
            )
        return self._notes_only[commit]

    def _same_files(self, commit: str) -> bool:
        """The tracked files at `commit` are the working tree's (memories and task records
        aside): nothing can have lapsed since."""
        if commit not in self._same:
            then = self._tree(commit)
            self._same[commit] = then is not None and _outside_records(then) == _outside_records(
                self.state.blobs
            )
        return self._same[commit]

    def _switched_off(self, body: str, claims: list[Claim], commit: str) -> list[ClaimFailure]:
        """A file the claim names or cites, where a line about the thing (naming the
        symbol cited in it, else the file's own name) was code at `commit` and is now
        only in a comment (`# before_action :sync_family`): the mechanism it stated is
        switched off, though every name is still there. A fact naming code of its own
        (`retry.Permanent(err)`) is about that code: the file's name stands for the thing
        only when neither a citation nor the words name a symbol, so a line about
        something else of the file (`if remote != mod.Enabled {` in `mod.go`) does not
        count."""
        out = []
        paths: dict[str, tuple[Claim, set[str]]] = {}
        named = _code_names(body, claims)
        for c in claims:
            path = _relative(c.path)
            if path:
                claim, symbols = paths.setdefault(path, (c, set()))
                symbols.update([c.symbol] if c.kind == "symbol" and c.symbol else [])
        for path, (claim, symbols) in paths.items():
            blob = self._changed_blob(path, commit)
            now = self.project().text(path) if blob is not None and self._is_file(path) else None
            if blob is None or now is None:
                continue
            about = symbols or named or {_stem(path)}
            line = commented_out(self._blob_text(blob), now, about)
            if line is not None:
                reason = f"{path}: `{line}` is commented out since {commit[:10]}"
                out.append(ClaimFailure(claim, reason))
        return out

    def _changed_blob(self, path: str, commit: str) -> str | None:
        """The blob `path` had at `commit`; None when it was not tracked then, or has the
        very same text now (nothing about it can have lapsed)."""
        blob = (self._tree(commit) or {}).get(path)
        return None if blob is None or blob == self.state.blob_of(path) else blob

    def _blob_text(self, blob: str) -> str:
        """A blob's text (read once: many memories cite one file)."""
        if blob not in self._blobs:
            data = git(self.layout.root, "cat-file", "blob", blob)
            self._blobs[blob] = data.decode("utf-8", "replace")
        return self._blobs[blob]

    def _unread_variables(
        self, claims: list[Claim], commit: str, *, tests: bool
    ) -> list[ClaimFailure]:
        out = []
        for claim in claims:
            if claim.kind not in ("env", "variable") or not claim.symbol:
                continue
            then = self._readers(claim.symbol, commit, tests=tests)
            if then and not self._readers(claim.symbol, None, tests=tests):
                code = "test code" if tests else "code"
                reason = f"no {code} reads {claim.symbol} now; {then[0]} did at {commit[:10]}"
                out.append(ClaimFailure(claim, reason))
        return out

    def _readers(self, name: str, commit: str | None, *, tests: bool) -> list[str]:
        """The code files that read the environment variable `name` (`os.Getenv("X")`,
        `os.environ["X"]`, `process.env.X`, `ENV.fetch("X")`, `env::var("X")`...), now or
        at `commit`; only test code (a path with a test or spec part) when `tests`."""
        key = (name, commit)
        if key not in self._env_readers:  # one search a variable and commit, however many ask
            at = [commit] if commit else []
            found = git(
                self.layout.root, "grep", "-l", "-I", "-E", "-e", _ENV_READ % name, *at, "--"
            )
            listed = found.decode("utf-8", "replace").splitlines()
            self._env_readers[key] = [p.removeprefix(f"{commit}:") for p in listed]
        paths = self._env_readers[key]
        return [p for p in paths if is_code(p) and (not tests or _TEST_PATH.search(p))]

    def _dropped_dependencies(
        self, body: str, products: list[Claim], claims: list[Claim], commit: str
    ) -> list[ClaimFailure]:
        """A product the prose names (`products`), a package name in a code span of
        `body`, or a dependency `claims` give a version (`eslint - v9`, a `value` claim of
        `kinds.text_claims`), that a manifest declared at `commit` and none declares now."""
        out = []
        now = self.project().dependency_names
        for claim in products:
            key = claim.symbol or ""
            then = self._project_at(commit)
            if then is None or not {key, f"@{key}"} & then.dependency_names:
                continue  # no dependency then (nor a scope so named, `@playwright/test`)
            if not _still_declared(key, now) and not self._configured(key):
                reason = f"{claim.text}: a dependency at {commit[:10]}, no manifest declares it now"
                out.append(ClaimFailure(claim, reason))
        out += self._dropped_packages(body, commit) + self._dropped_programs(body, commit)
        for claim in [
            c for c in claims if c.kind == "value" and (c.symbol or "").startswith("dep:")
        ]:
            name = (claim.symbol or "").removeprefix("dep:")
            if self.project().declared(name)[1]:
                continue
            then = self._project_at(commit)
            if then is not None and then.declared(name)[1]:
                reason = f"{claim.text}: a dependency at {commit[:10]}, no manifest declares it now"
                out.append(ClaimFailure(claim, reason))
        return out

    def _configured(self, key: str) -> bool:
        """The tree still keeps the tool's own configuration (`.changeset/` for Changesets,
        `.husky/`, `.eslintrc.json`, `vitest.config.ts`): the project still uses it, though no
        manifest declares it (run with `npx`, installed globally, or by a parent)."""
        if self._config_names is None:
            names: set[str] = set()
            for blob in self.state.blobs:
                for part in blob.lower().split("/"):
                    dotted = re.fullmatch(r"\.([\w-]+?)(?:rc)?(?:\.\w+)*", part)
                    named = re.fullmatch(r"([\w-]+?)(?:\.config|rc)(?:\.\w+)*", part)
                    names.update(m.group(1) for m in (dotted, named) if m)
            self._config_names = names
        stem = key.lower().rsplit("/", 1)[-1]
        return bool({stem, stem.removesuffix("s")} & self._config_names) and len(stem) > 3

    def _dropped_programs(self, body: str, commit: str) -> list[ClaimFailure]:
        """`black src/`, `uv run flake8`, `npx prettier --check .`: a command whose program
        a manifest declared as a dependency at `commit` and none declares now (the tool
        left the project; the command's folders may all be there)."""
        out = []
        now = self.project().dependency_names
        for span in dict.fromkeys(m.group(1).strip() for m in CODE_SPAN.finditer(body)):
            program = _program(span)
            key = kinds.dependency_key(program) if program else ""
            if not key or _still_declared(key, now):
                continue
            then = self._project_at(commit)
            if then is not None and key in then.dependency_names:
                reason = f"{program}: a dependency at {commit[:10]}, no manifest declares it now"
                out.append(ClaimFailure(Claim("command", span, "body", symbol=program), reason))
        return out

    def _dropped_packages(self, body: str, commit: str) -> list[ClaimFailure]:
        """`react-dom-legacy`, `@acme/ui`: a package name in a code span that was one of the
        project's own packages or a declared dependency at `commit`, and is neither now
        (the workspace package deleted, the dependency dropped)."""
        out = []
        now = self.project()
        for span in kinds.package_spans(body):
            name = span.lower()
            if name in now.package_names or now.declared(name)[1]:
                continue
            then = self._project_at(commit)
            if then is None:
                continue
            if name in then.package_names:
                reason = f"{span}: a package of the project at {commit[:10]}, none is named so now"
            elif then.declared(name)[1]:
                reason = f"{span}: a dependency at {commit[:10]}, no manifest declares it now"
            else:
                continue
            out.append(ClaimFailure(Claim("dependency", span, "body", symbol=name), reason))
        return out

    def _dropped_gradle_tasks(self, claims: list[Claim], commit: str) -> list[ClaimFailure]:
        """`./gradlew apiDump`: a task the Gradle build had at `commit` (registered by a
        build script or a convention plugin, or added by a well-known plugin a build file
        named: `tasksources.GRADLE_PLUGINS`) that it has no more; a task it did not know
        then (another plugin's) is not judged."""
        out = []
        for claim in claims:
            symbol = claim.symbol or ""
            if claim.kind != "task" or not symbol.startswith("gradle:"):
                continue
            name, now = symbol.removeprefix("gradle:"), self.project().gradle_build
            if now is not None and now.has(name):
                continue
            past = self._project_at(commit)
            then = past.gradle_build if past is not None else None
            origin = then.origin(name) if then is not None else None
            if origin is not None:
                reason = f"{name}: {origin} at {commit[:10]}; the build has no such task now"
                out.append(ClaimFailure(claim, reason))
        return out

    def _dropped_ci_commands(self, body: str, commit: str) -> list[ClaimFailure]:
        """`pip install lxml --user`: a command with an option that a CI file ran word for
        word at `commit` and none runs now. A command that runs a script the project
        still defines (`pnpm build --filter "@acme/*"`) still works wherever CI
        runs it, so is no claim of this kind."""
        out = []
        for span in dict.fromkeys(m.group(1).strip() for m in CODE_SPAN.finditer(body)):
            if len(span.split()) < 3 or not _OPTION.search(span) or self._in_ci(span, None):
                continue
            if self._runs_defined(span):
                continue
            ran = self._in_ci(span, commit)
            if ran is not None:
                reason = f"{ran} ran `{span}` at {commit[:10]}; no CI file has it now"
                out.append(ClaimFailure(Claim("command", span, "body"), reason))
        return out

    def _runs_defined(self, command: str) -> bool:
        """Whether `command` runs a script some package.json of the project defines now."""
        names = [
            (c.symbol or "").rstrip("?")
            for c in kinds.text_claims(f"`{command}`")
            if c.kind == "script"
        ]
        scripts = self.project().scripts.values()
        return bool(names) and all(any(n in s for s in scripts) for n in names)

    def _switched_manager(self, body: str, commit: str) -> list[ClaimFailure]:
        """`yarn run lint`, `poetry install --with dev`: a command of a package manager
        whose lock file the project tracked at `commit` and tracks nowhere now, while
        another manager of the same language locks it: the project switched managers (the
        scripts and targets may live on)."""
        spans = [
            m.group(1) for m in CODE_SPAN.finditer(body) if not _GLOBAL_INSTALL.search(m.group(1))
        ]
        used = {m.group(1) for s in spans for m in _MANAGER_COMMAND.finditer(s)}
        if not used:
            return []
        now, then = self._locks(None), self._locks(commit)
        named_now = self._package_managers(None) if used & _JS_MANAGERS else set()
        named_then = self._package_managers(commit) if named_now else set()
        out = []
        for manager in sorted(used):
            kin = next(e for e in _ECOSYSTEMS if manager in e)
            others = sorted((now & kin) - {manager})
            # a manifest that names another manager now (`"packageManager": "pnpm@11"`),
            # and named none of them at `commit`, where this one locked the project
            declared = sorted((named_now & kin) - {manager} - named_then)
            span = next(s for s in spans if re.search(rf"\b{manager}\b", s)).strip()
            if manager in then and manager not in now and others:
                lock = _LOCK_FILES[manager][0]
                reason = (
                    f"{manager}: {lock} was the lock file at {commit[:10]}; the project "
                    f"now locks with {', '.join(others)}"
                )
                out.append(ClaimFailure(Claim("command", span, "body"), reason))
            elif manager in then and declared and manager not in named_now:
                reason = (
                    f"{manager}: the lock file at {commit[:10]}; package.json now names "
                    f"{', '.join(declared)} as its package manager"
                )
                out.append(ClaimFailure(Claim("command", span, "body"), reason))
        return out

    def _package_managers(self, commit: str | None) -> set[str]:
        """The managers the `packageManager` fields of the tree's package.json files (or
        `commit`'s) name: `"packageManager": "pnpm@11.0.0"` names pnpm."""
        if commit not in self._declared:
            at = [commit] if commit else []
            found = git(
                self.layout.root,
                "grep",
                "-h",
                "-I",
                "-E",
                "-o",
                r'"packageManager"[[:space:]]*:[[:space:]]*"[a-z]+',
                *at,
                "--",
                ":(glob)**/package.json",
            ).decode("utf-8", "replace")
            self._declared[commit] = {line.rsplit('"', 1)[-1] for line in found.splitlines()}
        return self._declared[commit]

    def _locks(self, commit: str | None) -> set[str]:
        """The package managers whose lock files the tree (or `commit`'s) tracks."""
        if commit not in self._managers:
            paths = self.state.blobs if commit is None else (self._tree(commit) or {})
            self._managers[commit] = _lock_managers(paths)
        return self._managers[commit]

    def _dropped_subcommands(self, body: str, commit: str) -> list[ClaimFailure]:
        """`python run.py pipeline ...`: the script (or a project module it imports) names
        the subcommand as a string now (`add_parser("pipeline")`, `choices=[...]`), or did
        not at `commit` either."""
        out = []
        for span in dict.fromkeys(m.group(1).strip() for m in CODE_SPAN.finditer(body)):
            found = _SUBCOMMAND.match(span)
            if found is None or not self._is_file(found.group("script")):
                continue
            script, sub = found.group("script"), found.group("sub")
            named = re.compile(rf"[\"']{re.escape(sub)}[\"']")
            if any(named.search(self.project().text(p) or "") for p in self._with_imports(script)):
                continue
            blob = (self._tree(commit) or {}).get(script)
            if named.search(self._blob_text(blob) if blob else ""):
                reason = f"{script} names no subcommand {sub} now (it did at {commit[:10]})"
                out.append(ClaimFailure(Claim("command", span, "body"), reason))
        return out

    def _with_imports(self, script: str) -> list[str]:
        """The script and the project's modules it imports (`from a.b import c`: a/b.py or
        a/b/__init__.py)."""
        found = [script]
        for module in _IMPORTS.findall(self.project().text(script) or ""):
            base = module.replace(".", "/")
            found += [p for p in (f"{base}.py", f"{base}/__init__.py") if self._is_file(p)]
        return found

    def _ignored_since(self, claims: list[Claim], commit: str) -> list[ClaimFailure]:
        out = []
        for claim in claims:
            path = _relative(claim.path)
            if claim.kind != "path" or claim.origin != "body" or "/" not in (claim.path or ""):
                continue
            if not path or self._exists(path) or not self._ignored(claim.path or ""):
                continue
            tree = self._tree(commit) or {}
            if path in tree or any(p.startswith(path + "/") for p in tree):
                reason = (
                    f"{claim.path} was tracked at {commit[:10]}; it is gone, and git ignores it now"
                )
                out.append(ClaimFailure(claim, reason))
        return out

    def _in_ci(self, command: str, commit: str | None) -> str | None:
        """The first CI file (a GitHub workflow, GitLab's, CircleCI's...) that has `command`
        word for word, now or at `commit`; None when none has."""
        key = (command, commit)
        if key not in self._ci_hits:
            at = [commit] if commit else []
            listed = git(self.layout.root, "grep", "-l", "-F", "-e", command, *at, "--", *_CI)
            first = listed.decode("utf-8", "replace").split("\n", 1)[0]
            self._ci_hits[key] = first.removeprefix(f"{commit}:") if first else None
        return self._ci_hits[key]

    def _tree(self, commit: str) -> dict[str, str] | None:
        if commit not in self._trees:
            self._trees[commit] = tree_at(self.layout.root, commit)
        return self._trees[commit]

    def _project_at(self, commit: str) -> kinds.Project | None:
        """What `commit`'s tree declared (its manifests read from git, not checked out)."""
        if commit not in self._past_projects:
            tree = self._tree(commit)
            self._past_projects[commit] = (
                None
                if tree is None
                else kinds.PastProject(self.layout.root, sorted(tree), blobs=tree)
            )
        return self._past_projects[commit]

    def never_held(self, claims: list[Claim], commit: str) -> set[Claim]:
        """The claims among `claims` that fail on `commit`'s tree too (none when git does
        not know the commit): what the words named was not there when they were written."""
        answers = self._answers_at(commit, claims) if claims else None
        return {c for c in claims if answers is not None and answers.get(c) is not None}

    def _answers_at(self, commit: str, claims: list[Claim]) -> dict[Claim, str | None] | None:
        """Each claim checked on `commit`'s tree (cached; see `past`): None when it held,
        else why not. None when git does not know the commit."""
        answers = self._past.known(commit, claims)
        todo = [c for c in claims if c not in answers]
        if todo:
            checker = self._checker_at(commit)
            if checker is None:
                return None
            checker.answer(todo)  # one search of the tree for all their names
            fresh = {c: checker.check_claim(c) for c in todo}
            self._past.remember(commit, fresh)
            answers.update(fresh)
        return answers

    def _checker_at(self, commit: str) -> Verifier | None:
        """A verifier of `commit`'s tree: this one when the tracked files are the same
        (outside memories and task records), else one over its files in git's objects
        (`past.stage`: nothing checked out)."""
        if commit not in self._past_checkers:
            then = self._tree(commit)
            checker: Verifier | None = None
            if self._same_files(commit):
                checker = self
            elif then is not None:
                folder = self._past.tree(commit)
                if folder is not None:
                    stored = TreeState.read(folder, stored=True)
                    checker = Verifier(
                        Layout(folder), self.cache is not None, self.cache, tree=stored
                    )
            self._past_checkers[commit] = checker
        return self._past_checkers[commit]

    def _exists(self, path: str) -> bool:
        hit = self._path_cache.get(path)
        if hit is None:
            try:
                hit = self.state.exists(path)
            except PathEscape:
                hit = False
            self._path_cache[path] = hit
        return hit

    def _ignored(self, path: str) -> bool:
        """Git ignores the path (`site/`, `dist/`, `.env`): generated or local by design."""
        hit = self._ignore_cache.get(path)
        if hit is None:
            hit = _check_ignore(self.layout.root, path)
            self._ignore_cache[path] = hit
        return hit

    def _is_file(self, path: str) -> bool:
        hit = self._file_cache.get(path)
        if hit is None:
            hit = self.state.is_file(path)
            self._file_cache[path] = hit
        return hit

    def _basename_exists(self, name: str) -> bool:
        return self._tracked_name(name) or self._exists(name)

    def _tracked_name(self, name: str) -> bool:
        """Some tracked file has this name (in any folder)."""
        if self._basenames is None:
            self._basenames = {p.rsplit("/", 1)[-1] for p in self.state.blobs}
        return name in self._basenames

    def check_claim(self, claim: Claim) -> str | None:
        """None when the claim holds, else why it does not."""
        if claim in self._held:
            return None
        check = self._by_kind.get(claim.kind)
        return check(claim) if check is not None else None

    def _checks(self) -> dict[str, Callable[[Claim], str | None]]:
        """How each kind of claim is checked (see `claims` for the kinds)."""
        return {
            "path": self._check_path,
            "mention": self._check_mention,
            "line": self._check_line,
            "symbol": self._check_cited_symbol,
            "flag": self._check_flag,
            "function": self._check_function,
            "identifier": self._check_identifier,
            "class": self._check_class,
            "type": self._check_type,
            "member": self._check_member,
            "module": lambda claim: self._check_module(claim.symbol or ""),
            "env": self._check_env,
            "size": self._check_size,
            "setting": self._check_setting,
            **{k: self._check_kind for k in kinds.KINDS if k not in ("env", "size", "setting")},
        }

    def _check_kind(self, claim: Claim) -> str | None:
        if claim.kind == "task" and claim.path and self._in_submodule(claim.path):
            return None  # `make -C vendor/lib generate`: the submodule's build, not judged here
        return kinds.check(claim, self.project())

    def _check_size(self, claim: Claim) -> str | None:
        """A stated size of the file the claim names, or whose code defines the name it
        gives, else of the one file the memory cites; None when no one file is found."""
        name = (claim.symbol or "").strip("/").removeprefix("./")
        path = None
        if name:
            path = name if self._is_file(name) else None if "/" in name else self._defined_in(name)
        path = path or claim.path
        facts = self.facts.of(path) if path is not None else None
        if path is None or facts is None or not facts.read:
            return None
        size = self.state.size(path)
        if size is None:
            return None
        return kinds.size_check(claim, path, size, facts.lines)

    def _check_mention(self, claim: Claim) -> str | None:
        """A path the prose names, less exact than one in backticks (written from some
        folder, abbreviated): it holds as a path would, or where a tracked file has its
        name; so it is stale only when that file is gone from the whole tree."""
        name = (claim.path or "").rstrip("/").rsplit("/", 1)[-1]
        if self._check_path(claim) is None or ("." in name and self._basename_exists(name)):
            return None
        return (
            f"{claim.path} does not exist, nor any file named {name}"
            if "." in name
            else (f"{claim.path} does not exist")
        )

    def _check_setting(self, claim: Claim) -> str | None:
        """A value stated for a name: the tracked files that set the name (found by `git
        grep`, memories and prose aside) must set it to that value somewhere."""
        name = claim.symbol or ""
        listed = git(self.layout.root, "grep", "-n", "-w", "-F", "-I", "-e", name, "--")
        by_path: dict[str, list[str]] = {}
        for row in listed.decode("utf-8", "replace").splitlines():
            path, _, rest = row.partition(":")
            if is_code(path) and not path.endswith(".mdc"):  # .mdc: an agent's rules
                by_path.setdefault(path, []).append(rest.partition(":")[2])
        found = [
            (path, value)
            for path, lines in by_path.items()
            for value in kinds.setting_values(name, lines)
        ]
        return kinds.setting_check(claim, found)

    def _check_env(self, claim: Claim) -> str | None:
        symbol, index = claim.symbol or "", self._index(claim)
        if symbol in index.py_words or symbol in index.other_words:
            return None
        return f"environment variable {symbol} appears nowhere in the code"

    def _check_path(self, claim: Claim) -> str | None:
        reason = self._check_path_as_written(claim)
        path = claim.path or ""
        if reason is None or claim.origin != "body" or not path.endswith(_COMPILED_JS):
            return reason
        # TypeScript's own imports name a module by what it compiles to (`./util.js` for
        # util.ts): the source under either name holds the claim
        stem = path.rsplit(".", 1)[0]
        for ext in _TS_SOURCES:
            if self._check_path_as_written(replace(claim, path=stem + ext)) is None:
                return None
        return reason

    def _check_path_as_written(self, claim: Claim) -> str | None:
        assert claim.path is not None
        if claim.origin == "body" and "/" not in claim.path:
            if self._basename_exists(claim.path) or self._ignored(claim.path):
                return None
            if claim.path.startswith(("_", ".", "-")) and any(
                p.endswith(claim.path) for p in self.state.blobs
            ):
                return None  # a name's ending (`_test.go`, `.spec.ts`), not a file
            if self._planned(claim.path) or self._numbered_series(claim.path):
                return None
            return f"no file named {claim.path} in the repository"
        if self._exists(claim.path):
            return None
        if (
            claim.origin != "citation"
            and claim.path.startswith("/")
            and (self._exists(claim.path.strip("/")) or self._nested(claim.path))
        ):
            return None  # `/src/`, `/internal/config/`: written from the repository's root
        if claim.origin != "citation" and _MACHINE_PATH.match(claim.path):
            return None  # `/tmp/test.js`: a file of the machine the command runs on
        if claim.origin == "body" and (
            self._ignored(claim.path)
            or _TEMPLATE.search(claim.path)
            or self._nested(claim.path)
            or self._alternatives(claim.path)
            or self._dotted_end(claim.path)
            or self._in_submodule(claim.path)
            or self._went_into_submodule(claim.path)
            or self._numbered_series(claim.path)
            or _tool_made(claim.path)
            or self._own_root(claim.path)
            or self._without_extension(claim.path)
        ):
            # a build output or local file; a template ("journal/YYYY_MM_DD.md"); a path
            # written from a sub-project's folder (`src/App.tsx` of `frontend/`); one
            # name's endings given several ways (`core-java-8/11/17`); a project folder
            # without its product's name (`Billing.Core/` of `src/Shop.Billing.Core/`); a
            # file of a submodule, which a clone need not hold (or of one its folder went
            # into)
            return None
        return f"{claim.path} does not exist"

    def _numbered_series(self, path: str) -> bool:
        """`CHANGES/1234.bugfix.rst`: a file named by a number first, one of a series its
        folder (anywhere, for a bare name) still holds under other numbers
        (`CHANGES/5678.bugfix.rst`): a changelog fragment or a dated entry of the kind the
        project keeps, whose own number comes and goes."""
        folder, _, name = path.strip("/").rpartition("/")
        if not re.match(r"\d{3,}\D", name):
            return False
        first = re.match(r"\d+", name)
        assert first is not None
        rest = re.sub(r"(?<=[A-Za-z])\.\d+(?=\.)", "", name[first.end() :])
        if rest != name[first.end() :]:
            # `1326.breaking.1.rst`: a second fragment of one issue, numbered in turn; one
            # of the series of `N.breaking.rst`
            return self._numbered_series(f"{folder}/{first.group(0)}{rest}".strip("/"))
        shape = re.compile(re.sub(r"\d+", r"\\d+", re.escape(name)) + "$")
        prefix = folder + "/" if folder else ""
        if any(
            blob.startswith(prefix)
            and shape.match(blob.rsplit("/", 1)[-1])
            and (not folder or "/" not in blob[len(prefix) :])
            for blob in self.state.blobs
        ):
            return True
        return self._consumed_series(folder, name)

    def _consumed_series(self, folder: str, name: str) -> bool:
        """`CHANGES/1234.bugfix.rst` where `CHANGES/` holds no fragment now (a release
        consumed them all) but earlier commits held that shape there under two numbers or
        more (`CHANGES/1654.bugfix.rst`, `CHANGES/1660.bugfix.rst`): the series is the
        project's, its numbers come and go; the folder must still be there (for a bare
        name, the folder that last held one)."""
        if re.search(r"[\[\]*?]", name) or (folder and not self._exists(folder + "/")):
            return False
        pattern = re.sub(r"\d+", "[0-9]*", name)
        spec = f":(glob){folder}/{pattern}" if folder else f":(glob)**/{pattern}"
        if spec not in self._series_seen:
            listed = git(self.layout.root, "log", "--format=", "--name-only", "--", spec)
            held = [p for p in listed.decode("utf-8", "replace").splitlines() if p]
            names = {p.rpartition("/")[2] for p in held}
            where = held[0].rpartition("/")[0] if held else ""
            # a series: two numbers or more (one file of that shape, a migration say,
            # deleted since, is just gone)
            self._series_seen[spec] = len(names) > 1 and (
                bool(folder) or (where != "" and self._exists(where + "/"))
            )
        return self._series_seen[spec]

    def _own_root(self, path: str) -> bool:
        """`acme/` alone, where `acme` is the name the project publishes under: the root
        line of a drawn tree ("acme/" then "├── src/"), the repository itself."""
        name = path.strip("/")
        return path.endswith("/") and "/" not in name and name.lower() in self._own_names()

    def _dotted_end(self, path: str) -> bool:
        """`Billing.Core/`: a path whose first part is a dotted name that ends the name of a
        folder of the tree after one of its dots (`src/Shop.Billing.Core/`), as .NET
        project folders are named with their product first."""
        first, _, rest = path.strip("/").partition("/")
        if "." not in first:
            return False
        needle = f".{first}/{rest}"
        return any(needle in blob for blob in self.state.blobs)

    def _without_extension(self, path: str) -> bool:
        """`.github/workflows/pr_lint`, `docs/setup`: a file named without its extension,
        the one file of its folder with that name and an extension (`pr_lint.yml`), a
        workflow, a document, a configuration. Not source code: a module that took a
        folder's place (`app/models.py` for `app/models/`) leaves the folder gone."""
        folder, _, name = path.strip("/").rpartition("/")
        if not folder or not name or "." in name or path.endswith("/"):
            return False
        prefix = f"{folder}/{name}."
        found = {
            p for p in self.state.blobs if p.startswith(prefix) and "/" not in p[len(prefix) :]
        }
        return len(found) == 1 and found.pop().endswith(_DOCUMENT_EXTENSIONS)

    def _alternatives(self, path: str) -> bool:
        """`core-java-8/11/17`, `core-groovy/kotlin`: a hyphenated name whose last part the
        other parts replace, every name so made an entry of the tree."""
        parts = path.strip("/").split("/")
        if len(parts) < 2 or "-" not in parts[0]:
            return False
        stem = parts[0].rsplit("-", 1)[0]
        names = [parts[0], *(f"{stem}-{part}" for part in parts[1:])]
        return all(self._exists(name) or self._nested(name) for name in names)

    def _planned(self, name: str) -> bool:
        """A file no commit ever had that another of the project's documents names too
        (`CONTEXT.md` of a documented layout, written when first needed): nothing was
        there to go stale."""
        root = self.layout.root
        if git(root, "log", "-1", "--format=%H", "--", f":(glob)**/{name}").strip():
            return False
        listed = git(root, "grep", "-l", "-F", "-w", "-e", name, "--").decode("utf-8", "replace")
        return any(
            not is_code(p) and not p.startswith(SKIP_PREFIXES) and not _instructions(p)
            for p in listed.splitlines()
        )

    def _in_submodule(self, path: str) -> bool:
        """`path` lies in a submodule `.gitmodules` declares (`vendor/rules/AGENTS.md`)."""
        if self._submodules is None:
            try:
                text = (self.layout.root / ".gitmodules").read_text(errors="replace")
            except OSError:
                text = ""
            self._submodules = tuple(
                m.group(1).strip("/") for m in re.finditer(r"(?m)^\s*path\s*=\s*(\S+)", text)
            )
        path = path.strip("/")
        return any(path == s or path.startswith(s + "/") for s in self._submodules)

    def _went_into_submodule(self, path: str) -> bool:
        """`docs/guide.md` removed by the commit that added a submodule (`website`): the
        folder's files went into another repository, which a clone need not hold, and what
        is there cannot be judged from this one."""
        sha = removed_in(self.layout.root, path.strip("/"))
        if sha is None:
            return False
        if sha not in self._submodule_added:
            raw = git(self.layout.root, "diff", "--raw", "--no-renames", f"{sha}^", sha)
            self._submodule_added[sha] = any(
                line.split()[1:2] == [b"160000"] and line.split()[4:5] == [b"A"]
                for line in raw.splitlines()
            )
        return self._submodule_added[sha]

    def _nested(self, path: str) -> bool:
        """Some tracked file or folder ends with `path`, below a folder of the repository."""
        if self._suffixes is None:
            found: set[str] = set()
            for blob in self.state.blobs:
                parts = blob.split("/")
                for k in range(1, len(parts)):
                    found.update("/".join(parts[k:j]) for j in range(k + 1, len(parts) + 1))
            self._suffixes = found
        return path.strip("/") in self._suffixes

    def _check_line(self, claim: Claim) -> str | None:
        assert claim.path is not None and claim.line is not None
        facts = self.facts.of(claim.path)
        if facts is None:
            return f"{claim.path} is not a file (line {claim.line} cited)"
        if facts.read and claim.line > facts.lines:
            return f"line {claim.line} is past the end of {claim.path} ({facts.lines} lines)"
        return None

    def _line_shifted(self, claim: Claim, commit: str) -> bool:
        """A cited line past the end of a file that shrank, whose words at `commit` (where
        the memory was verified) are still a line of the file, or that named the cited
        symbol, which the file still names: the code moved up and the citation still finds
        it (as `_cited_code_changed` reads a cited line), nothing went stale."""
        if claim.kind != "line" or claim.path is None or claim.line is None:
            return False
        facts = self.facts.of(claim.path)
        if facts is None or not facts.read or claim.line <= facts.lines:
            return False
        then = git(self.layout.root, "show", f"{commit}:{claim.path}").decode("utf-8", "replace")
        cited = symbols.line_text(then, claim.line)
        now = self.project().text(claim.path) or ""
        if cited is not None and claim.symbol and _names(cited, claim.symbol):
            return _names(now, claim.symbol)  # the cited symbol's line, the symbol still there
        if cited is None or len(cited) < _LINE_WORDS or not any(c.isalnum() for c in cited):
            return False  # a brace or a short line is anywhere
        lines = {line.strip() for line in now.splitlines()}
        if cited in lines:
            return True
        # a setting's line whose value moved on (`"zustand": "5.0.1",` now `"5.0.8"`): the
        # key the citation found is still set in the file, which `changed` reports
        key = _SETTING_KEY.match(cited)
        return key is not None and any(
            (m := _SETTING_KEY.match(line)) is not None and m.group(1) == key.group(1)
            for line in lines
        )

    def _index(self, claim: Claim | None = None) -> CodeIndex:
        return self.facts.index(index_words([claim] if claim else []))

    def prime(self, memories: Iterable[Memory]) -> None:
        """Let the code index answer for every name these memories' claims ask the whole
        tree about, in one search (else each new name searches the tree again)."""
        self.answer(c for m in memories for c in self.claims(m))

    def answer(self, claims: Iterable[Claim]) -> None:
        """Let the code index answer these claims, reading as few files as it can. One
        search finds the files that hold a name some claim asks about, in any case; when
        they are many (`ENOUGH_FILES`), a second lists how each file spells each name.
        A name that few files hold (`FEW_FILES`) has them all read. A name more hold (`schema`,
        `Contract` in a large tree) is asked about by checks that only ask whether
        something is there (`GROWING`): such a claim holds on the whole index once it
        holds on part of it, so the files spelling its name exactly are read in batches
        that double until it holds, and it is remembered as held. A member's check is not
        of that sort (a class found defined later may lack the member). Every file holding
        the name of a claim still failing is read last, so what fails, fails on all."""
        asked = list(dict.fromkeys(c for c in claims if c.kind in INDEX_KINDS and c.symbol))
        words = index_words(asked)
        candidates = self.facts.holding(words)
        if len(candidates) > ENOUGH_FILES:
            spelled = self.facts.spellings(words, among=candidates)
            by_word: dict[str, set[str]] = {}
            for spelling, holders in spelled.items():
                by_word.setdefault(spelling.lower(), set()).update(holders)
            batched = [
                c
                for c in asked
                if c.kind in GROWING and len(by_word.get(index_word(c).lower(), ())) > FEW_FILES
            ]
            chosen = set(batched)
            rest = index_words(c for c in asked if c not in chosen)
            self.facts.add(self.facts.holding(rest, among=candidates))
            size = ENOUGH_FILES
            while batched:
                paths = sorted(
                    {p for c in batched for p in spelled.get(index_word(c), ())}
                    - self.facts.indexed
                )
                if not paths:
                    break
                self.facts.add(paths[:size])
                failing, size = [], size * 2
                with self.facts.as_is():
                    for c in batched:
                        if self.check_claim(c) is None:
                            self._held.add(c)
                        else:
                            failing.append(c)
                batched = failing
            candidates = self.facts.holding(index_words(batched), among=candidates)
        self.facts.add(candidates)
        self.facts.cover(words)

    def _check_flag(self, claim: Claim) -> str | None:
        """A flag the code spells; `--no-X` also where `--X` is (the negation an option
        parser makes of a boolean option: argparse's `BooleanOptionalAction`, click's
        `--X/--no-X`)."""
        symbol, flags = claim.symbol or "", self._index(claim).flags
        if symbol in flags or (symbol.startswith("--no-") and "--" + symbol[5:] in flags):
            return None
        return f"flag {symbol} appears nowhere in the code"

    def _check_function(self, claim: Claim) -> str | None:
        symbol, index = claim.symbol or "", self._index(claim)
        if symbol in index.defs or symbol in index.names or symbol in BUILTINS:
            return None
        if symbol[:1].isupper() and symbol in index.py_words:
            return None  # `AddConstraint()`: a class of a library the code calls
        rest = stand_in_rest(symbol)
        if rest is not None and self.project().names_match("*_" + rest):
            return None  # `model_qs_select_for_update()`: each model's own of that family
        return f"{symbol}() is not defined in the code"

    def _check_identifier(self, claim: Claim) -> str | None:
        symbol, index = claim.symbol or "", self._index(claim)
        if symbol in index.py_words or symbol in index.other_words:
            return None
        if "_" in symbol and self._templated(symbol):
            return None
        return f"{symbol} appears nowhere in the code"

    def _templated(self, name: str) -> bool:
        """A name the code builds from a template and a quoted part: `test_sqlite` where a
        build script registers `"test_${db.name}"` and names `"sqlite"` (Gradle tasks made
        per database, `f"check_{kind}"` in Python). Some code file must hold the template
        `prefix${` (or `prefix{` in an f-string) and some the rest quoted, in any case.
        The templates are looked for once (`_template_prefixes`), the quoted part only
        after a prefix of the name matched one."""
        prefixes, cut = self._template_prefixes(), 0
        while prefixes and (cut := name.find("_", cut) + 1) and cut < len(name):
            if name[:cut] not in prefixes:
                continue
            rest = name[cut:]
            quoted = git(
                self.layout.root,
                "grep",
                "-l",
                "-I",
                "-i",
                "-F",
                "-e",
                f'"{rest}"',
                "-e",
                f"'{rest}'",
                "--",
            )
            if any(is_code(p) for p in quoted.decode("utf-8", "replace").splitlines()):
                return True
        return False

    def _template_prefixes(self) -> frozenset[str]:
        """The first words of the names the code's string templates build, up to an
        underscore: `test_` of `"test_${db.name}"`, `check_` of `f"check_{kind}"`."""
        if self._prefixes is None:
            found = git(
                self.layout.root,
                "grep",
                "-I",
                "-o",
                "-E",
                "-e",
                r"[\"'`][A-Za-z][A-Za-z0-9_]*_\$\{?[A-Za-z]",
                "-e",
                r"f[\"'][A-Za-z][A-Za-z0-9_]*_\{[A-Za-z]",
                "--",
            ).decode("utf-8", "replace")
            code = "\n".join(
                line.split(":", 1)[1]
                for line in found.splitlines()
                if ":" in line and is_code(line.split(":", 1)[0])
            )
            self._prefixes = frozenset(
                m.group(1) for m in re.finditer(r"[\"'`]([A-Za-z][A-Za-z0-9_]*_)[${]", code)
            )
        return self._prefixes

    def _check_class(self, claim: Claim) -> str | None:
        symbol, index = claim.symbol or "", self._index(claim)
        if symbol in index.defs or symbol in index.py_words or symbol in index.names:
            return None
        return f"{symbol} is neither defined nor used in the code"

    def _check_type(self, claim: Claim) -> str | None:
        """`Spinner`, `Redis`: a type of this code, or a tool it names in any case."""
        symbol, index = claim.symbol or "", self._index(claim)
        if symbol in index.defs or symbol in BUILTINS or symbol.lower() in index.lower():
            return None
        return f"{symbol} is neither defined nor named in the code"

    def _check_member(self, claim: Claim) -> str | None:
        """`Account.balance`: a class's member. A tracked file of that name (`Aspire.slnx`,
        `Directory.Build.props`, an extension no list knows) is a file, not a member; an
        owner in capitals (`LOG.debug`, `LOGGER.info`) is a constant, whose members its
        type gives, wherever that is defined."""
        symbol, index = claim.symbol or "", self._index(claim)
        if self._tracked_name(symbol):
            return None
        if symbol in index.qualified or any(
            q.endswith("." + symbol) for q in index.qualified if q.count(".") > 1
        ):
            return None
        owner, _, member = symbol.partition(".")
        if owner in index.defs:
            return None if owner.isupper() else f"{owner} has no member {member}"
        if owner in index.py_words or owner in index.names or owner in BUILTINS:
            return None  # a class from elsewhere: nothing here to check it against
        return f"{owner} is not defined in the code"

    def _check_module(self, symbol: str) -> str | None:
        modules = self.facts.module_files()
        parts = symbol.split(".")
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            path = modules.get(module) or (_below_a_root(modules, module) if cut > 1 else None)
            if path is None:
                continue
            rest = parts[cut:]
            if not rest:
                return None
            facts = self.facts.of(path)
            if facts is None or not facts.parsed:
                return None
            wanted = ".".join(rest[:2])
            if facts.star or (facts.defines(rest[0]) and (len(rest) == 1 or wanted in facts.defs)):
                return None
            if len(rest) == 1 and self._exists("/".join(parts)):
                return None  # a package folder without __init__.py
            return f"{module} does not define {'.'.join(rest)}"
        return f"no module {symbol} in the repository"

    def _check_cited_symbol(self, claim: Claim) -> str | None:
        assert claim.path is not None and claim.symbol is not None
        symbol = claim.symbol.strip().removesuffix("()")
        if self._exists(claim.path) and not self._is_file(claim.path):
            paths = [p for p in self.state.blobs if p.startswith(claim.path.rstrip("/") + "/")]
        else:
            paths = [claim.path]
        for path in paths:
            facts = self.facts.of(path)
            if facts is None:
                continue
            if not facts.read:
                return None  # a file too large to read or binary: what it names is unknown
            if symbol.startswith("-"):
                # `--only=`: the flag as an option parser declares one that takes a value;
                # `-v`: a short flag, quoted where a parser declares it (`'--verbose', '-v'`)
                if symbol.rstrip("=") in facts.flags or self._quotes_short_flag(path, symbol):
                    return None
                continue
            if facts.syntax and symbol.replace(".", "").isidentifier():
                if facts.defines(symbol) or facts.star:
                    return None  # a module name, or a class member (`_name` in a class)
                if facts.grammar and all(p in facts.words for p in symbol.split(".")):
                    return None  # a call, a key, a variable read: named outside comments
                if facts.python and self._python_names(path, symbol):
                    return None  # a parameter, a variable read by name, a lazy export
                continue
            if all(part in facts.words for part in symbol.split(".")):
                return None
            if _name_part(symbol) and any(_has_part(w, symbol) for w in facts.words):
                return None  # `a11y_`, `_android`: the start or end of names the file has
            if not symbol.replace(".", "").isidentifier() and self._spelled(path, symbol):
                return None  # `build-client`, `test:unit`, `requires-python`, `@scope/pkg`
        if symbol.startswith("-"):
            return f"flag {symbol} does not appear in {claim.path}"
        return f"{symbol} is not defined in {claim.path}"

    def _quotes_short_flag(self, path: str, flag: str) -> bool:
        """`-v`: a flag of one letter the file quotes, as option parsers declare one."""
        if not re.fullmatch(r"-[A-Za-z]", flag):
            return False
        text = self.project().text(path) or ""
        return f"'{flag}'" in text or f'"{flag}"' in text

    def _python_names(self, path: str, symbol: str) -> bool:
        """The Python file names every part of `symbol` outside its comments."""
        if path not in self._python_words:
            text = self.project().text(path)
            self._python_words[path] = python_code_words(text) if text is not None else frozenset()
        return all(p in self._python_words[path] for p in symbol.split("."))

    def _spelled(self, path: str, symbol: str) -> bool:
        """The file spells `symbol` as a whole name (not inside a longer one): a colon may
        end it (`build-client:`, a Make target), not go on with it (`test:unit`); a name
        with a slash, or a file's name, may end a longer path (`spf13/cobra` of
        `github.com/spf13/cobra`); any name may follow a scope (`no-unused-vars` of
        `"@lint-plugin/no-unused-vars"`, `pool-runner` of `"@acme/pool-runner"`), a
        plugin's name in a quoted rule id of two parts, or the slash of an ignore pattern
        anchored to the root."""
        text = self.project().text(path)
        if text is None:
            return False
        name, after = re.escape(symbol), r"(?![\w@/-]|:\S|\.\w)"
        # a name with a slash may end a longer path, and so may a file's name
        # (`"$dir/sdk-env.sh"`, the script a shell function writes)
        in_path = "/" in symbol or symbol.rsplit(".", 1)[-1].lower() in FILE_EXTENSIONS
        before = r"(?<![\w:@.])" if in_path else r"(?<![\w:@/.])"
        if re.search(rf"{before}{name}{after}", text) is not None:
            return True
        # after a scope, or a plugin's name in a quoted rule id (`"imports/no-cycle-x"`), or
        # the slash that anchors an ignore pattern to the root (`/gen-docs` in .gitignore)
        return (
            re.search(rf"(?<![\w@])@[\w.-]+/{name}{after}", text) is not None
            or re.search(rf"[\"'][\w.-]+/{name}[\"']", text) is not None
            or re.search(rf"(?m)^/{name}/?\s*$", text) is not None
        )

    # memories --------------------------------------------------------------------------

    def _changed_paths(self, memory: Memory, paths: list[str]) -> list[str]:
        recorded = memory.verified or {}
        sha = recorded.get("commit") if isinstance(recorded, dict) else None
        if not isinstance(sha, str) or not sha:
            return []
        files = [p for p in paths if self._is_file(p)]
        if not files:
            return []
        if sha not in self._trees:
            self._trees[sha] = tree_at(self.layout.root, sha)  # one `git ls-tree` a commit
        then = self._trees[sha]
        if then is None:
            return files  # the recorded commit is gone (rebased away): cannot tell
        edited = [p for p in files if then.get(p) != self.state.blob_of(p)]
        if not edited:
            return []
        cited: dict[str, list[Citation]] = {}
        for c in memory.citations:
            cited.setdefault(c.path, []).append(c)
        return [p for p in edited if self._cited_code_changed(p, then.get(p), cited.get(p, []))]

    def _cited_code_changed(self, path: str, old_blob: str | None, cites: list[Citation]) -> bool:
        """Whether what the memory cites in `path` changed: the cited symbols' own source,
        the cited lines' text; the whole file when it cites the file itself (or the body
        names it) or nothing can be found (see `symbols`)."""
        points = [c for c in cites if c.symbol or c.line]
        if old_blob is None or not points or len(points) < len(cites):
            return True
        before = git(self.layout.root, "cat-file", "blob", old_blob).decode("utf-8", "replace")
        now = self.project().text(path)
        if now is None:
            return True
        for c in points:
            if c.symbol:
                then_src = symbols.symbol_source(before, c.symbol, path)
                now_src = symbols.symbol_source(now, c.symbol, path)
                if then_src is None or now_src is None or then_src != now_src:
                    return True
            elif c.line:
                then_line = symbols.line_text(before, c.line)
                if then_line is None or then_line not in {s.strip() for s in now.splitlines()}:
                    return True
        return False

    def cacheable(self, memory: Memory) -> bool:
        """Whether the result depends only on tracked files (so the tree signature covers
        it): every path the memory names is tracked, or a folder of tracked files."""
        for claim in self.claims(memory):
            path = claim.path
            if path is None:
                continue
            if path.startswith(SKIP_PREFIXES):
                return False  # memory and task records: outside the tree signature
            if claim.origin == "body" and "/" not in path:
                if self._basenames is None:
                    self._basenames = {p.rsplit("/", 1)[-1] for p in self.state.blobs}
                if path not in self._basenames:
                    return False
            elif path not in self.state.blobs and not self._tracked_folder(path):
                return False
        return True

    def names_build_output(self, text: str) -> bool:
        """Whether `text` names, in a code span, a folder git ignores that the tree does
        not track (`.zig-cache`, `target/`): a file name it gives alongside ("find
        `config.h` in the `.zig-cache` folder") is one a build writes there, no file of
        the repository."""
        for span in CODE_SPAN.findall(text):
            name = span.strip().removeprefix("./").strip("/")
            if (
                _FOLDER_NAME.fullmatch(name)
                and not self._tracked_folder(name)
                and self._ignored(name + "/")
            ):
                return True
        return False

    def _tracked_folder(self, path: str) -> bool:
        name = path.rstrip("/")
        return name != "." and name in self.state.folders()

    def check(self, memory: Memory) -> Verification:
        claims = self.claims(memory)
        failures = []
        for claim in claims:
            reason = self.check_claim(claim)
            if reason is not None:
                failures.append(ClaimFailure(claim, reason))
        recorded = _recorded_ok(memory)
        lapsed = (
            []
            if recorded is None
            else self.lapsed(memory.body, claims, recorded, about=memory.subject or "")
        )
        failures += lapsed
        if failures and recorded is not None:
            failures = [f for f in failures if not self._line_shifted(f.claim, recorded)]
        if failures:
            failures = self._expected_absent(memory, failures)
        moves: tuple[Move, ...] = ()
        unconfirmed: tuple[ClaimFailure, ...] = ()
        if failures:
            moves, failures = self._explain_moves(memory, failures)
        if failures:
            confirmed = [f for f in failures if f in lapsed]  # held at the record already
            unconfirmed, failures = self._never_confirmed(
                memory, [f for f in failures if f not in lapsed]
            )
            failures += confirmed
        n = len(claims)
        if failures:
            return Verification(memory.name, "stale", n, tuple(failures), (), moves, unconfirmed)
        if moves:
            return Verification(memory.name, "moved", n, (), (), moves, unconfirmed)
        changed = self._changed_paths(memory, claim_paths(claims))
        if changed:
            return Verification(memory.name, "changed", n, (), tuple(changed), (), unconfirmed)
        return Verification(memory.name, "ok", n, unconfirmed=unconfirmed)

    def _expected_absent(self, memory: Memory, failures: list[ClaimFailure]) -> list[ClaimFailure]:
        """The failures left once the names the words expect gone are set aside: the old
        names of a change the fact states ("`X` collapsed into `y()`", "dead code removed:
        `f`"), names a rule warns against or the words say are gone (`counter_examples`),
        and bare names of a build's output the words name."""
        if states_change(memory.fact):
            failures = [f for f in failures if f.claim.origin != "body"]
        if failures:
            warned = counter_examples(memory.body)
            failures = [f for f in failures if f.claim.origin != "body" or not warned(f.claim)]
        if failures and "`" in memory.body and self.names_build_output(memory.body):
            failures = [f for f in failures if not bare_name(f.claim)]
        return failures

    def check_all(self, memories: Iterable[Memory]) -> list[Verification]:
        memories = list(memories)
        self.prime(memories)
        self._prime_past(memories)
        return [self.check(m) for m in memories]

    def _prime_past(self, memories: list[Memory]) -> None:
        """Let each past tree answer, in one search, for the names of every claim that
        fails now and will be weighed on it (`_never_confirmed`), so memories verified at
        one commit share that tree's search instead of each searching it again. Claims
        answered before (the `past` cache) are not asked, so no tree is made for them."""
        by_commit: dict[str, list[Claim]] = {}
        for memory in memories:
            commit = _recorded_ok(memory) or self._written_against(memory.created)
            if commit is None:
                continue
            by_commit.setdefault(commit, []).extend(
                c
                for c in self.claims(memory)
                if c.kind in INDEX_KINDS and c.symbol and self.check_claim(c) is not None
            )
        for commit, claims in by_commit.items():
            known = self._past.known(commit, claims)
            todo = [c for c in dict.fromkeys(claims) if c not in known]
            checker = self._checker_at(commit) if todo else None
            if checker is not None and checker is not self:
                checker.answer(todo)


_COMPILED_JS = (".js", ".mjs", ".cjs", ".jsx")
_TS_SOURCES = (".ts", ".mts", ".cts", ".tsx")
# a kind of file named by its extension: ".fbs files", "`.proto` file"
_EXTENSION_FILES = re.compile(r"(?<![\w/*.-])`?\.([A-Za-z][A-Za-z0-9]{0,7})`?\s+files?\b")
_CONSTANT = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # `DOTNET_ROLL_FORWARD`
# "15+ packages in `packages/`", "the 12 crates under `crates/`": a count of a folder's folders
_FOLDER_COUNT = re.compile(
    r"\b(\d{1,3})(\+)?\s+(?:\w+\s+)?(?:packages|crates|modules|apps|services|plugins|"
    r"libraries|workspaces|projects|extensions)\s+(?:\w+\s+){0,2}?(?:in|under|inside|within)\s+(?:the\s+)?"
    r"`([\w.-]+(?:/[\w.-]+)*/?)`"
)
_ENV_WORD = re.compile(r"^[A-Z_][A-Z0-9_]*=")  # `CI=1` before a command
# a linter's rule with its plugin: `react-hooks/exhaustive-deps`, `@stylistic/quote-props`
_RULE_ID = re.compile(r"@?[a-z][\w.-]*/[a-z][a-z0-9]*(?:-[a-z0-9]+)+")
_RUBY_METHOD = re.compile(r"[a-z_][a-z0-9]*(?:_[a-z0-9]+)+[!?]")  # `stub_authorization!`
_CODE_NAME = re.compile(r"[A-Za-z_][\w.]*\w")  # `retry.Permanent`, `errors.Is`, `parse_config`
_LINE_WORDS = 8  # a cited line this long or longer says something found elsewhere only by chance
_INSTRUCTION_FILES = frozenset(
    ["AGENTS.md", "CLAUDE.md", "GEMINI.md", ".cursorrules", "copilot-instructions.md"]
)


_COMMENT = re.compile(r"^(?:#+|//+|--|;+|%+|\*+|/\*+|<!--|\{#)\s*")


def commented_out(then: str, now: str, names: Iterable[str]) -> str | None:
    """The first line that was code in `then`, names one of `names` (within a word, in
    any case: `auto_sync` in `family_needs_auto_sync?`; a name under `WHOLE_BELOW`
    characters as a whole word: the target `test` is not named by `ruff format tests/`)
    and is only in a comment in `now` (no live line has its text any more); None when
    there is none. Lines under 10 characters (`end`, `}`) are left aside."""
    wanted = [n.lower() for n in names if len(n) >= 4]
    short = [re.compile(rf"(?<!\w){re.escape(n)}(?!\w)") for n in wanted if len(n) < WHOLE_BELOW]
    wanted = [n for n in wanted if len(n) >= WHOLE_BELOW]
    live, commented = set(), set()
    for line in now.splitlines():
        text = line.strip()
        marker = _COMMENT.match(text)
        if marker:
            commented.add(text[marker.end() :].strip())
        else:
            live.add(text)
    for line in then.splitlines():
        text = line.strip()
        if len(text) < 10 or _COMMENT.match(text) or text in live:
            continue
        if text in commented and (
            any(n in text.lower() for n in wanted) or any(r.search(text.lower()) for r in short)
        ):
            return text
    return None


def _code_names(body: str, claims: list[Claim]) -> set[str]:
    """The names of code a fact's words give in code spans (`retry.Permanent(err)` gives
    `retry.Permanent`), paths, file names and names too short to tell (`go`) aside."""
    paths = {c.text for c in claims if c.origin == "body" and c.path is not None}
    out = set()
    for match in CODE_SPAN.finditer(body):
        span = match.group(1).strip()
        name = span.split("(", 1)[0].strip()
        if (
            len(name) >= 4
            and span not in paths
            and name not in paths
            and _CODE_NAME.fullmatch(name)
        ):
            out.add(name)
    return out


def _instructions(path: str) -> bool:
    """An agent instruction file (what `--file` lints), not a document of the project."""
    name = path.rsplit("/", 1)[-1]
    return name in _INSTRUCTION_FILES or name.endswith(".mdc")


# A path written as a pattern or an example, not a name: placeholders in capitals, braces
# or angles, names such as `./script.sh`, `my_module.py`, `test_my_feature.py`, `SomeTest.php`.
_TEMPLATE = re.compile(
    r"\b(?:YYYY|MM|DD|NNN|XXX)\b|[{<*]|\[[a-z_]+\]|_YYYY|YYYY_|\bpath/to/"
    r"|(?:^|/)(?:foo|bar|baz|example|script|file|my[_-]?\w*|your[_-]?\w*)\.\w+$"
    r"|(?:^|/)[\w-]*[_-](?:foo|bar|baz|my|your)(?:[_-][\w-]*)?\.\w+$"
    r"|(?:^|/)(?:Some|My|Your|Foo)[A-Z]\w*\.\w+$"
    # `runtime/.../stream.ts`: any folders; `providers/PROVIDER_NAME.js`: a name in capitals
    r"|(?:^|/)\.\.\.(?:/|$)"
    r"|(?:^|/)[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\.(?:js|jsx|ts|tsx|vue|py|go|rs|php|rb|java|kt|cs|swift)$"
)
# the files a path may name without their extension (a workflow, a document, a config)
_DOCUMENT_EXTENSIONS = (".yml", ".yaml", ".md", ".mdx", ".rst", ".txt", ".json", ".toml")
# a path of the machine, not of any repository (`/tmp/out.js`, `/etc/hosts`)
_MACHINE_PATH = re.compile(r"/(?:tmp|etc|var|usr|dev|proc|opt|home|root)/")
# A folder's name as a code span gives it (`.zig-cache`, `build/out`)
_FOLDER_NAME = re.compile(r"[\w.@+-]+(?:/[\w.@+-]+)*")
# A rule's negation, and where its clause ends
_WARNS = re.compile(
    r"\b(?:never|not|no longer|don't|do not|must not|should not|avoid|instead of|rather than|"
    r"stray|unwanted)\b"
    r"|[❌🚫✗✘⛔]",
    re.I,
)
# "no `CONTRIBUTORS.txt` in this repo": a span the word "no" leads is said to be absent
_NO_BEFORE = re.compile(r"\bno\s+$", re.I)
# a name the words give as a former one: "(previously linked to `tasks.md`)", "(was
# `old/`)", "formerly `x.py`", "the legacy `.oldrc` paths"
_FORMER_BEFORE = re.compile(
    r"(?:\b(?:previously|formerly|once)(?:\s+(?:linked\s+to|named|called|at|in))?|"
    r"\(\s*was|\blegacy)\s+$",
    re.I,
)
# a line marked as the wrong way from its start ("// ❌ List.of()", "Bad: `var x`"): all it
# names is what not to write
_WRONG_WAY = re.compile(r"[\s/#*>`-]*(?:[❌🚫✗✘⛔]|(?:bad|wrong|incorrect)\s*:)", re.I)
# a span's clause going on to say the name is gone: "`X` no longer exists", "`X` is not exported"
_GONE_AFTER = re.compile(
    r"\W{0,3}\s*(?:(?:(?:is|are)\s+)?no longer (?:exists?|exported|available|defined|used)\b|"
    r"(?:has|have) been removed\b|(?:is|are|was|were)\s+"
    r"(?:removed|gone|deprecated|not (?:exported|available|defined|public))\b|"
    r"(?:didn't|did not|doesn't|does not) exists?\b|never existed\b)",
    re.I,
)
# a span the words make a condition of ("`.env.local` (if it exists)", "if `CHANGES.md`
# exists, add a line", "if there is a `Procfile`"): named, not said to be there; so are
# the names given as its alternatives ("`docs/rules.md` or `RULES.md`, if it exists", "if
# `docs/rules.md` (or `RULES.md`) exists")
_OR_NAMES = r"(?:`?\s*\(?(?:or|and/or)\s+`[^`\n]+`\)?)*"
_IF_AFTER = re.compile(
    _OR_NAMES
    + r"\W{0,3}\s*\(?(?:if|when|where)\s+(?:(?:it|one)\s+(?:exists|is\s+present|is\s+there)|"
    r"(?:they|these|those)\s+(?:exist|are\s+present)|present|any)\b|\s*\(optional\)",
    re.I,
)
_IF_BEFORE = re.compile(
    r"\b(?:if|when|whether|unless)\s+(?:(?P<there>there\s+(?:is|are)\s+(?:an?\s+|no\s+)?)|"
    r"(?:an?|the)\s+)?$",
    re.I,
)
_EXISTS_AFTER = re.compile(
    _OR_NAMES
    + r"\s+(?:(?:file|folder|directory)\s+)?(?:exists|is\s+present|is\s+there|is\s+found)\b",
    re.I,
)
# the alternative itself ("if `docs/rules.md` (or `RULES.md`) exists")
_IF_ONE_OR = re.compile(r"\b(?:if|when|whether|unless)\s+`[^`\n]+`\s*\(?(?:or|and/or)\s+$", re.I)
_OR_EXISTS_AFTER = re.compile(r"\)?" + _EXISTS_AFTER.pattern, re.I)
# ...or a name in prose that the words then say is gone ("get_instance() didn't exist")
_PROSE_GONE = re.compile(r"([A-Za-z_][\w.]*(?:\(\))?)(?=" + _GONE_AFTER.pattern + ")", re.I)
_CLAUSE_END = re.compile(r"[;.!?:](?:\s|$)|\n|\bbut\b|\binstead\b")
# Where CI is configured: a command quoted from there is what CI runs.
_CI = (
    ".github/workflows",
    ".gitlab-ci.yml",
    ".circleci",
    ".buildkite",
    "azure-pipelines.yml",
    "Jenkinsfile",
    ".travis.yml",
)
_OPTION = re.compile(r"(?:^|\s)--?[A-Za-z]")
# How code reads an environment variable, as `git grep -E` takes it (%s: the name)
_ENV_READ = (
    r"(getenv|Getenv|LookupEnv|environ|environ\.get|env::var|env::var_os|env!|ENV|ENV\.fetch"
    r"|process\.env|meta\.env|_ENV|_SERVER|env)[[:space:]]*[(.[]?[[:space:]]*[\"'`]?"
    r"%s([^A-Za-z0-9_]|$)"
)
# a list item headed by a bare name in bold or backticks: `- **lint**: ...`, `` `dev` - ``
# a folder a heading names in a code span: "Meta service (`src/meta/`)"
_FOLDER_SPAN = re.compile(r"`((?:\./)?(?:[\w.@+-]+/)+)`")
_LISTED_HEAD = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|`)([\w.:-]+)(?:\*\*|`)\s*(?::|-|–|—)")
# the words that say what a list of names holds, by the kind of task it names
_TASK_LISTS = (
    (
        "Make target",
        re.compile(r"\bmakefiles?\b|\bmake (?:targets?|commands?|tasks?)\b|`make\b", re.I),
    ),
    ("just recipe", re.compile(r"\bjustfile\b|\bjust (?:recipes?|commands?)\b", re.I)),
    (
        "package script",
        re.compile(
            r"\b(?:npm|pnpm|yarn|bun|package\.json)\b.*\bscripts?\b|"
            r"\bscripts?\b.*\b(?:npm|pnpm|yarn|bun|package\.json)\b|^(?:available )?scripts$",
            re.I | re.M,
        ),
    ),
)
# a folder of one name with its slash, in prose or a drawn tree (`proto/`, `├── gen/`)
_ROOT_FOLDER = re.compile(r"(?<![\w./@:-])([A-Za-z_][\w.-]*/)(?![\w/.-])")
# the key a manifest's line sets (`"zustand": "5.0.1",`, `requires-python = ">=3.10"`)
_SETTING_KEY = re.compile(r"""["']?([\w@][\w@./-]{2,})["']?\s*[:=]\s*\S""")
# a first-level row of a drawn tree quoted as a code span (`` `├── proto/` ``)
_TREE_TOP_SPAN = re.compile(r"`[├└]──\s*([A-Za-z_][\w.-]*/)\s*`")
# a row of a drawn tree naming a folder, at any depth (`├── gen/`, `│   └── bench/`)
_TREE_ROW = re.compile(r"(?:^|`)[│\s]*[├└]──\s*([A-Za-z_][\w.-]*)/(?=[\s`]|$)", re.M)
# a name of several capitalised parts in a line of code (`ReportBuilder`, not `HTTP`)
_CODE_LINE_NAME = re.compile(r"(?<![\w./:$@-])([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)(?![\w$@-])")
# a dotted name of capitalised parts, as .NET names a project (`Ledger.Replication`)
_PROJECT_NAME = re.compile(r"(?<![\w./@-])([A-Z]\w+(?:\.[A-Z]\w*)+)(?![\w/@-]|\.\w)")
# a product's name alone in a code span: one or two capitalised words (`Radix UI`)
_SPAN_PRODUCT = re.compile(r"[A-Z][a-z][\w.]*(?: [A-Z][\w.]+)?")
# two bare parts joined by a slash in prose (`engines/legacy`), not part of a longer path
_TWO_PARTS = re.compile(r"(?<![\w./@:~$-])([A-Za-z_][\w.-]*/[A-Za-z_][\w-]*)(?![\w/@.-]|\.\w)")
# a path in bold (`**bin/cli**: the command line`)
_BOLD_PATH = re.compile(r"\*\*([\w.@+-]+(?:/[\w.@+-]+)+/?)\*\*")
# a local address's port (`http://localhost:3001`, `127.0.0.1:8080`)
_LOCAL_PORT = re.compile(r"\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0):(\d{2,5})\b")
_LOCK_NAME = re.compile(r"(?:^|/)[^/]*lock[^/]*$", re.I)  # `pnpm-lock.yaml`, `Cargo.lock`
_TESTS = re.compile(r"\b(?:tests?|testing|specs?)\b", re.I)
_TEST_PATH = re.compile(r"(?:^|/)[^/]*(?:test|spec)[^/]*/|(?:^|/|_|\.)(?:test|spec)s?[_.]", re.I)
# A Python script run with a subcommand: `python run.py pipeline --month 5`.
_SUBCOMMAND = re.compile(
    r"^(?:(?:python3?|uv run(?: python3?)?|poetry run python3?)\s+)?(?:\./)?"
    r"(?P<script>[\w./-]+\.py)\s+(?P<sub>[a-z][\w-]*)(?=\s|$)"
)
# files that pin a tool's version (read at the root only)
_PIN_FILES = frozenset(
    {
        "global.json",
        ".nvmrc",
        ".node-version",
        ".python-version",
        ".ruby-version",
        ".java-version",
        ".sdkmanrc",
        "rust-toolchain",
        "rust-toolchain.toml",
        ".tool-versions",
    }
)
# a full version: three parts, perhaps a pre-release (`12.0.100-rc.2.31207.4`)
_FULL_VERSION = re.compile(
    r"(?<![\w.])v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?)(?![\w.-]*\w)"
)


# folders a tool makes on each machine and no project tracks: an interpreter's bytecode,
# installed packages, a test runner's or a checker's cache, a virtual environment
_TOOL_MADE = frozenset(
    {"__pycache__", "node_modules", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".venv"}
)


def _tool_made(path: str) -> bool:
    """`__pycache__/`, `web/node_modules/`: a path in a folder a tool makes (`_TOOL_MADE`),
    named in a list of what not to commit whether or not git ignores it by that name."""
    return any(part in _TOOL_MADE for part in path.strip("/").split("/"))


def _relative(path: str | None) -> str:
    """A path as written (`/src/app.py`, `./src/app.py`) relative to the repository root."""
    return (path or "").strip("/").removeprefix("./")


def _has_version(text: str, version: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(version)}(?![\w.-]*\w)", text) is not None


_IMPORTS = re.compile(r"^\s*(?:from|import)\s+([\w.]+)", re.M)
# A fact stating a removal or a replacement: the names it says are gone are expected gone.
_VERSION_STEP = re.compile(r"\bv?\d+(?:\.\d+)*\s*(?:→|->)\s*v?\d+(?:\.\d+)*")
# an arrow from a closed expression to a call, written outside backticks: a rewrite of values
# (`BIND(x, CONST) → BIND(x)`), as code is, not a name replaced by another
_CODE_STEP = re.compile(r"[)\]]\s*(?:→|->)\s*[A-Za-z_][\w.]*\(")
_STATES_CHANGE = re.compile(
    r"\b(?:removed|deleted|dropped|replaced|collapsed|renamed|moved|migrated|split into|"
    r"merged into|instead of|deprecated|superseded|retired|rewritten)\b|→|->",
    re.I,
)


def _below_a_root(modules: dict[str, str], module: str) -> str | None:
    """The file of `module` (two parts at least) in a source root below the repository's
    (`netbox/netbox/settings.py` is `netbox.settings` where `netbox/` holds `manage.py`),
    when exactly one module ends so."""
    found = [path for name, path in modules.items() if name.endswith("." + module)]
    return found[0] if len(found) == 1 else None


def _still_declared(key: str, names: Iterable[str]) -> bool:
    """Some dependency of `names` (`kinds.dependency_key`s, as `key` is) is `key` or names
    it within its own name (`go-sqlite3` still names SQLite); a plugin or shared config
    made for the tool does not (`prettier-plugin-tailwindcss` left behind once Prettier
    went)."""
    made_for = tuple(f"{key}{kind}" for kind in ("plugin", "config", "preset"))  # as keyed
    scoped = tuple(f"@{key}/{kind}" for kind in ("plugin", "config", "preset"))
    return any(
        key in name
        and not name.rsplit("/", 1)[-1].startswith(made_for)
        and not name.startswith(scoped)
        for name in names
    )


def counter_examples(text: str) -> Callable[[Claim], bool]:
    """Whether a claim of `text` names what a rule warns against: a code span with a
    negation earlier in its clause ("never name tests `TestBug4821`", "`isReady`, not
    `ready()`", "avoid `eval()`", "rather than `make all`", "no longer registered in
    `app/kernel.py`", "relative paths create stray `app/tmp/` folders"), or that the word
    "no" leads ("no `CONTRIBUTORS.txt` in this repository"), or one its clause
    then says is gone ("`valueOrNull` no longer exists", "`Foo` is not exported"), and that
    no other span names.
    A line marked from its start as the wrong way ("// ❌ List.of()") warns against all
    it names. Such a name is expected absent."""
    if _WRONG_WAY.match(text):
        return lambda claim: True
    warned: list[str] = []
    stated: list[str] = []
    for match in CODE_SPAN.finditer(text):
        before = text[: match.start()]
        clause = before[max((m.end() for m in _CLAUSE_END.finditer(before)), default=0) :]
        gone = _GONE_AFTER.match(text, match.end()) is not None
        maybe = _conditional(clause, text, match.end())
        absent = (
            gone
            or maybe
            or _WARNS.search(clause)
            or _NO_BEFORE.search(before)
            or _FORMER_BEFORE.search(before)
        )
        (warned if absent else stated).append(match.group(1))
    if "exist" in text or "remov" in text or "gone" in text:
        warned += [m.group(1) for m in _PROSE_GONE.finditer(CODE_SPAN.sub(" ", text))]
    return lambda claim: (
        any(claim.text in span for span in warned)
        and not any(claim.text in span for span in stated)
    )


def _conditional(clause: str, text: str, end: int) -> bool:
    """Whether the span that ends at `end` is made a condition ("`X` (if it exists)", "if
    `X` exists", "if there is a `X`"): the words do not say it is there."""
    if _IF_AFTER.match(text, end):
        return True
    before = _IF_BEFORE.search(clause.rstrip("`"))
    if before is None:
        alternative = _IF_ONE_OR.search(clause.rstrip("`"))
        return alternative is not None and _OR_EXISTS_AFTER.match(text, end) is not None
    return before.group("there") is not None or _EXISTS_AFTER.match(text, end) is not None


def listed_entry(tree: Iterable[str], listed: str) -> str | None:
    """The one entry of a tree that `listed` (`src/meta/raft-log`: a folder and a name
    listed below it) names: the folder of that name (`src/meta/raft-log/`) or the file of
    that name and an extension (`src/meta/raft-log.md`); None when there is none, or more
    than one."""
    found = {
        p[: len(listed)] + ("/" if p[len(listed)] == "/" else p[len(listed) :])
        for p in tree
        if p.startswith(listed) and p[len(listed) : len(listed) + 1] in ("/", ".")
    }
    found = {p for p in found if p.endswith("/") or "/" not in p[len(listed) :]}
    return found.pop() if len(found) == 1 else None


def bare_name(claim: Claim) -> bool:
    """A file name the body gives with no folder (`config.h`): found anywhere or nowhere."""
    return claim.kind == "path" and claim.origin == "body" and "/" not in (claim.path or "")


def states_change(text: str) -> bool:
    """Whether `text` tells of a removal or a replacement ("`X` collapsed into `y()`", "use
    `a` instead of `b`", "`a` → `b`"): the names it says are gone are expected gone. Its
    prose tells it: an arrow in code (`fn run() -> Result`), between two versions
    ("v6→v7 compat") or from an expression to a call outside backticks ("`normalise`:
    BIND(x, CONST) → BIND(x)", a rewrite the named code makes) replaces no name."""
    prose = _CODE_STEP.sub(" ", _VERSION_STEP.sub(" ", CODE_SPAN.sub(" ", text)))
    return _STATES_CHANGE.search(prose) is not None


# JavaScript and Python package managers and the lock files that say a project uses one
_LOCK_FILES = {
    "npm": ("package-lock.json", "npm-shrinkwrap.json"),
    "yarn": ("yarn.lock",),
    "pnpm": ("pnpm-lock.yaml",),
    "bun": ("bun.lock", "bun.lockb"),
    "poetry": ("poetry.lock",),
    "pipenv": ("Pipfile.lock",),
    "pdm": ("pdm.lock",),
    "uv": ("uv.lock",),
}
# the managers one project picks one of (a JavaScript one and a Python one live together)
_JS_MANAGERS = frozenset({"npm", "yarn", "pnpm", "bun"})
_ECOSYSTEMS = (set(_JS_MANAGERS), {"poetry", "pipenv", "pdm", "uv"})
# a tool installed on the machine, not into the project: `npm install -g pnpm`, `yarn global
# add serve`, `uv tool install ruff` say nothing of the manager that locks the project
_GLOBAL_INSTALL = re.compile(
    r"\b(?:npm|pnpm|bun)\s+(?:i|install|add)\b[^&;|]*\s(?:-g|--global)\b"
    r"|\byarn\s+global\s|\buv\s+tool\s"
)
# a package manager run as a command: first in a span, or after `&&`, `;` or `|`
_MANAGER_COMMAND = re.compile(r"(?:^|&&|;|\|)\s*(npm|yarn|pnpm|bun|poetry|pipenv|pdm|uv)(?=\s|$)")


def _lock_managers(paths: Iterable[str]) -> set[str]:
    """The package managers whose lock files are among `paths` (vendored folders aside)."""
    names = {p.rsplit("/", 1)[-1] for p in paths if "node_modules/" not in p}
    return {m for m, locks in _LOCK_FILES.items() if names.intersection(locks)}


# a Ruby constant of two names or more (`Shop::Admin::BaseController`), maybe with a
# method after it (`Shop::Roles.for`, `Shop::Cart#total`)
_RUBY_CONSTANT = re.compile(r"((?:[A-Z][A-Za-z0-9]*::)+[A-Z][A-Za-z0-9]*)(?:[.#][a-z_]\w*[?!]?)?")


def _program(span: str) -> str | None:
    """The program a command runs (`black` of `black src/`, `uv run flake8 .`, `npx
    prettier`, `python -m mypy`), None for a span that is no command of two words."""
    words = [w for w in span.split() if not _ENV_WORD.match(w)]
    if len(words) < 2:
        return None
    if words[0] in ("uv", "poetry", "pipenv", "hatch", "pdm", "rye") and words[1] == "run":
        words = words[2:]
    elif words[0] in ("npx", "uvx", "pipx", "bunx", "pnpx"):
        words = words[1:]
    elif words[0] in ("python", "python3") and words[1] == "-m":
        words = words[2:]
    program = words[0] if words else ""
    return program if re.fullmatch(r"[a-z][\w.-]*", program) else None


def _fits(count: int, stated: int, at_least: bool) -> bool:
    """A count meets a stated one ("15+": at least 15; "15": exactly)."""
    return count >= stated if at_least else count == stated


def _snake(name: str) -> str:
    """`BaseController` -> `base_controller`, `APIKey` -> `api_key`, `V2` -> `v2`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _name_part(symbol: str) -> bool:
    """`a11y_`, `_android`: the start or the end of names (a prefix or a suffix), not one."""
    core = symbol.strip("_")
    return core != symbol and core.isidentifier() and not symbol.startswith("__")


def _has_part(word: str, part: str) -> bool:
    return word != part and (word.startswith(part) if part.endswith("_") else word.endswith(part))


def _code_line_names(body: str) -> list[Claim]:
    """The names of several capitalised parts a line of code quoted in a code span gives
    (`` `mgr = ReportBuilder(kind="pdf")` ``, `` `class ParseFailure(AppError):` ``), the
    span being more than the name: the tree alone reads no claim in a line of code, but
    a class it names that the code defined then and defines nowhere now went."""
    out: dict[str, Claim] = {}
    for match in CODE_SPAN.finditer(body):
        span = match.group(1).strip()
        if span.isidentifier():
            continue  # a name alone: a class claim of its own
        for name in _CODE_LINE_NAME.findall(span):
            if not placeholder_name(name):  # `go test -run TestName`: any test's name
                out.setdefault(name, Claim("class", name, "body", symbol=name))
    return list(out.values())


def _span_products(body: str) -> list[Claim]:
    """A product's name alone in a code span, one or two capitalised words (`` `Ollama` ``,
    `` `Radix UI` ``), outside lines that deny or replace: judged as a product the prose
    names, so only a dependency declared then (or a scope so named) is a claim."""
    out: dict[str, Claim] = {}
    for line in body.splitlines():
        if "`" not in line or kinds.denies(line):
            continue
        for match in CODE_SPAN.finditer(line):
            span = match.group(1).strip()
            if _SPAN_PRODUCT.fullmatch(span):
                key = kinds.dependency_key(span)
                out.setdefault(span, Claim("dependency", span, "body", symbol=key))
    return list(out.values())


def _other_number(folder: str) -> str:
    """The folder's name in the other grammatical number: `app/prompt` -> `app/prompts`,
    `app/jobs` -> `app/job`."""
    return folder[:-1] if folder.endswith("s") else folder + "s"


def _top(path: str) -> str:
    """A path's first part (`tools` of `tools/gen/` and of `/tools/gen`)."""
    return path.strip("/").split("/", 1)[0]


def _names(text: str, name: str) -> bool:
    """`text` spells `name` as a whole word."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def _task_listed(project: kinds.Project, label: str, name: str) -> bool:
    """Whether the tree's Makefiles, justfile or package.json scripts (by `label`, as
    `_TASK_LISTS` names them) have the task `name`."""
    if label == "Make target":
        return any(name in targets for targets in project.makefiles.values())
    if label == "just recipe":
        return name in project.just_recipes
    return any(name in scripts for scripts in project.scripts.values())


def _recorded_ok(memory: Memory) -> str | None:
    """The commit the memory was last verified at, when that check found it ok."""
    recorded = memory.verified if isinstance(memory.verified, dict) else {}
    commit = recorded.get("commit")
    if not isinstance(commit, str) or not commit or recorded.get("result") == "stale":
        return None
    return commit


def _note(path: str) -> bool:
    """A memory note: prose, never code, a manifest or a CI file."""
    return path.startswith("memories/") and path.endswith(".md")


def _beside_notes(blobs: dict[str, str]) -> dict[str, str]:
    return {p: b for p, b in blobs.items() if not _note(p)}


def _outside_records(blobs: dict[str, str]) -> dict[str, str]:
    return {p: b for p, b in blobs.items() if not p.startswith(SKIP_PREFIXES)}


def _check_ignore(root: Path, path: str) -> bool:
    try:
        done = subprocess.run(
            ["git", "check-ignore", "-q", "--no-index", path], cwd=root, capture_output=True
        )
    except OSError:
        return False
    return done.returncode == 0


def verify_store(
    layout: Layout, *, use_cache: bool = True
) -> tuple[list[Verification], dict[str, bool]]:
    """Verify every loadable memory of the store (see `verify_store_details`)."""
    results, active, _ = verify_store_details(layout, use_cache=use_cache)
    return results, active


def verify_store_details(
    layout: Layout,
    *,
    use_cache: bool = True,
    loaded: LoadResult | None = None,
    files: list[tuple[str, os.stat_result]] | None = None,
    tree: TreeState | None = None,
) -> tuple[list[Verification], dict[str, bool], bool]:
    """Verify every loadable memory of the store: (results in name order, {name: active},
    whether every result depends on tracked files only).

    Each result is cached (table `verifications`) under the memory file's stat key and the
    signature of every tracked file's blob. A memory whose file and tree are unchanged is
    read back, not checked again; when nothing changed, not a single memory or line of
    code is parsed. Results that depend on untracked paths are never cached. Pass the
    store's `loaded` memories (and its `files` listing) when you have them, to save
    loading them again, and the `tree` when you have just read it.
    """
    store = RepoMemoryStore(layout)
    with Verifier(layout, use_cache=use_cache, tree=tree) as verifier:
        files = sorted(store.files() if files is None else files)
        sig = verifier.state.signature(code_only=False)
        keys = {path: f"{sig}:{stat_key(st)}" for path, st in files}
        table = verifier.cache.table(RESULTS_TABLE, RESULTS_VERSION) if verifier.cache else None
        known = _decode_rows(table.items()) if table else {}
        hit = {p: row for p in keys if (row := known.get(p)) and row[0] == keys[p]}
        if files and len(hit) == len(files):  # nothing changed: every result is cached
            cached = [Verification.from_dict(r[3]) for r in hit.values() if r[3] is not None]
            active = {r[1]: r[2] for r in hit.values() if r[3] is not None}
            return sorted(cached, key=lambda v: v.name), active, True
        loaded = loaded or store.load_all()
        paths = {_stem(p): p for p in keys}
        results = []
        rows: list[tuple[str, list[Any]]] = []
        complete = True
        verifier.prime(_unread(loaded.memories, paths, hit))
        for memory in loaded.memories:
            path = paths.get(memory.name)
            row = hit.get(path) if path is not None else None
            if path is not None and row is not None and row[3] is not None:
                results.append(Verification.from_dict(row[3]))
                rows.append((path, [row[0], memory.name, memory.active, row[3]]))
                continue
            result = verifier.check(memory)
            results.append(result)
            if path is None:
                continue
            if verifier.cacheable(memory):
                rows.append((path, [keys[path], memory.name, memory.active, result.to_dict()]))
            else:
                complete = False
        loadable = {m.name for m in loaded.memories}
        rows += [
            (p, [keys[p], stem, False, None]) for stem, p in paths.items() if stem not in loadable
        ]
        if table is not None:
            table.replace_all((path, json.dumps(row)) for path, row in rows)
    return results, {m.name: m.active for m in loaded.memories}, complete


def _stem(path: str) -> str:
    """`Path(path).stem`, without making a Path of each of thousands of files."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def _unread(
    memories: Iterable[Memory], paths: dict[str, str], hit: dict[str, list[Any]]
) -> list[Memory]:
    """The memories whose result is not in the cache (they are checked again)."""
    return [m for m in memories if paths.get(m.name) not in hit]


def _decode_rows(rows: dict[str, str]) -> dict[str, list[Any]]:
    """The cached rows, decoded in one go (one JSON array: far cheaper than a call a row);
    none when any row does not decode (each memory is then checked again)."""
    try:
        values = json.loads("[" + ",".join(rows.values()) + "]")
    except ValueError:
        return {}
    if len(values) != len(rows) or not all(isinstance(v, list) and len(v) == 4 for v in values):
        return {}
    return dict(zip(rows, values, strict=True))


def verify_memories(
    layout: Layout, memories: Sequence[Memory], *, use_cache: bool = True
) -> list[Verification]:
    """Check `memories` against the working tree of `layout`."""
    with Verifier(layout, use_cache=use_cache) as verifier:
        return verifier.check_all(memories)


def head_commit(layout: Layout) -> str | None:
    return git(layout.root, "rev-parse", "--verify", "-q", "HEAD").decode().strip() or None


def _paths_hit(files: Iterable[str]) -> tuple[set[str], set[str], set[str]]:
    """The changed files, their folders and their bare names (what a claim may name)."""
    wanted = {f.strip("/") for f in files if f.strip("/")}
    folders = {f.rsplit("/", k)[0] for f in wanted for k in range(1, f.count("/") + 1)}
    names = {f.rsplit("/", 1)[-1] for f in wanted}
    return wanted, folders, names


def _mentions(memories: Iterable[Memory], files: Iterable[str]) -> list[Memory]:
    """The memories whose text (body, citations) holds one of the files' paths, folders or
    names: a plain substring test, far cheaper than reading their claims."""
    words = set().union(*_paths_hit(files))
    return [
        m
        for m in memories
        if any(w in m.body or any(w in c.path for c in m.citations) for w in words)
    ]


def citing(verifier: Verifier, memories: Iterable[Memory], files: Iterable[str]) -> list[Memory]:
    """The memories whose citations or backticked paths point at one of `files`
    (repository-relative): the file itself, a folder holding it, or (a bare file name in the
    body) its name."""
    wanted, folders, names = _paths_hit(files)
    out = []
    for memory in _mentions(memories, files):
        for claim in verifier.claims(memory):
            path = (claim.path or "").removeprefix("./").strip("/")
            if not path:
                continue
            bare = claim.origin == "body" and "/" not in path
            if path in wanted or path in folders or (bare and path in names):
                out.append(memory)
                break
    return out


def verify_changed(layout: Layout, files: Sequence[str]) -> list[Verification] | None:
    """Verify the active memories that point at `files` (see `citing`); None when none
    does, found without reading the tree when no memory's text names any of the files."""
    maybe = _mentions(RepoMemoryStore(layout).load_all().active, files)
    if not maybe:
        return None
    with Verifier(layout) as verifier:
        chosen = citing(verifier, maybe, files)
        return verifier.check_all(chosen) if chosen else None
