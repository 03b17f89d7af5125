"""Attacks on a real task's event log, through real `orch` processes.

The task is the demo's sample waiting for its plan's approval. Each attack is what a
process with write access to the repository can do (evals/tamper.py): every
one must be detected by `orch log --check` (exit 1, the first bad line named), refused by
`orch resume` (exit 1, one line naming it, the log untouched), marked by `orch status`, and
nothing of the plan may run. A torn last line from a crash is not an attack: the task goes
on. A log signed elsewhere is unverified, not tampered; an old log without MACs reads.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from evals.tamper import (
    ATTACKS,
    Attack,
    Scene,
    donor_line,
    forged_complete,
    make_scene,
    run_attack,
    run_controls,
)
from orchestrator.engine.demo import sample_paths
from orchestrator.events.keys import STATE_ENV

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment of this module's orch processes: one machine, one key."""
    home = tmp_path_factory.mktemp("tamper-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORCH_", "ANTHROPIC_"))}
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        PYTHONDONTWRITEBYTECODE="1",
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
    )
    env[STATE_ENV] = str(home / ".local" / "state" / "orch")
    yield env


@pytest.fixture(scope="module")
def donor(machine: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> bytes:
    line = donor_line(tmp_path_factory.mktemp("donor") / "repo", machine)
    assert json.loads(line)["payload"]["step"] == "approval_given"
    return line


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_each_attack_is_detected_and_refused(
    attack: Attack, machine: dict[str, str], donor: bytes, tmp_path: Path
) -> None:
    scene = make_scene(tmp_path / "repo", machine)
    scene.donor = donor
    row = run_attack(attack, scene)
    # detected: orch log --check exits 1 and names the first bad line
    assert row.check_exit == 1, row
    assert row.verdict.startswith(f"tampered: line {row.expected_line}: "), row.verdict
    # refused: one line naming it, exit 1, and the log left as the attacker left it
    assert row.resume_exit == 1, row
    assert len(row.resume_says.splitlines()) == 1, row.resume_says
    assert f"does not verify: tampered: line {row.expected_line}: " in row.resume_says
    assert f"orch resume {scene.slug} --accept-log" in row.resume_says
    assert "Traceback" not in row.resume_says
    assert not row.resume_wrote
    # marked by orch status, and nothing of the plan was carried out
    assert row.status_says.startswith(f"tampered: line {row.expected_line}: "), row.status_says
    assert row.commits_after == 1
    listing = scene.orch("status")
    assert f"log tampered: line {row.expected_line}: " in listing.stdout
    assert row.ok


def test_the_controls_torn_line_other_key_and_old_log(
    machine: dict[str, str], tmp_path: Path
) -> None:
    scene = make_scene(tmp_path / "repo", machine)
    other = {**machine, STATE_ENV: str(tmp_path / "another-machine")}
    rows = {row.attack: row for row in run_controls(scene, other)}
    assert rows["another key"].verdict.startswith("unverified (other key): line 1: ")
    assert "tampered" not in rows["another key"].verdict + rows["another key"].resume_says
    assert rows["another key"].resume_exit == 1 and not rows["another key"].resume_wrote
    torn = rows["torn last line"]
    assert torn.verdict.startswith("verified") and torn.resume_exit == 0
    assert "then orch log --check: verified" in torn.notes[0]
    old = rows["old log, no MACs"]
    assert old.verdict.startswith("unverified (no MACs): line 1: ") and old.resume_exit == 1
    assert all(row.ok for row in rows.values()), list(rows.values())


def test_a_person_may_accept_a_log_after_reading_it_and_that_is_recorded(
    machine: dict[str, str], tmp_path: Path
) -> None:
    scene: Scene = make_scene(tmp_path / "repo", machine)
    before = len(scene.lines())
    forged_complete(scene)
    refused = scene.orch("resume", scene.slug)
    assert refused.returncode == 1
    approve = scene.orch("approve", scene.slug)  # answering goes on from the log too
    assert approve.returncode == 1 and "does not verify: tampered" in approve.stderr
    accepted = scene.orch("resume", scene.slug, "--accept-log", "--json")
    assert accepted.returncode == 0, accepted.stderr
    last = json.loads(scene.lines()[-1])
    assert last["event_type"] == "error" and last["payload"]["kind"] == "log_accepted"
    assert last["payload"]["by"] == "orch resume --accept-log"
    assert last["payload"]["accepted"]["lines"] == before + 1
    assert last["payload"]["accepted"]["line"] == before + 1
    check = scene.orch("log", scene.slug, "--check")
    assert check.returncode == 0, check.stderr
    assert f"verified ({before + 2} lines; accepted by a person at line {before + 2})" in (
        check.stderr
    )
    # the accepted lines are pinned: changing one of them later is caught again
    lines = scene.lines()
    lines[1] = lines[1].replace(b'"agent":"', b'"agent":"X', 1)
    scene.rewrite(lines)
    again = scene.orch("resume", scene.slug)
    assert again.returncode == 1 and "tampered: line 2: " in again.stderr


def test_a_state_folder_inside_the_repository_is_refused(
    machine: dict[str, str], tmp_path: Path
) -> None:
    scene = make_scene(tmp_path / "repo", machine)
    inside = {**machine, STATE_ENV: str(scene.repo / ".orch" / "state")}
    out = scene.orch("resume", scene.slug, env=inside)
    assert out.returncode == 2
    assert "is inside the repository; set ORCH_STATE_DIR to a folder outside it" in out.stderr
    tasks = sorted(p.name for p in (scene.repo / "plans" / "artifacts").iterdir())
    with sample_paths() as (_, script):
        again = scene.orch("run", "another task", "--model", f"scripted:{script}", env=inside)
    assert again.returncode == 2 and "is inside the repository" in again.stderr
    assert sorted(p.name for p in (scene.repo / "plans" / "artifacts").iterdir()) == tasks
    assert not (scene.repo / ".orch" / "state").exists()
