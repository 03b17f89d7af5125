"""The audit: every finding kind on real files in a real git repository."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from orchestrator.checks.secrets import scan_text
from orchestrator.cli import cli
from orchestrator.memory.audit import KINDS, AuditReport, audit
from orchestrator.memory.exclusions import excluded
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation
from orchestrator.store.repo import RepoMemoryStore

Put = Callable[..., Any]


def kinds(report: AuditReport, kind: str) -> list[tuple[str | None, tuple[str, ...]]]:
    return [(f.memory, f.related) for f in report.findings if f.kind == kind]


def test_a_clean_store_has_no_findings(layout: Layout, put: Put) -> None:
    put("timeout", "`DEFAULT_TIMEOUT` is 30 seconds; raise it with the fixtures.")
    put("loader", "`Loader.load` returns None for unknown paths.", subject="loader misses")
    report = audit(layout)
    assert report.findings == [] and report.memories == 2
    assert "No findings" in report.text()


def test_near_duplicate_groups_keep_the_most_specific_else_the_most_recent(
    layout: Layout, put: Put
) -> None:
    cite = Citation("app/main.py", 5, "DEFAULT_TIMEOUT")
    put(
        "timeout-a",
        "The request timeout is 30 seconds, set by `DEFAULT_TIMEOUT` in `app/main.py`.",
        subject="request timeout",
        citations=(cite,),
    )
    put(
        "timeout-b",
        "`DEFAULT_TIMEOUT` in `app/main.py` sets the request timeout to 30 seconds.",
        subject="request timeout",
    )
    put(
        "timeout-c",
        "Requests time out after 30 seconds (`DEFAULT_TIMEOUT` in `app/main.py`).",
        subject="request timeout",
        updated="2026-11-01T00:00:00Z",
    )
    # look-alikes: another thing with the same wording, the same subject on another aspect
    put(
        "db-timeout",
        "The database timeout is 45 seconds, set by `DEFAULT_TIMEOUT` in `app/main.py`.",
        subject="database timeout",
    )
    put(
        "timeout-logging",
        "Hitting the request timeout logs a warning with the request id.",
        subject="request timeout",
    )
    # a more specific subject is another fact unless the other memory speaks of it
    put("cache-sharing", "The cache is shared between workers.", subject="cache sharing")
    put(
        "scheduler-cache",
        "The scheduler cache is shared between workers.",
        subject="scheduler cache sharing",
    )
    # two equally specific copies: the most recent is kept
    put(
        "cart-old",
        "Carts render through `renderCart()` in the browser.",
        subject="cart rendering",
        updated="2026-01-01T00:00:00Z",
    )
    put(
        "cart-new",
        "In the browser, carts are rendered through `renderCart()`.",
        subject="cart rendering",
        updated="2026-06-01T00:00:00Z",
    )
    report = audit(layout)
    groups = {g.keeper: set(g.decay) for g in report.groups}
    assert groups == {"timeout-a": {"timeout-b", "timeout-c"}, "cart-new": {"cart-old"}}
    found = kinds(report, "near_duplicate")
    assert ("cart-old", ("cart-new",)) in found
    assert {m for m, _ in found} == {"timeout-b", "timeout-c", "cart-old"}
    assert all(f.severity == "warning" for f in report.findings if f.kind == "near_duplicate")


def test_contradictions_need_one_subject_two_active_memories_and_disagreement(
    layout: Layout, put: Put
) -> None:
    put(
        "cmd-a",
        "The test command is `pytest -q`, run from the repository root.",
        subject="test command",
    )
    put("cmd-b", "The test command is `make test`.", subject="Test  command")
    put("retries-on", "Retries are enabled by default.", subject="retries", kind="project")
    put("retries-off", "Retries are disabled by default.", subject="retries", kind="project")
    put("deploy-fridays", "Deploys happen on Fridays.", subject="deploy day", kind="project")
    put(
        "no-deploy-fridays",
        "Deploys never happen on Fridays.",
        subject="deploy day",
        kind="project",
    )
    # other units for the same quantity do not conflict with a lexical test; nor do they here
    put("ttl-minutes", "The cache TTL is 5 minutes.", subject="cache ttl", kind="project")
    put("ttl-seconds", "The cache TTL is 300 seconds.", subject="cache ttl", kind="project")
    # not contradictions: a supersession chain, another aspect, a similar subject, an addition
    put(
        "port-old",
        "The dev server port is 8000.",
        subject="dev port",
        status="superseded",
        superseded_by="port-new",
    )
    put("port-new", "The dev server port is 8080.", subject="dev port", supersedes=("port-old",))
    put("db", "The database is PostgreSQL 15.", subject="database", kind="project")
    put(
        "db-migrations",
        "Database migrations live in `app/` and run with `app migrate`.",
        subject="database",
        kind="project",
    )
    put("lint", "The linters are `ruff`.", subject="linters")
    put(
        "lint-more",
        "The linters are `ruff` and `mypy`.",
        subject="linters",
        updated="2026-12-01T00:00:00Z",
    )
    put(
        "cmd-timeout",
        "The test command times out after 600 seconds.",
        subject="test command timeout",
    )
    put(
        "http2",
        "The API client sends requests over HTTP/2.",
        subject="http version",
        kind="project",
    )
    put(
        "http11",
        "The API client sends requests over HTTP/1.1.",
        subject="http version",
        kind="project",
    )
    report = audit(layout)
    assert sorted(kinds(report, "contradiction")) == [
        ("cmd-a", ("cmd-b",)),
        ("deploy-fridays", ("no-deploy-fridays",)),
        ("http11", ("http2",)),
        ("retries-off", ("retries-on",)),
    ]
    # read from words alone: a lead for a person, which does not fail `--check`
    assert all(f.severity == "warning" for f in report.findings if f.kind == "contradiction")
    assert not [f for f in report.errors if f.kind == "contradiction"]


def test_stale_citations_name_the_failing_claim(layout: Layout, put: Put) -> None:
    put(
        "parser",
        "Config is parsed by `parse_config()`.",
        citations=(Citation("app/main.py", 16, "parse_config"),),
    )
    put("timeout", "`DEFAULT_TIMEOUT` is 30.")
    main = layout.root / "app" / "main.py"
    main.write_text(main.read_text().replace("parse_config", "read_config"))
    report = audit(layout)
    (finding,) = [f for f in report.findings if f.kind == "stale_citation"]
    assert finding.memory == "parser" and finding.severity == "error"
    assert "parse_config is not defined in app/main.py" in finding.detail
    assert audit(layout, verify=False).findings == []


@pytest.mark.parametrize(
    ("fact", "kind"),
    [
        ("Commit 3f2a9c1 fixed the flaky loader test.", "git_history"),
        ("The branch `feature/limits` was merged into main last week.", "git_history"),
        ("The retry fix landed in PR #42 and was reverted in 9ab3c1d.", "git_history"),
        ("Iteration 3 passed at 14:32 after the fixture change.", "ephemeral_task_state"),
        ("File `app/main.py` was modified to add the flag.", "ephemeral_task_state"),
        ("Phase 2 is done; the loader tests are still failing.", "ephemeral_task_state"),
        ("`parse_config` is defined in `app/main.py`.", "derivable_from_code"),
        ("`app/main.py` has 24 lines.", "derivable_from_code"),
        ("The `Loader` class is implemented in `app/main.py`.", "derivable_from_code"),
        ("The export job failed at 03:12 after the schema change.", "ephemeral_task_state"),
    ],
)
def test_save_exclusions(fact: str, kind: str) -> None:
    found = excluded(fact)
    assert found is not None and found.kind == kind


@pytest.mark.parametrize(
    "fact",
    [
        "Run `pre-commit run --all-files` before committing; CI runs the same hooks.",
        "Feature branches are rebased on `main` before review so the history stays linear.",
        "Commit messages follow the imperative mood; the changelog is built from them.",
        "The cache is rebuilt whenever `pyproject.toml` is modified.",
        "`parse_config` lives in `app/main.py` because it must not import the web layer.",
        "The test command is `pytest -q`, run from the repository root.",
        "The nightly export runs at 02:00 UTC and takes about 20 minutes.",
        "Hotfixes are cherry-picked to the release branch after review.",
        "We use trunk-based development with short-lived branches.",
    ],
)
def test_durable_rules_are_not_exclusions(fact: str) -> None:
    assert excluded(fact) is None


def test_excluded_content_findings(layout: Layout, put: Put) -> None:
    put("flaky", "Commit 3f2a9c1 fixed the flaky loader test.", kind="project")
    put(
        "hooks",
        "Run `pre-commit run --all-files` before committing.",
        kind="feedback",
        citations=(),
    )
    report = audit(layout)
    assert kinds(report, "excluded_content") == [("flaky", ())]
    assert "git_history" in report.findings[0].detail


SECRETS = [
    "The staging deploy uses the AWS key AKIAZ7Q4V3HLM2XKPD5N.",
    "CI pushes with ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8.",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----",
    "The staging database password is hunter42!.",
    "Local runs read `ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyzABCDEFGH0123` from `.env`.",
    'The config holds password = "s3cr3tP@ssw0rd".',
    "db_password: 'Zx9!kLm2qR'",
    "Maps use the key AIzaSyD-1234567890abcdefghijklmnopqrstu.",
    "The replica is at postgres://admin:s3cretPw9@db.internal:5432/app.",
]
NOT_SECRETS = [
    "The deploy token is read from `DEPLOY_TOKEN` in the CI environment.",
    "Set `API_KEY=<your-key>` in `.env`; the example file shows the shape.",
    "The release commit is 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39.",
    "Passwords are hashed with argon2 before they are stored.",
    "verified: {commit: 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39, at: '2026-11-21T10:00:00Z', result: ok}",
    "The password is `os.environ['DB_PASSWORD']`.",
    "The secret is rotated every 90 days.",
    "`Handler161.run_0` and `worker_engine_161_5()` handle retries.",
    # AWS's documented example key (git-secrets allows it too) and other placeholders
    "Localstack accepts AWS's example key AKIAIOSFODNN7EXAMPLE.",
    "Live keys look like sk_live_XXXXXXXXXXXXXXXXXXXXXXXX and are never committed.",
    "Connection URLs look like postgres://USER:PASSWORD@HOST/app.",
    "**Optional password protection**: not mandatory for shared links.",
    "Password strength is checked before an account is saved.",
]


@pytest.mark.parametrize("text", SECRETS)
def test_secrets_are_found(text: str) -> None:
    assert scan_text(text)


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_look_alikes_are_not_secrets(text: str) -> None:
    assert scan_text(text) == []


def test_secret_findings_do_not_repeat_the_secret(layout: Layout, put: Put) -> None:
    put("deploy", "CI pushes with ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8.")
    put("env", "The deploy token is read from `DEPLOY_TOKEN` in CI.")
    report = audit(layout)
    assert kinds(report, "secret") == [("deploy", ())]
    finding = next(f for f in report.findings if f.kind == "secret")
    assert "ghp_" not in finding.detail and finding.severity == "error"
    assert audit(layout).to_dict() == report.to_dict()  # the cached scan agrees


def test_invalid_files_and_missing_fields(layout: Layout, put: Put) -> None:
    put("fine", "`DEFAULT_TIMEOUT` is 30.")
    files = {
        "broken-yaml": "---\nname: broken-yaml\ndescription: [unclosed\ntype: project\n---\nA fact.\n",
        "no-frontmatter": "Just a note.\n",
        "missing-type": "---\nname: missing-type\ndescription: x\n---\nA fact.\n",
        "wrong-name": "---\nname: other\ndescription: x\ntype: project\n---\nA fact.\n",
        "minimal": "---\nname: minimal\ndescription: Tabs in Makefiles\ntype: user\n---\nThe user wants tabs.\n",
    }
    for name, text in files.items():
        (layout.repo_memories / f"{name}.md").write_text(text)
    RepoMemoryStore(layout).regenerate_index()
    report = audit(layout)
    assert sorted(m for m, _ in kinds(report, "invalid_file")) == [
        "broken-yaml", "missing-type", "no-frontmatter", "wrong-name",
    ]  # fmt: skip
    missing = [f for f in report.findings if f.kind == "missing_field"]
    assert {f.memory for f in missing} == {"minimal"}
    assert {f.detail for f in missing} == {"missing field 'subject'", "missing field 'reason'"}
    assert all(f.severity == "warning" for f in missing)


def test_index_drift_and_oversize(layout: Layout, put: Put) -> None:
    put("fine", "`DEFAULT_TIMEOUT` is 30.")
    index = layout.memory_index
    good = index.read_text()
    index.write_text(good + "- [gone](gone.md): deleted\n")
    (finding,) = audit(layout).findings
    assert finding.kind == "index_drift" and finding.related == ("gone",)
    index.write_text(good + "".join(f"- [x{i}](x{i}.md): hand-written\n" for i in range(210)))
    found = {f.kind for f in audit(layout).findings}
    assert found == {"index_drift", "index_oversize"}
    index.unlink()
    assert [f.kind for f in audit(layout).findings] == ["index_drift"]


def test_many_memories_render_within_the_limit_without_findings(layout: Layout, put: Put) -> None:
    for i in range(230):
        (layout.repo_memories / f"setting-{i}.md").write_text(
            f"---\nname: setting-{i}\ndescription: Setting {i}\ntype: user\nsubject: setting {i}\n"
            f"reason: r\n---\nSetting {i} of the app defaults to {i * 7 + 1000}.\n"
        )
    RepoMemoryStore(layout).regenerate_index()
    assert audit(layout).findings == []


def test_notes_style(layout: Layout) -> None:
    notes = layout.notes
    notes.write_text(
        "# NOTES\n\n## Active objective\n- add rate limits\n\n## Blockers\n- none\n\n"
        "## Pending\n- review the migration\n- [x] phase 1 done\n- iteration 3 passed at 14:32\n"
    )
    found = [f for f in audit(layout).findings if f.kind == "notes_style"]
    assert [f.detail.split(" records")[0] for f in found] == [
        "NOTES.md line 11",
        "NOTES.md line 12",
    ]
    assert {f.severity for f in found} == {"warning"}
    notes.write_text(
        "# NOTES\n\n## Active objective\n" + "".join(f"- item {i}\n" for i in range(25))
    )
    found = [f for f in audit(layout).findings if f.kind == "notes_style"]
    assert [(f.severity, "has 28 lines" in f.detail) for f in found] == [("error", True)]


def test_cli_audit_json_shape_check_exit_and_read_only(layout: Layout, put: Put) -> None:
    put("deploy", "CI pushes with ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8.")
    put("hooks", "Commit 3f2a9c1 fixed the flaky loader test.", kind="project")
    before = {
        p: p.read_bytes()
        for p in layout.root.rglob("*")
        if p.is_file() and ".git/" not in str(p) and ".orch" not in str(p)
    }
    runner = CliRunner()
    result = runner.invoke(cli, ["memory", "audit", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert set(data) == {"v", "memories", "findings", "groups"} and data["v"] == 1
    assert data["memories"] == 2
    for finding in data["findings"]:
        assert set(finding) == {"kind", "memory", "related", "detail", "severity"}
        assert finding["kind"] in KINDS and finding["severity"] in ("error", "warning")
    assert {f["kind"] for f in data["findings"]} == {"secret", "excluded_content"}

    text = runner.invoke(cli, ["memory", "audit"])
    assert text.exit_code == 0 and text.output.startswith("Audit Report")
    assert "## Secrets (1)" in text.output
    checked = runner.invoke(cli, ["memory", "audit", "--check"])
    assert checked.exit_code == 1
    after = {
        p: p.read_bytes()
        for p in layout.root.rglob("*")
        if p.is_file() and ".git/" not in str(p) and ".orch" not in str(p)
    }
    assert after == before

    (layout.repo_memories / "deploy.md").unlink()
    RepoMemoryStore(layout).regenerate_index()
    warnings_only = runner.invoke(cli, ["memory", "audit", "--check"])
    assert warnings_only.exit_code == 0, warnings_only.output


def test_audit_outside_an_initialised_repository_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["memory", "audit"])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_a_repeated_audit_is_read_back_until_anything_it_reads_changes(
    layout: Layout, put: Put, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.memory import audit as audit_module

    put("parser", "Config is parsed by `parse_config()`.")
    assert audit(layout).findings == []
    monkeypatch.setattr(audit_module, "near_duplicate_groups", None)  # would fail if called
    assert audit(layout).findings == []  # read back
    monkeypatch.undo()

    main = layout.root / "app" / "main.py"
    main.write_text(main.read_text().replace("parse_config", "read_config"))
    assert [f.kind for f in audit(layout).findings] == ["stale_citation"]
    put("parser", "Config is parsed by `read_config()`.")
    assert audit(layout).findings == []
    layout.notes.write_text(layout.notes.read_text() + "- [x] phase 1 done\n")
    assert [f.kind for f in audit(layout).findings] == ["notes_style"]
    layout.memory_index.write_text("# edited by hand\n")
    assert "index_drift" in {f.kind for f in audit(layout).findings}


def test_audit_logs_a_schema_valid_memory_audit_event(layout: Layout, put: Put) -> None:
    from orchestrator.events.log import EventLog

    put("flaky", "Commit 3f2a9c1 fixed the flaky loader test.", kind="project")
    log = EventLog(layout.artifacts / "t" / "observability" / "t.ndjson", "t")
    audit(layout, log=log, phase=4)
    audit(layout, log=log, phase=4)  # read back from the cache: logged all the same
    events = log.read(check=True)
    assert events.problems == [] and len(events.events) == 2
    payload = events.events[0].payload
    assert payload["counts"]["excluded_content"] == 1 and payload["warnings"] == 1
    assert events.events[1].payload == payload


def test_memory_commands_do_not_import_the_model_sdk(layout: Layout, put: Put) -> None:
    import subprocess
    import sys

    put("fine", "`DEFAULT_TIMEOUT` is 30.")
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from orchestrator.cli import cli\n"
        "for args in (['memory', 'verify'], ['memory', 'audit'], ['memory', 'promote', '--help'],"
        " ['memory', 'import', '--help']):\n"
        "    result = CliRunner().invoke(cli, args)\n"
        "    assert result.exit_code == 0, result.output\n"
        "print('anthropic' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=layout.root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_a_fresh_clone_audits_the_same_and_keeps_its_caches_from_the_first_run(
    layout: Layout, put: Put, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`.orch/` is git-ignored, so a clone has none: the first audit finds what a warm one
    finds, and leaves the caches the next audit reads back."""
    import shutil

    from orchestrator.memory import audit as audit_module

    put("deploy", "CI pushes with ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8.")
    put("parser", "Config is parsed by `vanished()`.")
    put("flaky", "Commit 3f2a9c1 fixed the flaky loader test.", kind="project")
    warm = audit(layout).to_dict()
    shutil.rmtree(layout.cache)
    fresh = audit(layout).to_dict()
    assert fresh == warm
    assert {f["kind"] for f in fresh["findings"]} == {
        "secret",
        "stale_citation",
        "excluded_content",
    }
    assert (layout.cache / "cache.sqlite").is_file()
    monkeypatch.setattr(audit_module, "near_duplicate_groups", None)  # would fail if called
    assert audit(layout).to_dict() == fresh


def test_an_item_to_do_and_one_done_are_two_stages_of_work_unless_copies(
    layout: Layout, put: Put
) -> None:
    put("todo", "[ ] Offline export of the monthly ledger to CSV files", subject="to do")
    put("done", "[x] Offline export of the monthly ledger as CSV files", subject="done")
    put("doing", "❌ Offline export of the monthly ledger into CSV files", subject="backlog")
    put("copy-a", "✅ Nightly backup of the ledger to object storage", subject="milestones")
    put("copy-b", "[ ] Nightly backup of the ledger to object storage", subject="next steps")
    put("verb", "Add paging to the invoice search results", subject="next steps")
    put("cross", "❌ Paging to the invoice search results", subject="features")
    report = audit(layout)
    groups = {tuple(sorted((g.keeper, *g.decay))) for g in report.groups}
    # the two to-dos say one item; the done one is another stage of it
    assert ("doing", "todo") in groups
    assert not any("done" in g for g in groups)
    assert ("copy-a", "copy-b") in groups  # the same words: one item told twice
    # the same words after a mark or a verb of work: one item in two lists
    assert ("cross", "verb") in groups
