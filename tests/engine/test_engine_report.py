"""`orch report`: the demo's scripted task, run for real, as one HTML page, opened in a real
headless Chromium (Debian's `chromium`; CI installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess
import webbrowser
from pathlib import Path
from typing import Any

import pytest
import yaml
from engine_support import git, only_task, orch, task_events

from orchestrator.engine.demo import TASK
from orchestrator.engine.progress import Spent
from orchestrator.store.layout import Layout
from orchestrator.store.tasks import TaskFolder

HOSTILE = "<script>alert('log')</script><img src=x onerror=alert(1)>"
USAGE = {"input_tokens": 1200, "output_tokens": 150, "cache_read_tokens": 300}


def scripted_with_usage(script: Path, dest: Path) -> Path:
    """The demo's script, every reply reporting some token usage."""
    data = yaml.safe_load(script.read_text(encoding="utf-8"))
    for conversation in data["conversations"]:
        for reply in conversation["replies"]:
            if "error" not in reply:
                reply["usage"] = dict(USAGE)
    dest.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return dest


def hrefs(page: str) -> list[str]:
    return re.findall(r'<a href="([^"]+)"', page)


def chromium(page: Path, tmp_path: Path) -> tuple[str, str, Path]:
    """(the rendered DOM, chromium's log, a screenshot) from one headless page load."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
    shot = tmp_path / "report.png"
    proc = subprocess.run(
        [
            binary,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2000",
            f"--screenshot={shot}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "HOME": str(tmp_path / "chromium-home"),
            "PATH": "/usr/bin:/bin",
            "XDG_CONFIG_HOME": str(tmp_path / "chromium-home"),
        },
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr, shot


@pytest.mark.browser
def test_the_report_shows_the_task_and_renders_in_a_real_browser(
    sample: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, script = sample
    script = scripted_with_usage(script, tmp_path / "script.yaml")
    # the task's own text is hostile: it reaches the log, the plan's prompts and the page
    result = orch("run", f"{TASK} {HOSTILE}", "--yes", "--model", f"scripted:{script}")
    assert result.exit_code == 0 and "COMPLETE" in result.output, result.output
    slug = only_task(repo)
    task = TaskFolder(Layout(repo), slug)
    events = task_events(repo)

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: opened.append(url))
    made = orch("report", slug, "--open")
    assert made.exit_code == 0, made.output
    out = task.path / "report.html"
    assert made.output.startswith(f"wrote plans/artifacts/{slug}/report.html: COMPLETE")
    assert opened == [out.as_uri()]
    page = out.read_text(encoding="utf-8")

    # nothing from the log runs or loads: no script element, no image, only escaped text
    assert "<script" not in page and "<img" not in page and "<link" not in page
    assert "&lt;script&gt;alert(&#x27;log&#x27;)&lt;/script&gt;" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page

    # the gates: each with its decision; the failing run with its command, exit code, tail
    gate_events = [e.payload for e in events if e.event_type == "gate_event"]
    assert page.count('<div class="gate">') == len(gate_events) == 8
    assert page.count("PHASE_REVIEW_GATE</b>") == 3
    assert "AssertionError: 8 != 4" in page
    failed = next(
        e.payload for e in events if e.event_type == "verdict" and e.payload.get("passed") is False
    )
    assert f"<code>{failed['command']}</code></td><td>1</td>" in page
    # the retry, the approval, the reviews
    assert "phase retry" in page and "failure class: fixable" in page
    assert "plan approved</td>" in page and "by: --yes" in page  # the approval, here by --yes
    assert "dropped (not validated)" in page and "--top accepts a negative N" in page

    # tokens per phase, from the model_call events
    calls = [e for e in events if e.event_type == "model_call"]
    for pid in (1, 2):
        mine = [c for c in calls if c.phase == pid]
        tokens_in = sum(c.payload["usage"]["input_tokens"] for c in mine)
        tokens_out = sum(c.payload["usage"]["output_tokens"] for c in mine)
        assert tokens_in == 1200 * len(mine) > 0
        assert f"{len(mine)} model call(s) · {tokens_in:,} in / {tokens_out:,} out" in page
    total = sum(sum(c.payload["usage"].values()) for c in calls)
    assert f"<span>tokens</span><b>{total:,}</b>" in page

    # memory decisions: the memory written, and why the others were not
    assert '<span class="b b-written">written</span>' in page and "dependencies" in page
    assert "missing citations (required for project)" in page

    # the commits, with the diffstat git gives
    for sha in git(repo, "log", "--format=%H", "-2").split():
        numstat = git(repo, "show", "--numstat", "--format=", sha).split()
        added, deleted = sum(map(int, numstat[0::3])), sum(map(int, numstat[1::3]))
        subject = git(repo, "log", "-1", "--format=%s", sha).strip()
        assert f"<code>{sha[:12]}</code> <b>{subject}</b>" in page
        assert f"file(s), +{added} −{deleted}" in page

    # the links are relative and lead to the task's files, wherever the page is written
    links = hrefs(page)
    assert {"plan.md", "phase-1-report.md", "phase-2-report.md", "final_review.md"} <= set(links)
    assert any(link.startswith("transcripts/") for link in links)
    elsewhere = tmp_path / "shared" / "page.html"
    assert orch("report", slug, "--out", str(elsewhere)).exit_code == 0
    for page_path in (out, elsewhere):
        for link in hrefs(page_path.read_text(encoding="utf-8")):
            assert not link.startswith(("/", "http")), link
            assert (page_path.parent / link).resolve().is_file(), link

    # a real browser renders it, runs nothing, fetches nothing, and the figures are there
    dom, log, shot = chromium(out, tmp_path)
    assert "Uncaught" not in log and "Refused to" not in log, log[-2000:]
    assert "<script" not in dom and "<img" not in dom
    assert "Phase 1: Keep contractions and hyphenated words whole" in dom
    assert "AssertionError: 8 != 4" in dom and f"{total:,}" in dom
    assert "Phase 2: Report the most frequent words" in dom
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_a_bad_slug_or_a_task_without_events_is_one_line_and_writes_nothing(
    mini: Path, tmp_path: Path
) -> None:
    result = orch("report", "no-such-task")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == ["Error: no task 'no-such-task' (tasks: none yet)"]
    task = TaskFolder.create(Layout(mini), "an empty task")
    out = tmp_path / "page.html"
    for args in ((), ("--out", str(out))):
        result = orch("report", task.slug, *args)
        assert result.exit_code == 2
        [line] = result.output.strip().splitlines()
        assert "has no events" in line and "nothing to report" in line
    assert not out.exists() and not (task.path / "report.html").exists()
    assert list(task.path.iterdir()) == []


def test_cost_adds_up_and_a_model_without_a_price_is_counted_apart() -> None:
    def call(cost: Any, **usage: int) -> dict[str, Any]:
        return {"usage": usage, "cost_usd": cost}

    tokens = Spent()
    tokens.add(call(0.012, input_tokens=1000, output_tokens=500))
    tokens.add(call(None, input_tokens=10, output_tokens=5, cache_read_tokens=7))
    tokens.add({"failure_class": "transient", "error": "overloaded"})
    assert (tokens.calls, tokens.failed, tokens.unpriced) == (3, 1, 1)
    assert (tokens.input_tokens, tokens.output_tokens, tokens.cache_read_tokens) == (1010, 505, 7)
    assert tokens.total == 1522
    assert tokens.cost_usd == pytest.approx(0.012)
    assert tokens.plus(tokens).cost_usd == pytest.approx(0.024)
