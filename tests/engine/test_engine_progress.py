"""Progress at the terminal: plain lines off a terminal, only the summary with --quiet, and
on a terminal a live board with the running step, its duration and the gate's output."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from engine_support import PY, Script, git, orch, write_calc
from rich.console import Console

from orchestrator.commands._progress import progress_for
from orchestrator.engine.api import Options, start
from orchestrator.engine.progress import Spent, by_phase, spending
from orchestrator.events.log import read_events
from orchestrator.report.model import build
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder

ORCH = str(Path(sys.executable).with_name("orch"))
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
USAGE = {"input_tokens": 1200, "output_tokens": 80}


def logged_usage(root: Path) -> tuple[int, int, int]:
    """(calls, tokens in, tokens out) of the model calls the task's event log holds: the
    scripted replies above say their usage, the others' usage is estimated."""
    calls = tokens_in = tokens_out = 0
    listed = subprocess.run(
        [ORCH, "status", "--json"], cwd=root, capture_output=True, text=True, check=True
    )
    for task in json.loads(listed.stdout):
        for line in Path(task["log"]).read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event["event_type"] != "model_call":
                continue
            usage = event["payload"].get("usage") or {}
            calls += 1
            tokens_in += sum(
                usage.get(k) or 0
                for k in ("input_tokens", "cache_read_tokens", "cache_write_tokens")
            )
            tokens_out += usage.get("output_tokens") or 0
    return calls, tokens_in, tokens_out


def script_with_usage(tmp_path: Path) -> str:
    script = Script()
    script.executor[1] = [{**write_calc(), "usage": USAGE}, {"text": "Done.", "usage": USAGE}]
    return script.write(tmp_path / "script.json")


