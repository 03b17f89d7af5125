"""Draft a data file's references, and list facts for labelling by hand.

    python -m evals.realaudit.draft new OWNER/NAME COMMIT --prefix ts --split dev PATH[:A-B]...
    python -m evals.realaudit.draft show OWNER/NAME [--names]

`new` splits the given files of the mirror at COMMIT into facts (those starting on lines A
to B only, when a range is given) and writes
`data/<owner>+<name>.yaml` with their references (place, sha256) and no labels; it refuses
to overwrite a data file. `show` prints each fact of a data file with its id, subject,
labels and text, to read while labelling (`--names` adds, for each name the fact writes in
backticks or as a path, whether the tree at the commit has it: an aid, not a label). What
`show` prints comes from the mirror and stays on the terminal.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

from evals.realaudit import dataset
from evals.realaudit import facts as fact_reading

_CODE = re.compile(r"`([^`\n]+)`")
_PATHLIKE = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]*|[\w-]+\.(?:py|ts|tsx|js|json|md|toml|yaml|yml|sql|rs|go|sh|csv|db|txt|mdc))(?![\w/])"
)


def _new(args: argparse.Namespace) -> int:
    target = dataset.DATA_DIR / f"{args.repo.replace('/', '+')}.yaml"
    if target.exists():
        print(f"draft: {target} exists; edit it instead", file=sys.stderr)
        return 2
    git_dir = dataset.mirror_dir(Path(args.mirrors), args.repo)
    commit = subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", f"{args.commit}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if commit.returncode:
        print(f"draft: no commit {args.commit} in {git_dir}", file=sys.stderr)
        return 1
    full = commit.stdout.strip()
    sources: dict[str, str] = {}
    entries: list[dict[str, object]] = []
    for spec in args.paths:
        path, _, lines = spec.partition(":")
        first, _, last = lines.partition("-")
        done = subprocess.run(
            ["git", f"--git-dir={git_dir}", "cat-file", "blob", f"{full}:{path}"],
            capture_output=True,
            check=False,
        )
        if done.returncode:
            print(f"draft: no {path} at {full[:12]}", file=sys.stderr)
            return 1
        text = done.stdout.decode("utf-8")
        sources[path] = fact_reading.sha256(text)
        for span in fact_reading.split_facts(text):
            if lines and not int(first) <= span.line <= int(last):
                continue
            entries.append(
                {
                    "id": f"{args.prefix}-{len(entries) + 1:03d}",
                    "at": f"{path}:{span.line}:{span.start}-{span.end}",
                    "sha256": fact_reading.sha256(text[span.start : span.end]),
                    "type": "project",
                    "labels": [],
                }
            )
    data = {
        "v": 1,
        "repo": args.repo,
        "commit": full,
        "split": args.split,
        "about": "",
        "sources": sources,
        "drop": {},
        "facts": entries,
        "near_duplicates": [],
        "contradictions": [],
    }
    dataset.DATA_DIR.mkdir(parents=True, exist_ok=True)
    target.write_text(
        yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8"
    )
    print(f"wrote {target}: {len(entries)} facts from {len(sources)} files")
    return 0


def _tree_has(git_dir: Path, commit: str, sources: set[str]) -> Callable[[str], bool]:
    paths = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    tracked = set(paths) - sources
    folders = {str(Path(p).parent) + "/" for p in tracked}
    names = {Path(p).name for p in tracked}

    def word_in_code(word: str) -> bool:
        done = subprocess.run(
            [
                "git",
                f"--git-dir={git_dir}",
                "grep",
                "-q",
                "-F",
                "-w",
                word,
                commit,
                "--",
                ".",
                *(f":!{s}" for s in sources),
                ":!*.md",
            ],
            capture_output=True,
            check=False,
        )
        return done.returncode == 0

    def has(name: str) -> bool:
        name = name.strip().rstrip("/")
        if name in tracked or name + "/" in folders or name in names:
            return True
        if "/" in name or ("." in name and " " not in name):
            return any(p.endswith("/" + name) or p.startswith(name + "/") for p in tracked)
        return word_in_code(name)

    return has


def _show(args: argparse.Namespace) -> int:
    data = dataset.load(dataset.DATA_DIR / f"{args.repo.replace('/', '+')}.yaml")
    mirrors = Path(args.mirrors)
    rebuilt = dataset.rebuild(mirrors, data).facts
    has = None
    if args.names:
        has = _tree_has(dataset.mirror_dir(mirrors, data.repo), data.commit, set(data.sources))
    groups: dict[str, list[int]] = {}
    for i, group in enumerate(data.near_duplicates):
        for member in group.members:
            groups.setdefault(member, []).append(i)
    for fact in rebuilt:
        if args.only and fact.ref.id not in args.only:
            continue
        marks = [
            label.kind.value + (f"/{label.excluded.value}" if label.excluded else "")
            for label in fact.ref.labels
        ]
        marks += [f"dup#{i}" for i in groups.get(fact.ref.id, ())]
        print(
            f"{fact.ref.id} [{fact.ref.type}] ({fact.ref.path}:{fact.ref.line}) <{fact.subject}> {' '.join(marks)}"
        )
        print(f"    {fact.text}")
        if has is not None:
            names = {m.strip() for m in _CODE.findall(fact.text)} | set(
                _PATHLIKE.findall(fact.text)
            )
            missing = sorted(n for n in names if len(n) > 2 and not has(n))
            if missing:
                print(f"    !! not in tree: {missing}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.realaudit.draft")
    parser.add_argument("--mirrors", default="/work/.mirror")
    sub = parser.add_subparsers(dest="command", required=True)
    new = sub.add_parser("new")
    new.add_argument("repo")
    new.add_argument("commit")
    new.add_argument("--prefix", required=True)
    new.add_argument("--split", choices=[s.value for s in dataset.Split], required=True)
    new.add_argument("paths", nargs="+")
    show = sub.add_parser("show")
    show.add_argument("repo")
    show.add_argument("--names", action="store_true")
    show.add_argument("--only", nargs="*")
    args = parser.parse_args(argv)
    try:
        return _new(args) if args.command == "new" else _show(args)
    except dataset.DataError as exc:
        print(f"draft: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
