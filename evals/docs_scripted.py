"""Generate docs/scripted-model.md, the guide to writing a scripted-model script, from the code.

    python -m evals.docs_scripted --write    # rewrite the guide (what `make docs` runs)
    python -m evals.docs_scripted --check    # exit 1 if the guide is out of date
    python -m evals.docs_scripted            # print it

The reply schemas come from orchestrator/schemas/, the tools from the tool definitions the
agents are given (`READ_SPECS`, `WRITE_SPECS`, the memory tool's and the `compact` tool's
specs), the limits from the engine's constants, and the example from
evals/scripted_example/, which a test runs through `orch` exactly as the guide shows it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evals.docs_cli import doc_main
from orchestrator.config import Config, ContextConfig
from orchestrator.context import compact_tool_spec
from orchestrator.context.compaction import SECTIONS
from orchestrator.engine import policy
from orchestrator.engine.enums import Role
from orchestrator.engine.roles import ROLE_TURNS, extract_json
from orchestrator.engine.tools import READ_SPECS, WRITE_SPECS
from orchestrator.errors import FAILURE_CLASSES
from orchestrator.messages import ToolSpec
from orchestrator.models.memory_tool import REQUIRED, MemoryToolHandler
from orchestrator.models.scripted import REPLY_KEYS, USAGE_KEYS
from orchestrator.schemas import load_schema

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "scripted-model.md"
EXAMPLE = Path(__file__).resolve().parent / "scripted_example"
# the example's files, as the guide shows them: (path from the repository, file in EXAMPLE)
EXAMPLE_FILES = (
    ("greet.py", "greet.py"),
    ("test_greet.py", "test_greet.py"),
    ("orch.toml", "orch.toml"),
    ("../script.yaml", "script.yaml"),
)
EXAMPLE_TASK = "Add a farewell function"
EXAMPLE_SLUG = "add-a-farewell-function"
EXAMPLE_COMMANDS = (
    "git init -q -b main",
    "orch init",
    "git add -A",
    'git commit -q -m "Start"',
    f'orch run "{EXAMPLE_TASK}" --model scripted:../script.yaml',
    f"orch approve {EXAMPLE_SLUG}",
    f"orch status {EXAMPLE_SLUG}",
)

# who sends each request purpose, and what its reply must be; every Role must be here
PURPOSES: dict[str, tuple[str, str, str]] = {
    Role.PLANNER: (
        "each plan iteration",
        "null",
        "optional read-only tool calls, then one JSON object that fits the plan schema",
    ),
    Role.AUDITOR: (
        "each plan iteration, after the planner",
        "null",
        "optional read-only tool calls, then the audit verdict",
    ),
    Role.EXECUTOR: (
        "each phase (its attempts and retries continue one conversation)",
        "the phase id",
        "tool calls; a reply without tool calls ends the phase, its text is the summary",
    ),
    Role.REVIEWER: (
        "each phase's review (phase N), then the final review of the task (phase null)",
        "N or null",
        "optional read-only tool calls, then the review verdict",
    ),
    "compactor": (
        "folding a phase's turns at its end; compaction (the `compact` tool, or past "
        "`compact_threshold_tokens`)",
        "the phase id",
        "folding: a JSON object with a non-empty `summary` (optional lists `decisions`, "
        "`eliminated`, `open_questions`, `tool_results`, `facts`, `patterns`); compaction: "
        "text with the sections " + ", ".join(f"`{s}`" for s in SECTIONS),
    ),
    "extractor": (
        "only `orch memory promote --model ...` (Checklist C's proposals); `orch run` "
        "never asks it",
        "N or null",
        "a JSON list of `{id, subject, type, reason, scope, kind, name}`",
    ),
}

ROLE_SCHEMAS = (
    (Role.PLANNER, "plan", "plan.json"),
    (Role.AUDITOR, "audit_verdict", "the audit verdict"),
    (Role.REVIEWER, "review_verdict", "the review verdict"),
)


# JSON Schema, as tables -----------------------------------------------------------------


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        resolved: dict[str, Any] = root["$defs"][ref.removeprefix("#/$defs/")]
        return resolved
    return node


def type_name(node: dict[str, Any], root: dict[str, Any]) -> str:
    node = _resolve(node, root)
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "enum"
    kind = node.get("type", "any")
    if kind == "array":
        return f"array of {type_name(node.get('items', {}), root)}"
    if isinstance(kind, list):
        return " or ".join(kind)
    return str(kind)


def constraints(node: dict[str, Any], root: dict[str, Any]) -> str:
    node = _resolve(node, root)
    notes: list[str] = []
    if "enum" in node:
        notes.append("one of " + ", ".join(f"`{json.dumps(v)}`" for v in node["enum"]))
    items = _resolve(node.get("items", {}), root)
    if "enum" in items:
        notes.append("each one of " + ", ".join(f"`{json.dumps(v)}`" for v in items["enum"]))
    if node.get("minLength"):
        notes.append("non-empty")
    if "minimum" in node or "maximum" in node:
        notes.append(f"{node.get('minimum', '')}..{node.get('maximum', '')}")
    if "minItems" in node or "maxItems" in node:
        notes.append(f"{node.get('minItems', 0)}..{node.get('maxItems', 'n')} items")
    if node.get("uniqueItems"):
        notes.append("no repeats")
    if "pattern" in node:
        notes.append(f"matches `{node['pattern']}`")
    if "description" in node:
        notes.append(str(node["description"]))
    return "; ".join(notes)


def field_rows(
    schema: dict[str, Any], root: dict[str, Any], prefix: str = ""
) -> Iterator[tuple[str, str, str, str]]:
    """(field path, type, required, constraints) for every field, nested ones depth first."""
    schema = _resolve(schema, root)
    required = set(schema.get("required", []))
    for name, raw in schema.get("properties", {}).items():
        node = _resolve(raw, root)
        path = f"{prefix}{name}"
        yield (
            f"`{path}`",
            type_name(raw, root),
            "yes" if name in required else "",
            constraints(raw, root),
        )
        if node.get("type") == "object":
            yield from field_rows(node, root, f"{path}.")
        items = _resolve(node.get("items", {}), root)
        if node.get("type") == "array" and items.get("type") == "object":
            yield from field_rows(items, root, f"{path}[].")


def table(schema: dict[str, Any]) -> str:
    lines = ["| field | type | required | values |", "|---|---|---|---|"]
    for row in field_rows(schema, schema):
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    return "\n".join(lines)


# the sections ---------------------------------------------------------------------------

HEADER = """# Writing a scripted-model script

