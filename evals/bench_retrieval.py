"""Speed of the search index: indexing, queries, incremental updates.

    python -m evals.bench_retrieval [--turns 6000] [--queries 300] [--runs 5]

Targets: indexing 6,000 turns under 1 s; a query under 20 ms at the 95th percentile; an
incremental update under 10 ms. The corpus is synthetic and seeded (Zipf-distributed
words, 8 to 40 a turn, sessions of 100 turns), so every run indexes the same text. Times
are wall-clock medians (and 95th percentiles) over repeated runs; on a shared machine run
it when the machine is otherwise idle.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from orchestrator.retrieval import Doc, SearchIndex, index_written
from orchestrator.store.fs import atomic_write
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory, serialize_memory
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.scaffold import scaffold
from orchestrator.store.tasks import TaskFolder

SYLLABLES = tuple(
    [
        "ka",
        "lo",
        "mi",
        "ne",
        "ru",
        "sa",
        "ti",
        "vo",
        "be",
        "da",
        "fe",
        "gi",
        "ho",
        "ju",
        "ko",
        "la",
        "ma",
        "no",
        "pe",
        "qui",
        "re",
        "so",
        "tu",
        "ve",
    ]
)
TURNS_PER_SESSION = 100


def vocabulary(rng: random.Random, size: int = 8000) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4)))] = None
    return list(words)


class Corpus:
    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        self.weights = [1.0 / (rank + 1) for rank in range(len(self.words))]

    def text(self, low: int, high: int) -> str:
        n = self.rng.randint(low, high)
        return " ".join(self.rng.choices(self.words, self.weights, k=n))

    def turns(self, count: int) -> list[str]:
        return [self.text(8, 40) for _ in range(count)]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def fresh_layout(tmp: Path, name: str) -> Layout:
    root = tmp / name
    root.mkdir()
    (root / ".git").mkdir()
    layout = Layout(root)
    scaffold(layout)
    return layout


def write_transcripts(layout: Layout, turns: list[str]) -> TaskFolder:
    task = TaskFolder.create(layout, "bench task")
    task.transcripts.mkdir(parents=True)
    for start in range(0, len(turns), TURNS_PER_SESSION):
        lines = [
            json.dumps(
                {"role": ("user", "assistant")[n % 2], "content": [{"type": "text", "text": t}]}
            )
            for n, t in enumerate(turns[start : start + TURNS_PER_SESSION])
        ]
        path = task.transcripts / f"{start // TURNS_PER_SESSION + 1}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return task


def warm_search(sizes: list[int], runs: int) -> None:
    """A warm `orch memory search` in process: a new `SearchIndex` on an index that is up
    to date (files older than the racy window), one query, at each store size."""
    corpus = Corpus(seed=11)
    print(f"warm search (a new SearchIndex and one query, in process; median of {runs})")
    base = 0.0
    with tempfile.TemporaryDirectory(prefix="orch-bench-warm-") as tmp_name:
        for size in sizes:
            layout = fresh_layout(Path(tmp_name), f"store-{size}")
            for n in range(size):
                memory = Memory(
                    name=f"memory-{n:05d}",
                    description=corpus.text(4, 8),
                    type="user",
                    body=corpus.text(10, 30) + "\n",
                    subject=corpus.text(2, 3),
                    reason="benchmark",
                )
                path = layout.repo_memories / f"{memory.name}.md"
                path.write_text(serialize_memory(memory), encoding="utf-8")
            past = time.time() - 60  # older than any racy window: as a store used later
            for path in [*layout.repo_memories.iterdir(), layout.repo_memories]:
                os.utime(path, (past, past))
            with SearchIndex(layout) as index:
                index.rebuild()
            queries = [corpus.text(2, 4) for _ in range(runs)]

            def one(query: str, layout: Layout = layout) -> None:
                with SearchIndex(layout) as index:
                    index.search(query)

            one(queries[0])  # the page cache warm, as for any command run twice
            seconds = statistics.median(timed(partial(one, q)) for q in queries)
            base = base or seconds
            print(
                f"  {size:>6} memories: {seconds * 1000:7.1f} ms  (x{seconds / base:5.1f} time "
                f"for x{size / sizes[0]:4.0f} memories)"
            )
    print("command: python -m evals.bench_retrieval --warm-search")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=6000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--warm-search",
        action="store_true",
        help="Only a warm search at 1,000, 10,000 and 50,000 memories (target 50 ms at 10k).",
    )
    args = parser.parse_args()
    if args.warm_search:
        warm_search([1_000, 10_000, 50_000], args.runs)
        return
    corpus = Corpus()
    turns = corpus.turns(args.turns)
    docs = [
        Doc(
            "transcript",
            f"bench/{n // TURNS_PER_SESSION + 1}:{n % TURNS_PER_SESSION + 1}",
            t,
            {"title": "user"},
        )
        for n, t in enumerate(turns)
    ]
    results: list[tuple[str, float, float]] = []  # (what, measured seconds, target seconds)

    with tempfile.TemporaryDirectory(prefix="orch-bench-") as tmp_name:
        tmp = Path(tmp_name)

        # 1. indexing: documents handed over in one batch, and a rebuild from transcript files
        batch, rebuild = [], []
        for run in range(args.runs):
            layout = fresh_layout(tmp, f"batch-{run}")
            with SearchIndex(layout) as index:
                index.count()  # create the empty index first: only the indexing is timed
                batch.append(timed(partial(index.update_many, docs)))
        files_layout = fresh_layout(tmp, "files")
        write_transcripts(files_layout, turns)
        for _ in range(args.runs):
            with SearchIndex(files_layout) as index:
                rebuild.append(timed(index.rebuild))
        print(f"indexing {args.turns} turns ({args.runs} runs each)")
        print(f"  update_many (one batch):      median {statistics.median(batch):.3f} s")
        print(
            f"  rebuild from {len(turns) // TURNS_PER_SESSION} transcript files: median {statistics.median(rebuild):.3f} s"
        )
        results.append(
            (f"index {args.turns} turns (rebuild, median)", statistics.median(rebuild), 1.0)
        )

        # 2. queries on the rebuilt index: 3 to 8 words drawn like the text
        queries = [corpus.text(3, 8) for _ in range(args.queries)]
        with SearchIndex(files_layout) as index:
            first = timed(lambda: index.search(queries[0]))  # refresh + loading the doc table
            for q in queries[:20]:
                index.search(q)  # warm up
            latencies = [timed(partial(index.search, q, k=10)) for q in queries]
        print(f"queries ({args.queries}, k=10, {args.turns} turns)")
        print(f"  first search of an opened index: {first * 1000:.1f} ms")
        print(
            f"  median {statistics.median(latencies) * 1000:.2f} ms, "
            f"p95 {percentile(latencies, 95) * 1000:.2f} ms, max {max(latencies) * 1000:.2f} ms"
        )
        results.append(("query p95", percentile(latencies, 95), 0.020))

        # 3. incremental updates on the 6,000-turn index
        updates, hooks, appends = [], [], []
        with SearchIndex(files_layout) as index:
            index.search("warm")
            for n in range(100):
                updates.append(
                    timed(partial(index.update, "l3", f"bench/item-{n}", corpus.text(8, 40)))
                )
        store = RepoMemoryStore(files_layout)
        for n in range(30):
            memory = Memory(
                name=f"bench-memory-{n}",
                description=f"bench memory {n}",
                type="user",
                body=corpus.text(10, 30) + "\n",
                subject=f"bench {n}",
                reason="benchmark",
            )
            path = store.path_of(memory.name)
            atomic_write(path, serialize_memory(memory))
            hooks.append(timed(partial(index_written, files_layout, path)))
        task = TaskFolder(files_layout, "bench-task")
        last = task.transcripts / "1.jsonl"
        for _ in range(30):
            with last.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"role": "user", "content": corpus.text(8, 40)}) + "\n")
            appends.append(timed(lambda: index_written(files_layout, last)))
        print("incremental updates")
        print(
            f"  update() one document, open index:       median {statistics.median(updates) * 1000:.2f} ms, "
            f"p95 {percentile(updates, 95) * 1000:.2f} ms"
        )
        print(
            f"  index_written(memory file), the hook:    median {statistics.median(hooks) * 1000:.2f} ms, "
            f"p95 {percentile(hooks, 95) * 1000:.2f} ms"
        )
        print(
            f"  index_written(transcript, {TURNS_PER_SESSION}+ lines):   median {statistics.median(appends) * 1000:.2f} ms, "
            f"p95 {percentile(appends, 95) * 1000:.2f} ms"
        )
        results.append(("incremental update (hook, median)", statistics.median(hooks), 0.010))

    print("against the targets")
    for what, seconds, target in results:
        verdict = "ok" if seconds < target else "MISSED"
        print(
            f"  {what:<38} {seconds * 1000:9.2f} ms  target < {target * 1000:.0f} ms  ratio {seconds / target:.2f}  {verdict}"
        )


if __name__ == "__main__":
    main()
