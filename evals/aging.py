"""Memory that ages: importance, decay and user cards on a simulated history.

    python -m evals.aging [--json] [--seed N] [--bench]

A real repository (orch's layout, real memory files, real task folders) is given 300
memories and a history of 60 tasks over 120 days, recorded through the same calls orch
makes (`memory.usage`: every active memory's index line reaches each task's prompts; the
planted patterns decide which memories the agent reads). Planted classes:

- `never`: never read (20 written before the history, 5 during its last week);
- `rare`: read in one or two of the first 15 tasks only;
- `heavy`: read in about 80% of the tasks, all along;
- `regular`: the rest, each read with its own probability (0.15 to 0.5) over a span of
  the history that reaches its last 20 tasks.

Scored: the `never` memories must rank in the bottom decile of `importance`; the 20
`heavy` ones in the top quarter; the decay candidates (`memory.decay`) against the
planted truth (`never` written before the window, and `rare`): precision (target 0.9)
and recall. User cards: 40 people, each with cards that contradict (same preference
stated two ways at two times, sometimes under a reworded subject) or not (another
preference; another person; a pair marked distinct); `memory.cards` must report the older
of each contradicting pair (precision target 0.9, recall 0.8).

The history's seed (`--seed`, default 1) is the development set; seed 2 was never used to
choose anything. `--bench` times the recording of one prompt's use (300 memories) and
prints the median over 200 prompts (target under 2 ms).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.config import MemoryConfig
from orchestrator.memory.cards import card_conflicts
from orchestrator.memory.decay import decay_candidates
from orchestrator.memory.importance import importance
from orchestrator.memory.usage import UsageLog
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory, serialize_memory
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.scaffold import scaffold
from orchestrator.store.tasks import TaskFolder

DAY = 86400.0
END = 1_780_000_000.0  # the simulated "now": 2026-05-28
TASKS = 60
SPAN_DAYS = 120
MEMORIES = 300
TYPES = ("project", "reference", "feedback", "user")
WORDS = [
    "cache",
    "queue",
    "ledger",
    "parser",
    "router",
    "schema",
    "worker",
    "token",
    "session",
    "upload",
    "billing",
    "search",
    "export",
    "import",
    "report",
    "invoice",
    "payment",
    "webhook",
    "config",
    "logger",
    "metrics",
    "backup",
    "mailer",
    "scheduler",
    "index",
    "locale",
    "theme",
    "audit",
    "grant",
    "refund",
    "cart",
    "order",
    "stock",
]


def iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def make_repo(base: Path) -> Layout:
    repo = base / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "aging eval")
    git(repo, "config", "user.email", "eval@orch.invalid")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("def main():\n    return 0\n")
    layout = Layout(repo)
    scaffold(layout)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    return layout


@dataclass
class Planted:
    name: str
    kind: str  # never | rare | heavy | regular
    created: float
    reads: list[int]  # the tasks that read it


def plant(rng: random.Random, starts: list[float]) -> list[Planted]:
    """Who is read when (see the module docstring)."""
    out: list[Planted] = []
    early = starts[0] - 30 * DAY
    for i in range(20):
        out.append(Planted(f"never-old-{i:02d}", "never", early + i * 3600, []))
    for i in range(5):
        out.append(Planted(f"never-new-{i:02d}", "never", starts[-3] + i * 3600, []))
    for i in range(15):
        reads = sorted(rng.sample(range(15), rng.choice((1, 2))))
        out.append(Planted(f"rare-{i:02d}", "rare", early + i * 3600, reads))
    for i in range(20):
        reads = [t for t in range(TASKS) if rng.random() < 0.8]
        out.append(Planted(f"heavy-{i:02d}", "heavy", early + i * 3600, reads))
    for i in range(MEMORIES - len(out)):
        p = rng.uniform(0.15, 0.5)
        first = rng.randrange(0, TASKS - 20)
        reads = [t for t in range(first, TASKS) if rng.random() < p]
        born = early if first == 0 else starts[first] - DAY
        out.append(Planted(f"regular-{i:03d}", "regular", born, reads))
    return out


def write_memories(layout: Layout, planted: list[Planted], rng: random.Random) -> None:
    for n, p in enumerate(planted):
        a, b = rng.sample(WORDS, 2)
        kind = TYPES[n % len(TYPES)]
        memory = Memory(
            name=p.name,
            description=f"How the {a} {b} {n} behaves",
            type=kind,
            subject=f"{a} {b} {n}",
            reason="it decides how the next change is made",
            citations=(Citation("src/app.py"),) if kind in ("project", "reference") else (),
            created=iso(p.created),
            updated=iso(p.created),
            body=f"The {a} {b} number {n} keeps its own rule {n * 7 % 97} in src/app.py.\n",
        )
        path = layout.repo_memories / f"{p.name}.md"
        path.write_text(serialize_memory(memory), encoding="utf-8")


def simulate(layout: Layout, planted: list[Planted], starts: list[float]) -> None:
    """Each task: a task folder whose log starts at its time; every memory that exists
    then reaches its prompt's index; the planted ones are read; the phase passes."""
    with UsageLog(layout) as usage:
        for t, at in enumerate(starts):
            task = TaskFolder.create(layout, f"simulated task {t:02d}")
            task.event_log_path.parent.mkdir(parents=True, exist_ok=True)
            task.event_log_path.write_text(json.dumps({"v": 1, "ts": iso(at)}) + "\n")
            alive = [p.name for p in planted if p.created <= at]
            usage.record_use(alive, via="prompt", task=task.slug, phase=1, at=at)
            read = [p.name for p in planted if t in p.reads]
            usage.record_use(read, via="read", task=task.slug, phase=1, at=at + 60)
            usage.record_outcome(task.slug, 1, passed=True, at=at + 120)
        usage.record_checks(((p.name, "ok") for p in planted), at=starts[-1])


