"""The labelled references (`data/*.yaml`) and the facts they point at in the mirrors.

A data file holds, for one public repository, only references and our own words: the
commit, the files facts come from (with the sha256 of each), and for each fact its place
(`path:line:start-end`, character offsets into the file at that commit), the sha256 of
that span, the memory type we gave it, and our labels with a one-line justification. The
text itself is read from a local mirror (a bare git directory brought by the `fetch` tool)
at run time and checked against the hashes; nothing fetched is ever committed.

Label kinds are the finding kinds `orch memory audit` reports. Per-memory labels:
`excluded_content` (with its class), `stale_citation`, `secret`, and, never expected for
memories this evaluation writes itself, `missing_field` and `invalid_file`. Group labels:
`near_duplicates` (sets of facts that say one thing) and `contradictions` (pairs that give
one slot two values, with the slot named).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import yaml

from evals.realaudit import facts as fact_reading

DATA_DIR = Path(__file__).resolve().parent / "data"
_AT = re.compile(r"^(?P<path>.+):(?P<line>\d+):(?P<start>\d+)-(?P<end>\d+)$")
_SHA = re.compile(r"^[0-9a-f]{64}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


class DataError(Exception):
    """A data file or a mirror that does not match what the data says (one line)."""


class Split(Enum):
    DEV = "dev"
    HELD_OUT = "held-out"


class Kind(Enum):
    """The finding kinds of `orch memory audit` (docs/memory.md, "The audit")."""

    NEAR_DUPLICATE = "near_duplicate"
    CONTRADICTION = "contradiction"
    STALE_CITATION = "stale_citation"
    MOVED_CITATION = "moved_citation"
    EXCLUDED_CONTENT = "excluded_content"
    SECRET = "secret"
    INVALID_FILE = "invalid_file"
    MISSING_FIELD = "missing_field"
    INDEX_DRIFT = "index_drift"
    INDEX_OVERSIZE = "index_oversize"
    NOTES_STYLE = "notes_style"
    LOW_VALUE = "low_value"


PER_MEMORY = frozenset(
    {
        Kind.STALE_CITATION,
        Kind.EXCLUDED_CONTENT,
        Kind.SECRET,
        Kind.INVALID_FILE,
        Kind.MISSING_FIELD,
    }
)


class Excluded(Enum):
    """Why a fact is a save exclusion: git history, derivable from the code, or one of the
    classes of ephemeral task state."""

    GIT_HISTORY = "git_history"
    DERIVABLE = "derivable"
    CHANGE_ACCOUNT = "change_account"  # what was added, fixed, replaced... ("Previously: ...")
    PROGRESS_STATUS = "progress_status"  # done, complete, N of M, tests passing, "stable"
    TODO_NEXT = "todo_next"  # to-dos, next steps, planned work, open items
    IN_PROGRESS = "in_progress"  # "currently working on", "current focus", "in progress"
    SESSION_SUMMARY = "session_summary"  # what one session or task did, as a summary
    DATED_STATUS = "dated_status"  # a state of affairs tied to a date or "last updated"


MEMORY_TYPES = ("user", "feedback", "project", "reference")


@dataclass(frozen=True)
class Label:
    kind: Kind
    why: str
    excluded: Excluded | None = None


@dataclass(frozen=True)
class FactRef:
    id: str
    path: str
    line: int
    start: int
    end: int
    sha256: str
    type: str
    labels: tuple[Label, ...] = ()
    note: str | None = None


@dataclass(frozen=True)
class DuplicateGroup:
    """Facts of which every two say the same thing, or one says all the other does. A fact
    may sit in several groups: a compound fact can cover two facts that differ."""

    members: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class Contradiction:
    pair: tuple[str, str]
    slot: str
    why: str


@dataclass(frozen=True)
class RepoData:
    """One repository's references and labels."""

    repo: str
    commit: str
    split: Split
    about: str
    sources: dict[str, str]  # path -> sha256 of the whole file at the commit
    drop: dict[str, str]  # other agent-instruction files left out of the tree -> why
    facts: tuple[FactRef, ...]
    near_duplicates: tuple[DuplicateGroup, ...] = ()
    contradictions: tuple[Contradiction, ...] = ()

    @property
    def slug(self) -> str:
        return self.repo.replace("/", "+")

    def fact(self, fact_id: str) -> FactRef:
        for ref in self.facts:
            if ref.id == fact_id:
                return ref
        raise KeyError(fact_id)


