"""Rules that real agent memory asked for: facts compared across the subjects they were
filed under, and stale names that are not stale."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.memory.audit import AuditReport, audit
from orchestrator.store.layout import Layout

Put = Callable[..., Any]


# facts on other matters, so the words the facts under test share are rare ones
BACKGROUND = (
    ("port", "The API server listens on port 8080", "Runtime"),
    ("logs", "Logs rotate daily and are kept for two weeks", "Operations"),
    ("login", "Customers sign in with a magic link sent by email", "Auth"),
    ("usage", "The nightly job recalculates usage totals", "Jobs"),
    ("tax", "Tax rates come from a yearly table per region", "Tax"),
    ("spacing", "Screens follow the design system spacing scale", "UI"),
    ("settle", "Payments settle through the card processor webhook", "Payments"),
    ("pdf", "Reports are rendered as PDF on demand", "Reports"),
)


def put_background(put: Put, count: int = len(BACKGROUND)) -> None:
    for name, fact, subject in BACKGROUND[:count]:
        put(name, fact, subject=subject)


def found(report: AuditReport, kind: str) -> set[frozenset[str]]:
    """The memories each finding of `kind` names with its first related one."""
    return {frozenset({f.memory or "", *f.related[:1]}) for f in report.findings if f.kind == kind}


def names(report: AuditReport, kind: str) -> set[str]:
    return {f.memory or "" for f in report.findings if f.kind == kind}


def test_copies_and_rewordings_under_other_subjects_are_near_duplicates(
    layout: Layout, put: Put
) -> None:
    rule = "Run `npm install --legacy-peer-deps`: two majors disagree on their peers."
    put("install-a", rule, subject="setup")
    put("install-b", rule, subject="known issues")
    put("sort-a", "Sort the results by any column of the output table", subject="features")
    put("sort-b", "Sorting the results by any column of the output table", subject="cli options")
    dups = found(audit(layout), "near_duplicate")
    assert frozenset({"install-a", "install-b"}) in dups
    assert frozenset({"sort-a", "sort-b"}) in dups


def test_a_copy_that_adds_where_in_code_is_still_a_copy(layout: Layout, put: Put) -> None:
    put("checks-a", "Added input checks (`server/checks.js`)", subject="recent changes")
    put("checks-b", "Added input checks", subject="security work")
    put("limits-a", "Added request limits (`server/limits.js`)", subject="recent changes")
    put("limits-b", "Added request limits (`worker/limits.js`)", subject="worker changes")
    dups = found(audit(layout), "near_duplicate")
    assert dups == {frozenset({"checks-a", "checks-b"})}  # two files: two places, two facts


def test_what_the_subject_decides_is_not_a_near_duplicate(layout: Layout, put: Put) -> None:
    # a short copy means what its subject makes it mean
    put("tbd-tests", "To be decided in the design stage", subject="testing strategy")
    put("tbd-logs", "To be decided in the design stage", subject="logging strategy")
    # the same statement about two parts
    put("api-http", "The api client sends requests over HTTP/1.1.", subject="api http version")
    put("db-http", "The database client sends requests over HTTP/1.1.", subject="db http version")
    # one number per setting
    put("setting-1", "Setting 1 of the exporter defaults to 8.", subject="setting one")
    put("setting-8", "Setting 8 of the exporter defaults to 57.", subject="setting eight")
    # one line written under each of two parts of one kind
    put("ledger-tests", "✅ Unit tests for every public call", subject="Ledger Adapter Work")
    put("billing-tests", "✅ Unit tests for every public call", subject="Billing Adapter Work")
    assert found(audit(layout), "near_duplicate") == set()


def test_a_copy_under_two_headings_that_give_a_state_is_one_item(layout: Layout, put: Put) -> None:
    """Headings ending on a state of work name no part: the copy is one item twice."""
    put("m1-sync", "Offline sync of saved lists", subject="Milestone 1 (Target: TBD)")
    put("m2-sync", "Offline sync of saved lists", subject="Milestone 2 (Target: TBD)")
    # a heading that only qualifies the other names the same list
    put("next-a", "Profile the import of large files", subject="Next Steps")
    put("next-b", "Profile the import of large files", subject="Next Immediate Steps")
    assert found(audit(layout), "near_duplicate") == {
        frozenset({"m1-sync", "m2-sync"}),
        frozenset({"next-a", "next-b"}),
    }


def test_list_items_under_one_heading_are_not_contradictions(layout: Layout, put: Put) -> None:
    put("get-tasks", "`GET /tasks`: lists the tasks of the user.", subject="rest api")
    put("post-tasks", "`POST /tasks`: creates a task.", subject="rest api")
    put("lint", "Use Black and isort for code formatting", subject="tools")
    put("bun", "Run tests with nox", subject="tools")
    put("threads-a", "The worker pool has 8 threads.", subject="pool size")
    put("threads-b", "The worker pool runs 16 threads.", subject="pool size")
    assert found(audit(layout), "contradiction") == {frozenset({"threads-a", "threads-b"})}


def test_ephemeral_lines_are_neither_compared_nor_kept(layout: Layout, put: Put) -> None:
    put("status-a", "**Status**: the exporter is complete", subject="current state")
    put("status-b", "**Status**: the exporter needs tests", subject="current state")
    report = audit(layout)
    assert found(report, "contradiction") == set()
    assert names(report, "excluded_content") == {"status-a", "status-b"}


def test_names_that_are_not_stale(layout: Layout, put: Put, commit_all: Callable[..., str]) -> None:
    root = layout.root
    (root / "frontend" / "src").mkdir(parents=True)
    (root / "frontend" / "src" / "App.tsx").write_text("export const App = () => null;\n")
    (root / ".gitignore").write_text("settings.local.json\n")
    commit_all(root, "frontend")
    put("nested", "`src/App.tsx` is the root component of the frontend.", subject="frontend")
    put("ignored", "`settings.local.json` holds each person's overrides.", subject="settings")
    put("template", "Add a `journal/YYYY_MM_DD_topic.md` entry after a change.", subject="journal")
    put("example", "Scripts run as `./script.sh` break when they change folder.", subject="scripts")
    put("removed", "`ReaderFactory` collapsed into `app/main.py`.", subject="loading")
    put("missing", "`src/Missing.tsx` renders the footer.", subject="frontend")
    assert names(audit(layout), "stale_citation") == {"missing"}


def test_one_item_named_by_its_id_twice_is_one_item(layout: Layout, put: Put) -> None:
    """The same id before two accounts of one piece of work, however differently worded;
    two items of one id that share nothing else are two items."""
    put(
        "b4-context",
        "Backend B4: UploadService, QueueConfig, POST /api/uploads",
        subject="active context",
    )
    put("b4-progress", "Backend B4: uploads go to the queue", subject="progress")
    put("step-setup", "Step 1: install the toolchain", subject="setup")
    put("step-migrate", "Step 1: write the schema", subject="migration")
    # an id with a hyphen: its own words are not words the two facts share
    put("adr-cache", "**ADR-012**: Cache the catalogue in memory for an hour", subject="records")
    put("adr-queue", "ADR-012: Retries go through a dead-letter queue", subject="decisions")
    dups = found(audit(layout), "near_duplicate")
    assert dups == {frozenset({"b4-context", "b4-progress"})}


def test_one_command_described_twice_is_one_item(layout: Layout, put: Put) -> None:
    """A command quoted whole before two descriptions sharing a word is one command told
    twice; the same command before descriptions that share nothing else is two facts."""
    put(
        "bundle-make",
        "`make bundle` - Pack the release archive for the download page",
        subject="make targets",
    )
    put(
        "bundle-release",
        "`make bundle` - Sign and compress everything a release needs",
        subject="releasing",
    )
    put("lint-what", "`make lint`: checks style with the project linter", subject="make targets")
    put("lint-slow", "`make lint` - slow on laptops, minutes per run", subject="known issues")
    dups = found(audit(layout), "near_duplicate")
    assert dups == {frozenset({"bundle-make", "bundle-release"})}


def test_the_same_words_on_two_sides_are_two_facts(layout: Layout, put: Put) -> None:
    """Before and after, in and out: words reading drops turn one line into its opposite."""
    put("check-before", "Run the schema check before each deploy", subject="deploys")
    put("check-after", "Run the schema check after each deploy", subject="release steps")
    put("in-scope", "Which exports are in scope?", subject="scope")
    put("out-scope", "Which exports are out of scope?", subject="scope")
    put("copy-a", "Run the schema check before each deploy", subject="release steps")
    dups = found(audit(layout), "near_duplicate")
    assert dups == {frozenset({"check-before", "copy-a"})}


def test_list_items_led_by_two_parts_of_one_kind_are_two_facts(layout: Layout, put: Put) -> None:
    """Entries of one list, each led by the name of its part, say one thing of each part."""
    put("team", "**Team reports**: MUST filter by `workspaceId` on every query", subject="scoping")
    put("org", "**Org reports**: MUST filter by both `workspaceId` AND `orgId`", subject="scoping")
    put("night", "**Nightly exports**: `exports/nightly/[DATE]_EXPORT.csv`", subject="exports")
    put("adhoc", "**Adhoc exports**: `exports/[DATE]_EXPORT.csv`", subject="export files")
    assert found(audit(layout), "near_duplicate") == set()


def test_two_titles_of_one_statement_are_not_two_parts(layout: Layout, put: Put) -> None:
    """Labels that differ only by words both descriptions say title one statement twice;
    labels naming a part the other description never names still part two facts."""
    body = "each worker runs in its own container so a crash stays local"
    put("worker", f"**Worker isolation**: {body}", subject="design decisions")
    put("container", f"**Container isolation**: {body}", subject="constraints")
    put("team", "**Team quotas**: each member may start ten builds a day", subject="limits")
    put("org", "**Org quotas**: each member may start ten builds a day", subject="billing")
    dups = found(audit(layout), "near_duplicate")
    assert frozenset({"worker", "container"}) in dups
    assert frozenset({"team", "org"}) not in dups


def test_copies_decay_against_one_another_before_a_longer_fact_they_meet(
    layout: Layout, put: Put
) -> None:
    # one line told under three headings, and a later account of work each copy meets
    put("export-a", "[x] Invoice export", subject="Core Features")
    put("export-b", "[x] Invoice export", subject="Billing Module")
    put("export-c", "[x] Invoice export", subject="Release Checklist")
    later = "2026-10-05T10:00:00Z"
    put("stripe", "Created the Invoice export for Stripe", subject="Recent Changes", updated=later)
    put_background(put)  # so the words of the export are rare ones
    dups = found(audit(layout), "near_duplicate")
    # two copies decay against the third; the account meets only the copy kept
    copies = {frozenset(p) for p in (("export-a", "export-c"), ("export-b", "export-c"))}
    assert copies <= dups
    assert dups - copies == {frozenset({"export-c", "stripe"})}


def test_enhance_refine_and_improve_are_one_word_of_making_better(layout: Layout, put: Put) -> None:
    put("improve", "Improve retry handling for uploads", subject="Next Steps")
    put("enhance", "Enhance retry handling for uploads", subject="To Do")
    put("refine", "[ ] Refine the retry handling of uploads", subject="Backlog")
    put_background(put, 6)  # so the words of the uploads are rare ones
    dups = found(audit(layout), "near_duplicate")
    # one item of work in three lists, each with its own word for making it better
    assert len(dups) == 2
    assert set().union(*dups) == {"improve", "enhance", "refine"}


def test_forms_of_one_verb_the_stemmer_leaves_apart_are_one_term(layout: Layout, put: Put) -> None:
    put("handlers", "[ ] Add error handlers", subject="Phase 1: Core Application")
    put("handling", "Add error handling", subject="Immediate Priorities")
    put("creation", "⏳ Invoice template creation", subject="Current Phase")
    put("create", "Create the invoice template", subject="Immediate Steps")
    put_background(put, 6)
    dups = found(audit(layout), "near_duplicate")
    assert dups == {frozenset({"handlers", "handling"}), frozenset({"creation", "create"})}
