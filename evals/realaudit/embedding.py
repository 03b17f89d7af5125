"""`python -m evals.realaudit.embedding KEEP [--split dev]`: what a word-vector model would
add to the audit's near-duplicates, measured and not adopted.

KEEP is the folder `python -m evals.realaudit --keep KEEP` left: one built repository per
labelled one, its facts written as orch memories. For each repository the memories are
embedded with WordLlama's 256-dimension model (the `wordllama` package ships its weights
and tokenizer inside its wheel; they are loaded from there, nothing is downloaded), every
pair not already raised by the audit whose cosine reaches a threshold is put through the
rules a model's proposal must pass (`compare.duplicate_across(..., loose=True)`, not
linked, not two list items labelled apart), and the pairs that pass are scored against the
labelled groups: how many more the audit would raise, and how many of those are right.

`wordllama` is not a dependency of orch; install it into the environment to run this
(`pip install wordllama`). Only the `split` given is read (default dev): keep the held-out
repositories out of it.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from evals.realaudit import dataset, score
from evals.realaudit.dataset import Split
from orchestrator.memory import audit, compare
from orchestrator.store.layout import Layout
from orchestrator.store.repo import RepoMemoryStore

THRESHOLDS = (0.70, 0.75, 0.80, 0.85, 0.90)


def load_model() -> Any:
    """WordLlama's bundled model, read from the installed package's own files."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        raise SystemExit("realaudit.embedding: wordllama is not installed (pip install wordllama)")
    from safetensors import safe_open  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from tokenizers import Tokenizer  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from wordllama.inference import (  # type: ignore[import-not-found, import-untyped, unused-ignore]
        WordLlamaInference,
    )

    base = Path(spec.origin).parent
    tokenizer = Tokenizer.from_file(str(base / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    weights = base / "weights" / "l2_supercat_256.safetensors"
    with safe_open(str(weights), framework="np", device="cpu") as f:
        embedding = f.get_tensor("embedding.weight")
    return WordLlamaInference(embedding, tokenizer, binary=False)


def measure(keep: Path, split: Split, model: Any) -> dict[float, list[int]]:
    """Threshold -> [pairs added, of which labelled near-duplicates]."""
    added = {t: [0, 0] for t in THRESHOLDS}
    for data in dataset.load_all():
        if data.split is not split:
            continue
        root = keep / data.repo.replace("/", "+")
        layout = Layout(root)
        memories = [m for m in RepoMemoryStore(layout).load_all().memories if m.active]
        raised = score.raised(data.repo, audit.audit(layout, verify=False).to_dict())
        groups = score.expected(data).duplicate_groups
        labelled = set().union(*(score.group_pairs(g) for g in groups)) if groups else set()
        vectors = model.embed([m.fact for m in memories], norm=True)
        similar = vectors @ vectors.T
        readings = compare.Readings()
        for i, a in enumerate(memories):
            for j in range(i + 1, len(memories)):
                cosine = float(similar[i, j])
                b = memories[j]
                unit = score.pair(data.repo, a.name, b.name)
                if cosine < THRESHOLDS[0] or unit in raised.duplicate_pairs:
                    continue
                if compare.linked(a, b) or compare.different_slots(a, b):
                    continue
                if compare.duplicate_across(a, b, readings=readings, loose=True) is None:
                    continue
                for t in THRESHOLDS:
                    if cosine >= t:
                        added[t][0] += 1
                        added[t][1] += unit in labelled
    return added


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.realaudit.embedding")
    parser.add_argument(
        "keep", type=Path, help="the folder `python -m evals.realaudit --keep` left"
    )
    parser.add_argument("--split", choices=[s.value for s in Split], default=Split.DEV.value)
    args = parser.parse_args(argv)
    added = measure(args.keep, Split(args.split), load_model())
    print(f"{args.split}: near-duplicate pairs a word-vector model would add, rules applied")
    for t in THRESHOLDS:
        pairs, right = added[t]
        print(f"  cosine >= {t:.2f}: {pairs} added, {right} of them labelled near-duplicates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
