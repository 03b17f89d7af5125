"""docs/scripted-model.md is generated from the code, and its example runs as shown."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from evals import docs_scripted
from orchestrator.context import compact_tool_spec
from orchestrator.engine.demo import orch_command
from orchestrator.engine.tools import ExecutorTools, ReadOnlyTools
from orchestrator.engine.vcs import ProjectRepo
from orchestrator.messages import ToolSpec
from orchestrator.models.memory_tool import MemoryToolHandler
from orchestrator.schemas import load_schema
from orchestrator.store.layout import Layout

DOC = docs_scripted.DOC
FILE = re.compile(r"^#### `(?P<path>[^`]+)`\n\n```\w+\n(?P<body>.*?)^```$", re.M | re.S)
COMMANDS = re.compile(r"^```sh\n(?P<body>.*?)^```$", re.M | re.S)


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_guide_is_what_the_generator_writes_now() -> None:
    assert DOC.read_text(encoding="utf-8") == docs_scripted.render(), (
        "docs/scripted-model.md is out of date: run `make docs`"
    )


def test_a_changed_tool_or_schema_makes_the_guide_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "guide.md"
    assert docs_scripted.main(["--write", "--doc", str(doc)]) == 0
    assert docs_scripted.main(["--check", "--doc", str(doc)]) == 0
    extra = ToolSpec("paint", "Paint a file.", {"type": "object", "properties": {}})
    monkeypatch.setattr(docs_scripted, "WRITE_SPECS", [*docs_scripted.WRITE_SPECS, extra])
    assert docs_scripted.main(["--check", "--doc", str(doc)]) == 1
    monkeypatch.undo()
    review = dict(load_schema("review_verdict"))
    review["properties"] = {**review["properties"], "mood": {"type": "string"}}
    monkeypatch.setattr(
        docs_scripted,
        "load_schema",
        lambda name: review if name == "review_verdict" else load_schema(name),
    )
    assert "| `mood` | string |" in docs_scripted.render()
    assert docs_scripted.main(["--check", "--doc", str(doc)]) == 1


def test_the_guide_shows_every_reply_schema_field_and_enum() -> None:
    text = DOC.read_text(encoding="utf-8")
    schemas = section(text, "Reply schemas")
    for field in ("phases[].files[].action", "risk_review.operability.level", "checks[].passed"):
        assert f"| `{field}` |" in schemas, field
    assert '`"NEEDS_REVISION"`' in schemas and '`"human_approved_if_required"`' in schemas
    assert "| `validated_blocking_issues[].file` | string or null |  |" in schemas


def test_the_guide_lists_exactly_the_tools_each_role_is_offered(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    layout = Layout(repo)
    executor = ExecutorTools(
        ProjectRepo(layout),
        phase=1,
        trace_id="t",
        policy=docs_scripted.Config().policy,
        approvals={},
        tasklist_path=tmp_path / "tasks.json",
        memory=MemoryToolHandler(layout),
    )
    offered = [*executor.specs(), compact_tool_spec()]
    tools = section(DOC.read_text(encoding="utf-8"), "Tools")
    assert re.findall(r"^### `(\w+)`$", tools, re.M) == [s.name for s in offered]
    for spec in offered:
        for name in spec.input_schema.get("properties", {}):
            assert f"| `{name}` |" in tools, (spec.name, name)
    read_only = ", ".join(f"`{s.name}`" for s in ReadOnlyTools(ProjectRepo(layout)).specs())
    assert f"read-only tools ({read_only})" in tools
    assert "`run_shell`" in tools and "`command` | string | yes" in tools


def test_the_guides_example_runs_through_orch_to_complete(tmp_path: Path) -> None:
    """The files, script and commands exactly as docs/scripted-model.md shows them."""
    example = section(DOC.read_text(encoding="utf-8"), "An example that runs")
    repo = tmp_path / "greet"
    repo.mkdir()
    files = {m["path"]: m["body"] for m in FILE.finditer(example)}
    assert set(files) == {"greet.py", "test_greet.py", "orch.toml", "../script.yaml"}
    for path, body in files.items():
        (repo / path).write_text(body, encoding="utf-8")
    block = COMMANDS.search(example)
    assert block is not None
    outputs = []
    for line in block["body"].splitlines():
        argv = shlex.split(line)
        if argv[0] == "orch":
            argv = orch_command(*argv[1:])
        done = subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        outputs.append(done.stdout)
    assert "WAITING_APPROVAL" in outputs[-3]  # orch run stops for the plan
    assert "COMPLETE" in outputs[-1] and "error" not in outputs[-2].lower()
    assert "compaction (fold): failed" not in outputs[-2]  # the script answers every request
    log = subprocess.run(
        ["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert log == ["Phase 1: Add farewell()", "Start"]
    committed = subprocess.run(
        ["git", "show", "HEAD:greet.py"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert 'def farewell(name):\n    return "Goodbye, " + name' in committed
