"""`orch eval SUITE`: evaluation suites."""

from __future__ import annotations

import click

from orchestrator.cli import LazyGroup

SUITES: dict[str, tuple[str, str]] = {
    "locomo": (
        "orchestrator.evals.locomo:locomo",
        "LoCoMo evidence recall@k of the retrieval index.",
    ),
    "hygiene": (
        "orchestrator.evals.hygiene:hygiene",
        "Precision/recall of the memory audit on planted pollution.",
    ),
    "resume": (
        "orchestrator.evals.resume:resume",
        "Crash anywhere, resume, finish with nothing lost.",
    ),
    "context": (
        "orchestrator.evals.context:context",
        "Prompt tokens over a long scripted session.",
    ),
    "prompts": ("orchestrator.evals.prompts:prompts", "Every prompt carries the rules it must."),
}


@click.group("eval", cls=LazyGroup, lazy=SUITES)
def eval_() -> None:
    """Evaluation suites: measure the system as a whole.

    \b
    Examples:
      orch eval locomo --data ../shared/data/locomo/locomo-dev.json --json
      orch eval hygiene
    """
