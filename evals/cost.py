"""What the model input of a task costs with prompt caching: `python -m evals.cost`.

Runs the demo (`orch demo`) and the 500-turn replay of `python -m evals.context` with
request recording on (`ORCH_RECORD_REQUESTS`, docs/models.md), then bills every recorded
request as the Messages API would (`orchestrator.models.cachesim`): full price 1.0, a
cache write 1.25, a cache read 0.1, a read only where a breakpoint's prefix exactly
matches one an earlier request wrote, nothing cached below the model's minimum cacheable
length. It sets that against the ideal (a block a later request reuses is written once
and read afterwards; a block never reused costs 1.0) and prints, per role and in total:
calls, input tokens (the local estimate), billed (in full-price token equivalents),
ideal, billed / ideal, and the share of input tokens read from the cache. With `--json`,
`uncached_by_cause` says where the input not read from the cache goes, as shares of all
input tokens: per compactor call kind (`summary`, `fold`, `long`) and per executor turn,
by what changed since the phase's previous executor request (`new_head`: the conversation
starts differently, after a compaction or in a new attempt; `masking`: more masked
results; `new_round`: neither, only the turn's new tool round), and per other role.

Targets: billed / ideal <= 1.05 on the demo, <= 1.10 over the replay; a
cache read share >= 80% over the replay.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from evals.context import run_benchmark
from evals.suite import emit_json, json_option, suite
from orchestrator.context.compaction import COMPACT_HEADER
from orchestrator.context.folding import FOLD_HEADER, LONG_HEADER
from orchestrator.messages import MASK_PREFIX
from orchestrator.models.cachesim import Bill, CacheSim, chain, ideal, min_cacheable
from orchestrator.models.recording import ENV, recorded
from orchestrator.models.scripted import ESTIMATE_AS

TARGETS = {"demo": 1.05, "replay": 1.10}
READ_SHARE_TARGET = 0.80


def _min_tokens(model: str) -> int:
    """Scripted models are billed as `ESTIMATE_AS` would be."""
    return min_cacheable(ESTIMATE_AS if model.startswith("scripted") else model)


def _figures(rows: Iterable[tuple[Bill, Bill]]) -> dict[str, Any]:
    calls = tokens = read = best_read = 0
    billed = best = 0.0
    for actual, perfect in rows:
        calls += 1
        tokens += actual.input_tokens
        read += actual.read
        best_read += perfect.read
        billed += actual.billed
        best += perfect.billed
    return {
        "calls": calls,
        "input_tokens": tokens,
        "billed": round(billed),
        "ideal": round(best),
        "ratio": round(billed / best, 3) if best else None,
        "cache_read_share": round(read / tokens, 3) if tokens else 0.0,
        "ideal_read_share": round(best_read / tokens, 3) if tokens else 0.0,
    }


def _last_user_text(params: dict[str, Any]) -> str:
    for message in reversed(params.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))
    return ""


def _cause(request: dict[str, Any], previous: dict[str, Any] | None) -> str:
    """What a request's uncached input is for (see the module docstring)."""
    params, role = request["params"], str(request["role"])
    if role == "compactor":
        text = _last_user_text(params)
        for header, cause in ((FOLD_HEADER, "fold"), (LONG_HEADER, "long")):
            if header in text:
                return cause
        return "summary" if COMPACT_HEADER in text else role
    if role != "executor":
        return role
    if previous is None:
        return "new_round"
    old, new = previous["params"]["messages"], params["messages"]
    if old[:1] != new[:1]:
        return "new_head"
    masked = [json.dumps(m).count(MASK_PREFIX) for m in (old, new)]
    return "masking" if masked[1] > masked[0] else "new_round"


def uncached_by_cause(requests: list[dict[str, Any]], bills: list[Bill]) -> dict[str, float]:
    """Input tokens not read from the cache (full price or written), by cause, as shares of
    all input tokens."""
    total = sum(b.input_tokens for b in bills)
    found: dict[str, int] = {}
    last: dict[Any, dict[str, Any]] = {}  # the previous executor request of each phase
    for request, b in zip(requests, bills, strict=True):
        cause = _cause(request, last.get(request["phase"]))
        if request["role"] == "executor":
            last[request["phase"]] = request
        found[cause] = found.get(cause, 0) + b.full + b.write
    return {k: round(v / total, 4) if total else 0.0 for k, v in sorted(found.items())}


