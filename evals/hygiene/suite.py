"""Precision and recall of the memory audit on planted pollution: `python -m evals.hygiene`.

By default it builds the labelled sets and prints precision and recall per finding kind for
each: the generated set of `evals/hygiene/generate.py` (a development seed and a held-out
seed: the detectors were tuned on the first only), and the blind set of
`evals/hygiene_blind/` (three repositories a team would keep, in Python, TypeScript, SQL and
Go, labelled from the documented rules, plus small repositories varying MEMORY.md and
NOTES.md; its second seed rewords the facts). `--set` picks one of them. `--repo DIR`
scores repositories that already hold a `labels.json` (sets made elsewhere).

Units of scoring: a (kind, memory) for memory findings; an unordered pair for
`near_duplicate` (decay candidate and keeper) and `contradiction`; the repository for
`index_drift` and `index_oversize`; a line (or "length") for `notes_style`.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click

from evals.hygiene import generate as generated_set
from evals.hygiene_blind import generate as blind_set
from evals.suite import emit_json, json_option, suite
from orchestrator.memory.audit import KINDS, audit
from orchestrator.store.layout import Layout

DEV_SEED = 1
HELD_OUT_SEED = 20261121
BLIND_SEED = 1
BLIND_HELD_OUT_SEED = 2
SETS = ("all", "generated", "blind")
TARGET_PRECISION = 0.95
TARGET_RECALL = 0.9

Builder = Callable[[Path, int], list[Path]]  # (destination, seed) -> the repositories


def units_expected(repo: str, labels: Iterable[dict[str, Any]]) -> set[tuple[Any, ...]]:
    out: set[tuple[Any, ...]] = set()
    for label in labels:
        kind = label["kind"]
        if "pair" in label:
            out.add((repo, kind, tuple(sorted(label["pair"]))))
        elif "line" in label:
            out.add((repo, kind, str(label["line"])))
        elif label.get("memory"):
            out.add((repo, kind, label["memory"]))
        else:
            out.add((repo, kind, None))
    return out


def units_found(repo: str, report: dict[str, Any]) -> set[tuple[Any, ...]]:
    out: set[tuple[Any, ...]] = set()
    for f in report["findings"]:
        kind = f["kind"]
        if kind in ("near_duplicate", "contradiction"):
            other = f["related"][0] if f["related"] else None
            out.add((repo, kind, tuple(sorted([f["memory"], other]))))
        elif kind == "notes_style":
            match = re.search(r"line (\d+)", f["detail"])
            out.add((repo, kind, match.group(1) if match else "length"))
        elif kind in ("index_drift", "index_oversize"):
            out.add((repo, kind, None))
        else:
            out.add((repo, kind, f["memory"]))
    return out


# The planted pollution kinds. `low_value` (decay) depends on a history of use, which these
# sets do not have (so the audit never raises it here): `python -m evals.aging` measures it.
# A kind that a set neither plants nor finds (`moved_citation` in the generated set) has no
# row in that set's table.
POLLUTION = tuple(k for k in KINDS if k != "low_value")


def score(expected: set[tuple[Any, ...]], found: set[tuple[Any, ...]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for kind in POLLUTION:
        exp = {u for u in expected if u[1] == kind}
        got = {u for u in found if u[1] == kind}
        if not exp and not got:
            continue
        tp = len(exp & got)
        table[kind] = {
            "expected": len(exp),
            "found": len(got),
            "true_positives": tp,
            "precision": round(tp / len(got), 3) if got else (1.0 if not exp else 0.0),
            "recall": round(tp / len(exp), 3) if exp else 1.0,
            "missed": sorted(f"{u[0]}:{u[2]}" for u in exp - got),
            "false": sorted(f"{u[0]}:{u[2]}" for u in got - exp),
        }
    return table


def evaluate(repos: list[Path]) -> dict[str, Any]:
    expected: set[tuple[Any, ...]] = set()
    found: set[tuple[Any, ...]] = set()
    for repo in repos:
        labels = json.loads((repo / "labels.json").read_text(encoding="utf-8"))
        expected |= units_expected(repo.name, labels["expected"])
        report = audit(Layout(repo)).to_dict()
        found |= units_found(repo.name, report)
    return score(expected, found)


def _table(title: str, table: dict[str, Any]) -> str:
    lines = [title, f"{'kind':<18}{'expected':>9}{'found':>7}{'precision':>11}{'recall':>8}"]
    for kind, row in table.items():
        mark = ""
        if row["precision"] < TARGET_PRECISION or row["recall"] < TARGET_RECALL:
            mark = "  below target"
        lines.append(
            f"{kind:<18}{row['expected']:>9}{row['found']:>7}{row['precision']:>11.3f}"
            f"{row['recall']:>8.3f}{mark}"
        )
    return "\n".join(lines)


@suite("hygiene")
@click.option(
    "--set",
    "which",
    type=click.Choice(SETS),
    default="all",
    show_default=True,
    help="generated: evals/hygiene; blind: evals/hygiene_blind; all: both.",
)
@click.option("--seed", type=int, default=DEV_SEED, show_default=True, help="Development seed.")
@click.option(
    "--held-out-seed", type=int, default=HELD_OUT_SEED, show_default=True, help="Held-out seed."
)
@click.option(
    "--blind-seed",
    type=int,
    multiple=True,
    help=f"Seeds of the blind set (repeatable; default {BLIND_SEED} and {BLIND_HELD_OUT_SEED}).",
)
@click.option(
    "--repo",
    "repos",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Score these labelled repositories instead of generating sets (repeatable).",
)
@click.option("--show-errors", is_flag=True, help="List missed and false units per kind.")
@json_option
def hygiene(
    which: str,
    seed: int,
    held_out_seed: int,
    blind_seed: tuple[int, ...],
    repos: tuple[Path, ...],
    show_errors: bool,
    as_json: bool,
) -> None:
    """Precision and recall of `orch memory audit` per finding kind, on labelled sets.

    \b
    Examples:
      python -m evals.hygiene
      python -m evals.hygiene --set blind --show-errors
      python -m evals.hygiene --json
      python -m evals.hygiene --repo /tmp/set/main --repo /tmp/set/repo-0
    """
    results: dict[str, Any] = {}
    if repos:
        for repo in repos:
            if not (repo / "labels.json").is_file():
                raise click.ClickException(f"{repo}: no labels.json")
        results["given"] = evaluate(list(repos))
    else:
        runs: list[tuple[str, Builder, int]] = []
        if which in ("all", "generated"):
            runs += [
                ("development", generated_set.build, seed),
                ("held_out", generated_set.build, held_out_seed),
            ]
        if which in ("all", "blind"):
            seeds = blind_seed or (BLIND_SEED, BLIND_HELD_OUT_SEED)
            names = ["blind"] + [f"blind_{n}" for n in range(2, len(seeds) + 1)]
            runs += [(n, blind_set.build, s) for n, s in zip(names, seeds, strict=True)]
        with tempfile.TemporaryDirectory(prefix="orch-hygiene-") as tmp:
            for name, build, s in runs:
                built = build(Path(tmp) / name, s)
                results[name] = evaluate(built)
                results[name + "_seed"] = s
    if as_json:
        emit_json({"v": 1, **results})
        return
    for name, table in results.items():
        if not isinstance(table, dict):
            continue
        seed_note = f" (seed {results.get(name + '_seed')})" if name + "_seed" in results else ""
        click.echo(_table(f"\n{name}{seed_note}", table))
        if show_errors:
            for kind, row in table.items():
                if row["missed"] or row["false"]:
                    click.echo(f"  {kind}: missed {row['missed']} false {row['false']}")