@dataclass(frozen=True)
class Fact:
    """A fact rebuilt from its mirror: the reference, its text and its subject."""

    ref: FactRef
    text: str
    subject: str


# -- reading the data files ---------------------------------------------------------------


def _need(raw: dict[str, Any], key: str, where: str) -> Any:
    if key not in raw:
        raise DataError(f"{where}: missing {key!r}")
    return raw[key]


def _label(raw: Any, where: str) -> Label:
    if not isinstance(raw, dict):
        raise DataError(f"{where}: a label is a mapping with kind and why")
    try:
        kind = Kind(_need(raw, "kind", where))
    except ValueError as exc:
        raise DataError(f"{where}: {exc}") from None
    if kind not in PER_MEMORY:
        raise DataError(f"{where}: {kind.value} is labelled in near_duplicates/contradictions")
    why = str(_need(raw, "why", where)).strip()
    if not why:
        raise DataError(f"{where}: empty justification")
    excluded = None
    if kind is Kind.EXCLUDED_CONTENT:
        try:
            excluded = Excluded(_need(raw, "class", where))
        except ValueError as exc:
            raise DataError(f"{where}: {exc}") from None
    return Label(kind, why, excluded)


def _fact(raw: Any, index: int) -> FactRef:
    where = f"fact {index + 1}"
    if not isinstance(raw, dict):
        raise DataError(f"{where}: not a mapping")
    fact_id = str(_need(raw, "id", where))
    where = fact_id
    match = _AT.match(str(_need(raw, "at", where)))
    if match is None:
        raise DataError(f"{where}: 'at' must be path:line:start-end")
    digest = str(_need(raw, "sha256", where))
    if not _SHA.match(digest):
        raise DataError(f"{where}: sha256 must be 64 hex digits")
    kind = str(_need(raw, "type", where))
    if kind not in MEMORY_TYPES:
        raise DataError(f"{where}: type must be one of {', '.join(MEMORY_TYPES)}")
    start, end = int(match["start"]), int(match["end"])
    if end <= start:
        raise DataError(f"{where}: empty span")
    labels = tuple(_label(item, where) for item in raw.get("labels") or ())
    return FactRef(
        id=fact_id,
        path=match["path"],
        line=int(match["line"]),
        start=start,
        end=end,
        sha256=digest,
        type=kind,
        labels=labels,
        note=raw.get("note"),
    )


