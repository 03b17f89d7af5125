"""The realaudit evaluation's own logic on a tiny synthetic fixture (not the real data).

`realaudit_fixture/repo` is a repository written for this test (a memory-bank page, a
.clinerules file, an agent rule file to leave out, one Python module); `acme+notes.yaml`
labels its facts. The test commits the folder, clones it bare as a mirror, and checks the
splitter, the loader (hashes, mirror look-up), the scoring, and one real run of
`python -m evals.realaudit` against the real `orch`. It asserts nothing about what the
audit finds in the fixture's facts: the audit's rules change; this checks the harness.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

CHECKOUT = Path(__file__).resolve().parents[2]
if str(CHECKOUT) not in sys.path:
    sys.path.insert(0, str(CHECKOUT))
dataset = importlib.import_module("evals.realaudit.dataset")
facts = importlib.import_module("evals.realaudit.facts")
score = importlib.import_module("evals.realaudit.score")
realaudit_main = importlib.import_module("evals.realaudit.__main__")

FIXTURE = Path(__file__).resolve().parent / "realaudit_fixture"
Kind = dataset.Kind


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def mirror(tmp_path: Path) -> tuple[Path, Path]:
    """(mirrors folder, data folder) for the fixture repository, committed and cloned bare."""
    work = tmp_path / "work"
    shutil.copytree(FIXTURE / "repo", work)
    big = work / "data" / "big.bin"
    big.parent.mkdir()
    big.write_bytes(b"\0" * 1000)
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "fixture")
    commit = _git(work, "rev-parse", "HEAD")
    mirrors = tmp_path / "mirrors"
    git_dir = mirrors / "acme+notes" / "repo"
    shutil.copytree(work / ".git", git_dir)
    # a mirror lacks its largest files: drop that blob's loose object
    oid = _git(work, "rev-parse", "HEAD:data/big.bin")
    (git_dir / "objects" / oid[:2] / oid[2:]).unlink()
    data = tmp_path / "data"
    data.mkdir()
    text = (FIXTURE / "acme+notes.yaml").read_text(encoding="utf-8")
    (data / "acme+notes.yaml").write_text(text.replace("COMMIT", commit), encoding="utf-8")
    return mirrors, data


def test_split_reads_items_sentences_and_subjects() -> None:
    text = (FIXTURE / "repo" / "memory-bank" / "activeContext.md").read_text(encoding="utf-8")
    spans = facts.split_facts(text)
    read = [
        (
            facts.subject_at(text, "memory-bank/activeContext.md", s.start),
            s.line,
            facts.fact_text(text[s.start : s.end]),
        )
        for s in spans
    ]
    assert read == [
        ("Current Status", 4, "The exporter is stable and all 12 tests pass."),
        ("Current Status", 4, "Work continues on retries."),
        (
            "Recent Changes",
            7,
            "Replaced the `fetch_all` helper with `fetch_pages` in `src/app.py`.",
        ),
        ("Recent Changes", 8, "Added `src/cache.py` to keep responses between runs."),
        ("Recent Changes", 11, "Pages are written to `out/` as JSON."),
        ("Conventions", 14, "Run the tests with `pytest -q` before every commit."),
        ("Conventions", 15, "Keep secrets in `local.env`, which git ignores."),
    ]  # the bold label alone, the fenced block and the table are not facts


def test_split_handles_front_matter_markdown_fences_and_plain_files() -> None:
    text = (
        "---\nalwaysApply: true\n---\n```markdown\n## Patterns (layered\n"
        "* One item\nlazily continued.\n```\n"
    )
    spans = facts.split_facts(text)
    assert [facts.fact_text(text[s.start : s.end]) for s in spans] == ["One item lazily continued."]
    assert facts.subject_at(text, "x.mdc", spans[0].start) == "Patterns (layered)"
    assert facts.subject_at("Use it. Always.\n", ".windsurfrules", 0) == "windsurfrules"
    assert facts.default_subject("memory-bank/techContext.md") == "tech context"


def test_loading_checks_hashes_and_names_missing_mirrors(
    mirror: tuple[Path, Path], tmp_path: Path
) -> None:
    mirrors, data_dir = mirror
    data = dataset.load(data_dir / "acme+notes.yaml")
    rebuilt = dataset.rebuild(mirrors, data)
    assert [f.ref.id for f in rebuilt.facts][:2] == ["fx-001", "fx-002"]
    assert rebuilt.facts[9].text == "[ ] Add retries to `fetch_pages`."
    assert rebuilt.facts[9].subject == "Next Steps"
    assert dataset.missing_mirrors(mirrors, [data]) == []
    assert dataset.missing_mirrors(tmp_path / "nowhere", [data]) == ["acme/notes"]

    raw = (data_dir / "acme+notes.yaml").read_text(encoding="utf-8")
    moved = raw.replace(":4:36-81", ":4:37-81", 1)
    with pytest.raises(dataset.DataError, match=r"fx-001 .* does not match its hash"):
        dataset.rebuild(mirrors, dataset.parse(_yaml(moved), "moved.yaml"))
    unknown = raw.replace("members:\n  - fx-006", "members:\n  - fx-099", 1)
    with pytest.raises(dataset.DataError, match="unknown facts fx-099"):
        dataset.parse(_yaml(unknown), "unknown.yaml")
    unlabelled = raw.replace("why: an unchecked box", "why: ''", 1)
    with pytest.raises(dataset.DataError, match="empty justification"):
        dataset.parse(_yaml(unlabelled), "empty.yaml")


def _yaml(text: str) -> Any:
    return yaml.safe_load(text)


def _data(**changes: Any) -> Any:
    base = {
        "v": 1,
        "repo": "o/r",
        "commit": "a" * 40,
        "split": "dev",
        "sources": {"m.md": "0" * 64},
        "facts": [
            {"id": i, "at": f"m.md:1:{n}-{n + 1}", "sha256": "0" * 64, "type": "project"}
            for n, i in enumerate(["a", "b", "c", "d", "x", "y", "z"])
        ],
    }
    base.update(changes)
    return dataset.parse(base, "t.yaml")


def test_near_duplicates_score_by_joined_pairs() -> None:
    data = _data(
        near_duplicates=[
            {"members": ["a", "b", "c"], "why": "three copies"},
            {"members": ["x", "y"], "why": "x covers y"},
            {"members": ["x", "z"], "why": "x covers z"},
        ]
    )
    report = {
        "findings": [
            {"kind": "near_duplicate", "memory": "a", "related": ["b"]},
            {"kind": "near_duplicate", "memory": "c", "related": ["b", "a"]},
            {"kind": "near_duplicate", "memory": "y", "related": ["z"]},
            {"kind": "near_duplicate", "memory": "d", "related": ["a"]},
        ],
        "groups": [{"keeper": "b", "decay": ["a", "c"]}],
    }
    result = score.score([(score.expected(data), score.raised("o/r", report))])
    near = result.kinds[Kind.NEAR_DUPLICATE]
    # raised pairs: ab bc (twice: findings and group) yz ad; correct: ab bc
    # links needed: abc 2, xy 1, xz 1; given: abc 2 (a, b and c are joined), the others 0
    assert (near.expected, near.raised, near.correct, near.recalled) == (4, 4, 2, 2)
    assert near.missed == (("o/r", "x", "y"), ("o/r", "x", "z"))
    assert near.false == (("o/r", "a", "d"), ("o/r", "y", "z"))
    assert near.precision == 0.5 and near.recall == 0.5
    assert result.duplicate_groups == (3, 1, 0)  # abc whole; xy and xz not at all

    # one of five copies joined to another: one link of four, the group found in part
    five = _data(near_duplicates=[{"members": ["a", "b", "c", "d", "x"], "why": "five"}])
    report = {"findings": [{"kind": "near_duplicate", "memory": "c", "related": ["d"]}]}
    part = score.score([(score.expected(five), score.raised("o/r", report))])
    assert part.kinds[Kind.NEAR_DUPLICATE].recall == 0.25
    assert part.duplicate_groups == (1, 0, 1)


def test_contradictions_memory_kinds_and_format_kinds() -> None:
    data = _data(
        contradictions=[{"pair": ["a", "b"], "slot": "port", "why": "8080 against 9090"}],
        facts=[
            {
                "id": "a",
                "at": "m.md:1:0-1",
                "sha256": "0" * 64,
                "type": "project",
                "labels": [{"kind": "excluded_content", "class": "todo_next", "why": "a to-do"}],
            },
            {
                "id": "b",
                "at": "m.md:1:1-2",
                "sha256": "0" * 64,
                "type": "project",
                "labels": [
                    {"kind": "stale_citation", "why": "gone"},
                    {
                        "kind": "excluded_content",
                        "class": "change_account",
                        "why": "told as a change",
                    },
                ],
            },
            {"id": "c", "at": "m.md:1:2-3", "sha256": "0" * 64, "type": "feedback"},
        ],
    )
    report = {
        "findings": [
            {"kind": "contradiction", "memory": "b", "related": ["a"], "detail": "port"},
            {"kind": "contradiction", "memory": "c", "related": ["a"], "detail": "tool"},
            {"kind": "excluded_content", "memory": "b", "related": []},
            {"kind": "stale_citation", "memory": "c", "related": []},
            {"kind": "index_drift", "memory": None, "related": [], "detail": "MEMORY.md"},
        ],
        "groups": [],
    }
    result = score.score([(score.expected(data), score.raised("o/r", report))])
    contra = result.kinds[Kind.CONTRADICTION]
    assert (contra.expected, contra.raised, contra.correct, contra.recall) == (1, 2, 1, 1.0)
    excluded = result.kinds[Kind.EXCLUDED_CONTENT]
    assert (excluded.expected, excluded.raised, excluded.correct) == (2, 1, 1)
    assert excluded.missed == (("o/r", "a"),)
    assert excluded.to_dict()["missed"] == ["o/r:a"]
    plain = excluded.to_dict(errors=False)  # figures without which units were missed
    assert "missed" not in plain and "false" not in plain and plain["expected"] == 2
    assert result.excluded_classes[dataset.Excluded.TODO_NEXT] == (1, 0)
    assert result.excluded_classes[dataset.Excluded.CHANGE_ACCOUNT] == (1, 1)
    stale = result.kinds[Kind.STALE_CITATION]
    assert (stale.precision, stale.recall) == (0.0, 0.0)
    drift = result.kinds[Kind.INDEX_DRIFT]
    assert (drift.expected, drift.raised, drift.precision, drift.recall) == (0, 1, 0.0, None)
    assert result.kinds[Kind.SECRET].precision is None


def test_a_run_builds_the_repository_and_scores_the_real_audit(
    mirror: tuple[Path, Path], tmp_path: Path
) -> None:
    mirrors, data_dir = mirror
    keep = tmp_path / "built"
    orch = str(Path(sys.executable).parent / "orch")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evals.realaudit",
            "--json",
            "--mirrors",
            str(mirrors),
            "--data",
            str(data_dir),
            "--keep",
            str(keep),
            "--orch",
            orch,
        ],
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    (repo,) = out["repositories"]
    assert (repo["repo"], repo["facts"], repo["empty_files"]) == ("acme/notes", 10, 1)
    kinds = out["scores"]["dev"]["kinds"]
    assert kinds["excluded_content"]["expected"] == 5
    assert kinds["stale_citation"]["expected"] == 1
    assert kinds["near_duplicate"]["expected"] == 1
    for kind in ("invalid_file", "missing_field", "index_drift", "index_oversize", "notes_style"):
        assert kinds[kind]["raised"] == 0, (kind, kinds[kind])  # the memories are well formed
    assert not {"missed", "false"} & set(kinds["excluded_content"])  # only with --show-errors

    root = keep / "acme+notes"
    assert not (root / "memory-bank" / "activeContext.md").exists()
    assert (root / "memories" / "sources" / "memory-bank" / "activeContext.md").is_file()
    assert not (root / ".cursor" / "rules" / "style.mdc").exists()  # left out by `drop`
    assert (root / "data" / "big.bin").read_bytes() == b""  # the mirror lacked it
    memory = (root / "memories" / "repo" / "fx-010.md").read_text(encoding="utf-8")
    assert "subject: Next Steps\n" in memory and "- path: memories/sources/.clinerules\n" in memory
    assert memory.endswith("---\n[ ] Add retries to `fetch_pages`.\n")
    assert _git(root, "status", "--porcelain") == ""


def test_a_missing_mirror_is_named_and_nothing_is_built(
    mirror: tuple[Path, Path], tmp_path: Path
) -> None:
    _, data_dir = mirror
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evals.realaudit",
            "--mirrors",
            str(tmp_path / "none"),
            "--data",
            str(data_dir),
            "--keep",
            str(tmp_path / "built"),
        ],
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "acme/notes" in done.stderr and "fetch" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "built").exists()


def test_near_duplicate_pairs_are_counted_by_their_excluded_members() -> None:
    # a and b both reported as excluded content, c not: ab sits among the excluded, bc
    # straddles, xy is durable
    data = _data(
        near_duplicates=[
            {"members": ["a", "b", "c"], "why": "three copies"},
            {"members": ["x", "y"], "why": "two copies"},
        ]
    )
    report = {
        "findings": [
            {"kind": "excluded_content", "memory": "a", "related": []},
            {"kind": "excluded_content", "memory": "b", "related": []},
            {"kind": "near_duplicate", "memory": "a", "related": ["b"]},
            {"kind": "near_duplicate", "memory": "x", "related": ["z"]},
        ],
        "groups": [],
    }
    sides = score.score([(score.expected(data), score.raised("o/r", report))]).duplicate_sides
    # labelled: ab excluded, ac and bc straddle, xy durable; raised: ab (right), xz (wrong)
    assert sides["excluded"] == score.SideCounts(labelled=1, found=1, raised=1, right=1)
    assert sides["straddle"] == score.SideCounts(labelled=2, found=0, raised=0, right=0)
    assert sides["durable"] == score.SideCounts(labelled=1, found=0, raised=1, right=0)
    text = realaudit_main.table(
        "t", score.score([(score.expected(data), score.raised("o/r", report))])
    )
    assert "excluded 1, 1; 1, 1" in text and "straddle 2, 0; 0, 0" in text


def test_sensitivity_takes_back_headings_and_counts_pair_moves_by_side() -> None:
    import random

    sensitivity = importlib.import_module("evals.realaudit.sensitivity")
    subjects = {"a": "Next Steps", "b": "Next Steps", "c": "Progress", "d": "Stack"}
    kept, dropped = sensitivity.without_headings({"a", "b", "c"}, subjects, 1.0, random.Random(0))
    assert kept == frozenset() and dropped == ["Next Steps", "Progress"]  # a heading at once
    kept, dropped = sensitivity.without_headings({"a", "b", "c"}, subjects, 0.0, random.Random(0))
    assert kept == {"a", "b", "c"} and dropped == []

    # c is found again as task state: the pair cd, labelled, goes from durable to straddle
    # and is lost; bc, wrong, is gained among the excluded
    before = {("o/r", "c", "d"), ("o/r", "a", "d")}
    after = {("o/r", "a", "d"), ("o/r", "b", "c")}
    labelled = {("o/r", "c", "d")}
    moved = sensitivity.moves(
        before, after, labelled, {"o/r": frozenset({"b"})}, {"o/r": frozenset({"b", "c"})}
    )
    assert moved == {
        ("lost", "right", "durable>straddle"): 1,
        ("gained", "wrong", "straddle>excluded"): 1,
    }
