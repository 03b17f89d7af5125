"""`orch memory search`: text and JSON output, filters, bad input, no model SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from conftest import write_json

from orchestrator.cli import cli
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder


def search(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["memory", "search", *args])
    return result.exit_code, result.output


def test_text_output_lists_hits_best_first(layout: Layout, task: TaskFolder, add_memory) -> None:
    add_memory("retry-policy", "HTTP calls retry three times with jittered backoff.")
    write_json(layout, task.episodes / "e1.json", {"summary": "Tuned the backoff jitter"})
    code, out = search("backoff", "jitter")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith(" 1. ")
    assert "memory retry-policy (HTTP calls retry three times with jittered backoff)" in out
    assert f"episode {task.slug}/e1" in out
    assert "    Tuned the backoff jitter" in lines


def test_json_output_kind_filter_and_k(layout: Layout, task: TaskFolder, add_memory) -> None:
    add_memory("retry-policy", "HTTP calls retry three times with jittered backoff.")
    add_memory("retry-budget", "Retries stop after the backoff budget of one minute.")
    write_json(layout, task.episodes / "e1.json", {"summary": "backoff for the queue"})
    code, out = search("backoff", "--json", "--kind", "memory", "-k", "1")
    assert code == 0, out
    data = json.loads(out)
    assert data["v"] == 1 and data["query"] == "backoff"
    assert len(data["hits"]) == 1
    hit = data["hits"][0]
    assert hit["kind"] == "memory" and hit["ref"] in {"retry-policy", "retry-budget"}
    assert set(hit) == {"kind", "ref", "score", "text", "meta"}
    assert hit["meta"]["path"] == f"memories/repo/{hit['ref']}.md"
    code, out = search("backoff", "--json", "--kind", "episode")
    assert [h["ref"] for h in json.loads(out)["hits"]] == [f"{task.slug}/e1"]


def test_no_results_and_rebuild(layout: Layout, add_memory) -> None:
    add_memory("retry-policy", "HTTP calls retry three times with jittered backoff.")
    assert search("nonexistentword") == (0, "No results.\n")
    code, out = search("--rebuild")
    assert (code, out) == (0, "Rebuilt the search index: 1 document.\n")
    code, out = search("--rebuild", "--json", "retry")
    assert code == 0 and json.loads(out)["hits"][0]["ref"] == "retry-policy"


def test_bad_input_is_one_line_and_exit_2(
    layout: Layout, git_repo: Path, tmp_path: Path, monkeypatch
) -> None:
    code, out = search()
    assert code == 2 and out.strip().splitlines() == [
        "Error: memory search needs a QUERY (or --rebuild)"
    ]
    code, out = search("x", "--kind", "bogus")
    assert code == 2 and "Traceback" not in out
    bare = tmp_path / "bare"
    bare.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=bare, check=True)
    monkeypatch.chdir(bare)
    code, out = search("x")
    assert code == 2 and "orch init" in out and len(out.strip().splitlines()) == 1


def test_search_does_not_import_the_model_sdk(layout: Layout, add_memory) -> None:
    add_memory("retry-policy", "HTTP calls retry three times with jittered backoff.")
    probe = (
        "import sys\n"
        "from orchestrator.cli import main\n"
        "try:\n"
        "    main(['memory', 'search', 'backoff'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert 'anthropic' not in sys.modules, 'anthropic was imported'\n"
        "print('clean')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=layout.root, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "retry-policy" in result.stdout and result.stdout.rstrip().endswith("clean")
