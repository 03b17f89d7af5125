"""The realmem harness on a tiny synthetic mirror: loading, drift, trees, scoring, and one
run through the real `orch` (the evaluation itself needs fetched mirrors and is not run
here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evals.realmem import author
from evals.realmem.__main__ import main
from evals.realmem.dataset import (
    DATA,
    Citation,
    Claim,
    DataError,
    Kind,
    Label,
    Text,
    load,
    rebuild,
    save,
)
from evals.realmem.run import At, Mode, Prediction, Status, _finding_for
from evals.realmem.score import PR, score
from evals.realmem.trees import PLACEHOLDER, git, materialise, memory_body

AGENTS_OLD = """# Widget

## Commands

- Run `make test` before every push.
- Lint with `make lint`. It runs the linter.
- The parser lives in `src/parser.py` and defines `load_config()`.

```bash
make lint   # the linter
```

- Settings are read by `src/settings.py`.
"""
MAKEFILE_OLD = "test:\n\tpytest\n\nlint:\n\truff check .\n"
MAKEFILE_NEW = "test:\n\tpytest\n"
PARSER = "def load_config(path):\n    return path\n"
BIG = b"\x00binary payload standing in for a file the mirror lacks\n" * 10


def _run(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def mirror(tmp_path: Path) -> tuple[Path, str, str]:
    """mirrors/acme+widget/repo with an older and a newer commit; the blob of
    assets/big.bin is deleted from the mirror, as `fetch` leaves out large files."""
    work = tmp_path / "work"
    work.mkdir()
    _run(work, "init", "-q", "-b", "main")
    (work / "src").mkdir()
    (work / "assets").mkdir()
    (work / "AGENTS.md").write_text(AGENTS_OLD)
    (work / "Makefile").write_text(MAKEFILE_OLD)
    (work / "src" / "parser.py").write_text(PARSER)
    (work / "assets" / "big.bin").write_bytes(BIG)
    _run(work, "add", "-A")
    _run(work, "commit", "-q", "-m", "old")
    old = _run(work, "rev-parse", "HEAD")
    (work / "Makefile").write_text(MAKEFILE_NEW)
    (work / "src" / "core").mkdir()
    _run(work, "mv", "src/parser.py", "src/core/parser.py")
    _run(work, "add", "-A")
    _run(work, "commit", "-q", "-m", "new")
    new = _run(work, "rev-parse", "HEAD")
    mirrors = tmp_path / "mirrors"
    git_dir = mirrors / "acme+widget" / "repo"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--local", str(work), str(git_dir)],
        check=True,
        capture_output=True,
    )
    big = _run(work, "rev-parse", "HEAD:assets/big.bin")
    (git_dir / "objects" / big[:2] / big[2:]).unlink()
    return mirrors, old, new


def _labels(tmp_path: Path, old: str, new: str, split: str = "dev") -> Path:
    labels = tmp_path / "widget.txt"
    labels.write_text(
        f"@repo acme/widget split={split} lang=Python old={old} new={new}\n"
        "@file AGENTS.md\n"
        "L5 | make-target | holds | still a target | Makefile:1#test\n"
        "L6s1 | make-target | stale | the lint target is gone | Makefile:4#lint\n"
        "L7 | path | moved | the parser moved to src/core | src/parser.py:1#load_config"
        " | moved=src/core/parser.py\n"
        "L10 | make-target | stale | the lint target is gone | Makefile:4#lint\n"
        "L13 | path | stale | there never was such a file | Makefile | old=false\n"
    )
    return labels


@pytest.fixture
def data(tmp_path: Path, mirror: tuple[Path, str, str]) -> Path:
    mirrors, old, new = mirror
    parsed = author.parse([_labels(tmp_path, old, new)], mirrors)
    assert parsed.problems == ()
    path = tmp_path / "data.json"
    save(author.merge(None, parsed), path)
    return path


def test_claims_are_stored_as_references_and_rebuilt_from_the_mirror(
    data: Path, mirror: tuple[Path, str, str]
) -> None:
    mirrors, old, _ = mirror
    stored = data.read_text()
    assert "make lint" not in stored and "parser lives" not in stored  # no copied text
    dataset = load(data)
    texts = {t.claim.id: t for t in rebuild(dataset, dataset.repos[0], mirrors)}
    assert texts["acme-widget-0-l5"].text == "Run `make test` before every push."
    assert texts["acme-widget-0-l6-s1"].text == "Lint with `make lint`."
    assert texts["acme-widget-0-l6-s1"].heading == "Commands"
    fenced = texts["acme-widget-0-l10"]
    assert fenced.fenced and fenced.text == "make lint   # the linter"
    assert memory_body(fenced) == "`make lint` (the linter)"
    moved = dataset.claims[2]
    assert moved.label is Label.MOVED and moved.moved_to == "src/core/parser.py"
    assert moved.citations == (Citation("src/parser.py", 1, "load_config"),)
    assert dataset.repos[0].old == old


def test_author_reports_a_citation_that_never_existed_and_a_holds_claim_whose_file_is_gone(
    tmp_path: Path, mirror: tuple[Path, str, str]
) -> None:
    mirrors, old, new = mirror
    labels = tmp_path / "bad.txt"
    labels.write_text(
        f"@repo acme/widget split=dev lang=Python old={old} new={new}\n"
        "@file AGENTS.md\n"
        "L5 | make-target | holds | x | Makefile:1#nosuchtarget\n"
        "L7 | path | holds | x | src/parser.py\n"
        "L6s3 | path | holds | x | Makefile\n"
    )
    problems = "\n".join(author.parse([labels], mirrors).problems)
    assert "nosuchtarget is not on Makefile:1" in problems
    assert "cites src/parser.py, gone at the newer commit" in problems
    assert "line 6 has 2 sentences, not 3" in problems


def test_a_text_that_drifted_from_its_hash_is_refused(
    data: Path, mirror: tuple[Path, str, str]
) -> None:
    raw = json.loads(data.read_text())
    raw["claims"][0]["sha256"] = "0" * 64
    data.write_text(json.dumps(raw))
    dataset = load(data)
    with pytest.raises(DataError, match=r"acme-widget-0-l5: .* no longer matches its hash"):
        rebuild(dataset, dataset.repos[0], mirror[0])


def test_a_missing_mirror_is_named_with_what_to_fetch(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "no-mirrors"
    empty.mkdir()
    assert main(["--data", str(data), "--mirrors", str(empty)]) == 2
    err = capsys.readouterr().err
    assert "1 mirrors missing" in err and "  github:acme/widget" in err
    assert "Traceback" not in err


def test_a_broken_data_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "data.json"
    broken.write_text("{not json")
    assert main(["--data", str(broken)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("realmem: ") and "\n" not in err


def test_a_tree_has_the_commit_its_history_and_placeholders(
    tmp_path: Path, mirror: tuple[Path, str, str]
) -> None:
    mirrors, old, new = mirror
    tree = materialise(mirrors / "acme+widget" / "repo", new, tmp_path / "tree")
    assert tree.placeholders == 1
    assert (tree.root / "assets" / "big.bin").read_bytes() == PLACEHOLDER
    assert (tree.root / "src" / "core" / "parser.py").read_text() == PARSER
    assert not (tree.root / "src" / "parser.py").exists()
    assert git(tree.root, "rev-parse", "HEAD").decode().strip() == new
    assert git(tree.root, "show", f"{old}:Makefile").decode() == MAKEFILE_OLD


def _claim(ident: str, kind: Kind, label: Label, holds_at_old: bool = True) -> Claim:
    return Claim(
        ident, "acme/widget", "AGENTS.md", 1, 0, 1, "", kind, label, "", (), None, holds_at_old
    )


def test_scoring_counts_moved_apart_and_false_alarms_at_the_older_commit() -> None:
    claims = [
        _claim("a", Kind.PATH, Label.STALE),
        _claim("b", Kind.PATH, Label.STALE),
        _claim("c", Kind.PATH, Label.HOLDS),
        _claim("d", Kind.MAKE_TARGET, Label.HOLDS),
        _claim("e", Kind.PATH, Label.MOVED),
        _claim("f", Kind.SYMBOL, Label.STALE, holds_at_old=False),
    ]
    new = {"a": Status.STALE, "b": Status.CHANGED, "c": Status.STALE, "d": Status.OK}
    new |= {"e": Status.STALE, "f": Status.OK}
    old = {"a": Status.OK, "b": Status.OK, "c": Status.STALE, "d": Status.CHANGED}
    old |= {"e": Status.MOVED, "f": Status.STALE}
    predictions = [Prediction(k, Mode.CITED, At.NEW, v) for k, v in new.items()]
    predictions += [Prediction(k, Mode.CITED, At.OLD, v) for k, v in old.items()]
    s = score(claims, predictions)
    n, o = s.new[Mode.CITED], s.old[Mode.CITED]
    assert n.stale == PR(tp=1, fp=1, fn=2)  # e (moved) is in neither column
    assert n.stale_or_changed == PR(tp=2, fp=1, fn=1)
    assert n.drift == PR(tp=1, fp=0, fn=1)  # c was stale at both commits; f was wrong at old
    assert n.moved == PR(tp=0, fp=0, fn=1) and n.moved_reported == {"stale": 1}
    assert n.per_kind["path"] == PR(tp=1, fp=1, fn=1)
    assert n.per_kind["make-target"] == PR()
    assert (o.claims, o.false_alarms, o.changed) == (5, 2, 1)  # c stale, e moved; d changed
    assert (o.wrong_when_written, o.wrong_reported) == (1, 1)
    assert o.per_kind["path"] == (2, 4)
    assert Mode.BARE not in s.new


def test_a_file_finding_counts_for_the_claim_whose_words_it_overlaps() -> None:
    source = "- First `a.py` here. Then `b.py` there.\n"
    first = Claim("x-1", "r", "F.md", 1, 2, 20, "", Kind.PATH, Label.HOLDS, "", ())
    second = Claim("x-2", "r", "F.md", 1, 21, 39, "", Kind.PATH, Label.STALE, "", ())
    findings = [{"line": 1, "text": "`b.py`", "status": "stale", "reason": "b.py is gone"}]
    assert _finding_for(Text(first, "", False, ""), source, findings) == (Status.OK, "")
    assert _finding_for(Text(second, "", False, ""), source, findings) == (
        Status.STALE,
        "b.py is gone",
    )
    elsewhere = [{"line": 1, "text": "(not on the line)", "status": "moved", "reason": "r"}]
    assert _finding_for(Text(first, "", False, ""), source, elsewhere)[0] is Status.MOVED


def test_one_run_through_the_real_orch(
    data: Path, mirror: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    orch = Path(sys.executable).with_name("orch")
    args = ["--json", "--data", str(data), "--mirrors", str(mirror[0]), "--orch", str(orch)]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["placeholders"] for r in report["repositories"]] == [1]
    claims = report["claims"]
    assert len(claims) == 5
    statuses = {s.value for s in Status}
    for claim in claims:
        for at in ("new", "old"):
            for mode in ("with citations", "without citations"):
                assert claim[at][mode]["status"] in statuses
    if not report["file_mode"]:
        assert "--file mode: skipped" in report["file_mode_note"]
    # the printed scores are the per-claim statuses scored again
    dataset = load(data)
    predictions = [
        Prediction(c["id"], Mode(mode), At(at), Status(c[at][mode]["status"]))
        for c in claims
        for at in ("new", "old")
        for mode in c[at]
    ]
    again = score(list(dataset.claims), predictions).to_dict()
    assert report["splits"]["dev"] == again
    stale = again["new"]["without citations"]["stale"]
    assert stale["tp"] + stale["fn"] == 3  # the three stale claims; the moved one is apart
    # a file that never existed: stale at its own commit, where the memory had no record
    # yet, and so recorded stale, and stale again at the newer commit (not `unconfirmed`)
    (never,) = (c for c in claims if c["id"].endswith("-l13"))
    for mode in ("with citations", "without citations"):
        assert never["old"][mode]["status"] == "stale"
        assert never["new"][mode]["status"] == "stale"


def test_held_out_claims_are_listed_only_with_details(
    tmp_path: Path, mirror: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    mirrors, old, new = mirror
    parsed = author.parse([_labels(tmp_path, old, new, split="held-out")], mirrors)
    data = tmp_path / "held.json"
    save(author.merge(None, parsed), data)
    orch = Path(sys.executable).with_name("orch")
    args = ["--json", "--data", str(data), "--mirrors", str(mirrors), "--orch", str(orch)]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["claims"] == []  # the figures, not what the held-out split got wrong
    assert main([*args, "--details"]) == 0
    detailed = json.loads(capsys.readouterr().out)
    assert [c["split"] for c in detailed["claims"]] == ["held-out"] * 5
    # the same figures either way, and they are the listed claims scored
    assert report["splits"] == detailed["splits"]
    predictions = [
        Prediction(c["id"], Mode(mode), At(at), Status(c[at][mode]["status"]))
        for c in detailed["claims"]
        for at in ("new", "old")
        for mode in c[at]
    ]
    assert report["splits"]["held-out"] == score(list(load(data).claims), predictions).to_dict()


def test_author_writes_a_pool_of_its_own_with_data(
    tmp_path: Path, mirror: tuple[Path, str, str]
) -> None:
    """`author --write --data FILE` writes that file (created when absent), never data.json."""
    mirrors, old, new = mirror
    labels = _labels(tmp_path, old, new)
    pool = tmp_path / "pool.json"
    before = DATA.read_bytes()
    assert (
        author.main([str(labels), "--mirrors", str(mirrors), "--write", "--data", str(pool)]) == 0
    )
    assert DATA.read_bytes() == before
    written = load(pool)
    assert [r.name for r in written.repos] == ["acme/widget"]
    assert len(written.claims) == 5
