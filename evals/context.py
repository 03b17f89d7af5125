"""Prompt tokens over a long, tool-heavy scripted session: `python -m evals.context`.

A 500-turn phase (by default) is driven through `ContextManager` the way the executor
drives it: every turn the system prompt is assembled within its budget (`assemble`), the
conversation is prepared (masking, compaction, folding), the prompt is measured with the
local token estimate, then a scripted assistant turn calls one to three tools whose
results (0.5 to 6 KB each) are appended. Summaries and folds come from the same scripted
model (purpose `compactor`), and a compaction, and the fold after it, repeat the executor's
previous request with a summary (or fold) turn after it, as `orch run` does. Facts are planted in tool results during
the first 50 turns.

It reports the peak prompt against the configured budget, the prompt at turn 500 over the
prompt at turn 50, the same ratio for the uncompacted history, and whether each planted
fact is still reachable at the end: on disk in the transcripts, and among the top 5
results of the search index (`orchestrator.retrieval.SearchIndex`, kept up to date as the
files were written) for a question worded differently from the fact.
"""

from __future__ import annotations

import json
import random
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import click

from evals.suite import emit_json, json_option, suite
from orchestrator.config import Config, ContextConfig
from orchestrator.context import Assembly, ContextManager, ExecutorRequest, assemble
from orchestrator.context.transcripts import iter_lines
from orchestrator.engine import tasklist
from orchestrator.engine.enums import Role
from orchestrator.engine.executor import rounds_since_tasks_update
from orchestrator.engine.prompts import load_prompt
from orchestrator.messages import (
    Message,
    Request,
    SystemPart,
    TextBlock,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from orchestrator.models.recording import Recorder
from orchestrator.models.scripted import ScriptedModel
from orchestrator.retrieval import SearchIndex
from orchestrator.store.layout import Layout
from orchestrator.store.scaffold import scaffold
from orchestrator.store.tasks import TaskFolder
from orchestrator.tokens import estimate_message, estimate_request

TURNS = 500
SYSTEM_SHARE = 4  # the system prompt's budget is a quarter of the whole prompt budget


@dataclass(frozen=True)
class Fact:
    token: str  # a unique string that appears in the planted tool result
    sentence: str
    query: str


FACTS = (
    Fact(
        "PAYMENT_RETRY_BUDGET",
        "PAYMENT_RETRY_BUDGET = 7  # the gateway gives up after seven attempts",
        "payment gateway retry budget attempts",
    ),
    Fact(
        "ratelimit_bucket_size",
        "ratelimit_bucket_size is 42 requests per client per minute",
        "rate limit bucket size per client",
    ),
    Fact(
        "SESSION_COOKIE_SALT",
        "SESSION_COOKIE_SALT is read from the ORCH_BENCH_SALT environment variable",
        "session cookie salt environment variable",
    ),
    Fact(
        "legacy_invoice_v2",
        "legacy_invoice_v2 table must not be migrated: finance still reads it nightly",
        "legacy invoice table migration finance",
    ),
    Fact(
        "flaky_test_webhooks",
        "flaky_test_webhooks fails when the sandbox clock drifts; rerun with --clock=frozen",
        "flaky webhook test sandbox clock",
    ),
    Fact(
        "CACHE_TTL_SECONDS",
        "CACHE_TTL_SECONDS defaults to 900 and the CDN expects exactly that",
        "cache ttl seconds CDN default",
    ),
    Fact(
        "audit_log_partition",
        "audit_log_partition rotates monthly on the 3rd at 02:00 UTC",
        "audit log partition rotation schedule",
    ),
    Fact(
        "pdf_renderer_fontdir",
        "pdf_renderer_fontdir must point at vendor/fonts or invoices render without glyphs",
        "pdf renderer fonts directory",
    ),
    Fact(
        "GRPC_MAX_MESSAGE_MB",
        "GRPC_MAX_MESSAGE_MB was raised to 64 because exports hit the 4 MB default",
        "grpc max message size exports",
    ),
    Fact(
        "tenant_shard_key",
        "tenant_shard_key is the hash of the organisation id, never the user id",
        "tenant shard key organisation id",
    ),
)

SUMMARY = """## Task overview
Add per-client rate limiting to the public API, behind a feature flag.

## Current state
The limiter module exists with a token bucket; middleware wiring and its tests are in progress.

## Important discoveries
Settings are read once at start-up; the test suite needs the sandbox clock frozen.

## Next steps
Wire the middleware, add the 429 response test, update the settings docs.

## Context to preserve
Do not touch the legacy invoice table. Keep the public API signatures unchanged.
"""

FOLD = {
    "summary": "Read the API and settings modules, wrote the token-bucket limiter and ran the tests.",
    "decisions": [
        {
            "subject": "limiter algorithm",
            "decision": "token bucket per client",
            "reason": "bursts are allowed by the API contract",
        }
    ],
    "eliminated": [
        {
            "subject": "limiter storage",
            "approach": "a process-local dict",
            "why": "several workers share one client",
        }
    ],
    "open_questions": ["Which header carries the client id behind the proxy?"],
    "tool_results": [],
    "facts": [
        {
            "subject": "test command",
            "fact": "pytest -q runs the suite from the repository root",
            "citations": [{"path": "pyproject.toml"}],
        }
    ],
    "patterns": [],
}

LONG = "The task adds per-client rate limiting (token bucket, shared storage). Settings load once; tests need a frozen clock."

TOOLS = (
    ("read_file", "Read a file of the repository.", {"path": "string"}),
    ("write_file", "Write a file of the repository.", {"path": "string", "content": "string"}),
    (
        "grep",
        "Search the repository for a regular expression.",
        {"pattern": "string", "path": "string"},
    ),
    ("run_shell", "Run a shell command under the policy.", {"command": "string"}),
    (
        "memory",
        "View or edit repository memory under /memories.",
        {"command": "string", "path": "string"},
    ),
)


def _tool_specs() -> list[ToolSpec]:
    specs = [
        ToolSpec(
            name,
            description,
            {
                "type": "object",
                "properties": {
                    k: {"type": t, "description": f"The {k}."} for k, t in props.items()
                },
                "required": list(props),
            },
        )
        for name, description, props in TOOLS
    ]
    return specs


def _base_prompt() -> str:
    rules = [
        "You are the executor of one phase of a planned coding task.",
        "Work in small verified steps: read before you write, run the tests after each change.",
        "Verify memory before use: a memory's files, lines and symbols are re-checked first.",
        "If the user says ignore memory, don't use memory or fresh context, read no memory tier.",
        "Never record as memory what the code or git history already says.",
    ]
    return "\n".join(f"- {r}" for r in rules * 6)


def _memory_index() -> str:
    lines = ["# Memory index", "", "## Project"]
    lines += [
        f"- [module-{i}](module-{i}.md): What module {i} owns and who calls it" for i in range(40)
    ]
    return "\n".join(lines) + "\n"


PHASE_CARD = (
    "Phase 2: wire the rate limiter into the API.\n"
    "Objective: every public endpoint is limited per client, behind RATE_LIMIT_ENABLED.\n"
    "Acceptance criteria: a 429 with Retry-After past the limit; no change when disabled;\n"
    "tests for both; the settings documentation updated."
)


def _result_text(rng: random.Random, turn: int, call: int, fact: Fact | None) -> str:
    words = ("def", "return", "client", "bucket", "limit", "settings", "request", "self", "async")
    lines = []
    for i in range(rng.randint(10, 110)):
        lines.append(
            f"{i + 1:4d}  " + " ".join(rng.choice(words) for _ in range(rng.randint(3, 9)))
        )
    if fact is not None:
        lines.insert(len(lines) // 2, f"      # {fact.sentence}")
    return f"(turn {turn}, call {call})\n" + "\n".join(lines)


def _script() -> dict[str, Any]:
    return {
        "conversations": [
            {
                "when": {"purpose": "compactor", "contains": "Conversation to summarise"},
                "replies": [{"text": SUMMARY}],
            },
            {
                "when": {"purpose": "compactor", "contains": "Turns to fold"},
                "replies": [{"text": json.dumps(FOLD)}],
            },
            {
                "when": {"purpose": "compactor", "contains": "Fold into the long-term summary"},
                "replies": [{"text": LONG}],
            },
        ]
    }


def _volatile(turn: int, messages: list[Message]) -> str:
    """What the executor adds each turn: its task list and the reminder's counter."""
    prompt = load_prompt(Role.EXECUTOR)
    done = min(3, turn // 150)
    items = [
        f"{'[x]' if i < done else '[>]' if i == done else '[ ]'} {i + 1}. {title}"
        for i, title in enumerate(
            ("Read the API modules", "Write the limiter", "Wire the middleware", "Test it")
        )
    ]
    parts = [prompt.render("tasklist", tasks="\n".join(items))]
    rounds = rounds_since_tasks_update(messages)
    if rounds >= tasklist.REMIND_AFTER_ROUNDS:
        parts.append(prompt.render("reminder", rounds=rounds))
    return "\n\n".join(parts)


def executor_request(
    system: list[SystemPart], messages: list[Message], tools: list[ToolSpec], volatile: str
) -> Request:
    """The request the executor sends for this turn (as `ExecutorSetup.loop` lays it out)."""
    return Request(system, messages, tools, phase=2, volatile=volatile)


def run_benchmark(
    *,
    turns: int = TURNS,
    folding: str = "episodic",
    threshold: int = 16_000,
    budget: int = 24_000,
    workdir: Path | None = None,
    record: Path | None = None,
) -> dict[str, Any]:
    """Drive the session and return the figures (see the module docstring).

    With `record`, every request (the executor's turns and the compactor's calls) is
    recorded there as the Anthropic adapter would send it (`orchestrator.models.recording`).
    """
    config = ContextConfig(
        compact_threshold_tokens=threshold,
        prompt_budget_tokens=budget,
        folding=folding,
    )
    recorder = Recorder(record) if record else None
    whole = Config(context=config)
    with tempfile.TemporaryDirectory(prefix="orch-eval-context-") as tmp:
        root = workdir or Path(tmp)
        layout = Layout(root)
        scaffold(layout)
        task = TaskFolder.create(layout, "context budget benchmark")
        # one model for the executor's turns and the compactor's calls, as in `orch run`
        # without `compactor_model`: the compactor reads the executor's cached conversation
        model = ScriptedModel(
            _script(), name="scripted:context-benchmark", config=whole, recorder=recorder
        )
        log = task.events()
        manager = ContextManager(
            task, model, config, log, rules=_base_prompt(), phase_card=PHASE_CARD
        )
        tools = _tool_specs()
        rng = random.Random(20261121)
        instruction = "Add per-client rate limiting to the public API, behind a feature flag."
        messages: list[Message] = [Message.user(instruction)]
        raw_tokens = estimate_message(messages[0])
        prompt_at: dict[int, int] = {}
        raw_at: dict[int, int] = {}
        peak, peak_turn, trimmed_turns = 0, 0, 0
        planted = {10 + 4 * i: fact for i, fact in enumerate(FACTS)}  # turns 10..46
        call_id = 0

        def system() -> Assembly:
            parts = manager.prompt_parts(
                base=_base_prompt(), tools=tools, memory_index=_memory_index()
            )
            return assemble(parts, budget // SYSTEM_SHARE)

        for turn in range(1, turns + 1):
            assembly = system()
            volatile = _volatile(turn, messages)
            messages = manager.prepare(
                messages,
                phase=2,
                last_instruction=instruction,
                system_tokens=assembly.tokens,
                executor=ExecutorRequest(model.name, tuple(assembly.parts), tuple(tools), volatile),
            )
            # as the executor does: the request's system prompt is built after `prepare`,
            # which may have folded turns into the L2 digest and L3 items it holds
            assembly = system()
            trimmed_turns += bool(assembly.trimmed)
            prompt = estimate_request(Request(assembly.parts, messages, tools))
            model.send(executor_request(assembly.parts, messages, tools, _volatile(turn, messages)))
            baseline = assembly.tokens + raw_tokens
            prompt_at[turn], raw_at[turn] = prompt, baseline
            if prompt > peak:
                peak, peak_turn = prompt, turn
            # the scripted assistant turn and its tool results
            calls, results = [], []
            for c in range(rng.randint(1, 3)):
                call_id += 1
                name = rng.choice(("read_file", "grep", "run_shell", "read_file"))
                arg = {"read_file": "path", "grep": "pattern", "run_shell": "command"}[name]
                calls.append(
                    ToolCall(
                        f"toolu_{call_id:05d}", name, {arg: f"src/module_{rng.randint(1, 60)}.py"}
                    )
                )
                fact = planted.get(turn) if c == 0 else None
                results.append(ToolResult(calls[-1].id, _result_text(rng, turn, c, fact)))
            reply = Message(
                "assistant",
                [TextBlock(f"Turn {turn}: checking the next part of the limiter."), *calls],
            )
            answer = Message("user", list(results))
            raw_tokens += estimate_message(reply) + estimate_message(answer)
            messages = [*messages, reply, answer]
        manager.close_phase(messages, phase=2)

        events = [e for e in log.read().events if e.event_type == "compaction"]
        on_disk_text = "\n".join(
            json.dumps(line.message.to_dict(), ensure_ascii=False) for line in iter_lines(task)
        )
        found = _search(layout, FACTS)
        last, first = turns, min(50, turns)
        figures = {
            "v": 1,
            "suite": "context",
            "turns": turns,
            "folding": folding,
            "config": asdict(config),
            "system_budget_tokens": budget // SYSTEM_SHARE,
            "budget_tokens": budget,
            "peak_prompt_tokens": peak,
            "peak_turn": peak_turn,
            "under_budget": peak <= budget,
            "prompt_tokens": {str(first): prompt_at[first], str(last): prompt_at[last]},
            "ratio_last_to_50": round(prompt_at[last] / prompt_at[first], 3),
            "uncompacted_tokens": {str(first): raw_at[first], str(last): raw_at[last]},
            "uncompacted_ratio_last_to_50": round(raw_at[last] / raw_at[first], 3),
            "compactions": sum(
                1 for e in events if e.payload["kind"] == "auto" and e.payload["outcome"] == "ok"
            ),
            "failed_compactions": sum(1 for e in events if e.payload["outcome"] == "failed"),
            "folds": sum(
                1 for e in events if e.payload["kind"] == "fold" and e.payload["outcome"] == "ok"
            ),
            "turns_with_trimmed_system_prompt": trimmed_turns,
            "facts": {
                "planted": len(FACTS),
                "in_transcripts": sum(1 for f in FACTS if f.token in on_disk_text),
                "found_by_search": found,
                "search": "a fact counts when one of the top 5 results for its question holds it",
            },
        }
        return figures


def _search(layout: Layout, facts: tuple[Fact, ...], k: int = 5) -> int:
    """How many facts the search index finds in its top `k` for their questions."""
    with SearchIndex(layout) as index:
        return sum(
            1 for f in facts if any(f.token in hit.text for hit in index.search(f.query, k=k))
        )


@suite("context")
@json_option
@click.option(
    "--turns",
    type=click.IntRange(50, 100_000),
    default=TURNS,
    show_default=True,
    help="Assistant turns in the scripted session.",
)
@click.option(
    "--folding", type=click.Choice(["episodic", "cascading"]), default="episodic", show_default=True
)
@click.option(
    "--threshold",
    type=click.IntRange(1000),
    default=16_000,
    show_default=True,
    help="compact_threshold_tokens",
)
@click.option(
    "--budget",
    type=click.IntRange(1000),
    default=24_000,
    show_default=True,
    help="prompt_budget_tokens",
)
def context(as_json: bool, turns: int, folding: str, threshold: int, budget: int) -> None:
    """Prompt tokens over a long, tool-heavy scripted session (scripted model, no network).

    Exits 1 when a prompt went over the budget or a planted fact was not found.

    \b
    Examples:
      python -m evals.context
      python -m evals.context --folding cascading --json
    """
    figures = run_benchmark(turns=turns, folding=folding, threshold=threshold, budget=budget)
    if as_json:
        emit_json(figures)
    else:
        f = figures
        facts = f["facts"]
        found = f"{facts['found_by_search']}/{facts['planted']} in the top 5"
        click.echo(
            f"context budget: {f['turns']} turns, {f['folding']} folding, threshold {threshold}, budget {budget} tokens"
        )
        click.echo(
            f"  peak prompt:        {f['peak_prompt_tokens']} tokens at turn {f['peak_turn']} ({'under' if f['under_budget'] else 'OVER'} the budget)"
        )
        click.echo(
            f"  prompt at 50 / {f['turns']}:  {f['prompt_tokens']['50']} / {f['prompt_tokens'][str(f['turns'])]} tokens, ratio {f['ratio_last_to_50']}"
        )
        click.echo(
            f"  uncompacted:        {f['uncompacted_tokens']['50']} / {f['uncompacted_tokens'][str(f['turns'])]} tokens, ratio {f['uncompacted_ratio_last_to_50']}"
        )
        click.echo(
            f"  compactions:        {f['compactions']} ({f['failed_compactions']} failed), folds {f['folds']}"
        )
        click.echo(
            f"  planted facts:      {facts['in_transcripts']}/{facts['planted']} in transcripts; found by search: {found}"
        )
    facts = figures["facts"]
    if not figures["under_budget"] or facts["found_by_search"] < facts["planted"]:
        raise click.exceptions.Exit(1)


if __name__ == "__main__":
    context()
