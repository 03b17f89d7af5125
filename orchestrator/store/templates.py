"""The markdown templates: the repository's copy in plans/templates/ wins over the package's."""

from __future__ import annotations

from importlib import resources

from orchestrator.store.layout import Layout

TEMPLATE_NAMES = ("plan.md", "phase-report.md", "session-notes.md", "verified-items.md")


def package_template(name: str) -> str:
    return resources.files("orchestrator").joinpath("templates", name).read_text("utf-8")


def template(layout: Layout | None, name: str) -> str:
    if layout is not None:
        local = layout.templates / name
        if local.is_file():
            return local.read_text(encoding="utf-8")
    return package_template(name)


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return ""


def fill(text: str, **values: object) -> str:
    """`str.format_map` that leaves unknown fields empty instead of failing."""
    return text.format_map(_Blank({k: str(v) for k, v in values.items()}))
