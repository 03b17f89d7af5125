"""A walk through what orch can do so far, in a throwaway git repository.

    python -m evals.demo_store

`make demo` runs `orch demo` (the whole workflow) once that command exists, and this
until then: set-up, repo memory, NOTES.md, session notes and a task's event log, each
shown by the command a user would type.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ORCH = str(Path(sys.executable).with_name("orch"))


def show(cwd: Path, *args: str, stdin: str | None = None) -> None:
    print(f"\n$ orch {shlex.join(args)}", flush=True)
    proc = subprocess.run(
        [ORCH, *args], cwd=cwd, input=stdin, capture_output=True, text=True, check=False
    )
    out = (proc.stdout + proc.stderr).rstrip()
    print(out if out else "(no output)")
    if proc.returncode:
        print(f"(exit code {proc.returncode})")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="orch-demo-") as tmp:
        repo = Path(tmp) / "sample"
        repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        (repo / "pyproject.toml").write_text('[project]\nname = "sample"\n\n[tool.pytest]\n')
        print(f"A throwaway repository: {repo}")
        show(repo, "init")
        show(
            repo,
            "memory",
            "add",
            "--type",
            "reference",
            "--subject",
            "test command",
            "--reason",
            "every phase gate runs it",
            "--cite",
            "pyproject.toml:4",
            "--fact",
            "The test command is `pytest -q`, run from the repository root.",
        )
        show(
            repo,
            "memory",
            "add",
            "--type",
            "reference",
            "--subject",
            "test command",
            "--reason",
            "every phase gate runs it",
            "--cite",
            "pyproject.toml:4",
            "--fact",
            "The test command is `pytest -q`, run from the repository root.",
            "--name",
            "test-command-again",
        )
        show(
            repo,
            "memory",
            "supersede",
            "test-command",
            "--name",
            "test-command-make",
            "--fact",
            "The test command is `make test`; it sets up the environment first.",
        )
        show(repo, "memory", "list", "--all")
        print("\n$ cat memories/repo/MEMORY.md")
        print((repo / "memories" / "repo" / "MEMORY.md").read_text().rstrip())
        (repo / "memories" / "repo" / "broken.md").write_text("---\nname: [broken\n---\n")
        show(repo, "memory", "list")
        show(repo, "notes", "set", "--objective", "Add rate limiting to the API")
        show(repo, "notes", "show")
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from orchestrator.store.layout import Layout\n"
                "from orchestrator.store.tasks import TaskFolder\n"
                "from orchestrator.store.session import SessionNotes\n"
                "task = TaskFolder.create(Layout.discover(), 'Add rate limiting')\n"
                "SessionNotes(task.layout, task.slug).set('Current State', 'Planning.')\n"
                "log = task.events()\n"
                "log.append('state_change', {'from': None, 'to': 'PLANNING', 'reason': 'new task'})\n"
                "log.append('tool_call', {'summary': 'read pyproject.toml'}, agent='Planner')\n",
            ],
            cwd=repo,
            check=True,
        )
        show(repo, "session", "show")
        show(repo, "log", "add-rate-limiting")
        print("\nThat is the foundation: the workflow engine adds `orch run` and `orch demo`.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