def score_history(seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    starts = [END - SPAN_DAYS * DAY + i * (SPAN_DAYS * DAY / TASKS) for i in range(TASKS)]
    config = MemoryConfig()
    with tempfile.TemporaryDirectory(prefix="orch-aging-") as tmp:
        layout = make_repo(Path(tmp))
        planted = plant(rng, starts)
        write_memories(layout, planted, rng)
        simulate(layout, planted, starts)
        memories = RepoMemoryStore(layout).load_all().memories
        now = starts[-1] + DAY
        scores = importance(layout, memories, config, now=now)
        found = decay_candidates(layout, memories, config, now=now, scores=scores)
    ranked = sorted(scores.values(), key=lambda s: (-s.score, s.name))
    rank = {s.name: i for i, s in enumerate(ranked)}
    kind = {p.name: p.kind for p in planted}
    n = len(ranked)
    never = [name for name, k in kind.items() if k == "never"]
    heavy = [name for name, k in kind.items() if k == "heavy"]
    bottom = n - n // 10
    top = n // 4
    opens = END - SPAN_DAYS * DAY  # every planted `never-old` and `rare` is older than that
    truth = {
        p.name for p in planted if p.kind == "rare" or (p.kind == "never" and p.created < opens)
    }
    flagged = {c.name for c in found}
    hits = len(truth & flagged)
    return {
        "memories": n,
        "tasks": TASKS,
        "never_in_bottom_decile": sum(rank[m] >= bottom for m in never),
        "never": len(never),
        "heavy_in_top_quarter": sum(rank[m] < top for m in heavy),
        "heavy": len(heavy),
        "decay": {
            "flagged": len(flagged),
            "expected": len(truth),
            "precision": round(hits / len(flagged), 3) if flagged else None,
            "recall": round(hits / len(truth), 3) if truth else None,
            "false": sorted(flagged - truth)[:10],
            "missed": sorted(truth - flagged)[:10],
        },
    }


PREFERENCES = (
    ("indentation", "prefers tabs for indentation", "switched the team to four spaces"),
    ("quotes", "writes strings with single quotes", "asks for double quotes in Python"),
    ("test runner", "runs the tests with pytest", "moved the tests to unittest"),
    ("merging", "squashes every pull request", "wants merge commits kept"),
    ("commit messages", "writes commit messages in the imperative", "wants ticket ids first"),
    ("review", "reviews before lunch", "reviews at the end of the day"),
    ("formatter", "formats with black", "formats with ruff format"),
    ("line length", "keeps lines under 88 characters", "allows lines of 120 characters"),
)
REWORDED = {
    "indentation": "indentation style",
    "quotes": "quote style",
    "merging": "merge preference",
    "line length": "line length setting",
}


def card(name: str, person: str, subject: str, fact: str, at: float, **extra: Any) -> Memory:
    return Memory(
        name=name,
        description=f"{person}: {subject}",
        type="user",
        subject=subject,
        reason="a person said how they want the work done",
        person=person,
        relationship="maintainer",
        observed=iso(at),
        created=iso(at),
        body=f"{person} {fact}.\n",
        extra=extra,
    )


def score_cards(seed: int) -> dict[str, Any]:
    """Planted contradictions between user cards, and pairs that only look alike."""
    rng = random.Random(seed * 7919)
    memories: list[Memory] = []
    truth: set[str] = set()
    at = END - 200 * DAY
    for i in range(40):
        person = f"Person {i:02d}"
        (subj, old, new), (other, other_fact, _) = rng.sample(PREFERENCES, 2)
        at += DAY
        case = i % 4
        memories.append(card(f"p{i:02d}-a", person, subj, old, at))
        if case in (0, 1):  # the same preference stated again, later, another way
            later = REWORDED.get(subj, subj) if case == 1 else subj
            memories.append(card(f"p{i:02d}-b", person, later, new, at + 30 * DAY))
            truth.add(f"p{i:02d}-a")
        elif case == 2:  # another preference of the same person: no contradiction
            memories.append(card(f"p{i:02d}-b", person, other, other_fact, at + 30 * DAY))
        else:  # the two stand, for a stated reason
            memories.append(
                card(
                    f"p{i:02d}-b",
                    person,
                    subj,
                    new,
                    at + 30 * DAY,
                    distinct_from=[{"name": f"p{i:02d}-a", "reason": "one for each repository"}],
                )
            )
    # the same preference of different people never contradicts
    for i in range(10):
        subj, old, new = PREFERENCES[i % len(PREFERENCES)]
        memories.append(card(f"q{i:02d}-a", f"Someone {i:02d}", subj, old, at))
        memories.append(card(f"q{i:02d}-b", f"Other {i:02d}", subj, new, at + DAY))
    found = {c.older.name for c in card_conflicts(memories)}
    hits = len(found & truth)
    return {
        "cards": len(memories),
        "planted": len(truth),
        "reported": len(found),
        "precision": round(hits / len(found), 3) if found else None,
        "recall": round(hits / len(truth), 3) if truth else None,
        "false": sorted(found - truth),
        "missed": sorted(truth - found),
    }


def bench(prompts: int = 200) -> dict[str, Any]:
    """Median time to record one prompt's use of 300 memories (and its checks)."""
    with tempfile.TemporaryDirectory(prefix="orch-aging-bench-") as tmp:
        layout = make_repo(Path(tmp))
        names = [f"memory-{i:03d}" for i in range(MEMORIES)]
        times = []
        with UsageLog(layout) as usage:
            for n in range(prompts):
                start = time.perf_counter()
                usage.record_use(names, via="prompt", task=f"task-{n // 20}", phase=n % 5)
                usage.record_checks((name, "ok") for name in names)
                times.append(time.perf_counter() - start)
    return {
        "prompts": prompts,
        "memories": MEMORIES,
        "median_ms": round(statistics.median(times) * 1000, 3),
        "p95_ms": round(sorted(times)[int(len(times) * 0.95)] * 1000, 3),
    }


def render(result: dict[str, Any]) -> str:
    h, c = result["history"], result["cards"]
    d = h["decay"]
    lines = [
        f"history: {h['memories']} memories, {h['tasks']} tasks (seed {result['seed']})",
        f"  never read, in the bottom decile: {h['never_in_bottom_decile']} of {h['never']}",
        f"  most read, in the top quarter:   {h['heavy_in_top_quarter']} of {h['heavy']}",
        f"  decay candidates: {d['flagged']} flagged, {d['expected']} expected; "
        f"precision {d['precision']}, recall {d['recall']}",
    ]
    if d["false"] or d["missed"]:
        lines.append(f"    false: {d['false']}  missed: {d['missed']}")
    lines.append(
        f"user cards: {c['cards']} cards, {c['planted']} contradicted; reported "
        f"{c['reported']}: precision {c['precision']}, recall {c['recall']}"
    )
    if c["false"] or c["missed"]:
        lines.append(f"    false: {c['false']}  missed: {c['missed']}")
    if "bench" in result:
        b = result["bench"]
        lines.append(
            f"recording one prompt's use ({b['memories']} memories): median "
            f"{b['median_ms']} ms, p95 {b['p95_ms']} ms over {b['prompts']} prompts"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.aging", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seed", type=int, default=1, help="the history's seed (2: held out)")
    parser.add_argument("--bench", action="store_true", help="also time the recording")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {
        "seed": args.seed,
        "history": score_history(args.seed),
        "cards": score_cards(args.seed),
    }
    if args.bench:
        result["bench"] = bench()
    print(json.dumps(result, indent=1) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
