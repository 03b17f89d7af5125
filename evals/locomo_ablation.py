"""What each step of the ranking contributes on LoCoMo (turn-level evidence recall).

    python -m evals.locomo_ablation --data ../shared/data/locomo/locomo-dev.json

The design was chosen on conversations conv-26 and conv-30 only ("tuned"); the other
conversations of the file ("held out") were not looked at while choosing. Rows 1-6 add
one step each, ending at the default; the rows after them are variants of the default
that were measured and not kept. Prints a markdown table (docs/retrieval.md carries it).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from evals.locomo import Report, evaluate, load
from orchestrator.retrieval import Ranking

TUNED = ("conv-26", "conv-30")
PLAIN_TOKENIZER = "unicode61 remove_diacritics 2"

DEFAULT = Ranking()
BASE = replace(
    DEFAULT, title_weight=0.0, date_weight=0.0, idf_power=0.0, before=0.0, after=0.0, reach=1
)
STEPS: list[tuple[str, Ranking, str]] = [
    ("1. BM25 (FTS5), stop words dropped, words OR-ed", BASE, PLAIN_TOKENIZER),
    ("2. + porter stemming", BASE, ""),
    (
        "3. + speaker and session date as fields",
        replace(BASE, title_weight=1.0, date_weight=1.0),
        "",
    ),
    (
        "4. + query words weighted by IDF",
        replace(BASE, title_weight=1.0, date_weight=1.0, idf_power=1.0),
        "",
    ),
    (
        "5. + neighbours: next turn 0.6, previous 0.3",
        replace(DEFAULT, reach=1),
        "",
    ),
    ("6. + two turns each way (default)", DEFAULT, ""),
    ("default, neighbours symmetric 0.45", replace(DEFAULT, before=0.45, after=0.45), ""),
    ("default + speaker named in query x1.5", replace(DEFAULT, title_boost=0.5), ""),
    ("default + 0.2 of the session's best turn", replace(DEFAULT, group_share=0.2), ""),
    (
        "default + RM3-like feedback (5 docs, 5 words, 0.3)",
        replace(DEFAULT, prf_docs=5, prf_terms=5, prf_weight=0.3),
        "",
    ),
    ("default + RRF of plain and smoothed", replace(DEFAULT, fuse=60), ""),
    ("default, stop words kept", replace(DEFAULT, stop_words=False), ""),
]


def recall(report: Report, conversations: set[str], k: str) -> float:
    tallies = [t for c, t in report.by_conversation.items() if c in conversations]
    questions = sum(t.questions for t in tallies)
    return sum(t.sums[int(k)] for t in tallies) / questions if questions else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, type=Path)
    args = parser.parse_args()
    conversations = load(args.data)
    everyone = {c.sample_id for c in conversations}
    held_out = everyone - set(TUNED)
    print("| step | R@5 tuned (conv-26, conv-30) | R@5 held out | R@5 all | R@10 all | R@1 all |")
    print("|---|---|---|---|---|---|")
    for label, ranking, tokenizer in STEPS:
        report = evaluate(conversations, ranking, **({"tokenizer": tokenizer} if tokenizer else {}))
        cells = [
            recall(report, set(TUNED), "5"),
            recall(report, held_out, "5"),
            recall(report, everyone, "5"),
            recall(report, everyone, "10"),
            recall(report, everyone, "1"),
        ]
        print(f"| {label} | " + " | ".join(f"{c:.3f}" for c in cells) + " |", flush=True)


if __name__ == "__main__":
    main()
