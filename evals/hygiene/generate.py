"""A labelled memory-hygiene set: real git repositories with planted pollution.

`build(out, seed)` creates, under `out/`:

- `main/`: a git repository with Python, JavaScript and shell code (names drawn from word
  pools by the seed), then a memory store of clean memories and planted pollution of every
  memory-level kind, each next to clean look-alikes:
  near-duplicates worded differently (vs the same template about another thing, and the
  same subject on another aspect), contradictions (vs superseded chains, similar subjects,
  compatible facts), stale claims from renamed functions and methods, deleted files,
  removed flags and short files (vs claims on what still exists, prefixes of renamed
  names), save-exclusion violations (vs durable rules that mention commits, branches or
  edits), secrets (vs environment-variable references, placeholders, commit ids), invalid
  files and minimal files with missing fields. The code changes (renames, deletions) are
  committed after the memories, as happens in real repositories.
- `repo-<n>/`: small repositories for the repository-level kinds: an index that drifted
  or not, an index over 200 lines or a long but correct one, NOTES.md over 20 lines or
  holding progress lines, or tidy.

Each repository holds `labels.json`: `{"v": 1, "expected": [{"kind", "memory"?, "pair"?,
"line"?}]}`; the scorer in `evals/hygiene/suite.py` compares it with the audit.

Run: `python -m evals.hygiene.generate --seed 7 --out /tmp/hygiene`.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from orchestrator.store.index import render_index
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory, serialize_memory
from orchestrator.store.notes import Notes, render_notes
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.scaffold import scaffold

WORDS = yaml.safe_load((Path(__file__).with_name("words.yaml")).read_text(encoding="utf-8"))
VERBS: list[str] = WORDS["verbs"]
NOUNS: list[str] = WORDS["nouns"]
THINGS: list[str] = WORDS["things"]
FLAG_WORDS: list[str] = WORDS["flag_words"]
# (fact, the same fact worded differently, aspect): near-duplicate templates
NEAR_DUPLICATES = [(t["fact"], t["reworded"], t["aspect"]) for t in WORDS["near_duplicates"]]
# (fact, a fact that contradicts it, aspect): contradiction templates
CONTRADICTIONS = [(t["fact"], t["contradiction"], t["aspect"]) for t in WORDS["contradictions"]]
DATES = [f"2026-09-0{d}T10:00:00Z" for d in range(1, 10)]


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def init_repo(root: Path) -> Layout:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "hygiene eval")
    git(root, "config", "user.email", "eval@orch.invalid")
    layout = Layout(root)
    scaffold(layout)
    return layout


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", message)
    return git(root, "rev-parse", "HEAD")


@dataclass
class Module:
    path: str
    cls: str
    methods: list[str]
    functions: list[str]
    constant: str
    value: int

    def source(self) -> str:
        lines = [f'"""{self.path}: generated for the hygiene evaluation."""', ""]
        lines += [f"{self.constant} = {self.value}", "", ""]
        lines += [f"class {self.cls}:", "    def __init__(self):", "        self.items = {}", ""]
        for m in self.methods:
            lines += [f"    def {m}(self, key):", "        return self.items.get(key)", ""]
        lines.append("")
        for f in self.functions:
            lines += [f"def {f}(value):", "    return value", "", ""]
        return "\n".join(lines).rstrip() + "\n"


@dataclass
class Set:
    """The memories and labels of one repository."""

    memories: list[Memory] = field(default_factory=list)
    raw_files: dict[str, str] = field(default_factory=dict)  # name -> text (invalid files)
    expected: list[dict[str, Any]] = field(default_factory=list)

    def add(self, memory: Memory) -> Memory:
        self.memories.append(memory)
        return memory

    def label(self, kind: str, **what: Any) -> None:
        self.expected.append({"kind": kind, **what})


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.used_names: set[str] = set()
        self.used_subjects: set[str] = set()
        self.counter = 0

    # names -------------------------------------------------------------------------------
    def ident(self) -> str:
        while True:
            name = f"{self.rng.choice(VERBS)}_{self.rng.choice(NOUNS)}"
            if name not in self.used_names:
                self.used_names.add(name)
                return name

    def camel(self) -> str:
        while True:
            a, b = self.rng.sample(NOUNS, 2)
            name = a.capitalize() + b.capitalize()
            if name not in self.used_names:
                self.used_names.add(name)
                return name

    def subject(self, *words: str) -> str:
        base = " ".join(words)
        subject, n = base, 2
        while subject in self.used_subjects:
            subject = f"{base} {self.rng.choice(NOUNS)}"
            n += 1
        self.used_subjects.add(subject)
        return subject

    def memory_name(self, subject: str) -> str:
        self.counter += 1
        return "-".join(subject.split())[:50] + f"-{self.counter}"

    def memory(
        self,
        subject: str,
        fact: str,
        *,
        kind: str = "reference",
        citations: tuple[Citation, ...] = (),
        date: str | None = None,
        reason: str | None = None,
        **extra: Any,
    ) -> Memory:
        date = date or self.rng.choice(DATES)
        return Memory(
            name=self.memory_name(subject),
            description=fact.split(". ")[0][:120],
            type=kind,
            body=fact + "\n\n**Why:** it keeps later tasks from rediscovering it.\n",
            subject=subject,
            reason=reason or "later tasks depend on it",
            citations=citations,
            created=date,
            updated=date,
            **extra,
        )


def _write_memory_files(layout: Layout, s: Set) -> None:
    for m in s.memories:
        (layout.repo_memories / f"{m.name}.md").write_text(serialize_memory(m), encoding="utf-8")
    for name, text in s.raw_files.items():
        (layout.repo_memories / f"{name}.md").write_text(text, encoding="utf-8")


# the main repository ---------------------------------------------------------------------


def build_main(root: Path, g: Generator) -> dict[str, Any]:
    rng = g.rng
    layout = init_repo(root)
    modules = []
    for i in range(6):
        noun = NOUNS[(i * 3 + rng.randrange(len(NOUNS))) % len(NOUNS)]
        modules.append(
            Module(
                path=f"shop/{noun}_{i}.py",
                cls=g.camel(),
                methods=[g.ident() for _ in range(4)],
                functions=[g.ident() for _ in range(5)],
                constant=f"{noun.upper()}_{rng.choice(['TIMEOUT', 'LIMIT', 'RETRIES', 'SIZE'])}",
                value=rng.randrange(2, 500),
            )
        )
    flags = rng.sample(FLAG_WORDS, 8)
    (root / "shop").mkdir()
    (root / "shop" / "__init__.py").write_text('"""The shop package."""\n')
    for m in modules:
        (root / m.path).write_text(m.source())
    cli_lines = ["import argparse", "", "", "def main():", "    parser = argparse.ArgumentParser()"]
    cli_lines += [f'    parser.add_argument("--{f}")' for f in flags]
    cli_lines += ["    return parser.parse_args()", ""]
    (root / "shop" / "cli.py").write_text("\n".join(cli_lines))
    js_funcs = [g.ident().replace("_", "") for _ in range(4)]
    (root / "web").mkdir()
    (root / "web" / "app.js").write_text(
        "".join(f"function {f}(x) {{\n  return x;\n}}\n\n" for f in js_funcs)
    )
    (root / "scripts").mkdir()
    (root / "scripts" / "deploy.sh").write_text("#!/bin/sh\nset -eu\necho deploy\n")
    (root / "docs").mkdir()
    (root / "docs" / "old-guide.md").write_text("# Old guide\n\nline\n" * 5)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "shop"\nversion = "0.1"\n\n[project.scripts]\nshop = "shop.cli:main"\n'
    )
    with (root / ".gitignore").open("a") as fh:
        fh.write("# build outputs\nsite/\ndist/\n")
    first = commit(root, "code")

    s = Set()
    cite = Citation
    # clean memories ----------------------------------------------------------------------
    for m in modules:
        thing = m.path.split("/")[1].split("_")[0]
        subj = g.subject(thing, "constant")
        s.add(
            g.memory(
                subj,
                f"`{m.constant}` in `{m.path}` is {m.value}; raise it only together with the "
                f"{thing} fixtures.",
                citations=(cite(m.path, 3, m.constant),),
            )
        )
        f = rng.choice(m.functions[:-1])
        subj = g.subject(thing, "entry point")
        s.add(
            g.memory(
                subj,
                f"Call `{f}()` before touching `{m.cls}` state: it validates its input.",
                citations=(cite(m.path, None, f),),
                kind="project",
            )
        )
        meth = rng.choice(m.methods[:-1])
        subj = g.subject(thing, "lookup")
        s.add(
            g.memory(
                subj,
                f"`{m.cls}.{meth}` returns None for unknown keys instead of raising.",
                citations=(cite(m.path, None, f"{m.cls}.{meth}"),),
            )
        )
    for f in rng.sample(flags[:-1], 3):
        subj = g.subject("cli", f.replace("-", " "), "flag")
        s.add(
            g.memory(
                subj,
                f"`shop --{f}` is accepted by the command line; pass it in CI runs.",
                citations=(cite("shop/cli.py"),),
            )
        )
    for f in js_funcs[:2]:
        subj = g.subject("frontend", f)
        s.add(
            g.memory(
                subj,
                f"The web client renders through `{f}()` in `web/app.js`; keep it pure.",
                citations=(cite("web/app.js", None, f),),
                kind="project",
            )
        )
    s.add(
        g.memory(
            g.subject("user", "review style"),
            "The user prefers small commits with one change each.",
            kind="user",
        )
    )
    s.add(
        g.memory(
            g.subject("mocking", "policy"),
            "Never mock the database in integration tests: a mocked run hid a broken migration.",
            kind="feedback",
        )
    )

    # near-duplicates worded differently ------------------------------------------------
    templates = rng.sample(NEAR_DUPLICATES, 5)
    things = rng.sample(THINGS, 10)
    for i, (a, b, aspect) in enumerate(templates):
        thing, other = things[2 * i], things[2 * i + 1]
        m = modules[i % len(modules)]
        values: dict[str, Any] = {
            "n": rng.randrange(5, 90),
            "const": m.constant,
            "path": m.path,
            "cmd": f"make {thing}-fixtures",
            "env": f"{thing.upper()}_URL",
        }
        subj = g.subject(thing, aspect)
        keep = s.add(
            g.memory(
                subj,
                a.format(thing=thing, **values),
                citations=(cite(m.path, 3, m.constant),),
                date="2026-09-05T10:00:00Z",
            )
        )
        worded = subj if rng.random() < 0.5 else f"{subj.split()[0]} {subj.split()[-1]}"
        dup = s.add(
            g.memory(
                worded,
                b.format(thing=thing, **values),
                citations=(cite(m.path),),
                date="2026-09-02T10:00:00Z",
            )
        )
        s.label("near_duplicate", pair=sorted([keep.name, dup.name]), keeper=keep.name)
        # look-alike: the same template about another thing, with other values
        other_values = {
            **values,
            "n": values["n"] + rng.randrange(3, 40),
            "cmd": f"make {other}-fixtures",
            "env": f"{other.upper()}_URL",
        }
        s.add(
            g.memory(
                g.subject(other, subj.split(" ", 1)[1]),
                a.format(thing=other, **other_values),
                citations=(cite(m.path, 3, m.constant),),
            )
        )

    # contradictions --------------------------------------------------------------------
    contradicting = rng.sample(CONTRADICTIONS, 5)
    things = rng.sample(THINGS, 10)
    for i, (a, b, aspect) in enumerate(contradicting):
        thing = things[i]
        n = rng.randrange(10, 60)
        vals: dict[str, Any] = {
            "n": n,
            "m": n + rng.randrange(5, 30),
            "c1": f"make deploy-{thing}",
            "c2": f"scripts/deploy.sh {thing}",
        }
        subj = g.subject(thing, aspect)
        x = s.add(
            g.memory(
                subj,
                a.format(thing=thing, **vals),
                kind="project",
                citations=(cite("scripts/deploy.sh"),),
            )
        )
        y = s.add(
            g.memory(
                subj,
                b.format(thing=thing, **vals),
                kind="project",
                citations=(cite("scripts/deploy.sh"),),
            )
        )
        s.label("contradiction", pair=sorted([x.name, y.name]))
        # look-alike 1: the same pair, but the newer supersedes the older
        other = things[5 + i]
        subj2 = g.subject(other, aspect)
        old = g.memory(
            subj2,
            a.format(thing=other, **vals),
            kind="project",
            citations=(cite("scripts/deploy.sh"),),
        )
        new = g.memory(
            subj2,
            b.format(thing=other, **vals),
            kind="project",
            citations=(cite("scripts/deploy.sh"),),
        )
        s.add(old.with_changes(status="superseded", superseded_by=new.name))
        s.add(new.with_changes(supersedes=(old.name,)))
        # look-alike 2: the same subject, a compatible fact about another aspect
        s.add(
            g.memory(
                subj,
                f"Changes to the {thing} {aspect} are announced in the team channel first.",
                kind="project",
                citations=(cite("scripts/deploy.sh"),),
            )
        )
        # look-alike 3: a similar subject with another value
        if a.format(thing=thing, **vals) == a.format(thing=thing, **{**vals, "n": 1, "c1": ""}):
            continue
        s.add(
            g.memory(
                g.subject(thing, aspect, "limit"),
                a.format(
                    thing=thing, **{**vals, "n": vals["m"] + 7, "c1": f"make release-{thing}"}
                ),
                kind="project",
                citations=(cite("scripts/deploy.sh"),),
            )
        )

    # stale claims ----------------------------------------------------------------------
    renames: list[tuple[str, str, str]] = []  # (path, old, new)
    stale_cases = []
    for i, m in enumerate(modules[:5]):
        old_fn = m.functions[-1]
        new_fn = g.ident()
        renames.append((m.path, old_fn, new_fn))
        thing = m.path.split("/")[1].split("_")[0]
        if i % 2 == 0:
            mem = g.memory(
                g.subject(thing, "normaliser"),
                f"`{old_fn}()` strips whitespace before {thing} values are compared.",
                citations=(cite(m.path, None, old_fn),),
            )
        else:
            mem = g.memory(
                g.subject(thing, "normaliser"),
                f"Values pass through `{old_fn}()` before they are stored.",
                citations=(cite(m.path),),
            )
        stale_cases.append(mem)
        # look-alike: a function of the same module that is not renamed
        keep_fn = m.functions[0]
        s.add(
            g.memory(
                g.subject(thing, "validator"),
                f"`{keep_fn}()` is the only place {thing} input is validated.",
                citations=(cite(m.path, None, keep_fn),),
                kind="project",
            )
        )
    # a renamed method
    m = modules[5]
    old_method, new_method = m.methods[-1], g.ident()
    renames.append((m.path, old_method, new_method))
    stale_cases.append(
        g.memory(
            g.subject("lookup", "fallback"),
            f"`{m.cls}.{old_method}` falls back to the default entry.",
            citations=(cite(m.path, None, f"{m.cls}.{old_method}"),),
        )
    )
    s.add(
        g.memory(
            g.subject("lookup", "default"),
            f"`{m.cls}.{m.methods[0]}` is safe to call before `{m.cls}` is loaded.",
            citations=(cite(m.path, None, f"{m.cls}.{m.methods[0]}"),),
            kind="project",
        )
    )
    # a deleted file, cited and named in the body
    stale_cases.append(
        g.memory(
            g.subject("legacy", "guide"),
            "The legacy setup steps are in `docs/old-guide.md`; follow them for the old cluster.",
            citations=(cite("docs/old-guide.md"),),
        )
    )
    stale_cases.append(
        g.memory(
            g.subject("legacy", "pages"),
            "Old invoices are rendered by `shop/legacy_render.py`, which is never imported.",
            citations=(cite("shop/__init__.py"),),
        )
    )
    # a line past the end of the file
    stale_cases.append(
        g.memory(
            g.subject("deploy", "script guard"),
            "`scripts/deploy.sh` stops at the first failing command because of `set -eu`.",
            citations=(cite("scripts/deploy.sh", 40),),
        )
    )
    s.add(
        g.memory(
            g.subject("deploy", "script shell"),
            "`scripts/deploy.sh` uses plain `sh`, not bash: keep it POSIX.",
            citations=(cite("scripts/deploy.sh", 2),),
            kind="project",
        )
    )
    # a removed flag
    removed_flag = flags[-1]
    stale_cases.append(
        g.memory(
            g.subject("cli", "removed", "flag"),
            f"Pass `--{removed_flag}` to skip the slow checks.",
            citations=(cite("shop/cli.py"),),
        )
    )
    # a renamed JavaScript function
    old_js, new_js = js_funcs[-1], g.ident().replace("_", "")
    stale_cases.append(
        g.memory(
            g.subject("frontend", "totals"),
            f"Cart totals are drawn by `{old_js}()` in `web/app.js`.",
            citations=(cite("web/app.js", None, old_js),),
        )
    )
    for mem in stale_cases:
        s.add(mem)
        s.label("stale_citation", memory=mem.name)

    # save exclusions --------------------------------------------------------------------
    sha = "".join(rng.choice("0123456789abcdef") for _ in range(7)) + "a1"
    excluded_facts = [
        f"Commit {sha} fixed the flaky {rng.choice(THINGS)} test by pinning the clock.",
        f"The branch `feature/{rng.choice(THINGS)}-limits` was merged into main after review.",
        f"The {rng.choice(THINGS)} retry fix landed in PR #{rng.randrange(10, 900)} and was reverted in {sha}.",
        f"Iteration {rng.randrange(2, 6)} passed at {rng.randrange(10, 23)}:{rng.randrange(10, 59)} after the fixture change.",
        f"File `{modules[0].path}` was modified to add the new {rng.choice(NOUNS)} field.",
        f"Phase {rng.randrange(1, 5)} is done; the {rng.choice(THINGS)} tests are still failing.",
        f"`{modules[1].functions[1]}` is defined in `{modules[1].path}`.",
        f"`{modules[2].path}` has {rng.randrange(20, 90)} lines.",
        f"`{modules[3].cls}` is a class in `{modules[3].path}`.".replace(
            " is a class in ", " is defined in "
        ),
    ]
    for i, fact in enumerate(excluded_facts):
        mem = s.add(
            g.memory(
                g.subject("history", str(i), rng.choice(NOUNS)),
                fact,
                kind="project",
                citations=(cite(modules[i % 6].path),),
            )
        )
        s.label("excluded_content", memory=mem.name)
    clean_lookalikes = [
        "Run `pre-commit run --all-files` before committing; CI runs the same hooks.",
        "Feature branches are rebased on `main` before review so the history stays linear.",
        "Commit messages follow the imperative mood; the changelog is built from them.",
        f"The {rng.choice(THINGS)} cache is rebuilt whenever `pyproject.toml` is modified.",
        f"`{modules[4].functions[2]}` lives in `{modules[4].path}` because it must not import the web layer.",
        "Never edit files in `scripts/` by hand after a release: regenerate them.",
    ]
    for i, fact in enumerate(clean_lookalikes):
        s.add(
            g.memory(
                g.subject("practice", str(i), rng.choice(NOUNS)),
                fact,
                kind="feedback" if i != 4 else "project",
                citations=(cite(modules[4].path),) if i == 4 else (),
            )
        )

    # secrets ----------------------------------------------------------------------------
    def token(
        n: int, alphabet: str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    ) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    secret_bodies = [
        f"The staging deploy uses the AWS key AKIA{token(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}.",
        f"CI pushes with the token ghp_{token(36)} stored in the runner.",
        f"The deploy key is:\n\n-----BEGIN OPENSSH PRIVATE KEY-----\n{token(64)}\n{token(64)}\n-----END OPENSSH PRIVATE KEY-----",
        f"The staging database password is {token(6).lower()}{rng.randrange(10, 99)}!.",
        f"Local runs read `ANTHROPIC_API_KEY=sk-ant-api03-{token(40)}` from `.env`.",
        f"The Slack webhook posts with xoxb-{rng.randrange(10**11, 10**12)}-{rng.randrange(10**12, 10**13)}-{token(24)}.",
    ]
    for i, body in enumerate(secret_bodies):
        mem = s.add(
            g.memory(
                g.subject("credential", str(i), rng.choice(NOUNS)),
                body,
                kind="project",
                citations=(cite("scripts/deploy.sh"),),
            )
        )
        s.label("secret", memory=mem.name)
    secret_lookalikes = [
        "The deploy token is read from `DEPLOY_TOKEN` in the CI environment, never from a file.",
        "Set `API_KEY=<your-key>` in `.env`; the example file shows the shape.",
        f"The release commit is pinned as {sha}{token(30, '0123456789abcdef')} in the lock file.",
        "Passwords are hashed with argon2 before they are stored.",
        f"Request ids look like {token(8).lower()}-{token(4).lower()}-{token(4).lower()} and are logged.",
    ]
    for i, body in enumerate(secret_lookalikes):
        s.add(
            g.memory(
                g.subject("credential", "handling", str(i)),
                body,
                kind="project",
                citations=(cite("scripts/deploy.sh"),),
            )
        )

    # invalid files and missing fields -----------------------------------------------------
    for name, text in WORDS["invalid_files"].items():
        s.raw_files[name] = text
        s.label("invalid_file", memory=name)
    for stem, (kind, desc, body) in WORDS["minimal_files"].items():
        s.raw_files[stem] = f"---\nname: {stem}\ndescription: {desc}\ntype: {kind}\n---\n{body}\n"
        s.label("missing_field", memory=stem)

    layout.repo_memories.mkdir(parents=True, exist_ok=True)
    _write_memory_files(layout, s)
    (layout.memory_index).write_text(render_index(RepoMemoryStore(layout).load_all().memories))
    commit(root, "memories")

    # the code moves on: renames, a deleted file, a removed flag, a shorter script
    for path, old_name, new_name in renames:
        p = root / path
        p.write_text(p.read_text().replace(f"def {old_name}(", f"def {new_name}("))
    (root / "docs" / "old-guide.md").unlink()
    cli = root / "shop" / "cli.py"
    cli.write_text(cli.read_text().replace(f'    parser.add_argument("--{removed_flag}")\n', ""))
    app = root / "web" / "app.js"
    app.write_text(app.read_text().replace(old_js, new_js))
    commit(root, "refactor")
    (root / "labels.json").write_text(json.dumps({"v": 1, "expected": s.expected}, indent=1))
    return {"first": first}


# repository-level kinds ------------------------------------------------------------------


def build_small(root: Path, g: Generator, n: int) -> None:
    rng = g.rng
    layout = init_repo(root)
    (root / "app.py").write_text("def main():\n    return 0\n")
    s = Set()
    count = rng.choice([4, 8, 12]) if n % 3 else 230
    for i in range(count):
        s.add(
            g.memory(
                g.subject("setting", str(n), str(i)),
                f"Setting {i} of part {n} defaults to {i * 7 + n}.",
                citations=(Citation("app.py", 1, "main"),),
            )
        )
    _write_memory_files(layout, s)
    index = render_index(RepoMemoryStore(layout).load_all().memories)
    scenario = n % 4
    if scenario == 1:  # drift: an entry removed by hand
        lines = index.splitlines()
        entries = [i for i, line in enumerate(lines) if line.startswith("- [")]
        del lines[rng.choice(entries)]
        index = "\n".join(lines) + "\n"
        s.label("index_drift")
    elif scenario == 2:  # drift: an entry for a deleted memory
        index = (
            index.rstrip("\n") + "\n- [gone-memory](gone-memory.md): A memory that was deleted\n"
        )
        s.label("index_drift")
    elif scenario == 3 and count > 200:  # hand-written index over the limit
        lines = [f"- [{m.name}]({m.name}.md): {m.description}" for m in s.memories]
        index = "# Memory index\n\n" + "\n".join(lines) + "\n"
        s.label("index_drift")
    if index.count("\n") > 200:
        s.label("index_oversize")
    layout.memory_index.write_text(index)

    pending = [
        f"review the {rng.choice(NOUNS)} migration",
        f"ask about the {rng.choice(THINGS)} quota",
    ]
    notes = Notes(objective=[f"add {rng.choice(THINGS)} rate limits"], blockers=[], pending=pending)
    text = render_notes(notes)
    style = rng.randrange(4)
    if style == 1:  # progress lines
        lines = text.splitlines()
        progress = [
            "- [x] phase 1 done",
            f"- iteration {rng.randrange(2, 5)} passed at {rng.randrange(10, 23)}:{rng.randrange(10, 59)}",
            "- tests passing ✅",
        ]
        insert_at = lines.index("## Pending") + 1
        for k, line in enumerate(rng.sample(progress, 2)):
            lines.insert(insert_at + k, line)
            s.label("notes_style", line=insert_at + k + 1)
        text = "\n".join(lines) + "\n"
    elif style == 2:  # over 20 lines
        extra = [
            f"- keep {rng.choice(NOUNS)} {k} in mind for the {rng.choice(THINGS)} work"
            for k in range(12)
        ]
        lines = text.splitlines()
        lines[lines.index("## Pending") + 1 : lines.index("## Pending") + 1] = extra
        text = "\n".join(lines) + "\n"
        s.label("notes_style", line="length")
    elif style == 3:  # long but within the limit, no progress
        notes.pending += [f"check the {rng.choice(NOUNS)} totals" for _ in range(8)]
        text = render_notes(notes)
    layout.notes.write_text(text)
    commit(root, "state")
    (root / "labels.json").write_text(json.dumps({"v": 1, "expected": s.expected}, indent=1))


def build(out: Path, seed: int, *, small: int = 12) -> list[Path]:
    """Build the set for `seed` under `out` (which must not exist); the repositories made."""
    out.mkdir(parents=True)
    g = Generator(seed)
    repos = [out / "main"]
    build_main(repos[0], g)
    for n in range(small):
        repos.append(out / f"repo-{n}")
        build_small(repos[-1], g, n)
    return repos


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    for repo in build(args.out, args.seed):
        print(repo)


if __name__ == "__main__":
    main()