def parse(raw: Any, where: str) -> RepoData:
    """A data file's content (already read as YAML) as a checked RepoData."""
    if not isinstance(raw, dict) or raw.get("v") != 1:
        raise DataError(f"{where}: not a realaudit data file (v: 1)")
    commit = str(_need(raw, "commit", where))
    if not _COMMIT.match(commit):
        raise DataError(f"{where}: commit must be 40 hex digits")
    try:
        split = Split(_need(raw, "split", where))
    except ValueError as exc:
        raise DataError(f"{where}: {exc}") from None
    sources = {str(k): str(v) for k, v in (_need(raw, "sources", where) or {}).items()}
    refs = tuple(_fact(item, i) for i, item in enumerate(_need(raw, "facts", where) or ()))
    ids = [ref.id for ref in refs]
    if len(set(ids)) != len(ids):
        raise DataError(f"{where}: a fact id is used twice")
    for ref in refs:
        if ref.path not in sources:
            raise DataError(f"{where}: {ref.id} comes from {ref.path}, not under sources")

    known = set(ids)

    def check(members: list[str], what: str) -> None:
        unknown = sorted(set(members) - known)
        if unknown:
            raise DataError(f"{where}: {what} names unknown facts {', '.join(unknown)}")

    groups: list[DuplicateGroup] = []
    for item in raw.get("near_duplicates") or ():
        members = [str(m) for m in _need(item, "members", where)]
        check(members, "a near-duplicate group")
        if len(set(members)) != len(members) or len(members) < 2:
            raise DataError(f"{where}: a near-duplicate group needs two or more different facts")
        groups.append(DuplicateGroup(tuple(members), str(_need(item, "why", where))))
    pairs: list[Contradiction] = []
    for item in raw.get("contradictions") or ():
        pair = [str(m) for m in _need(item, "pair", where)]
        check(pair, "a contradiction")
        if len(set(pair)) != 2:
            raise DataError(f"{where}: a contradiction is a pair of two facts")
        slot, why = str(_need(item, "slot", where)), str(_need(item, "why", where))
        pairs.append(Contradiction((pair[0], pair[1]), slot, why))
    return RepoData(
        repo=str(_need(raw, "repo", where)),
        commit=commit,
        split=split,
        about=str(raw.get("about") or ""),
        sources=sources,
        drop={str(k): str(v) for k, v in (raw.get("drop") or {}).items()},
        facts=refs,
        near_duplicates=tuple(groups),
        contradictions=tuple(pairs),
    )


def load(path: Path) -> RepoData:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DataError(f"{path.name}: {exc}") from None
    return parse(raw, path.name)


def load_all(data_dir: Path = DATA_DIR) -> list[RepoData]:
    files = sorted(data_dir.glob("*.yaml"))
    if not files:
        raise DataError(f"no data files in {data_dir}")
    return [load(path) for path in files]


# -- the mirrors -----------------------------------------------------------------------------


def mirror_dir(mirrors: Path, repo: str) -> Path:
    """The bare git directory `fetch` leaves for owner/name: MIRRORS/owner+name/repo."""
    return mirrors / repo.replace("/", "+") / "repo"


def _git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, check=False)


def missing_mirrors(mirrors: Path, sets: list[RepoData]) -> list[str]:
    """The repositories whose mirror is absent or lacks the commit the data names."""
    out: list[str] = []
    for data in sets:
        git_dir = mirror_dir(mirrors, data.repo)
        if (
            not git_dir.is_dir()
            or _git(git_dir, "cat-file", "-e", f"{data.commit}^{{commit}}").returncode
        ):
            out.append(data.repo)
    return out


def read_source(mirrors: Path, data: RepoData, path: str) -> str:
    done = _git(mirror_dir(mirrors, data.repo), "cat-file", "blob", f"{data.commit}:{path}")
    if done.returncode:
        raise DataError(f"{data.repo}: no {path} at {data.commit[:12]} in the mirror")
    text = done.stdout.decode("utf-8")
    if fact_reading.sha256(text) != data.sources[path]:
        raise DataError(f"{data.repo}: {path} at {data.commit[:12]} is not the file labelled")
    return text


@dataclass(frozen=True)
class Rebuilt:
    """A repository's memory files (path -> text) and its facts, read from the mirror."""

    sources: dict[str, str]
    facts: tuple[Fact, ...]


def facts_of(data: RepoData, sources: dict[str, str]) -> tuple[Fact, ...]:
    """Every fact's text and subject from its source text, checked against its hash."""
    out: list[Fact] = []
    for ref in data.facts:
        source = sources[ref.path]
        raw = source[ref.start : ref.end]
        if fact_reading.sha256(raw) != ref.sha256:
            raise DataError(
                f"{data.repo}: {ref.id} ({ref.path}:{ref.line}) does not match its hash"
            )
        subject = fact_reading.subject_at(source, ref.path, ref.start)
        out.append(Fact(ref, fact_reading.fact_text(raw), subject))
    return tuple(out)


def rebuild(mirrors: Path, data: RepoData) -> Rebuilt:
    sources = {path: read_source(mirrors, data, path) for path in data.sources}
    return Rebuilt(sources, facts_of(data, sources))
