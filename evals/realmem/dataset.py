"""The labelled claims and how their texts come back from the mirrors.

`data.json` holds references only: for each repository the two commits and the agent
instruction files; for each claim the file, its line, its character offsets in the file at
the older commit, a sha256 of its text, and our labels. The texts themselves are read
from the local mirrors (`fetch` makes them: `<mirrors>/<owner>+<name>/repo`) each run,
and a text whose hash no longer matches is refused, so labels never drift silently onto
other words.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("data.json")
DEFAULT_MIRRORS = Path("/work/.mirror")


class Split(enum.Enum):
    DEV = "dev"
    HELD_OUT = "held-out"


class Label(enum.Enum):
    """What the claim is at the newer commit, judged by hand."""

    HOLDS = "holds"
    STALE = "stale"  # the fact no longer holds
    MOVED = "moved"  # the fact holds, but a path it names is gone and the thing lives elsewhere


class Kind(enum.Enum):
    """What a claim names, the thing that decides whether it holds."""

    COMMAND = "command"  # a shell command or program invocation
    PACKAGE_SCRIPT = "package-script"  # npm/pnpm/yarn/bun script
    MAKE_TARGET = "make-target"  # Make/just target
    PATH = "path"  # a file
    DIRECTORY = "directory"
    SYMBOL = "symbol"  # a function, class, type, constant
    MEMBER = "member"  # a class member, method, field, attribute
    CONFIG = "config"  # a configuration key, setting or dependency
    VALUE = "value"  # a stated value: version, default, port, count
    ENV_VAR = "env-var"
    FILE_PATTERN = "file-pattern"  # `*_test.go`, "files ending in .spec.ts"
    CLI = "cli"  # a command or subcommand or flag of the project's own CLI


@dataclass(frozen=True)
class Citation:
    path: str
    line: int | None = None
    symbol: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.line is not None:
            out["line"] = self.line
        if self.symbol is not None:
            out["symbol"] = self.symbol
        return out


@dataclass(frozen=True)
class Repo:
    name: str  # owner/name
    split: Split
    language: str
    old: str  # the commit the claims were written at
    new: str  # the commit they are judged at
    files: tuple[str, ...]

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")

    def git_dir(self, mirrors: Path) -> Path:
        return mirrors / self.name.replace("/", "+") / "repo"


@dataclass(frozen=True)
class Claim:
    id: str
    repo: str
    path: str  # the instruction file it comes from
    line: int  # 1-based, at the older commit
    start: int  # character offsets of the claim in that file
    end: int
    sha256: str
    kind: Kind
    label: Label
    why: str
    citations: tuple[Citation, ...]
    moved_to: str | None = None  # where the thing lives now, for `moved`
    holds_at_old: bool = True  # False: already wrong when it was written

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "repo": self.repo,
            "path": self.path,
            "line": self.line,
            "start": self.start,
            "end": self.end,
            "sha256": self.sha256,
            "kind": self.kind.value,
            "label": self.label.value,
            "why": self.why,
            "citations": [c.to_dict() for c in self.citations],
        }
        if self.moved_to is not None:
            out["moved_to"] = self.moved_to
        if not self.holds_at_old:
            out["holds_at_old"] = False
        return out


@dataclass(frozen=True)
class Dataset:
    repos: tuple[Repo, ...]
    claims: tuple[Claim, ...]

    def repo(self, name: str) -> Repo:
        for repo in self.repos:
            if repo.name == name:
                return repo
        raise KeyError(name)

    def of(self, repo: Repo) -> list[Claim]:
        return [c for c in self.claims if c.repo == repo.name]

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "repos": [
                {
                    "repo": r.name,
                    "split": r.split.value,
                    "language": r.language,
                    "old": r.old,
                    "new": r.new,
                    "files": list(r.files),
                }
                for r in self.repos
            ],
            "claims": [c.to_dict() for c in self.claims],
        }


class DataError(Exception):
    """The data file or a mirror does not say what the labels expect (one line)."""


def load(path: Path = DATA) -> Dataset:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        repos = tuple(
            Repo(
                r["repo"],
                Split(r["split"]),
                r["language"],
                r["old"],
                r["new"],
                tuple(r["files"]),
            )
            for r in raw["repos"]
        )
        claims = tuple(
            Claim(
                c["id"],
                c["repo"],
                c["path"],
                int(c["line"]),
                int(c["start"]),
                int(c["end"]),
                c["sha256"],
                Kind(c["kind"]),
                Label(c["label"]),
                c["why"],
                tuple(Citation(x["path"], x.get("line"), x.get("symbol")) for x in c["citations"]),
                c.get("moved_to"),
                bool(c.get("holds_at_old", True)),
            )
            for c in raw["claims"]
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: not a realmem data file ({type(exc).__name__}: {exc})") from exc
    names = {r.name for r in repos}
    seen: set[str] = set()
    for claim in claims:
        if claim.repo not in names:
            raise DataError(f"{path}: claim {claim.id} names unknown repository {claim.repo}")
        if claim.id in seen:
            raise DataError(f"{path}: claim id {claim.id} is used twice")
        seen.add(claim.id)
    return Dataset(repos, claims)


def save(dataset: Dataset, path: Path = DATA) -> None:
    path.write_text(json.dumps(dataset.to_dict(), indent=1, ensure_ascii=False) + "\n")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# mirrors ------------------------------------------------------------------------------


def missing_mirrors(dataset: Dataset, mirrors: Path) -> list[Repo]:
    """Repositories whose mirror is absent or lacks one of the two commits."""
    out = []
    for repo in dataset.repos:
        git_dir = repo.git_dir(mirrors)
        if not git_dir.is_dir() or not all(
            _has_commit(git_dir, sha) for sha in (repo.old, repo.new)
        ):
            out.append(repo)
    return out


def _has_commit(git_dir: Path, sha: str) -> bool:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{sha}^{{commit}}"],
        capture_output=True,
    )
    return done.returncode == 0


def show(git_dir: Path, commit: str, path: str) -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True
    )
    if done.returncode != 0:
        raise DataError(f"{git_dir}: no {path} at {commit[:12]}")
    return done.stdout.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Text:
    """A claim with its words, read back from the mirror."""

    claim: Claim
    text: str
    fenced: bool  # inside a ``` block: a command line rather than prose
    heading: str  # the nearest heading above it ("" when none)


def rebuild(dataset: Dataset, repo: Repo, mirrors: Path) -> list[Text]:
    """The claims of `repo` with their texts, each checked against its hash and line."""
    git_dir = repo.git_dir(mirrors)
    files: dict[str, str] = {}
    out = []
    for claim in dataset.of(repo):
        if claim.path not in files:
            files[claim.path] = show(git_dir, repo.old, claim.path)
        source = files[claim.path]
        text = source[claim.start : claim.end]
        if sha256(text) != claim.sha256:
            raise DataError(
                f"claim {claim.id}: the text at {repo.name}@{repo.old[:12]}:{claim.path} "
                f"offsets {claim.start}-{claim.end} no longer matches its hash"
            )
        if source.count("\n", 0, claim.start) + 1 != claim.line:
            raise DataError(f"claim {claim.id}: offsets {claim.start} are not on line {claim.line}")
        out.append(
            Text(claim, text, in_fence(source, claim.line), heading_above(source, claim.line))
        )
    return out


# spans: what a claim of a line is ----------------------------------------------------

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
MARKER = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "approx.", "cf.")


def line_bounds(source: str, line: int) -> tuple[int, int]:
    """Character offsets of line `line` (1-based), without its line break."""
    start = 0
    for _ in range(line - 1):
        found = source.find("\n", start)
        if found < 0:
            raise DataError(f"no line {line}")
        start = found + 1
    end = source.find("\n", start)
    end = len(source) if end < 0 else end
    if end > start and source[end - 1] == "\r":
        end -= 1
    return start, end


def in_fence(source: str, line: int) -> bool:
    inside = False
    for number, text in enumerate(source.splitlines(), start=1):
        if number == line:
            return inside and not FENCE.match(text)
        if FENCE.match(text):
            inside = not inside
    return False


def heading_above(source: str, line: int) -> str:
    found = ""
    inside = False
    for number, text in enumerate(source.splitlines(), start=1):
        if number >= line:
            break
        if FENCE.match(text):
            inside = not inside
        elif not inside and (m := HEADING.match(text)):
            found = m.group(1)
    return found


def sentences(text: str) -> list[tuple[int, int]]:
    """Offsets of the sentences of one line of prose (code spans are never split)."""
    out = []
    start = 0
    in_code = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "`":
            in_code = not in_code
        elif ch in ".!?" and not in_code:
            j = i + 1
            while j < len(text) and text[j] in "\"')]*_":
                j += 1
            k = j
            while k < len(text) and text[k] == " ":
                k += 1
            word = text[:j].rsplit(" ", 1)[-1].lower()
            boundary = k > j and k < len(text) and (text[k].isupper() or text[k] in '`[*_"')
            if boundary and not word.endswith(_ABBREVIATIONS):
                out.append((start, j))
                start = k
                i = k
                continue
        i += 1
    if start < len(text):
        end = len(text.rstrip())
        if end > start:
            out.append((start, end))
    return out


def claim_span(source: str, line: int, sentence: int | None = None) -> tuple[int, int]:
    """Offsets of a claim: the line without its list marker and trailing blanks, or its
    `sentence`-th sentence (1-based)."""
    start, end = line_bounds(source, line)
    text = source[start:end]
    if in_fence(source, line):
        lead = len(text) - len(text.lstrip())
    else:
        marker = MARKER.match(text)
        lead = marker.end() if marker else 0
    body = text[lead:].rstrip()
    if not body:
        raise DataError(f"line {line} is empty")
    if sentence is None:
        return start + lead, start + lead + len(body)
    parts = sentences(body)
    if not 1 <= sentence <= len(parts):
        raise DataError(f"line {line} has {len(parts)} sentences, not {sentence}")
    a, b = parts[sentence - 1]
    return start + lead + a, start + lead + b
