"""`orch --help` and the memory read commands stay light: no SDK, no heavy library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.memory.writer import MemoryWriter
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory

NEVER = ["anthropic", "jsonschema", "rich", "git", "detect_secrets", "tree_sitter"]

PROBE = """
import json, sys
from orchestrator.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
sys.stderr.write("\\nMODULES " + json.dumps(sorted(m.split(".")[0] for m in sys.modules)) + "\\n")
sys.exit(code)
"""


def imported(args: list[str], cwd: Path) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    line = [x for x in proc.stderr.splitlines() if x.startswith("MODULES ")][-1]
    return set(json.loads(line[len("MODULES ") :]))


@pytest.fixture
def with_memories(layout: Layout) -> Layout:
    (layout.root / "a.py").write_text("x = 1\n")
    writer = MemoryWriter(layout)
    for i in range(5):
        writer.add(
            Memory(
                name=f"m-{i}",
                description=f"memory {i}",
                type="reference",
                body=f"Fact number {i} about a.py.\n",
                subject=f"subject {i}",
                reason="tests",
                citations=(Citation("a.py", 1),),
            )
        )
    return layout


@pytest.mark.parametrize(
    ("args", "banned"),
    [
        (["--help"], NEVER),
        (["memory", "--help"], NEVER),
        (["memory", "list"], NEVER),
        (["memory", "list", "--json"], NEVER),
        (["memory", "show", "m-1"], NEVER),
        (["memory", "add", "--help"], NEVER),
        (["notes", "show"], NEVER),
    ],
)
def test_commands_do_not_import_heavy_modules(
    with_memories: Layout, args: list[str], banned: list[str]
) -> None:
    for _ in range(2):  # cold (no parse cache yet), then warm
        modules = imported(args, with_memories.root)
        assert "orchestrator" in modules
        assert not modules & set(banned), sorted(modules & set(banned))


def test_the_probe_would_see_a_heavy_import(with_memories: Layout) -> None:
    # the audit scans memory files with detect-secrets: the probe must notice
    (with_memories.repo_memories / "m-1.md").write_text(
        (with_memories.repo_memories / "m-1.md").read_text()
        + "\nDeploys sign in as AKIAZ3MQ7XJ2KD4PLNBQ.\n"  # a line only detect-secrets judges
    )
    modules = imported(["memory", "audit"], with_memories.root)
    assert "detect_secrets" in modules
