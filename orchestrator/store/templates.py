"""The markdown templates: the repository's copy in plans/templates/ wins over the package's."""

from __future__ import annotations

import re
from pathlib import Path

from orchestrator.store.layout import Layout

TEMPLATE_NAMES = ("plan.md", "phase-report.md", "session-notes.md", "verified-items.md")
# the package's own templates, read as files (`importlib.resources` costs start-up time and
# the package is always installed as files)
PACKAGE_TEMPLATES = Path(__file__).parent.parent / "templates"


def package_template(name: str) -> str:
    return (PACKAGE_TEMPLATES / name).read_text("utf-8")


def template(layout: Layout | None, name: str) -> str:
    """The repository's template `name` if it has a readable one, else the package's."""
    if layout is not None:
        local = layout.templates / name
        try:
            if local.is_file():
                return local.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            pass  # an unreadable local template: the package's serves
    return package_template(name)


_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fill(text: str, **values: object) -> str:
    """Replace `{field}` with its value (unknown fields: empty); `{{` and `}}` are braces.

    Unlike `str.format`, any other brace is left as it is, so a template a user edited by
    hand can never make a command fail.
    """

    def one(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return match.group(0)[0]
        value = values.get(match.group(1))
        return "" if value is None else str(value)

    return _FIELD.sub(one, text)
