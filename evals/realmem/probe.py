"""`python -m evals.realmem.probe`: facts made from what real repositories define, each
verified where it was made; every result but `ok` is a false alarm.

    python -m evals.realmem.probe [--json] [--mirrors DIR] [--repo OWNER/NAME ...]
                                  [--orch PATH] [--details] [--per-repo N]

No labels are needed: each fact is generated at a repository's HEAD from what that tree
defines, so it holds there by construction. Two families:

- definitions: a function, class, type or method a simple per-language pattern finds in a
  code file (Python, TypeScript, JavaScript, Go, Rust, Java, Kotlin, C#, Ruby, PHP,
  Swift), written "`Name` is defined in `path`." twice: with a citation (path, line,
  symbol), as orch's promotion writes it, and without, as an imported file has it;
- commands and names: a package.json script (at the root or in a package, run from its
  folder with the project's package manager), a Make target or a just recipe, an
  environment variable the code reads, a long option the code defines; without
  citations.

Every memory is created at the commit's date with no verification record, as a memory
just written. The repositories default to those of `owncommit.json` (a development set:
rules were read from their files). The patterns are not orch's: they are a second, simpler
reading, so an answer that differs is either orch's false alarm or the pattern's mistake
(`--details` lists each on the terminal to tell which). Nothing fetched is stored.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.realmem import owncommit
from evals.realmem.dataset import DEFAULT_MIRRORS
from evals.realmem.run import Orch, OrchError
from evals.realmem.trees import TreeError, commit_all, commit_date, git, materialise

_DEFINITIONS = {
    ".py": [r"(?:async\s+)?def (\w+)\(", r"class (\w+)\b"],
    ".ts": [
        r"export (?:default )?(?:async )?function (\w+)",
        r"export (?:default )?(?:abstract )?class (\w+)",
        r"export (?:interface|type|enum) (\w+)",
        r"export const (\w+)\s*=",
    ],
    ".tsx": [r"export (?:default )?function (\w+)", r"export const (\w+)\s*="],
    ".js": [
        r"export (?:default )?(?:async )?function (\w+)",
        r"export class (\w+)",
        r"function (\w+)\(",
    ],
    ".go": [r"func (\w+)\(", r"type (\w+) (?:struct|interface)"],
    ".rs": [r"pub (?:async )?fn (\w+)", r"pub (?:struct|enum|trait) (\w+)"],
    ".java": [r"public (?:final |abstract )*(?:class|interface|enum|record) (\w+)"],
    ".kt": [r"(?:data |sealed |open |abstract )?class (\w+)", r"fun (\w+)\("],
    ".cs": [
        r"\s*public (?:sealed |static |abstract |partial )*(?:class|interface|enum|record|struct) (\w+)"
    ],
    ".rb": [r"\s*class (\w+)", r"\s*module (\w+)"],
    ".php": [r"(?:final |abstract )?class (\w+)", r"interface (\w+)"],
    ".swift": [r"(?:public |final )*(?:class|struct|enum|protocol) (\w+)"],
}
_GO_METHOD = re.compile(r"func \(\w+ \*?(\w+)(?:\[[^\]]*\])?\) (\w+)\(")
_PY_CLASS = re.compile(r"class (\w+)")
_PY_METHOD = re.compile(r" {4}(?:async\s+)?def ([a-z]\w+)\(")
_ENV_READS = [
    r"process\.env\.([A-Z][A-Z0-9_]{3,})",
    r"os\.environ(?:\.get)?\(?\[?[\"']([A-Z][A-Z0-9_]{3,})[\"']",
    r"os\.Getenv\(\"([A-Z][A-Z0-9_]{3,})\"\)",
    r"env::var\(\"([A-Z][A-Z0-9_]{3,})\"\)",
]
_OPTIONS = [
    r"add_argument\(\s*[\"'](--[a-z][a-z0-9-]+)[\"']",
    r"@click\.option\(\s*[\"'](--[a-z][a-z0-9-]+)[\"']",
]
_SKIP = ("vendor/", "node_modules/", "third_party/", "test")


@dataclass(frozen=True)
class Fact:
    """One generated fact: its words and, for a definition, the citation it carries."""

    name: str
    body: str
    path: str | None = None
    line: int | None = None
    symbol: str | None = None


def definitions(text: str, suffix: str) -> list[tuple[int, str]]:
    """(line, name) of what the patterns find defined in a code file's text; a Python
    method and a Go method as `Type.method`."""
    found = []
    patterns = [re.compile(p) for p in _DEFINITIONS.get(suffix, [])]
    owner = None
    for number, line in enumerate(text.splitlines(), 1):
        found += [(number, m.group(1)) for p in patterns if (m := p.match(line))]
        if suffix == ".go" and (m := _GO_METHOD.match(line)):
            found.append((number, f"{m.group(1)}.{m.group(2)}"))
        if suffix == ".py":
            if m := _PY_CLASS.match(line):
                owner = m.group(1)
            elif line and not line[0].isspace():
                owner = None
            elif owner and (m := _PY_METHOD.match(line)) and not m.group(1).startswith("_"):
                found.append((number, f"{owner}.{m.group(1)}"))
    return found


def commands(read: Any, files: list[str], rnd: random.Random) -> list[str]:
    """Sentences naming package scripts, Make targets, just recipes, variables the code
    reads and options it defines, as an instruction file states them."""
    out = []
    manager = "pnpm" if "pnpm-lock.yaml" in files else "yarn" if "yarn.lock" in files else "npm"
    for path in [f for f in files if f.rsplit("/", 1)[-1] == "package.json" and f.count("/") <= 2]:
        try:
            scripts = list((json.loads(read(path)).get("scripts") or {}).keys())
        except (ValueError, AttributeError):
            continue
        scripts = [s for s in scripts if re.fullmatch(r"[\w:.-]+", s)]
        rnd.shuffle(scripts)
        folder = path.rpartition("/")[0]
        for script in scripts[:2]:
            run = f"pnpm {script}" if manager == "pnpm" else f"{manager} run {script}"
            where = f"cd {folder} && " if folder else ""
            out.append(f"Run `{where}{run}` to {script.replace(':', ' ')}.")
    for path in [f for f in files if f.rsplit("/", 1)[-1] in ("Makefile", "justfile")]:
        if path.count("/") > 1:
            continue
        tool = "make" if path.endswith("Makefile") else "just"
        targets = re.findall(r"(?m)^([a-z][\w-]*):(?!=)", read(path))
        rnd.shuffle(targets)
        folder = path.rpartition("/")[0]
        into = f"-C {folder} " if folder and tool == "make" else ""
        if folder and tool == "just":
            continue
        out += [f"Use `{tool} {into}{target}` for {target}." for target in targets[:3]]
    code = [f for f in files if Path(f).suffix in (".py", ".ts", ".js", ".go", ".rs")]
    code = [f for f in code if not any(s in f for s in _SKIP)]
    rnd.shuffle(code)
    variables: set[str] = set()
    options: set[str] = set()
    for path in code[:150]:
        text = read(path)
        for pattern in _ENV_READS:
            variables.update(re.findall(pattern, text))
        for pattern in _OPTIONS:
            options.update(re.findall(pattern, text))
    out += [f"Set `{v}` to configure it." for v in sorted(variables)[:4]]
    out += [f"Pass `{o}` when needed." for o in sorted(options)[:4]]
    return out


def facts_of(mirror: Path, commit: str, per_repo: int) -> list[Fact]:
    """The facts a repository's tree at `commit` gives (seeded by the mirror's path, so a
    run is repeatable)."""

    def read(path: str) -> str:
        try:
            return git(mirror, "show", f"{commit}:{path}").decode("utf-8", "replace")
        except TreeError:
            return ""  # a file the snapshot lacks (4 MiB or more)

    listing = git(mirror, "ls-tree", "-r", "--name-only", "-z", commit).decode("utf-8", "replace")
    files = [f for f in listing.split("\0") if f]
    rnd = random.Random(str(mirror.parent.name))
    code = [f for f in files if Path(f).suffix in _DEFINITIONS and not any(s in f for s in _SKIP)]
    rnd.shuffle(code)
    out: list[Fact] = []
    for path in code[: per_repo * 4]:
        found = definitions(read(path), Path(path).suffix)
        if found:
            line, symbol = rnd.choice(found)
            body = f"`{symbol}` is defined in `{path}`."
            k = len(out) // 2
            out += [
                Fact(f"c-{k:03d}", body, path, line, symbol),
                Fact(f"n-{k:03d}", body),
            ]
        if len(out) >= 2 * per_repo:
            break
    out += [Fact(f"p-{k:03d}", body) for k, body in enumerate(commands(read, files, rnd))]
    return out


def _memory(fact: Fact, at: str) -> str:
    q = json.dumps
    cited = []
    if fact.path is not None:
        cited = ["citations:", f"- path: {q(fact.path)}", f"  line: {fact.line}"]
        cited.append(f"  symbol: {q(fact.symbol)}")
    return "\n".join(
        [
            "---",
            f"name: {fact.name}",
            f"description: {q('generated fact ' + fact.name)}",
            "type: project",
            f"subject: {q('Code' if fact.path or fact.name.startswith('n-') else 'Commands')}",
            f"reason: {q('Generated from the tree it is verified in')}",
            *cited,
            "status: active",
            f"created: {q(at)}",
            f"updated: {q(at)}",
            "---",
            fact.body,
            "",
        ]
    )


def probe(repo: str, mirror: Path, orch: Orch, per_repo: int) -> dict[str, Any]:
    """Every fact of the repository verified at its HEAD: counts and the ones not `ok`."""
    commit = git(mirror, "rev-parse", "HEAD").decode().strip()
    facts = facts_of(mirror, commit, per_repo)
    counts = dict(Counter(_family(f.name) for f in facts))
    if not facts:
        return {"repo": repo, "facts": 0, "counts": counts, "not_ok": []}
    at = commit_date(mirror, commit)
    with tempfile.TemporaryDirectory(prefix="probe-") as tmp:
        tree = materialise(mirror, commit, Path(tmp) / "tree")
        done = orch.run(tree.root, "init")
        if done.returncode != 0:
            raise OrchError(f"orch init in {repo}: {done.stderr.strip()[-200:]}")
        folder = tree.root / "memories" / "repo"
        folder.mkdir(parents=True, exist_ok=True)
        for fact in facts:
            (folder / f"{fact.name}.md").write_text(_memory(fact, at), encoding="utf-8")
        commit_all(tree, "probe: generated facts as orch memories")
        report = orch.json(tree.root, "memory", "verify", "--json")
    by_name = {f.name: f for f in facts}
    wrong = []
    for result in report.get("results", []):
        generated = by_name.get(result.get("name", ""))
        if generated is not None and result["result"] != "ok":
            reasons = "; ".join(f["reason"] for f in result.get("failures", []))
            wrong.append(
                {
                    "name": generated.name,
                    "result": result["result"],
                    "words": generated.body,
                    "reason": reasons,
                }
            )
    return {"repo": repo, "facts": len(facts), "counts": counts, "not_ok": wrong}


def _family(name: str) -> str:
    return {"c": "cited definitions", "n": "definitions", "p": "commands and names"}[name[0]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.realmem.probe", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--repo", action="append", default=[], help="only this repository")
    parser.add_argument("--orch", type=Path, default=Path(sys.executable).with_name("orch"))
    parser.add_argument("--details", action="store_true", help="print each fact not ok")
    parser.add_argument("--per-repo", type=int, default=15, help="definitions per repository")
    args = parser.parse_args(argv)
    repos = args.repo or sorted({f.repo for f in owncommit.load()})
    mirrors = {r: owncommit.File(r, "", "").git_dir(args.mirrors) for r in repos}
    missing = [r for r, m in mirrors.items() if not (m / "objects").is_dir()]
    if missing:
        print(f"probe: {len(missing)} mirrors missing; fetch these:", file=sys.stderr)
        for repo in missing:
            print(f"  github:{repo}", file=sys.stderr)
        return 2
    orch = Orch(args.orch)
    results = []
    for repo, mirror in mirrors.items():
        try:
            results.append(probe(repo, mirror, orch, args.per_repo))
        except (OrchError, TreeError) as exc:
            print(f"probe: {exc}", file=sys.stderr)
            return 1
        if not args.json:
            found = results[-1]
            print(f"{repo}: {found['facts']} facts, {len(found['not_ok'])} not ok", flush=True)
            for wrong in found["not_ok"] if args.details else []:
                print(f"   {wrong['result']} {wrong['words']} :: {wrong['reason'][:200]}")
    summary = _summary(results)
    if args.json:
        print(
            json.dumps(
                {"repositories": len(results), "families": summary, "results": results}, indent=1
            )
        )
    else:
        print(f"{len(results)} repositories")
        for family, (n, wrong) in summary.items():
            print(f"  {family}: {n} facts, {wrong} not ok")
    return 0


def _summary(results: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per family: how many facts, how many not ok."""
    out: dict[str, list[int]] = {}
    for found in results:
        for name, count in found.get("counts", {}).items():
            out.setdefault(name, [0, 0])[0] += count
        for wrong in found["not_ok"]:
            out.setdefault(_family(wrong["name"]), [0, 0])[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


if __name__ == "__main__":
    sys.exit(main())
