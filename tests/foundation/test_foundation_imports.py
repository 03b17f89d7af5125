"""`orch --help` and the memory read commands stay light: no SDK, no heavy library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation, Memory
from orchestrator.store.repo import RepoMemoryStore

NEVER = ["anthropic", "jsonschema", "rich", "git"]
# PyYAML is imported only to parse a file the parse cache does not hold yet.
NOT_ON_READS = [*NEVER, "filelock"]

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
    store = RepoMemoryStore(layout)
    for i in range(5):
        store.add(
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
        (["memory", "list"], NOT_ON_READS),
        (["memory", "list", "--json"], NOT_ON_READS),
        (["memory", "show", "m-1"], NEVER),
        (["notes", "show"], NOT_ON_READS),
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
    # writing validates with jsonschema and locks with filelock: the probe must notice
    modules = imported(
        ["memory", "add", "--type", "user", "--subject", "probe", "--reason", "r", "--fact", "f"],
        with_memories.root,
    )
    assert {"jsonschema", "filelock"} <= modules
