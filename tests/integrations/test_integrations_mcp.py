"""`orch mcp`, driven by the official MCP SDK's client over stdio against a real repository."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from integrations_support import ORCH, git, orch
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from orchestrator.memory.usage import UsageLog
from orchestrator.store.layout import Layout
from orchestrator.store.repo import RepoMemoryStore

TOOLS = {
    "memory_search", "memory_get", "memory_add", "memory_supersede", "memory_verify",
    "memory_audit", "notes_get", "task_status", "task_brief",
}  # fmt: skip
NEW = {
    "name": "exit-code",
    "type": "reference",
    "subject": "exit code",
    "reason": "scripts check it",
    "fact": "`main` in app/main.py returns 0 on success.",
    "citations": [{"path": "app/main.py", "symbol": "main"}],
}


def session(repo: Path, steps: Any) -> Any:
    async def run() -> Any:
        params = StdioServerParameters(command=ORCH, args=["mcp"], cwd=str(repo))
        async with Client(params) as client:
            return await steps(client)

    return asyncio.run(run())


def data(result: Any) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


def test_every_tool_answers_through_the_sdk_client(project: Layout) -> None:
    repo = project.root

    async def steps(client: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": {t.name for t in (await client.list_tools()).tools}}
        out["get"] = data(await client.call_tool("memory_get", {"name": "entry-point"}))
        out["search"] = data(await client.call_tool("memory_search", {"query": "Store load"}))
        out["add"] = data(await client.call_tool("memory_add", NEW))
        sup = dict(NEW, old="exit-code", name="exit-code-2", fact="`main` returns 0, always.")
        out["supersede"] = data(await client.call_tool("memory_supersede", sup))
        out["verify"] = data(await client.call_tool("memory_verify", {}))
        out["audit"] = data(await client.call_tool("memory_audit", {}))
        out["notes"] = data(await client.call_tool("notes_get", {}))
        out["status"] = data(await client.call_tool("task_status", {}))
        out["brief"] = data(await client.call_tool("task_brief", {"max_tokens": 400}))
        out["resources"] = {str(r.uri) for r in (await client.list_resources()).resources}
        index = await client.read_resource("orch://memory-index")
        out["index"] = index.contents[0].text
        return out

    out = session(repo, steps)
    assert out["tools"] == TOOLS
    assert out["get"]["fact"] == "The app starts in `main` in app/main.py."
    assert out["get"]["verification"] == "ok"
    assert out["search"]["hits"][0]["ref"] == "store-load"
    assert out["add"] == {"action": "created", "name": "exit-code"}
    assert out["supersede"]["superseded"] == "exit-code"
    store = RepoMemoryStore(project)
    assert store.get("exit-code").status == "superseded"
    assert store.get("exit-code-2").citations[0].symbol == "main"
    assert "exit-code-2" in (project.repo_memories / "MEMORY.md").read_text()
    assert {r["name"] for r in out["verify"]["results"]} >= {"entry-point", "store-load"}
    assert out["audit"]["v"] == 1 and "findings" in out["audit"]
    assert "Active objective" in out["notes"]["text"]
    assert out["status"] == {"tasks": []}
    assert out["brief"]["task"] is None and out["brief"]["memories"]
    assert out["resources"] == {"orch://notes", "orch://memory-index"}
    assert "[entry-point](entry-point.md)" in out["index"]
    with UsageLog(project) as usage:
        used = usage.summary()
    assert used["entry-point"].count >= 1 and used["store-load"].count >= 1  # served: a use


def test_refusals_and_bad_arguments_are_tool_errors(project: Layout) -> None:
    repo = project.root

    async def steps(client: Any) -> list[Any]:
        return [
            await client.call_tool("memory_add", dict(NEW, name="entry-point")),  # name taken
            await client.call_tool(
                "memory_add",
                dict(NEW, fact="Deploy with ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8."),
            ),
            await client.call_tool("memory_add", dict(NEW, citations=[])),  # needs a citation
            await client.call_tool("memory_add", {"name": "x"}),  # arguments missing
            await client.call_tool("memory_get", {"name": "no-such-memory"}),
            await client.call_tool("task_status", {"task": "no-such-task"}),
        ]

    results = session(repo, steps)
    assert all(r.is_error for r in results), [r.content for r in results]
    texts = [" ".join(c.text for c in r.content) for r in results]
    assert "exists" in texts[0]
    assert "holds a secret" in texts[1] and "ghp_" not in texts[1]
    assert "citation" in texts[2]
    assert not (project.repo_memories / "exit-code.md").exists()
    assert "ghp_" not in json.dumps([p.read_text() for p in project.repo_memories.iterdir()])


def test_a_stale_memory_is_never_served_as_true(project: Layout) -> None:
    repo = project.root
    (repo / "app" / "store.py").unlink()
    git(repo, "commit", "-qam", "drop the store")

    async def steps(client: Any) -> list[Any]:
        return [
            data(await client.call_tool("memory_get", {"name": "store-load"})),
            data(await client.call_tool("memory_search", {"query": "Store load saved state"})),
            data(await client.call_tool("task_brief", {})),
            (await client.read_resource("orch://memory-index")).contents[0].text,
        ]

    got, search, brief, index = session(repo, steps)
    assert got["status"] == "stale" and "fact" not in got and got["reason"]
    assert all(h["ref"] != "store-load" for h in search["hits"])
    assert search["withheld_as_stale"] == ["store-load"]
    assert brief["withheld"] == ["store-load"]
    assert all(m["name"] != "store-load" for m in brief["memories"])
    assert "store-load" not in index


def test_a_moved_memory_is_served_with_where_its_file_went(project: Layout) -> None:
    repo = project.root
    git(repo, "mv", "app/store.py", "app/storage.py")
    git(repo, "commit", "-qm", "rename the store")

    async def steps(client: Any) -> list[Any]:
        return [
            data(await client.call_tool("memory_get", {"name": "store-load"})),
            data(await client.call_tool("memory_verify", {"names": ["store-load"]})),
        ]

    got, verified = session(repo, steps)
    assert got["verification"] == "moved" and got["fact"]
    assert {(m["path"], m["to"]) for m in got["moved"]} == {("app/store.py", "app/storage.py")}
    [result] = verified["results"]
    assert (
        result["result"] == "moved" and result["summary"] == "app/store.py moved to app/storage.py"
    )


def test_help_and_memory_commands_do_not_import_the_mcp_sdk(project: Layout) -> None:
    probe = (
        "import sys\n"
        "from orchestrator.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "assert 'mcp' not in sys.modules, 'mcp imported'\n"
    )
    import subprocess
    import sys

    for args in (["--help"], ["memory", "list"], ["hook", "--help"]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args], cwd=project.root, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    assert orch(project.root, "mcp", "--help").returncode == 0
