"""Turn hand-written label files into `data.json` entries (offsets and hashes from the mirror).

A label file names claims by line, never by their words, so it can be kept anywhere:

    @repo owner/name split=dev lang=Go old=<sha> new=<sha>
    @file CLAUDE.md
    L22 | make-target | holds | the Makefile still defines test | Makefile:9#test
    L48s1 | path | moved | now app/models/balance.rb | app/models/account/balance.rb:1 | moved=app/models/balance.rb

`L<line>` is the whole line without its list marker; `L<line>s<k>` its k-th sentence. The
fields are: kind (see `Kind`), label (holds | stale | moved), a one-line justification,
citations (`path[:line][#symbol]`, `;` between them, as orch's promotion would write them
at the older commit), then optional flags: `moved=PATH` (where the thing lives now) and
`old=false` (the claim was already wrong at the older commit).

    python -m evals.realmem.author LABELS... [--mirrors DIR] [--show] [--write] [--data FILE]

checks every citation against the older commit and every `moved=` path against the newer,
prints problems, and with `--write` replaces those repositories' entries in data.json (or
in FILE with `--data`: a pool kept outside the repository, created when absent, which
`python -m evals.realmem --data FILE` then scores).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from evals.realmem.dataset import (
    DATA,
    DEFAULT_MIRRORS,
    Citation,
    Claim,
    DataError,
    Dataset,
    Kind,
    Label,
    Repo,
    Split,
    claim_span,
    load,
    save,
    sha256,
    show,
)

_SPEC = re.compile(r"^L(\d+)(?:s(\d+))?$")
_CITE = re.compile(r"^(?P<path>[^:#]+)(?::(?P<line>\d+))?(?:#(?P<symbol>.+))?$")


@dataclass(frozen=True)
class Parsed:
    repos: tuple[Repo, ...]
    claims: tuple[Claim, ...]
    problems: tuple[str, ...]


def parse(paths: list[Path], mirrors: Path) -> Parsed:
    repos: list[Repo] = []
    claims: list[Claim] = []
    problems: list[str] = []
    for label_file in paths:
        repo: Repo | None = None
        files: list[str] = []
        path = ""
        sources: dict[str, str] = {}
        for number, raw in enumerate(label_file.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{label_file.name}:{number}"
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("@repo "):
                if repo is not None:
                    repos.append(_with_files(repo, files))
                words = line.split()
                opts = dict(w.split("=", 1) for w in words[2:])
                repo = Repo(
                    words[1], Split(opts["split"]), opts["lang"], opts["old"], opts["new"], ()
                )
                files = []
                continue
            if repo is None:
                problems.append(f"{where}: a claim before any @repo line")
                continue
            if line.startswith("@file "):
                path = line.split(None, 1)[1]
                files.append(path)
                try:
                    sources[path] = show(repo.git_dir(mirrors), repo.old, path)
                except DataError as exc:
                    problems.append(f"{where}: {exc}")
                continue
            try:
                claims.append(_claim(repo, path, files.index(path), sources[path], line, mirrors))
            except (DataError, ValueError, KeyError, IndexError) as exc:
                problems.append(f"{where}: {exc}")
        if repo is not None:
            repos.append(_with_files(repo, files))
    for claim in claims:
        repo = next(r for r in repos if r.name == claim.repo)
        problems += [f"{claim.id}: {p}" for p in _check(claim, repo, mirrors)]
    return Parsed(tuple(repos), tuple(claims), tuple(problems))


def _with_files(repo: Repo, files: list[str]) -> Repo:
    return Repo(repo.name, repo.split, repo.language, repo.old, repo.new, tuple(files))


def _claim(repo: Repo, path: str, index: int, source: str, line: str, mirrors: Path) -> Claim:
    fields = [f.strip() for f in line.split("|")]
    if len(fields) < 5:
        raise ValueError("want: spec | kind | label | why | citations [| flags]")
    spec = _SPEC.match(fields[0])
    if spec is None:
        raise ValueError(f"bad claim spec {fields[0]!r}")
    number = int(spec.group(1))
    sentence = int(spec.group(2)) if spec.group(2) else None
    start, end = claim_span(source, number, sentence)
    flags = dict(f.split("=", 1) for f in " ".join(fields[5:]).split())
    ident = f"{repo.slug}-{index}-l{number}" + (f"-s{sentence}" if sentence else "")
    return Claim(
        ident,
        repo.name,
        path,
        number,
        start,
        end,
        sha256(source[start:end]),
        Kind(fields[1]),
        Label(fields[2]),
        fields[3],
        tuple(_citation(c) for c in fields[4].split(";") if c.strip()),
        flags.get("moved"),
        flags.get("old", "true") != "false",
    )


def _citation(text: str) -> Citation:
    m = _CITE.match(text.strip())
    if m is None:
        raise ValueError(f"bad citation {text!r}")
    line = m.group("line")
    return Citation(m.group("path"), int(line) if line else None, m.group("symbol"))


def _check(claim: Claim, repo: Repo, mirrors: Path) -> list[str]:
    git_dir = repo.git_dir(mirrors)
    out = []
    for c in claim.citations:
        kind = _object_type(git_dir, repo.old, c.path)
        if kind is None:
            out.append(f"cited {c.path} does not exist at the older commit")
            continue
        if kind != "blob":
            continue
        text = show(git_dir, repo.old, c.path)
        lines = text.splitlines()
        if c.line is not None and c.line > len(lines):
            out.append(f"cited {c.path}:{c.line} is past its {len(lines)} lines")
        elif c.symbol is not None:
            last = c.symbol.split("::")[-1].split(".")[-1]
            scope = [lines[c.line - 1]] if c.line is not None else lines
            if not any(last in x for x in scope):
                out.append(f"cited symbol {c.symbol} is not on {c.path}:{c.line or '*'}")
    if claim.label is Label.HOLDS:
        gone = [c.path for c in claim.citations if _object_type(git_dir, repo.new, c.path) is None]
        if gone:
            out.append(f"holds, but cites {', '.join(gone)}, gone at the newer commit (moved?)")
    if claim.label is Label.MOVED:
        if claim.moved_to is None:
            out.append("a moved claim without moved=PATH")
        elif _object_type(git_dir, repo.new, claim.moved_to) is None:
            out.append(f"moved_to {claim.moved_to} does not exist at the newer commit")
    return out


def _object_type(git_dir: Path, commit: str, path: str) -> str | None:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "-t", f"{commit}:{path.rstrip('/')}"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def merge(dataset: Dataset | None, parsed: Parsed) -> Dataset:
    """`dataset` with the parsed repositories' entries replaced (order: repos as listed)."""
    names = {r.name for r in parsed.repos}
    old_repos = [r for r in dataset.repos if r.name not in names] if dataset else []
    old_claims = [c for c in dataset.claims if c.repo not in names] if dataset else []
    return Dataset(tuple(old_repos) + parsed.repos, tuple(old_claims) + parsed.claims)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.realmem.author")
    parser.add_argument("labels", nargs="+", type=Path)
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--show", action="store_true", help="print each claim's text")
    parser.add_argument("--write", action="store_true", help=f"update {DATA.name} (or --data)")
    parser.add_argument(
        "--data", type=Path, default=DATA, help="the data file --write updates (a pool's own)"
    )
    args = parser.parse_args(argv)
    parsed = parse(args.labels, args.mirrors)
    if args.show:
        for claim in parsed.claims:
            repo = next(r for r in parsed.repos if r.name == claim.repo)
            text = show(repo.git_dir(args.mirrors), repo.old, claim.path)[claim.start : claim.end]
            print(f"{claim.id:<28} {claim.label.value:<6} {claim.kind.value:<14} {text}")
    for problem in parsed.problems:
        print(f"problem: {problem}", file=sys.stderr)
    print(f"{len(parsed.claims)} claims in {len(parsed.repos)} repositories", file=sys.stderr)
    if args.write:
        if parsed.problems:
            print("not written: fix the problems first", file=sys.stderr)
            return 1
        current = load(args.data) if args.data.exists() else None
        save(merge(current, parsed), args.data)
    return 1 if parsed.problems else 0


if __name__ == "__main__":
    sys.exit(main())
