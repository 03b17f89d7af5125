"""Memory that ages: use recorded, importance, decay, user cards (on real files and repos)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from evals import aging
from orchestrator.config import MemoryConfig
from orchestrator.errors import OrchError
from orchestrator.events.log import EventLog
from orchestrator.memory.audit import audit
from orchestrator.memory.cards import card_candidates, card_conflicts, said_in
from orchestrator.memory.decay import decay_candidates
from orchestrator.memory.importance import importance
from orchestrator.memory.promotion import promote
from orchestrator.memory.usage import UsageLog, record_use
from orchestrator.memory.use import memories_for_prompt
from orchestrator.memory.writer import MemoryWriter
from orchestrator.models.memory_tool import MemoryToolHandler
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory
from orchestrator.store.repo import RepoMemoryStore
from orchestrator.store.tasks import TaskFolder

DAY = 86400.0
ORCH = str(Path(sys.executable).with_name("orch"))


def orch(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ORCH, *args], cwd=root, capture_output=True, text=True)


def test_reads_count_as_use_and_index_lines_only_as_reached(layout: Layout) -> None:
    with UsageLog(layout) as usage:
        usage.record_use(["a", "b"], via="prompt", task="t1", phase=1, at=1000.0)
        usage.record_use(["a", "b"], via="prompt", task="t1", phase=1, at=1010.0)
        usage.record_use(["a"], via="read", task="t1", phase=1, at=1020.0)
        usage.record_use(["a"], via="mcp", at=2000.0)  # outside a task: counted by day
        usage.record_outcome("t1", 1, passed=True)
        found = usage.summary(now=2000.0)
    assert found["b"].reached == 2 and found["b"].count == 0 and found["b"].last is None
    assert found["a"].count == 2 and found["a"].tasks == {"t1"} and found["a"].last == 2000.0
    assert found["a"].phases_used == 1 and found["a"].phases_passed == 1
    assert found["a"].weight == pytest.approx(2.0, rel=1e-3)  # two uses, a second old each


def test_a_memory_read_often_ranks_above_one_never_read(
    layout: Layout, put: Callable[..., Memory]
) -> None:
    put("read-often", "The cache expires after `DEFAULT_TIMEOUT` seconds in app/main.py.")
    put("never-read", "The `Loader` class keeps its cache in a dict in app/main.py.")
    put("read-once", "The `parse_config` function returns its path in app/main.py.")
    now = time.time()
    with UsageLog(layout) as usage:
        for n in range(6):
            usage.record_use(["read-often"], via="read", task=f"t{n}", at=now - n * DAY)
        usage.record_use(["read-once"], via="read", task="t9", at=now - 40 * DAY)
    memories = RepoMemoryStore(layout).load_all().memories
    scores = importance(layout, memories, MemoryConfig(), now=now)
    assert scores["never-read"].score == 0.0
    assert scores["read-often"].score > scores["read-once"].score > 0.0
    assert set(scores["read-often"].parts) == {
        "use",
        "recency",
        "outcome",
        "type",
        "verification",
        "uniqueness",
    }
    listed = json.loads(orch(layout.root, "memory", "list", "--by", "importance", "--json").stdout)
    names = [m["name"] for m in listed["memories"]]
    assert names == ["read-often", "read-once", "never-read"]
    assert listed["memories"][0]["importance"] > 0 and "parts" in listed["memories"][0]
    shown = json.loads(orch(layout.root, "memory", "show", "read-often", "--json").stdout)
    assert shown["importance"] == pytest.approx(scores["read-often"].score, abs=1e-3)
    assert shown["parts"]["use"] == pytest.approx(1.0)
    text = orch(layout.root, "memory", "show", "never-read").stdout
    assert "importance 0.00" in text


def test_an_old_unused_memory_decays_and_a_young_one_does_not(
    layout: Layout, put: Callable[..., Memory]
) -> None:
    old = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 200 * DAY))
    put("old-unused", "The `Loader` class keeps its cache in a dict.", created=old)
    put("young-unused", "The `parse_config` function returns its path.")  # created now-ish
    put("old-but-read", "The `main` function parses `--dry-run`.", created=old)
    assert (
        decay_candidates(layout, RepoMemoryStore(layout).load_all().memories, MemoryConfig()) == []
    )
    with UsageLog(layout) as usage:  # no history yet: nothing is called unused; now 100 days
        usage.record_use(["old-but-read"], via="prompt", task="t0", at=time.time() - 100 * DAY)
    record_use(layout, ["old-but-read"], via="read", task="t1")
    fresh = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (layout.repo_memories / "young-unused.md").write_text(
        (layout.repo_memories / "young-unused.md")
        .read_text()
        .replace("2026-10-01T10:00:00Z", fresh)
    )
    memories = RepoMemoryStore(layout).load_all().memories
    found = decay_candidates(layout, memories, MemoryConfig())
    assert [c.name for c in found] == ["old-unused"]
    assert "never used" in found[0].reason and "importance 0.00" in found[0].reason
    report = audit(layout, verify=False)
    low = [f for f in report.findings if f.kind == "low_value"]
    assert [f.memory for f in low] == ["old-unused"] and low[0].severity == "warning"
    listed = json.loads(orch(layout.root, "memory", "decay", "--json").stdout)
    assert [c["name"] for c in listed["candidates"]] == ["old-unused"] and not listed["applied"]
    assert RepoMemoryStore(layout).get("old-unused").active  # listing changes nothing
    done = orch(layout.root, "memory", "decay", "--apply")
    assert done.returncode == 0 and "decayed old-unused" in done.stdout
    decayed = RepoMemoryStore(layout).get("old-unused")
    assert decayed.status == "stale" and "never used" in decayed.extra["decayed"]["reason"]
    assert (layout.repo_memories / "old-unused.md").is_file()  # never deleted
    assert "old-unused" not in (layout.repo_memories / "MEMORY.md").read_text()


def test_over_its_token_cap_a_prompt_drops_the_least_important_first(
    layout: Layout, put: Callable[..., Memory], tmp_path: Path
) -> None:
    for n in range(12):
        put(f"fact-{n:02d}", f"The cache rule number {n} lives in `app/main.py` beside `Loader`.")
    record_use(layout, [f"fact-{n:02d}" for n in range(6)], via="read", task="t1")
    task = TaskFolder.create(layout, "use the memories")
    log = EventLog(task.event_log_path, task.slug)
    found = memories_for_prompt(
        layout, MemoryConfig(prompt_index_tokens=120), log, user_turn="go on", phase=1
    )
    unread = {f"fact-{n:02d}" for n in range(6, 12)}
    assert len(found.dropped) >= 6 and set(found.dropped[:6]) == unread  # unread leave first
    assert len(found.dropped) < 12 and found.memories  # and only as many as the cap needs
    assert "least important first" in found.index_text
    for name in found.dropped:
        assert f"[{name}]" not in found.index_text.split("left out")[0]
    event = [e for e in log.read().events if e.event_type == "memory_verification"][-1]
    assert event.payload["dropped"] == found.dropped
    with UsageLog(layout) as usage:
        reached = usage.summary()
    kept = [m.name for m in found.memories]
    assert all(reached[n].reached == 1 for n in kept)
    assert all(n not in reached or reached[n].reached == 0 for n in found.dropped)


def test_viewing_a_memory_through_the_tool_records_a_read(
    layout: Layout, put: Callable[..., Memory]
) -> None:
    put("test-command", "The tests run with `pytest -q` from the root of app/main.py.")
    handler = MemoryToolHandler(layout, task="some-task")
    assert "pytest -q" in handler.execute({"command": "view", "path": "/memories/test-command.md"})
    with UsageLog(layout) as usage:
        use = usage.summary()["test-command"]
    assert use.count == 1 and use.tasks == {"some-task"}


def test_superseding_and_citing_are_recorded_as_links(
    layout: Layout, mk: Callable[..., Memory]
) -> None:
    writer = MemoryWriter(layout)
    writer.add(mk("cache-timeout", "The cache expires after `DEFAULT_TIMEOUT` seconds."))
    writer.add(mk("loader-cache", "The `Loader` cache is a plain dict; see cache-timeout."))
    writer.supersede(
        "loader-cache", mk("loader-cache-v2", "The `Loader` class caches paths in a dict.")
    )
    with UsageLog(layout) as usage:
        found = usage.summary()
    assert found["cache-timeout"].cited_by == 1 and found["cache-timeout"].count == 0
    assert found["cache-timeout"].weight > 0  # a citation by a newer memory is a use
    assert found["loader-cache"].superseded


def card(name: str, subject: str, fact: str, at: str, **kw: object) -> Memory:
    return Memory(
        name=name,
        description=fact,
        type="user",
        subject=subject,
        reason="said so",
        person="Ana",
        relationship="maintainer",
        observed=at,
        body=fact + "\n",
        **kw,  # type: ignore[arg-type]
    )


def test_the_newer_card_about_a_persons_preference_wins(layout: Layout) -> None:
    older = card("ana-tabs", "indentation", "Ana prefers tabs.", "2026-01-01T00:00:00Z")
    newer = card(
        "ana-spaces",
        "indentation style",
        "Ana switched the team to spaces.",
        "2026-03-01T00:00:00Z",
    )
    other = card("ana-quotes", "quotes", "Ana writes single quotes.", "2026-02-01T00:00:00Z")
    found = card_conflicts([newer, other, older])
    assert [(c.older.name, c.newer.name) for c in found] == [("ana-tabs", "ana-spaces")]
    apart = card(
        "ana-spaces-2",
        "indentation",
        "Ana uses spaces in the web client.",
        "2026-04-01T00:00:00Z",
        extra={"distinct_from": [{"name": "ana-tabs", "reason": "two code bases"}]},
    )
    assert ("ana-tabs", "ana-spaces-2") not in [
        (c.older.name, c.newer.name) for c in card_conflicts([older, apart])
    ]
    writer = MemoryWriter(layout)
    for m in (older, newer):
        writer.add(m)
    report = audit(layout, verify=False)
    clash = [f for f in report.findings if f.kind == "contradiction" and f.memory == "ana-tabs"]
    assert clash and clash[0].related == ("ana-spaces",) and "newer" in clash[0].detail


def test_card_fields_are_only_for_user_memories(layout: Layout, mk: Callable[..., Memory]) -> None:
    with pytest.raises(OrchError, match="only user memories"):
        MemoryWriter(layout).add(mk("not-a-card", "The `Loader` caches.", person="Ana"))
    assert not (layout.repo_memories / "not-a-card.md").exists()


def test_checklist_c_writes_a_card_from_what_a_person_said(layout: Layout) -> None:
    task = TaskFolder.create(layout, "tidy the loader")
    log = EventLog(task.event_log_path, task.slug)
    log.append(
        "state_change",
        {
            "from": None,
            "to": "PLANNING",
            "step": "task_created",
            "reason": "orch run",
            "task": {
                "text": "Tidy the loader. I prefer tabs for indentation.",
                "tier": None,
                "auto_approve": False,
                "model": "scripted:x",
                "base_commit": None,
                "branch": None,
            },
        },
    )
    log.append(
        "state_change",
        {
            "from": "WAITING_APPROVAL",
            "to": "PLAN_REVIEW",
            "step": "approval_given",
            "reason": "approved",
            "approval": {
                "kind": "plan",
                "note": "Looks good. My kids are sick this week. Please never push to main.",
            },
        },
    )
    said = said_in(task)
    assert [s.where for s in said] == ["task", "approval note"]
    found = card_candidates(task, "Ana", said)
    assert [c.subject for c in found] == ["indentation", "push main"]
    assert all("kids" not in c.fact for c in found)
    report = promote(layout, task, log)
    written = [m for m in RepoMemoryStore(layout).load_all().active if m.type == "user"]
    assert {m.subject for m in written} == {"indentation", "push main"}
    tabs = next(m for m in written if m.subject == "indentation")
    assert tabs.person and tabs.observed and tabs.relationship
    assert "tabs" in tabs.fact and report.counts().get("written", 0) >= 2


def test_the_aging_evaluation_meets_its_targets() -> None:
    history = aging.score_history(1)
    assert history["never_in_bottom_decile"] == history["never"]
    assert history["heavy_in_top_quarter"] >= 15
    assert history["decay"]["precision"] >= 0.9
    cards = aging.score_cards(1)
    assert cards["precision"] >= 0.9 and cards["recall"] >= 0.8
