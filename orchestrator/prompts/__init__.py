"""Prompt texts, as files: one `<name>.md` per role, and the shared rules they include.

A line `<!-- rule: NAME -->` in a prompt is replaced by `rules/NAME.md`, so a rule that
several roles must carry (verify before use, ignore memory on request, save exclusions...)
has one wording, everywhere. The prompts suite (`python -m evals.prompts`) checks that every
prompt carries the rules its role needs (`CONTRACT`), in the files and in the requests a
scripted run sends.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

RULES = ("verify-before-use", "ignore-memory", "save-exclusions", "memory-format", "supersede")
_RULE_MARK = re.compile(r"^<!-- rule: ([a-z-]+) -->\n?", re.MULTILINE)

# role -> the rules its prompt must carry
CONTRACT: dict[str, tuple[str, ...]] = {
    "planner": ("verify-before-use", "ignore-memory", "save-exclusions"),
    "auditor": ("verify-before-use", "ignore-memory", "save-exclusions"),
    "executor": (
        "verify-before-use",
        "ignore-memory",
        "save-exclusions",
        "memory-format",
        "supersede",
    ),
    "reviewer": ("verify-before-use", "ignore-memory"),
    "compactor": ("verify-before-use", "ignore-memory"),
    # the lead of the turn that asks the executor's own model for a summary; compactor.md
    # follows it in that turn and carries the rules
    "compaction_turn": (),
    # the same for a fold on the executor's model; folding.md follows it and carries the rules
    "fold_turn": (),
    "folding": ("verify-before-use", "ignore-memory", "save-exclusions"),
    "cascade": ("save-exclusions",),
    "extractor": (
        "verify-before-use",
        "ignore-memory",
        "save-exclusions",
        "memory-format",
        "supersede",
    ),
    "memory_tool": ("save-exclusions", "memory-format", "supersede"),
}


@cache
def rule_text(rule: str) -> str:
    if rule not in RULES:
        raise KeyError(f"unknown prompt rule {rule!r}")
    return resources.files(__package__).joinpath("rules", f"{rule}.md").read_text("utf-8")


@cache
def prompt_text(name: str) -> str:
    """The text of `<name>.md` with its rule lines expanded."""
    raw = resources.files(__package__).joinpath(f"{name}.md").read_text("utf-8")
    return _RULE_MARK.sub(lambda m: rule_text(m.group(1)), raw)
