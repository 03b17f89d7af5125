"""Prompt files (`orchestrator/prompts/<role>.md`): a system prompt, then named templates.

A file holds the role's system prompt first, then message templates, each starting with a
line `<!-- template: NAME -->`. Templates use `$name` placeholders (string.Template), so
JSON examples in a prompt keep their braces. Rendering fails loudly: a placeholder without
a value, or a value without a placeholder, raises `TemplateError` instead of reaching the
model as a literal `$name`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from string import Template

from orchestrator.prompts import prompt_text

_MARK = re.compile(r"^<!-- template: ([a-z_]+) -->\n", re.MULTILINE)


class TemplateError(ValueError):
    """A template and the values given to it do not match (a bug, not bad input)."""


@dataclass(frozen=True)
class Prompt:
    role: str
    system: str
    templates: dict[str, str]

    def render(self, name: str, **values: object) -> str:
        where = f"prompt {self.role}.md, template {name!r}"
        if name not in self.templates:
            raise TemplateError(f"{where} does not exist")
        template = Template(self.templates[name])
        wanted = set(template.get_identifiers())
        problems = [f"needs a value for ${n}" for n in sorted(wanted - set(values))]
        problems += [f"has no placeholder for {n}" for n in sorted(set(values) - wanted)]
        if problems:
            raise TemplateError(f"{where} {'; '.join(problems)}")
        text = template.substitute({k: str(v) for k, v in values.items()})
        return re.sub(r"\n{3,}", "\n\n", text).strip()


@cache
def load_prompt(role: str) -> Prompt:
    text = prompt_text(role)
    parts = _MARK.split(text)
    system = parts[0].strip()
    templates = {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}
    return Prompt(role, system, templates)
