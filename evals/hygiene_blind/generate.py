"""Build the blind labelled set for `orch memory audit`.

Run: `python -m evals.hygiene_blind.generate DEST [--seed N]` (from the repository root),
or `python -m evals.hygiene --set blind`. It writes real git repositories under DEST, each
with a `labels.json` (git-ignored through `.git/info/exclude`):

- three domain repositories (`shopfront`: a Python web service with a TypeScript client;
  `tidewater`: a Python/SQL data pipeline with an Airflow DAG; `pakt`: a Go command-line
  tool), each with a history a team would have: code, memories written against it, a
  refactor that renames, moves and deletes things, more memories, the index, NOTES.md;
- small repositories that vary MEMORY.md and NOTES.md (an index that drifted from the
  files in each of the ways a hand edit or a skipped `orch memory index` leaves it, an
  index over 200 lines, NOTES.md over 20 lines or holding task progress) next to clean
  ones (an index regenerated after a supersede, an empty store, a broken memory file the
  index rightly leaves out).

The set is data beside this file (see model.py and README.md): each domain's code as
fixture trees and its memories and labels in YAML; `set.yaml` holds the small repositories.
The labels come from the rules users are promised, written without reading the audit's
code: planted findings in `expected` (scored), clean look-alikes in `lookalikes` (kept for
reading the errors: a look-alike reported is a false positive in the score anyway).
The seed picks among wordings of the planted and look-alike facts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from evals.hygiene_blind.model import Domain, Mem, Store
from orchestrator.store.index import render_index
from orchestrator.store.layout import Layout
from orchestrator.store.notes import SECTIONS
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.scaffold import scaffold

HERE = Path(__file__).resolve().parent
SET = yaml.safe_load((HERE / "set.yaml").read_text(encoding="utf-8"))
TASKS: tuple[str, ...] = tuple(SET["tasks"])
NEWEST = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
KEY_ORDER = (
    "name",
    "description",
    "type",
    "subject",
    "reason",
    "citations",
    "status",
    "supersedes",
    "superseded_by",
    "created",
    "updated",
    "source",
    "verified",
)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Dana Reyes",
    "GIT_AUTHOR_EMAIL": "dana@example.test",
    "GIT_COMMITTER_NAME": "Dana Reyes",
    "GIT_COMMITTER_EMAIL": "dana@example.test",
}


# ----------------------------------------------------------------------------- git


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD")


def write_tree(root: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        path = root / rel
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
        if rel.endswith(".sh"):
            path.chmod(0o755)


# ----------------------------------------------------------------------------- memory files


def _stamp(age: int, rng: random.Random) -> str:
    when = NEWEST - timedelta(days=age, minutes=rng.randrange(0, 600))
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _citation(entry: Any) -> dict[str, Any]:
    if isinstance(entry, str):
        return {"path": entry}
    out: dict[str, Any] = {"path": entry[0]}
    if len(entry) > 1:
        out["line"] = entry[1]
    if len(entry) > 2:
        out["symbol"] = entry[2]
    if len(entry) == 3 and entry[1] is None and entry[2] is not None:
        del out["line"]  # (path, None, symbol): no line
    return out


def _dump(key: str, value: Any) -> str:
    return yaml.safe_dump(
        {key: value}, sort_keys=False, allow_unicode=True, default_flow_style=False, width=4096
    )


def render_memory(m: Mem, s: Store, first_commit: str) -> tuple[str, str]:
    """(file text, the fact as written) for a memory that loads."""
    fact = s.pick(m.fact)
    fm: dict[str, Any] = {"name": m.name, "description": m.description, "type": m.type}
    if m.subject is not None:
        fm["subject"] = m.subject
    if m.reason is not None:
        fm["reason"] = m.reason
    if m.cite:
        fm["citations"] = [_citation(c) for c in m.cite]
    created = _stamp(m.age, s.rng)
    fm["created"] = created
    fm["updated"] = created
    if m.batch == 1 or s.rng.random() < 0.5:
        fm["source"] = {"task": s.rng.choice(TASKS), "phase": s.rng.randint(1, 4)}
    if m.record_verified:
        fm["verified"] = {"commit": first_commit, "at": created, "result": "ok"}
    fm.update(m.fm)
    for key in m.omit:
        fm.pop(key, None)
    ordered = [k for k in KEY_ORDER if k in fm] + [k for k in fm if k not in KEY_ORDER]

    parts: list[str] = []
    for key in ordered:
        value = fm[key]
        if m.style in ("flow",) and key == "citations" and value:
            parts.append("# citations checked by hand\n")
            flow = yaml.safe_dump(value, default_flow_style=True, width=4096).strip()
            parts.append(f"citations: {flow}\n")
        elif key in ("source", "verified") and isinstance(value, dict):
            flow = yaml.safe_dump(value, default_flow_style=True, width=4096).strip()
            parts.append(f"{key}: {flow}\n")
        elif m.style == "folded" and key == "description":
            words = value.split()
            half = len(words) // 2
            parts.append(
                f"description: >-\n  {' '.join(words[:half])}\n  {' '.join(words[half:])}\n"
            )
        elif key == "created" and m.style == "flow":
            parts.append(f"created: {value}  # unquoted timestamp\n")
        else:
            parts.append(_dump(key, value))
    body = fact
    if m.more:
        body = f"{fact}\n\n{m.more}" if fact.strip() else m.more
    fence_open, fence_close = ("--- ", "---  ") if m.style == "fence-space" else ("---", "---")
    text = (
        f"{fence_open}\n{''.join(parts)}{fence_close}\n{body}\n"
        if body
        else f"{fence_open}\n{''.join(parts)}{fence_close}\n"
    )
    if "crlf" in m.style:
        text = text.replace("\n", "\r\n")
    if "bom" in m.style:
        text = "\ufeff" + text
    return text, fact


# ----------------------------------------------------------------------------- notes and index


def render_notes(items: list[tuple[str, str, bool]]) -> tuple[str, list[int], list[int]]:
    """NOTES.md text, and the line numbers (1-based) of the items that record task progress
    and of those that do not."""
    lines = ["# NOTES"]
    progress: list[int] = []
    other: list[int] = []
    for key, title in zip(("objective", "blockers", "pending"), SECTIONS, strict=True):
        lines += ["", f"## {title}"]
        mine = [(text, flag) for section, text, flag in items if section == key]
        for text, flag in mine or [("none", False)]:
            lines.append(f"- {text}")
            (progress if flag else other).append(len(lines))
    return "\n".join(lines) + "\n", progress, other


def _notes_labels(built: Built, items: list[tuple[str, str, bool]], root: Path) -> None:
    notes, progress, other = render_notes(items)
    (root / "NOTES.md").write_text(notes, encoding="utf-8")
    built.expected += [{"kind": "notes_style", "line": n} for n in progress]
    built.lookalikes += [{"kind": "notes_style", "line": n} for n in other]
    if notes.count("\n") > 20:
        built.expected.append({"kind": "notes_style", "line": "length"})
    else:
        built.lookalikes.append({"kind": "notes_style", "line": "length"})


def index_text(root: Path) -> str:
    loaded = RepoMemoryStore(Layout(root)).load_all()
    return render_index(loaded.memories)


# ----------------------------------------------------------------------------- building


@dataclass
class Built:
    root: Path
    expected: list[dict[str, Any]] = field(default_factory=list)
    lookalikes: list[dict[str, Any]] = field(default_factory=list)

    def save(self) -> None:
        (self.root / "labels.json").write_text(
            json.dumps({"v": 1, "expected": self.expected, "lookalikes": self.lookalikes}, indent=1)
            + "\n",
            encoding="utf-8",
        )
        exclude = self.root / ".git" / "info" / "exclude"
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a", encoding="utf-8") as f:
            f.write("labels.json\n")


def _init(root: Path, code: dict[str, str]) -> str:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    write_tree(root, dict(code))
    scaffold(Layout(root))
    return commit(root, "Start the project")


def _write_memories(root: Path, s: Store, mems: list[Mem], first_commit: str) -> None:
    folder = root / "memories" / "repo"
    for m in mems:
        text = m.raw if m.raw is not None else render_memory(m, s, first_commit)[0]
        (folder / f"{m.name}.md").write_text(text, encoding="utf-8", newline="")


def _check_claims(root: Path, s: Store) -> None:
    """Guard against mistakes in the set itself: a memory not labelled stale must cite
    files that exist, within their length."""
    stale = {e["memory"] for e in s.expected if e["kind"] in ("stale_citation", "moved_citation")}
    for m in s.mems:
        if m.raw is not None or m.name in stale:
            continue
        cites = [_citation(c) for c in m.cite] + list(m.fm.get("citations") or [])
        for c in cites:
            path = root / c["path"]
            if not path.exists():
                raise AssertionError(f"{root.name}/{m.name}: cites missing {c['path']}")
            line = c.get("line")
            if line is not None:
                count = len(path.read_text(encoding="utf-8").splitlines())
                if line > count:
                    raise AssertionError(f"{root.name}/{m.name}: line {line} > {count}")


def build_domain(dest: Path, domain: Domain, rng: random.Random, *, drift: str | None) -> Built:
    root = dest / domain.name
    first = _init(root, domain.before)
    s = Store(rng)
    domain.describe(s)

    _write_memories(root, s, [m for m in s.mems if m.batch == 1], first)
    commit(root, "Save what the first tasks learned")
    write_tree(root, domain.after)
    commit(root, "Refactor: rename, move and delete what the first release outgrew")
    _write_memories(root, s, [m for m in s.mems if m.batch == 2], first)
    _check_claims(root, s)

    built = Built(root, list(s.expected), list(s.lookalikes))
    _notes_labels(built, domain.notes, root)
    index = index_text(root)
    if drift:
        index = DRIFTS[drift](root, index, s)
        built.expected.append({"kind": "index_drift", "note": drift})
    else:
        built.lookalikes.append({"kind": "index_drift", "note": "regenerated"})
    built.lookalikes.append({"kind": "index_oversize", "note": "generated index"})
    (root / "memories" / "repo" / "MEMORY.md").write_text(index, encoding="utf-8")
    commit(root, "Save what the later tasks learned")
    built.save()
    return built


# How an index drifts from the files. Each takes (root, index text, store) and returns the
# MEMORY.md text to write (it may also change memory files after the index was rendered).


def _drift_added(root: Path, index: str, s: Store) -> str:
    m = Mem.from_record(SET["index_skipped"])
    s.add(m)
    (root / "memories" / "repo" / f"{m.name}.md").write_text(render_memory(m, s, "")[0])
    return index


def _drift_deleted(root: Path, index: str, s: Store) -> str:
    victim = _plain(s)[0]
    (root / "memories" / "repo" / f"{victim.name}.md").unlink()
    s.mems.remove(victim)
    return index


def _drift_description(root: Path, index: str, s: Store) -> str:
    victim = _plain(s)[1]
    _edit_key(root, victim.name, "description", f"{victim.description} (revised by hand)")
    return index


def _edit_key(root: Path, name: str, key: str, value: Any) -> None:
    """Change one top-level frontmatter key of a memory file, as a hand edit would."""
    path = root / "memories" / "repo" / f"{name}.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    new = _dump(key, value).rstrip("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith(f"{key}:")), None)
    if at is None:
        at = next(i for i, line in enumerate(lines) if line.startswith("created:"))
        lines.insert(at, new)
    else:
        lines[at] = new
    path.write_text("\n".join(lines), encoding="utf-8")


def _drift_hand_note(root: Path, index: str, s: Store) -> str:
    lines = index.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("- ["))
    lines.insert(at, "- Ask Dana before touching anything under payments")
    return "\n".join(lines) + "\n"


def _drift_superseded_by_hand(root: Path, index: str, s: Store) -> str:
    victim, successor = _plain(s)[2], _plain(s)[3]
    _edit_key(root, victim.name, "status", "superseded")
    _edit_key(root, victim.name, "superseded_by", successor.name)
    return index


def _drift_missing(root: Path, index: str, s: Store) -> str:
    return ""  # written empty, then removed by the caller


def _drift_reordered(root: Path, index: str, s: Store) -> str:
    lines = index.splitlines()
    entries = [i for i, line in enumerate(lines) if line.startswith("- [")]
    first, second = entries[0], entries[1]
    lines[first], lines[second] = lines[second], lines[first]
    return "\n".join(lines) + "\n"


def _oversize(extra: int) -> Any:
    def apply(root: Path, index: str, s: Store) -> str:
        lines = index.rstrip("\n").splitlines()
        lines += ["", "## Team notes (kept here by hand)"]
        n = 0
        while len(lines) < 200 + extra:
            n += 1
            lines.append(f"- Week {n}: reviewed the memory list with the team")
        return "\n".join(lines) + "\n"

    return apply


DRIFTS: dict[str, Any] = {
    "added": _drift_added,
    "deleted": _drift_deleted,
    "description": _drift_description,
    "hand_note": _drift_hand_note,
    "superseded_by_hand": _drift_superseded_by_hand,
    "missing": _drift_missing,
    "reordered": _drift_reordered,
    "oversize_205": _oversize(5),
    "oversize_260": _oversize(60),
}


def _plain(s: Store) -> list[Mem]:
    return [m for m in s.mems if m.raw is None and m.type in ("project", "reference")]


def build_small(
    dest: Path, n: int, spec: dict[str, Any], domain: Domain, rng: random.Random
) -> Built:
    """A small repository: `domain`'s final code and ordinary memories, the MEMORY.md and
    NOTES.md that `spec` (an entry of `small` in set.yaml) describes."""
    root = dest / f"{domain.name}-ops-{n}"
    first = _init(root, domain.final())
    s = Store(rng)
    if not spec.get("empty"):
        domain.add_ordinary(s)
    built_extra: list[dict[str, Any]] = []
    if spec.get("supersede"):
        old = s.mems[0]
        new = Mem(
            old.name + "-v2",
            old.type,
            old.description,
            f"{s.pick(old.fact)} This holds for every environment.",
            subject=old.subject,
            reason=old.reason,
            cite=old.cite,
            age=0,
            fm={"supersedes": [old.name]},
        )
        old.fm = {**old.fm, "status": "superseded", "superseded_by": new.name}
        s.add(new)
    if spec.get("broken"):
        broken = Mem.from_record(SET["half_written"]["memory"])
        s.add(broken)
        built_extra.append(
            {"kind": "invalid_file", "memory": broken.name, "note": SET["half_written"]["note"]}
        )
    _write_memories(root, s, s.mems, first)
    built = Built(root, list(s.expected) + built_extra, list(s.lookalikes))
    index = index_text(root)
    kind = spec.get("index")
    if kind:
        index = DRIFTS[kind](root, index, s)
        built.expected.append({"kind": "index_drift", "note": kind})
    else:
        built.lookalikes.append({"kind": "index_drift", "note": "regenerated"})
    if kind and kind.startswith("oversize"):
        built.expected.append({"kind": "index_oversize", "note": kind})
    else:
        built.lookalikes.append({"kind": "index_oversize", "note": "within 200 lines"})
    index_path = root / "memories" / "repo" / "MEMORY.md"
    if kind == "missing":
        index_path.unlink()
    else:
        index_path.write_text(index, encoding="utf-8")
    _notes_labels(built, [(a, b, c) for a, b, c in spec["notes"]], root)
    commit(root, "Keep the memory store")
    built.save()
    return built


def build(dest: Path, seed: int) -> list[Path]:
    """Write the blind set under `dest` (which must not exist); return its repositories."""
    rng = random.Random(seed)
    domains = {name: Domain.load(HERE / name) for name in SET["domains"]}
    dest.mkdir(parents=True)
    repos: list[Built] = []
    for domain in domains.values():
        repos.append(build_domain(dest, domain, rng, drift=SET["drift"].get(domain.name)))
    for n, spec in enumerate(SET["small"], start=1):
        repos.append(build_small(dest, n, spec, domains[spec["domain"]], rng))
    return [b.root for b in repos]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--force", action="store_true", help="replace DEST if it exists")
    args = parser.parse_args()
    if args.dest.exists():
        if not args.force:
            parser.error(f"{args.dest} exists (--force replaces it)")
        shutil.rmtree(args.dest)
    for root in build(args.dest, args.seed):
        labels = json.loads((root / "labels.json").read_text())
        print(f"{root}: {len(labels['expected'])} planted, {len(labels['lookalikes'])} look-alikes")


if __name__ == "__main__":
    main()
