"""The model roles that answer in JSON: Planner, PlanAuditor, CodeReviewer.

Each is an `AgentLoop` with the read-only tools; its last reply must hold one JSON object
that fits the role's schema. An answer that does not fit goes back to the model with the
schema's complaints, a bounded number of times (`AnswerInvalid` after that).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from orchestrator.engine import policy
from orchestrator.engine.agent import AgentLoop
from orchestrator.engine.enums import Role
from orchestrator.engine.prompts import load_prompt
from orchestrator.engine.tools import ReadOnlyTools
from orchestrator.errors import OrchError
from orchestrator.messages import Message, SystemPart
from orchestrator.protocols import Model
from orchestrator.schemas import errors
from orchestrator.store.plans import plan_problems

ROLE_TURNS = 30  # tool rounds a JSON role may take before it must answer


class AnswerInvalid(OrchError):
    def __init__(self, role: Role, problems: list[str], attempts: int) -> None:
        self.problems = problems
        self.attempts = attempts
        super().__init__(
            f"the {role}'s answer did not fit its schema after {attempts} tries: {problems[0]}"
        )


def extract_json(text: str) -> tuple[Any, str | None]:
    """The JSON object in a reply: the last ```json block, else the outermost braces."""
    candidates = [m.group(1) for m in re.finditer(r"```(?:json)?\s*\n(.*?)```", text, re.S)]
    candidates.reverse()
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    error = "the reply holds no JSON object"
    for candidate in candidates:
        try:
            return json.loads(candidate), None
        except json.JSONDecodeError as exc:
            error = f"the reply's JSON does not parse: {exc.msg} (line {exc.lineno})"
    return None, error


@dataclass
class JsonRole:
    """A role that reads the repository and answers with one JSON object."""

    role: Role  # the prompt file and the request purpose
    model: Model
    tools: ReadOnlyTools
    max_tokens: int
    context: str = ""  # extra system text (verified memory, related experience)

    def system(self) -> list[SystemPart]:
        parts = [SystemPart(load_prompt(self.role).system, cache=not self.context, label="base")]
        if self.context:
            parts.append(SystemPart(self.context, cache=True, label="memory"))
        return parts

    def ask(
        self,
        first: str,
        *,
        phase: int | None,
        check: Callable[[Any], list[str]],
        fix: Callable[[list[str]], str],
        attempts: int,
        prepare: Callable[[list[Message]], list[Message]] | None = None,
    ) -> tuple[dict[str, Any], int]:
        system = self.system()
        loop = AgentLoop(
            self.model,
            self.tools,
            system=lambda _messages: system,
            purpose=self.role,
            phase=phase,
            max_turns=ROLE_TURNS,
            max_tokens=self.max_tokens,
            prepare=prepare,
        )
        messages = [Message.user(first)]
        problems: list[str] = []
        for attempt in range(1, attempts + 1):
            loop.max_turns = loop.turn + ROLE_TURNS
            text = loop.run(messages)
            data, error = extract_json(text)
            problems = [error] if error else check(data)
            if not problems:
                return data, attempt
            messages = [*loop.messages, Message.user(fix(problems))]
        raise AnswerInvalid(self.role, problems, attempts)

    def verdict(self, first: str, schema: str, *, phase: int | None) -> dict[str, Any]:
        """An answer that `schema` accepts, mended with the role's schema_errors prompt, in
        at most `policy.ANSWER_SCHEMA_ATTEMPTS` tries (then AnswerInvalid)."""
        data, _ = self.ask(
            first,
            phase=phase,
            check=schema_check(schema),
            fix=fixer(self.role, "schema_errors"),
            attempts=policy.ANSWER_SCHEMA_ATTEMPTS,
        )
        return data


def schema_check(name: str) -> Callable[[Any], list[str]]:
    def check(data: Any) -> list[str]:
        return errors(name, data)

    return check


def plan_check(slug: str, tier: str | None) -> Callable[[Any], list[str]]:
    """The plan schema and its rules; the slug (and a forced tier) are set by orch first."""

    def check(data: Any) -> list[str]:
        if isinstance(data, dict):
            data["slug"] = slug
            data.setdefault("schema_version", 1)
            if tier:
                data["complexity_tier"] = tier
        return plan_problems(data)

    return check


def fixer(role: Role, template: str, **values: object) -> Callable[[list[str]], str]:
    def fix(problems: list[str]) -> str:
        listed = "\n".join(f"- {p}" for p in problems[:20])
        return load_prompt(role).render(template, problems=listed, **values)

    return fix