def bill(requests: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of recorded requests (in call order), in total and by role."""
    chains = [chain(r["params"]) for r in requests]
    models = [str(r["params"].get("model", "")) for r in requests]
    actual: list[Bill] = []
    perfect: list[Bill | None] = [None] * len(requests)
    sims: dict[str, CacheSim] = {}
    for model in dict.fromkeys(models):  # each model has its own cache
        picked = [i for i, m in enumerate(models) if m == model]
        for i, b in zip(
            picked, ideal([chains[i] for i in picked], _min_tokens(model)), strict=True
        ):
            perfect[i] = b
    for c, model in zip(chains, models, strict=True):
        sim = sims.setdefault(model, CacheSim(_min_tokens(model)))
        actual.append(sim.bill_chain(c))
    pairs = [(a, p) for a, p in zip(actual, perfect, strict=True) if p is not None]
    out = _figures(pairs)
    roles = sorted({str(r["role"]) for r in requests})
    out["by_role"] = {
        role: _figures(pair for pair, r in zip(pairs, requests, strict=True) if r["role"] == role)
        for role in roles
    }
    out["uncached_by_cause"] = uncached_by_cause(requests, actual)
    return out


def _record(folder: Path, run: Any) -> list[dict[str, Any]]:
    before = os.environ.get(ENV)
    os.environ[ENV] = str(folder)
    try:
        run()
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before
    return recorded(folder)


def run_demo(tmp: Path) -> list[dict[str, Any]]:
    from orchestrator.engine.demo import Demo

    def demo() -> None:
        Demo(tmp / "wordstats", say=lambda _line: None, quiet=True).run()

    return _record(tmp / "requests-demo", demo)


def run_replay(tmp: Path, turns: int) -> list[dict[str, Any]]:
    folder = tmp / "requests-replay"

    def replay() -> None:
        run_benchmark(turns=turns, record=folder)

    return _record(folder, replay)


def measure(turns: int = 500) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="orch-eval-cost-") as name:
        tmp = Path(name)
        return {"demo": bill(run_demo(tmp)), "replay": bill(run_replay(tmp, turns))}


def _line(label: str, f: dict[str, Any]) -> str:
    ratio = f"{f['ratio']:.3f}" if f["ratio"] is not None else "-"
    return (
        f"  {label:<10} {f['calls']:>5} {f['input_tokens']:>11,} {f['billed']:>11,} "
        f"{f['ideal']:>11,} {ratio:>7} {f['cache_read_share']:>6.1%}"
    )


@suite("cost")
@json_option
@click.option(
    "--turns",
    type=click.IntRange(50, 100_000),
    default=500,
    show_default=True,
    help="Assistant turns in the replay.",
)
def cost(as_json: bool, turns: int) -> None:
    """Bill every request of the demo and of the long replay with prompt caching.

    Exits 1 when a target is missed (billed / ideal <= 1.05 on the demo, <= 1.10 on the
    replay; cache reads >= 80% of the replay's input tokens).

    \b
    Examples:
      python -m evals.cost
      python -m evals.cost --json
    """
    figures = measure(turns)
    if as_json:
        emit_json(figures)
    else:
        for run, f in figures.items():
            click.echo(
                f"{run}: billed in full-price input tokens, scripted model billed as {ESTIMATE_AS}"
            )
            click.echo(
                f"  {'role':<10} {'calls':>5} {'input':>11} {'billed':>11} {'ideal':>11} "
                f"{'ratio':>7} {'read':>6}"
            )
            for role, g in f["by_role"].items():
                click.echo(_line(role, g))
            click.echo(_line("total", f))
    missed = [
        run
        for run, limit in TARGETS.items()
        if figures[run]["ratio"] is None or figures[run]["ratio"] > limit
    ]
    if figures["replay"]["cache_read_share"] < READ_SHARE_TARGET:
        missed.append("replay cache_read_share")
    if missed:
        raise click.exceptions.Exit(1)


if __name__ == "__main__":
    cost()
