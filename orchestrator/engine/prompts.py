"""Prompt files (`orchestrator/prompts/<role>.md`): a system prompt, then named templates.

A file holds the role's system prompt first, then message templates, each starting with a
line `<!-- template: NAME -->`. Templates use `$name` placeholders (string.Template), so
JSON examples in a prompt keep their braces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from string import Template

from orchestrator.prompts import prompt_text

_MARK = re.compile(r"^<!-- template: ([a-z_]+) -->\n", re.MULTILINE)


@dataclass(frozen=True)
class Prompt:
    role: str
    system: str
    templates: dict[str, str]

    def render(self, name: str, **values: object) -> str:
        text = Template(self.templates[name]).safe_substitute(
            {k: str(v) for k, v in values.items()}
        )
        return re.sub(r"\n{3,}", "\n\n", text).strip()


@cache
def load_prompt(role: str) -> Prompt:
    text = prompt_text(role)
    parts = _MARK.split(text)
    system = parts[0].strip()
    templates = {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}
    return Prompt(role, system, templates)
