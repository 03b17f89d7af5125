"""Claims about code that is not Python: Go flags, programs declared outside
pyproject.toml, single-word type names (real files in a real git repository)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.memory.audit import AuditReport, audit
from orchestrator.store.layout import Layout

Put = Callable[..., Any]


def kinds(report: AuditReport, kind: str) -> list[tuple[str | None, tuple[str, ...]]]:
    return sorted((f.memory, f.related) for f in report.findings if f.kind == kind)


GO_MAIN = """package main

import "flag"

func main() {
\tforce := flag.Bool("force", false, "overwrite local edits")
\tvar dir string
\tflag.StringVar(&dir, "dir", ".", "where to sync")
\t_ = force
}
"""
PACKAGE_JSON = '{"name": "cart-tools", "bin": {"cartctl": "bin/cartctl.js"}}\n'
CARTCTL = 'const args = process.argv;\nif (args.includes("--purge")) { purge(); }\n'


def test_go_flags_programs_and_type_names(
    layout: Layout, put: Put, commit_all: Callable[..., str]
) -> None:
    root = layout.root
    (root / "cmd" / "synctool").mkdir(parents=True)
    (root / "cmd" / "synctool" / "main.go").write_text(GO_MAIN)
    (root / "bin").mkdir()
    (root / "bin" / "cartctl.js").write_text(CARTCTL)
    (root / "package.json").write_text(PACKAGE_JSON)
    (root / "compose.yaml").write_text("services:\n  cache:\n    image: redis:7\n")
    commit_all(root, "tools")
    put("force", "`synctool --force` overwrites local edits; `--dir` picks the folder.")
    put("prune", "`synctool --prune` deletes files the remote no longer has.")
    put("purge", "`cartctl --purge` empties every cart.")
    put("nuke", "`cartctl --nuke` drops the carts table.")
    put("loader-type", "`Loader` caches every file it reads.")
    put("redis", "`Redis` holds the sessions.")
    put("fetcher", "`Fetcher` retries each download twice.")
    stale = {m for m, _ in kinds(audit(layout), "stale_citation")}
    assert stale == {"prune", "nuke", "fetcher"}
