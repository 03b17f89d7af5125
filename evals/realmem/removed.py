"""`python -m evals.realmem.removed [--repo OWNER/NAME]...`: removed definitions, labelled
by git rather than by hand.

For each development repository of `data.json`, the code files changed between its two
commits are read at the older one, and the names they define (`class X`, `struct X`,
`fn x`, `func x`, `def x`, `function x`, `interface X`, `enum X`, `trait X`, `type X`,
`mixin X`...; five characters or more) are sorted by a hash and the first 40 taken.
A name that no line of the newer tree defines in those words (`git grep -E`) is
*removed*; one that some line still defines is *kept*. Up to ten removed names and six
kept ones per repository are written, without citations, as memories verified at the
older commit (`` `Name` handles this part of the code. ``, or `` Call `name()` for
this. `` for a function), into the newer tree, and `orch memory verify --json` judges
them: a removed name should come out stale, a kept one not.

The labels come from a pattern, not a parse: a definition the pattern does not see
(a C# method, a Go method on a pointer receiver spelt oddly) can make a name look
removed that is still defined, so a removed name reported ok is a miss to look at,
not certainly one. Held-out repositories are never read. It takes some twenty minutes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from evals.realmem.dataset import DEFAULT_MIRRORS, Dataset, Split, load
from evals.realmem.trees import commit_all, commit_date, materialise

EXTENSIONS = frozenset(
    [
        ".cs",
        ".dart",
        ".rs",
        ".ts",
        ".tsx",
        ".js",
        ".go",
        ".java",
        ".kt",
        ".py",
        ".rb",
        ".swift",
        ".zig",
        ".php",
        ".scala",
    ]
)
KEYWORDS = "class|struct|interface|enum|trait|record|object|type|fn|func|def|function|mixin"
DEFINITION = re.compile(
    r"^\s*(?:export\s+)?(?:pub(?:\([a-z]+\))?\s+)?(?:(?:public|internal|private|protected|"
    r"static|abstract|sealed|partial|final|async|default|data|open|readonly)\s+)*"
    rf"({KEYWORDS}|extension)\s+(?:\([^)]*\)\s*)?([A-Za-z_][A-Za-z0-9_]*)",
    re.M,
)
NAMES, REMOVED, KEPT, FILES = 40, 10, 6, 60


def _git(mirror: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "--git-dir", str(mirror), *args],
        capture_output=True,
        text=True,
        errors="replace",
    )


def _first(items: list[str], count: int, salt: str) -> list[str]:
    return sorted(items, key=lambda x: hashlib.sha256((salt + x).encode()).hexdigest())[:count]


def _defined(mirror: Path, commit: str, name: str) -> bool:
    pattern = rf"({KEYWORDS}|extension)\s+(\([^)]*\)\s*)?{name}\b"
    return _git(mirror, "grep", "-q", "-I", "-E", pattern, commit, "--").returncode == 0


def names(mirror: Path, old: str, new: str) -> tuple[dict[str, str], dict[str, str]]:
    """(removed, kept): name -> the keyword that defined it at `old`."""
    diff = _git(mirror, "diff", "--name-only", old, new).stdout.splitlines()
    changed = [p for p in diff if Path(p).suffix in EXTENSIONS and "test" not in p.lower()]
    found: dict[str, str] = {}
    for path in _first(changed, FILES, "f"):
        for match in DEFINITION.finditer(_git(mirror, "show", f"{old}:{path}").stdout):
            name = match.group(2)
            if len(name) >= 5 and not name.startswith("_"):
                found.setdefault(name, match.group(1))
    removed: dict[str, str] = {}
    kept: dict[str, str] = {}
    for name in _first(list(found), NAMES, "n"):
        (kept if _defined(mirror, new, name) else removed)[name] = found[name]
    return removed, kept


def _memory(name: str, commit: str, at: str, body: str) -> str:
    return "\n".join(
        [
            "---",
            f"name: {name}",
            'description: "a removed-definition probe"',
            "type: project",
            'subject: "probe"',
            'reason: "probe"',
            "status: active",
            f'created: "{at}"',
            f'updated: "{at}"',
            "verified:",
            f"  commit: {commit}",
            f'  at: "{at}"',
            "  result: ok",
            "---",
            body,
            "",
        ]
    )


def probe(dataset: Dataset, mirrors: Path, repos: list[str]) -> list[dict[str, str]]:
    rows = []
    orch = [sys.executable, "-m", "orchestrator.cli"]
    for repo in dataset.repos:
        if repo.split is not Split.DEV or (repos and repo.name not in repos):
            continue
        mirror = repo.git_dir(mirrors)
        removed, kept = names(mirror, repo.old, repo.new)
        chosen = {
            **{n: ("removed", removed[n]) for n in _first(list(removed), REMOVED, "r")},
            **{n: ("kept", kept[n]) for n in _first(list(kept), KEPT, "k")},
        }
        if not chosen:
            continue
        print(f"... {repo.name}: {len(chosen)} names", file=sys.stderr)
        with tempfile.TemporaryDirectory(prefix="removed-") as tmp:
            tree = materialise(mirror, repo.new, Path(tmp) / "tree")
            subprocess.run([*orch, "init"], cwd=tree.root, capture_output=True, env=os.environ)
            at = commit_date(mirror, repo.old)
            folder = tree.root / "memories" / "repo"
            folder.mkdir(parents=True, exist_ok=True)
            for i, (name, (_, keyword)) in enumerate(chosen.items()):
                call = keyword in ("fn", "func", "def", "function")
                body = f"Call `{name}()` for this." if call else f"`{name}` handles this part."
                (folder / f"p-{i}.md").write_text(_memory(f"p-{i}", repo.old, at, body))
            commit_all(tree, "the probe's memories")
            done = subprocess.run(
                [*orch, "memory", "verify", "--json"], cwd=tree.root, capture_output=True, text=True
            )
            results = {r["name"]: r for r in json.loads(done.stdout)["results"]}
            for i, (name, (group, _)) in enumerate(chosen.items()):
                result = results.get(f"p-{i}", {})
                rows.append(
                    {
                        "repo": repo.name,
                        "name": name,
                        "group": group,
                        "result": result.get("result", "?"),
                    }
                )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.realmem.removed")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = probe(load(), args.mirrors, args.repo)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for group in ("removed", "kept"):
        counts = Counter(r["result"] for r in rows if r["group"] == group)
        print(
            f"{group}: {sum(counts.values())} names, "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        )
    for r in rows:
        if r["group"] == "removed" and r["result"] != "stale":
            print(f"  removed, reported {r['result']}: {r['repo']} {r['name']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
