"""A file orch does not read (over `codeindex.MAX_FILE_BYTES`, or binary) has lines and
words nobody counted: a citation into it is not judged, where a file that was read and is
too short is still stale."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import commit, verify_all

from orchestrator.memory import codeindex
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> int:
    """A read cap of 4,000 bytes, so a large file is cheap to write."""
    monkeypatch.setattr(codeindex, "MAX_FILE_BYTES", 4_000)
    return 4_000


def test_a_citation_into_a_file_too_large_to_read_is_not_judged(
    layout: Layout, put: Callable[..., object], small_cap: int
) -> None:
    root = layout.root
    (root / "static").mkdir()
    bundle = "".join(f"function part{i}() {{ return {i}; }}\n" for i in range(400))
    assert len(bundle) > small_cap
    (root / "static" / "bundle.js").write_text(bundle + "function renderApp() {}\n")
    (root / "static" / "short.js").write_text("function renderShort() {}\n")
    commit(root, "assets")
    put(
        "bundle-line",
        "The app's entry is near the end of the bundle.",
        citations=(Citation("static/bundle.js", 401),),
    )
    put(
        "bundle-symbol",
        "The bundle starts the app.",
        citations=(Citation("static/bundle.js", None, "renderApp"),),
    )
    put(
        "short-line",
        "The short script's entry.",
        citations=(Citation("static/short.js", 40),),
    )
    results = verify_all(layout)
    assert results["bundle-line"].result == "ok"
    assert results["bundle-symbol"].result == "ok"
    assert results["short-line"].result == "stale"
    assert "past the end" in results["short-line"].failures[0].reason


def test_a_binary_file_is_marked_unread() -> None:
    facts = codeindex.file_facts(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "logo.png")
    assert not facts.read
    assert codeindex.FileFacts.from_json(facts.to_json()) == facts
    assert codeindex.file_facts(b"def go():\n    pass\n", "app.py").read
