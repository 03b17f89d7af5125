"""The crash matrix: SIGKILL `orch run` at many points, `orch resume`, compare with a clean run.

Real processes, the demo's scenario, the scripted model. Each kill point is a fault rule
that makes the process kill itself (orchestrator/engine/faults.py); three more runs are
killed from outside at a random (seeded) moment: when their log reaches a random length.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from evals.resume import KILL_POINTS, Outcome, compare, fresh_repo, run_scenario
from orchestrator.engine import faults

pytestmark = pytest.mark.slow
EXTERNAL = 3


@pytest.fixture(scope="module")
def isolated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """An environment with its own HOME and git identity, for this module's processes."""
    home = tmp_path_factory.mktemp("crash-home")
    with pytest.MonkeyPatch.context() as mp:
        values = {
            "HOME": str(home),
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "orch tests",
            "GIT_AUTHOR_EMAIL": "tests@orch.invalid",
            "GIT_COMMITTER_NAME": "orch tests",
            "GIT_COMMITTER_EMAIL": "tests@orch.invalid",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        for key, value in values.items():
            mp.setenv(key, value)
        for key in list(os.environ):
            if key.startswith("ORCH_") or key == "ANTHROPIC_API_KEY":
                mp.delenv(key)
        mp.setenv("ORCH_STATE_DIR", str(home / "orch-state"))  # the runs' shared key
        yield dict(os.environ)


@pytest.fixture(scope="module")
def reference(isolated: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    outcome = run_scenario(fresh_repo(tmp_path_factory.mktemp("reference"), "run"), env=isolated)
    assert compare(outcome, outcome) == [], outcome
    assert outcome.subjects[0] == "Phase 2: Report the most frequent words"
    return outcome


def test_the_matrix_spans_the_workflow() -> None:
    rules = [rule for rule, _ in KILL_POINTS]
    assert len(rules) + EXTERNAL >= 20
    named = {rule.split("@")[0].split("#")[0] for rule in rules}
    assert named - {"event", "torn"} <= set(faults.POINTS)
    for area in ("plan.", "audit.", "tool.", "gate.", "commit.", "completion.", "torn", "event"):
        assert any(n.startswith(area) for n in named), area


@pytest.mark.parametrize("rule", [rule for rule, _ in KILL_POINTS])
def test_killed_at_a_point_resumes_to_the_same_result(
    rule: str, reference: Outcome, isolated: dict[str, str], tmp_path: Path
) -> None:
    outcome = run_scenario(fresh_repo(tmp_path, "run"), fault=rule, env=isolated)
    assert outcome.killed, f"{rule} was never reached"
    assert outcome.resumes >= 1
    assert compare(reference, outcome) == []


@pytest.mark.parametrize("seed", range(EXTERNAL))
def test_killed_from_outside_at_a_random_moment_resumes_to_the_same_result(
    seed: int, reference: Outcome, isolated: dict[str, str], tmp_path: Path
) -> None:
    at = random.Random(seed).randint(2, reference.events - 5)
    outcome = run_scenario(fresh_repo(tmp_path, "run"), kill_at=at, env=isolated)
    assert outcome.killed, f"the run ended before its log reached {at} lines"
    assert compare(reference, outcome) == []