def test_off_a_terminal_each_event_is_one_plain_line_then_the_summary(
    mini: Path, tmp_path: Path
) -> None:
    model = script_with_usage(tmp_path)
    proc = subprocess.run(
        [ORCH, "run", "Add a subtract function", "--model", model, "--yes"],
        cwd=mini,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "\x1b" not in out  # a pipe gets no colour, no cursor movement
    lines = out.splitlines()
    commit = git(mini, "rev-parse", "HEAD").strip()[:12]
    calls, tokens_in, tokens_out = logged_usage(mini)
    assert calls == 7 and tokens_in > 2 * USAGE["input_tokens"]
    expected_in_order = [
        "Task add-a-subtract-function: Add a subtract function",
        "Phase 1: Add subtract",
        "    write_file path=calc.py",
        "  running tests_pass: `" + PY + " -m unittest discover -s tests -t .`",
        "  committed " + commit,
        "COMPLETE: all 1 phase(s) committed and reviewed",
        "Task add-a-subtract-function is COMPLETE: 1 phase commit(s).",
        f"  phase 1: closed {commit}  Add subtract",
        f"  spent:       $0.0000 on 7 model calls, {tokens_in:,} tokens in, {tokens_out:,} out",
        "  on branch:   main",
    ]
    positions = [lines.index(line) for line in expected_in_order]
    assert positions == sorted(positions), out
    assert any(re.fullmatch(r"  tests_pass: PASS in \d+\.\d s", line) for line in lines), out
    gates = lines[lines.index(f"  phase 1: closed {commit}  Add subtract") + 1]
    assert re.fullmatch(r"    gates: tests_pass PASS \d+\.\d s", gates), out


def test_quiet_prints_only_the_summary(mini: Path, tmp_path: Path) -> None:
    result = orch(
        "run", "Add a subtract function", "--model", script_with_usage(tmp_path), "-y", "-q"
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert (
        lines[0] == ""
        and lines[1] == "Task add-a-subtract-function is COMPLETE: 1 phase commit(s)."
    )
    assert lines[2].startswith("  phase 1: closed ") and lines[3].startswith(
        "    gates: tests_pass PASS"
    )
    assert all(line.startswith("  ") for line in lines[2:]), result.stdout
    assert "Phase 1:" not in result.stdout and "running" not in result.stdout


def test_on_a_terminal_a_live_board_shows_the_running_gate_its_time_and_output(
    mini: Path, tmp_path: Path
) -> None:
    (mini / "checks.py").write_text(
        "import sys\nsys.stdout.write('collected 1 item\\ntests/test_calc.py::test_add PASSED\\n')\n"
    )
    (mini / "orch.toml").write_text(f'test_command = "{PY} checks.py"\nmax_retries = 0\n')
    git(mini, "add", "-A")
    git(mini, "commit", "-qm", "a gate that says what it checks")
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120, color_system="standard")
    options = Options()
    with progress_for(options, console=console):
        env = start(
            Layout(mini),
            "Add a subtract function",
            auto_approve=True,
            model=script_with_usage(tmp_path),
            options=options,
        )
    assert env.state.done
    shown = ANSI.sub("", screen.getvalue())
    assert re.search(r"running tests_pass: `.*checks\.py`  \d+\.\d s", shown), shown
    assert "  | collected 1 item" in shown and "  | tests/test_calc.py::test_add PASSED" in shown
    assert re.search(r"running Executor: model call \(turn 2\)  \d+\.\d s", shown), shown
    assert re.search(r"running write_file path=calc\.py  \d+\.\d s", shown), shown
    assert "Phase 1 of 1: Add subtract" in shown
    calls, tokens_in, tokens_out = logged_usage(mini)
    board = f"{calls} model calls, {tokens_in:,} tokens in, {tokens_out:,} out, "
    assert re.search(re.escape(board) + r"\d:\d\d so far", shown), shown
    assert "COMPLETE: all 1 phase(s) committed and reviewed" in shown  # the event lines too


@pytest.mark.slow
def test_the_readme_picture_is_a_frame_of_a_real_run() -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "evals.docs_progress"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    frame = done.stdout.splitlines()
    assert frame[-1].endswith(" so far") and "model calls" in frame[-1]
    running = next(line for line in frame if "running tests_pass:" in line)
    assert re.search(r"`python3 -m unittest discover -s tests -t \.`  \d+\.\d s$", running)
    assert "  | FAILED (failures=1)" in frame
    assert "Phase 1 of 2: Keep contractions and hyphenated words whole  REVIEWING" in frame


def test_status_the_summary_and_the_report_sum_the_same_calls(mini: Path, tmp_path: Path) -> None:
    """One tally of the model calls serves them all: each phase's and the task's tokens by
    kind and estimated cost in `orch status`, every call in a run's summary, planning,
    phases and completion in the report; a failed call and a call without a price too."""
    model = script_with_usage(tmp_path)
    assert orch("run", "Add a subtract function", "--model", model, "-y").exit_code == 0
    task = TaskFolder.open(Layout(mini), "add-a-subtract-function")
    log = task.events()
    log.append(
        "model_call",
        {
            "purpose": "executor",
            "model": "scripted",
            "turn": 9,
            "latency_ms": 5,
            "attempts": 3,
            "failure_class": "transient",
            "message": "overloaded",
        },
        agent="Executor",
        phase=1,
    )
    log.append(
        "model_call",
        {
            "purpose": "reviewer",
            "model": "unknown-model",
            "turn": 1,
            "latency_ms": 5,
            "attempts": 1,
            "stop_reason": "end_turn",
            "cost_usd": None,
            "estimated_cost_usd": None,
            "usage": {
                "input_tokens": 11,
                "output_tokens": 7,
                "cache_read_tokens": 5,
                "cache_write_tokens": 3,
            },
        },
        agent="Reviewer",
    )
    # the figures, summed here from the log's lines
    kinds = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    want: dict[str, dict[str, float]] = {}
    first_phase = None
    for n, line in enumerate(task.event_log_path.read_text(encoding="utf-8").splitlines()):
        event = json.loads(line)
        if event["phase"] is not None and first_phase is None:
            first_phase = n
        if event["event_type"] != "model_call":
            continue
        p = event["payload"]
        part = (
            f"phase {event['phase']}"
            if event["phase"] is not None
            else ("planning" if first_phase is None else "completion")
        )
        row = want.setdefault(part, dict.fromkeys(("calls", "answered", "failed", "cost"), 0))
        row["calls"] += 1
        row["answered"] += "usage" in p
        row["failed"] += "failure_class" in p
        row["cost"] += p.get("estimated_cost_usd") or 0
        for kind in kinds:
            row[kind] = row.get(kind, 0) + (p.get("usage") or {}).get(kind, 0)
    assert set(want) == {"planning", "phase 1", "completion"}
    assert want["phase 1"]["failed"] >= 1 and want["completion"]["answered"] >= 2

    info = json.loads(orch("status", task.slug, "--json").output)
    [phase] = info["phases"]
    for got, rows in ((phase["tokens"], [want["phase 1"]]), (info["tokens"], want.values())):
        assert got["calls"] == sum(r["answered"] for r in rows)
        assert {k: got[k] for k in kinds} == {k: sum(r[k] for r in rows) for k in kinds}
        assert got["estimated_cost_usd"] == pytest.approx(sum(r["cost"] for r in rows))
    text = orch("status", task.slug).output
    assert f"model calls: {info['tokens']['calls']} calls, " in text

    report = build(task)
    assert set(report.tokens) == set(want)
    for part, spent in report.tokens.items():
        row = want[part]
        assert (spent.calls, spent.failed) == (row["calls"], row["failed"])
        assert [getattr(spent, k) for k in kinds] == [row[k] for k in kinds]
        assert spent.cost_usd == pytest.approx(row["cost"])
    assert report.total_tokens.unpriced == 1

    events = read_events(task.event_log_path).events
    total = Spent.sum(spending(events, by_phase).values())
    calls = sum(r["calls"] for r in want.values())
    tokens_in = sum(r[k] for r in want.values() for k in kinds if k != "output_tokens")
    tokens_out = sum(r["output_tokens"] for r in want.values())
    assert total.text() == f"{calls} model calls, {tokens_in:,} tokens in, {tokens_out:,} out"