<!-- Generated from the code by `python -m evals.docs_scripted --write` (`make docs`);
     do not edit by hand. A test fails when this file is out of date. -->

`--model scripted:PATH` (or `model = "scripted:PATH"` in orch.toml) replaces the language
model with a script: YAML, or JSON when the name ends in `.json`. Every request orch would
send to a model is answered by the script instead, and checked exactly as a real model's
reply is. This guide says what each request expects, which tools exist, how a reply is
picked, and ends with a script that runs. [docs/models.md](models.md#the-scripted-model)
has the script's format in short; the demo's script, `orchestrator/sample/script.yaml`,
is a longer example (a failing gate, a retry, the memory tool, a crash and a resume).
"""


def section_format() -> str:
    keys = ", ".join(f"`{k}`" for k in REPLY_KEYS)
    usage = ", ".join(f"`{k}`" for k in USAGE_KEYS)
    classes = ", ".join(f"`{c}`" for c in FAILURE_CLASSES)
    return f"""
## A reply

A reply is a mapping with some of {keys}:

- `text`: the reply's text. For a role that answers in JSON, the JSON object goes here.
- `tool_calls`: a list of `{{name, input, id?}}`; `id` defaults to
  `toolu_scripted_<request number>_<index>`. The names and inputs are those of
  [the tools](#tools) the request offers.
- `stop_reason`: default `tool_use` when there are tool calls, else `end_turn`.
  `max_tokens` with a tool call last raises `fixable`; `refusal` raises `escalate`.
- `usage`: some of {usage}, as integers (default: estimated from the request the
  Anthropic adapter would send, with prompt caching, as docs/models.md says).
- `model`: a model id (e.g. `claude-sonnet-4-6`) whose list price prices this reply's
  `usage`, so that a script can reach a spending cap; without it a reply costs nothing
  against the cap (its `estimated_cost_usd` prices the usage as `claude-sonnet-4-6`).
- `note`: free text, ignored (say why the reply is there).
- `error`: `{{class, message?, status?, retry_after?, times?}}` with `class` one of
  {classes}: instead of a reply, the request fails `times` times (default 1) with that
  class, then the entry after it answers the same request.

A reply needs `text`, `tool_calls` or `error`; one with neither text nor tool calls is an
empty reply (`transient`).
"""


def section_purposes() -> str:
    missing = [r for r in Role if r not in PURPOSES]
    if missing:
        raise SystemExit(f"docs_scripted: describe the purpose of {missing} in PURPOSES")
    lines = [
        "",
        "## Who asks: the request's purpose",
        "",
        "Every request carries a `purpose` and a `phase`, which a conversation's `when` "
        "matches (next section).",
        "",
        "| purpose | asked for | phase | the reply |",
        "|---|---|---|---|",
    ]
    for purpose, (when, phase, reply) in PURPOSES.items():
        lines.append(f"| `{purpose}` | {when} | {phase} | {reply} |")
    doc = extract_json.__doc__ or ""
    lines += [
        "",
        "A role that answers in JSON (planner, auditor, reviewer) may first call the "
        f"read-only tools, at most {ROLE_TURNS} rounds, and then answer without tool calls. "
        f"orch takes from that last reply {doc.strip().removeprefix('The JSON object in a reply: ')} "
        "A plan that does not fit its schema goes back to the planner with the problems, "
        f"{policy.PLAN_SCHEMA_ATTEMPTS} tries in all; an audit or review verdict "
        f"{policy.ANSWER_SCHEMA_ATTEMPTS} tries. The planner's `slug` and "
        "`schema_version` are set by orch (any value will do), and the phases must run "
        "1..n in order with dependencies on known phases and no cycle.",
        "",
    ]
    return "\n".join(lines)


def section_numbering() -> str:
    config, context = Config(), ContextConfig()
    return f"""
## How a reply is picked

A script has exactly one of two forms.

**`replies`: one queue.** Each request takes the next reply, whatever its purpose. The
queue lives in the model object: one per model name in each orch process (so
`planner_model`, `auditor_model` and `reviewer_model` naming other scripts have their own
queues). Every orch process (`run`, `approve`, `resume`) starts at the top again, so a
queue only suits a task done in one process (`orch run --yes`) and tests of the model
layer.

**`conversations`: keyed by the request.** A list of `{{when, replies}}`. The first
conversation whose `when` matches the request answers it, so put specific ones first.
`when` may hold:

- `purpose`: the request's purpose (above);
- `phase`: its phase, an integer, or `null` to match only requests without one (the
  final review, for instance, next to per-phase reviews);
- `contains`: a substring of the newest user message that has text (tool results have
  none). The planner's first message holds `Plan iteration 1.`, a revision
  `Plan iteration 2:`, the auditor's `Plan iteration 1 of`. orch adds such messages as a
  conversation goes on (a schema fix starts `Plan iteration 1: that plan does not follow`,
  an executor retry holds the gate's output), and a conversation keyed on the first one
  no longer matches them: key the fix too, or leave `contains` out.

A missing key matches anything.

Within a conversation, **reply N answers the request that already holds N assistant
turns** (counted in the messages sent: the first request is turn 0). The choice depends
only on the request, never on what was asked before, so every process gets the same
replies. In practice:

- **Tool rounds**: each reply with tool calls adds one assistant turn; the reply after it
  is the next entry.
- **A JSON answer that does not fit** its schema: orch adds a user message with the
  problems to the same conversation, so the fix is the next entry.
- **Plan iterations**: each iteration (an auditor's NEEDS_REVISION, a person's
  `orch approve --deny --note`) is a new conversation starting at turn 0 for the planner
  and for the auditor; tell them apart with `contains`.
- **Phase reviews and the final review**: each is a new conversation at turn 0, so a
  reviewer conversation's first entry answers every review it matches.
- **Executor retries**: after a failed gate the phase's next attempt continues the same
  conversation (the gate's output is added as a user message), so its replies follow on
  from the first attempt's: in the demo's script, phase 1's entries 0-3 are the first
  attempt and 4-6 the retry. A targeted replan (`needs_replan`) starts the phase's
  conversation again from turn 0.
- **Approvals**: `orch approve` of a plan asks no model again; the executor goes on at
  turn 0 of phase 1. A high-risk `run_shell` stops the phase before its reply's turn is
  recorded, so after `orch approve` the same entry answers again and all its tool calls
  run again (put the high-risk call in a reply of its own).
- **Resume**: the phase's conversation is restored from its checkpoint (saved after every
  completed turn), so the entry after the last completed turn answers; a turn cut short
  by a crash is asked again. A phase whose final reply was recorded is not asked again.
- **Compaction** replaces older turns with a summary: the requests that follow hold fewer
  assistant turns, and the count (so the entry) drops with them. It happens when the
  model calls `compact`, or past `compact_threshold_tokens` ({context.compact_threshold_tokens:,}
  by default), which a short script does not reach.
- **The compactor and the extractor** are never continued, so a conversation's first
  entry answers each of their requests, whatever it holds: a compaction sends the
  executor's own conversation with a last user turn that starts `Conversation to
  summarise` (unless `compactor_model` names another model: then that phrase starts its
  only user message).
- **`error` entries** sit before the reply they delay and do not count as turns: entry
  N's errors are raised first, each `times` times, then entry N answers. orch's model
  layer retries `transient` errors {config.max_retries} times (`max_retries`) without
  waiting unless `retry_after` says so; other classes reach the engine at once. The
  count of errors raised is kept per process: a resumed process raises them again.

A request no conversation matches, or a conversation without entry N, fails with class
`escalate` and a message naming the purpose, phase and turn; the task stops on it (orch
status says why), except for the compactor: folding is logged as failed and the task goes
on.
"""


def tool_section(spec: ToolSpec) -> str:
    description = spec.description.strip()
    body = f"```text\n{description}\n```" if "\n" in description else description
    return f"\n### `{spec.name}`\n\n{body}\n\n{table(spec.input_schema)}\n"


def section_tools() -> str:
    read = ", ".join(f"`{s.name}`" for s in READ_SPECS)
    memory = MemoryToolHandler.spec()
    commands = "\n".join(
        f"| `{command}` | " + ", ".join(f"`{key}` ({kind.__name__})" for key, kind in keys) + " |"
        for command, keys in REQUIRED.items()
    )
    parts = [
        f"""
## Tools

The planner, the auditor and the reviewer are offered the read-only tools ({read}). The
executor is offered those, then {", ".join(f"`{s.name}`" for s in WRITE_SPECS)},
`{memory.name}` (repository memory) and `{compact_tool_spec().name}`. A call to a tool the
request does not offer, or with input that does not fit its schema, is `fixable`. A tool
that fails (a missing file, a command that exits non-zero) answers with an error result
the next turn sees; it does not stop the phase. Paths are relative to the repository;
orch's records (`plans/`, `memories/`, `NOTES.md`, `.orch/`) and `.git/` are not
writable with the file tools.
"""
    ]
    parts += [tool_section(s) for s in [*READ_SPECS, *WRITE_SPECS, memory, compact_tool_spec()]]
    parts.append(
        f"\nWhat each `{memory.name}` command needs:\n\n| command | required |\n|---|---|\n"
        + commands
        + "\n"
    )
    return "".join(parts)


def section_schemas() -> str:
    parts = ["\n## Reply schemas\n"]
    for role, name, what in ROLE_SCHEMAS:
        schema = load_schema(name)
        parts.append(
            f"\n### `{role}`: {what}\n\n{schema.get('description', '')}\n"
            f"Schema: `orchestrator/schemas/{name}.schema.json`. No keys other than these.\n\n"
            f"{table(schema)}\n"
        )
    return "".join(parts)


def section_example() -> str:
    files = []
    for shown, name in EXAMPLE_FILES:
        text = (EXAMPLE / name).read_text(encoding="utf-8")
        lang = {".py": "python", ".toml": "toml", ".yaml": "yaml"}[Path(name).suffix]
        files.append(f"#### `{shown}`\n\n```{lang}\n{text.rstrip()}\n```\n\n")
    commands = "\n".join(EXAMPLE_COMMANDS)
    return f"""
## An example that runs

A one-phase task on a two-file project: the planner plans, the auditor approves, a person
approves, the executor reads, edits and runs the tests, the real test gate passes, the
reviewer approves the phase and then the whole task. A test runs exactly this (the files,
the script and the commands below) and checks that the task is COMPLETE with one phase
commit.

In a new folder holding the first three files, with the script one folder up (a script
inside the repository would leave the tree dirty):

{"".join(files)}Then:

```sh
{commands}
```

`orch run` stops at WAITING_APPROVAL with the plan; `orch approve` runs phase 1 and
completes the task: `orch status` says COMPLETE, and `git log` shows
`Phase 1: Add farewell()` on top of `Start`. Without bubblewrap installed, add
`[policy]` with `sandbox = "off"` to orch.toml (docs/security.md).
"""


def render() -> str:
    return (
        HEADER
        + section_format()
        + section_purposes()
        + section_numbering()
        + section_schemas()
        + section_tools()
        + section_example()
    )


def main(argv: list[str] | None = None) -> int:
    return doc_main(argv, render=render, doc=DOC, description=__doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
