"""Ephemeral task state as classes, and the slot rule of contradictions."""

from __future__ import annotations

import re

import pytest

from orchestrator.memory import exclusions
from orchestrator.memory.compare import conflict, label
from orchestrator.memory.ephemeral import (
    _FACT_RULES,
    _RX,
    LABELS,
    Ephemeral,
    Screen,
    ephemeral,
    needed_words,
)
from orchestrator.memory.exclusions import excluded
from orchestrator.store.memfile import Memory


@pytest.mark.parametrize(
    ("fact", "subject", "cls"),
    [
        ("Swapped the HTML parser for lxml to cut parse time", "parsing", "change_account"),
        ("Migrated the settings loader to pydantic", "", "change_account"),
        ("Previously: sessions were kept in Redis", "sessions", "change_account"),
        ("`Loader` and `Reader` collapsed into `load()`", "loading", "change_account"),
        ("Upload errors were swallowed — now collected into `warnings`", "", "change_account"),
        ("**Adding retries** to the HTTP client:", "recent work", "in_progress"),
        ("✅ Phase 2 - exporter written", "", "progress_status"),
        ("All 84 tests pass.", "state", "progress_status"),
        ("**Status**: COMPLETE", "", "progress_status"),
        ("[ ] Write the import wizard", "", "todo_next"),
        ("❌ Pagination of the search results", "core functionality", "todo_next"),
        ("Decision needed: where the bookmarks are kept", "bookmarks", "todo_next"),
        ("Need for a cache of geocoding answers", "known issues", "todo_next"),
        ("Error reporting is to be determined in the design phase", "", "todo_next"),
        ("Retries deferred to a later release", "retries", "todo_next"),
        ("Document the cache layout", "Next Steps", "todo_next"),
        ("Add sorting options to the listings", "Medium Priority", "todo_next"),
        ("Implement the main loop", "Immediate Steps (Next 2-3 Days)", "todo_next"),
        ("Offline mode and local caching", "Medium-Term Goals", "todo_next"),
        ("What is the minimum feature set?", "Open Questions", "todo_next"),
        ("Monthly vs. yearly billing", "Questions Under Consideration", "todo_next"),
        ("Navigation between the report tabs", "Next Phase Goals", "todo_next"),
        ("Set up the build pipeline", "Stage 1: Data Model (10% Complete)", "progress_status"),
        ("Working within the API's rate limits", "Current Challenges", "in_progress"),
        ("Evaluating a switch to DuckDB", "decisions", "in_progress"),
        ("The exporter is currently being rewritten", "", "in_progress"),
        ("Stream the export instead of buffering it", "Current Focus", "in_progress"),
        ("**Key Achievement**: exports run in half the time", "", "session_summary"),
        ("Example: the cache key was missing the locale", "lessons", "session_summary"),
        ("*Last updated: 2026-03-02*", "", "dated_status"),
        ("Export the ledger as OFX", "Nice to Have", "todo_next"),
        ("Offline sync for the field app", "Future Considerations", "todo_next"),
        ("Add a dark theme to the settings page", "Feature Expansion", "todo_next"),
        ("Per-team quotas", "Ideas", "todo_next"),
        ("A monthly summary of unpaid invoices", "Potential Improvements", "todo_next"),
        ("Exports will go to object storage (planned)", "exports", "todo_next"),
        ("Consider adding a retry queue for failed webhooks", "webhooks", "todo_next"),
        ("To be documented once the schema settles", "schema", "todo_next"),
        ("The importer reads CSV files only", "Current Status", "progress_status"),
        ("Invoice export is not yet implemented", "invoices", "progress_status"),
        ("The upload form is in place, but files are not kept", "uploads", "progress_status"),
        ("The share button is visual only", "sharing", "progress_status"),
        ("Search is implemented as a placeholder", "search", "progress_status"),
        ("The map view is currently in the early prototype stage", "", "progress_status"),
        ("Created on 04.05.2026", "", "dated_status"),
        ("Offline export of the ledger", "What's Left to Build", "todo_next"),
        ("Memory use of the import worker", "Current Considerations", "in_progress"),
        ("Plain CSV files → a SQLite store", "Evolution of Project Decisions", "change_account"),
        ("Nightly builds signed with the release key", "Version History", "change_account"),
        ("**Invoice Export**: CSV and OFX, one file per month ✅", "features", "progress_status"),
        ("**Sync Engine**: 80% - conflicts still resolved by hand", "parts", "progress_status"),
        ("**Ledger Import**: Rewrote the parser around streams", "evolution", "change_account"),
        ("**Storage**: Evolved from flat files to SQLite", "architecture", "change_account"),
        ("The importer is feature-complete and ready for use", "importer", "progress_status"),
        ("Caching of the exchange rates could benefit from a shorter expiry", "", "todo_next"),
        ("The retry policy for webhooks needs to be defined", "webhooks", "todo_next"),
        ("Currently migrating the ledger import to the new parser", "ledger", "in_progress"),
        ("May need stricter checks on uploaded statements", "uploads", "todo_next"),
        ("**Sync Engine** - Needs more tests around conflicts", "sync", "todo_next"),
        ("**Reports**: Will move the monthly report to the worker", "reports", "todo_next"),
        ("**Test Coverage**: ~60%", "quality", "progress_status"),
        ("**Bank Feeds**: Complete", "bank feeds", "progress_status"),
        ("**API Server**: Configured and running on port 8080", "server", "progress_status"),
        ("Successfully migrated the ledger to SQLite", "storage", "change_account"),
        ("We've implemented the CSV import and its checks", "imports", "change_account"),
        ("**Storage**: Decided to pivot from flat files to SQLite", "storage", "change_account"),
        ("Ledger import fully documented", "ledger", "progress_status"),
        ("Ledger import from bank feeds", "Current Team Focus", "in_progress"),
        ("Bank feed parser", "Major Updates", "change_account"),
        ("Monthly statements by e-mail", "Upcoming Work", "todo_next"),
        ("⬜ Statements in OFX", "ledger", "todo_next"),
        ("**Sandbox**: ✅ Fully functional", "environments", "progress_status"),
        ("Future enhancement: cache the exchange rates", "rates", "todo_next"),
        (
            "**Ledger Import (October 2025):** Ensured duplicate rows are skipped",
            "",
            "change_account",
        ),
        ("Created/updated the env files for both stores", "setup", "change_account"),
        ("Completed the initial export to OFX", "exports", "change_account"),
        ("Standardizing the retry logic across workers", "workers", "in_progress"),
        ("🔄 **Rate Cache Rework (30% Remaining)**", "rates", "progress_status"),
        ("**Testing**: No tests implemented yet", "quality", "progress_status"),
        ("**Exports**: OFX export not implemented", "exports", "progress_status"),
        ("Upload checks implemented but parsing pending", "uploads", "progress_status"),
        ("**Date**: 3 March 2025", "", "dated_status"),
        ("Ledger import from bank feeds", "Works", "progress_status"),
        ("**Task 3**: Check the OFX parser", "Immediate Actions Needed", "todo_next"),
        ("Queue or cron for the statements", "Technical Decisions Pending", "todo_next"),
        ("Which banks to support first", "Questions for Clarification", "todo_next"),
        ("Rates from the central bank", "Next Focus", "todo_next"),
        ("Monthly statements", "Ongoing Work (Milestone 3)", "in_progress"),
        ("**Payroll**: (Details to be defined)", "departments", "todo_next"),
        # headings that state the class: a finished list, a stamped outcome, a plan's
        # priority or week, a wish list of improvements, goals under way, a day's account
        ("**Ledger view** (`src/views/Ledger.tsx`)", "Completed Screens", "progress_status"),
        ("Rates come from the central bank", "Rate Feed Rework - DONE", "progress_status"),
        ("Multi-currency ledgers", "System Status: Beta Ready", "progress_status"),
        ("Move the parser into a worker", "Parser Rework (Priority: High)", "todo_next"),
        ("Wire the OFX export", "Phase 2: Exports (Week 3)", "todo_next"),
        ("**Exports**: check every bank's format", "Format Review Needed", "todo_next"),
        ("**Bulk edit**: select many rows at once", "Ledger Enhancements", "todo_next"),
        ("Import from bank feeds", "Current Goals", "in_progress"),
        ("Statement import: parser wired, totals off by a cent", "Active Context", "in_progress"),
        ("**Rate limits**: found the feed's daily cap", "Sprint Achievements", "change_account"),
        ("Fallback fonts for the PDF export", "Update - exports (today)", "change_account"),
        # a log's entries: led by their stamp, or a line stamped to the minute
        ("[2031-05-02 09:15] - Rewrote the invoice parser around streams", "", "change_account"),
        ("[2031-05-02 09:15:00] - Initial ledger notes created", "notes", "progress_status"),
        ("Tracks open work. 2031-05-02 09:15:00 - Log of updates begins.", "log", "dated_status"),
        ("**Estimate:** 2 days **Status:** Done", "Phase 3: Exports", "progress_status"),
        ("The importer previously had no check for duplicate rows", "imports", "change_account"),
        # headings of fixes made, of finished work, and a log's dated entries of a fix, an
        # upgrade or a release
        ("Totals rounded once per invoice", "Invoice Rounding Fixes", "change_account"),
        ("Rates refreshed every hour", "Recent Bug Fixes", "change_account"),
        ("Amounts shown with two decimals", "Statement Export Complete", "progress_status"),
        (
            "Rates cached per currency pair",
            "[2031-05-02] Rate Cache Hotfix (v1.4.1)",
            "change_account",
        ),
        ("Ledgers kept per tenant", "May 2, 2031 - Ledger Upgrade", "change_account"),
        ("A summary mail per statement", "[2031-05-02] Statement Mails (v2.1.0)", "change_account"),
        # gaps, a plan's weeks, what the documentation needs; accomplishments; work not yet
        # shipped, a stage of development; an account in the present perfect
        ("Exports run on the web process", "Technical Gaps", "todo_next"),
        ("Wire the OFX export", "Phase 2: Exports (Weeks 3-4)", "todo_next"),
        ("Examples for every endpoint", "Documentation Needs", "todo_next"),
        ("A flowchart of the ledger's import", "Recent Accomplishments", "change_account"),
        ("Not yet deployed to the shared server", "deployment", "progress_status"),
        ("The ledger is still in the testing phase", "", "progress_status"),
        ("The statement parsers have been rewritten around streams", "", "change_account"),
        # a plan for the session or the next month; where a decision started, where it went
        # and where it goes; how far along; work suggested
        ("Continue the sync job", "Immediate (Current Session)", "todo_next"),
        ("Move the reports to the worker", "Medium Term (Next Month)", "todo_next"),
        ("**Evolution**: Switched to SQLite for the ledger", "storage", "change_account"),
        ("**Initial**: flat CSV files for the ledger", "storage", "change_account"),
        ("**Future**: share ledgers between teams", "storage", "todo_next"),
        ("**Coverage**: Target 90% (currently ~70%)", "quality", "progress_status"),
        ("**Ledger Engine**: statement import fully functional", "engine", "progress_status"),
        ("Rate lookups could be optimized with a cache", "rates", "todo_next"),
        # the next session's actions, questions still open, a plan's next phase and estimate,
        # work now in place
        ("Wire the OFX export", "Immediate Actions (Next Session)", "todo_next"),
        ("Which banks come first?", "Design Questions", "todo_next"),
        ("**Next Phase**: Exports and statements", "Phase: Ledger", "todo_next"),
        ("**Estimated Duration**: 3 days", "Phase: Ledger", "todo_next"),
        (
            "**Summary**: OFX and CSV exports are now implemented",
            "Phase: Exports",
            "progress_status",
        ),
        (
            "Each team picks its members in one dialog",
            "Team Invites Consolidated",
            "change_account",
        ),
        # a participle leads a change elsewhere, a quality under a pattern's heading
        ("Centralized retry handling", "webhooks", "change_account"),
        ("Replaced the retry queue with a scheduler", "Webhook Retry Pattern", "change_account"),
        # plans by their heading: next actions, a phase marked next or anticipated, questions
        # still to address, a week's plan by weekday
        ("Publish the nightly build", "Next Actions", "todo_next"),
        ("Wire the export dialog", "Next Priority Actions", "todo_next"),
        ("Table of open invoices", "Phase 2: Invoice List (Next)", "todo_next"),
        ("**Stage 3**: Shared ledgers", "Release Stages (Anticipated)", "todo_next"),
        ("Which currencies come first?", "Questions to Address", "todo_next"),
        ("Draft the report layout", "Tuesday", "todo_next"),
        # a stage stamped done, a numbered stage's progress, the overall status, the current phase
        ("**Parser**: Reads OFX 2.2 files", "Ledger Import (Stage 1 Complete)", "progress_status"),
        ("Summary cards on the home page", "Stage 2 Progress", "progress_status"),
        ("Stage: Data model", "Overall Status", "progress_status"),
        ("**Ledger import** - Wiring the parser in", "Current Development Phase", "in_progress"),
        # ready for the next piece of work, a check mark before the word of done, effort spent
        ("Ready to begin the export work", "notes", "progress_status"),
        ("**Staging Server**: Ready for the first deploy", "environment", "progress_status"),
        (
            "**Repo**: `git.example.org/ledger` (ready for the first push)",
            "setup",
            "progress_status",
        ),
        ("**Workspace**: `~/code/ledger` ✅ Complete setup", "environment", "progress_status"),
        ("**Actual Effort**: 3 hours", "L-04: Exports", "progress_status"),
        ("**Files Created**: 12 modules", "Metrics", "progress_status"),
        # a numbered phase of the project's plan; its own words give the class when they can
        ("Drag to reorder the rows", "Phase 3: Ledger Grid", "todo_next"),
        ("✅ Drag to reorder the rows", "Phase 3: Ledger Grid", "progress_status"),
        # a name said to be another now: a rename told
        ("Column `orders.shopId` is now `orders.storeId`", "database rules", "change_account"),
        # a horizon alone, what still needs watching, an hourglass or a loop marking work open
        ("Add request queuing", "Short Term", "todo_next"),
        ("Load balancing across regions", "Long-Term Plans", "todo_next"),
        ("Request latency by endpoint", "Monitoring Needs", "todo_next"),
        ("⏳ Cleanup of stale sessions", "sessions", "in_progress"),
        ("🔄 **Rates cached per currency**", "Success Criteria", "in_progress"),
        # recent progress, what is not there yet, a day's plan, counts so far, part ready
        ("**Result**: 40 statements parsed", "Recent Progress", "progress_status"),
        ("Staging database: Not yet created", "environment", "progress_status"),
        ("`exports/` - statement writers", "Planned Folders (Not Yet Created)", "todo_next"),
        ("Ledger import validated", "Day 3-4: Import and Reports", "todo_next"),
        ("**Statements Imported**: 0", "metrics", "progress_status"),
        ("Parser ready, the export writer still needed.", "notes", "progress_status"),
        (
            "Core parsers done, only the OFX reader and the fixtures remain.",
            "notes",
            "progress_status",
        ),
        # the stage now and the next one, by a bold label; a move from one stage to the next
        ("**Current**: review stage (checks passing)", "workflow stages", "in_progress"),
        ("**Next**: release stage", "workflow stages", "todo_next"),
        ("Transitioned from the pilot to the rollout", "rollout", "change_account"),
        # plans and states named by headings: a horizon with its span, future and planned
        # lists, an implementation plan, the state of the whole, the project's stage
        ("Collect feedback from the pilot shops", "Near Term (2-3 weeks)", "todo_next"),
        ("Move invoices to the queue", "Future Phases", "todo_next"),
        ("**Stage 2**: Exports and reports", "Ledger Implementation Plan", "todo_next"),
        ("Extract the rounding helpers", "Future Cleanup Opportunities", "todo_next"),
        ("Write the OFX reader", "Planned Tasks", "todo_next"),
        ("Nightly backups on the second disk", "System Health Status", "progress_status"),
        ("Beta; three of five importers written", "Project Stage", "progress_status"),
        # the words of a state: finished in the present perfect, suites passing, the mode now,
        # where a choice started, the day work began, work outstanding closing the fact
        ("The ledger views have been completed", "ledger", "change_account"),
        ("All related tests are passing.", "notes", "progress_status"),
        ("**Current Mode:** REVIEW **Next Mode:** RELEASE", "workflow", "in_progress"),
        ("**Current Priority**: close the import bugs first", "ledger", "in_progress"),
        ("**Started**: SQLite with raw queries", "Storage Evolution", "change_account"),
        ("Repository initialized on 2031-02-03", "notes", "dated_status"),
        ("The export schema needs to be designed.", "Known Issues", "todo_next"),
        ("**Load testing needed**: nothing measured yet", "notes", "todo_next"),
        # a template's slot that says its content is still to come is a to-do
        ("[TO BE DEFINED - the export formats]", "Exports", "todo_next"),
    ],
)
def test_each_class_is_recognised(fact: str, subject: str, cls: str) -> None:
    found = ephemeral(fact, subject)
    assert found is not None and found.cls == cls
    exclusion = excluded(fact, subject)
    assert exclusion is not None and exclusion.kind == "ephemeral_task_state"
    assert exclusion.cls == cls and LABELS[cls] in exclusion.reason()


@pytest.mark.parametrize(
    ("fact", "subject"),
    [
        ("Built with Vite and React", "stack"),
        ("Configured via environment variables prefixed `APP_`", "configuration"),
        ("Files are moved to `archive/` after they are processed", "archiving"),
        ("Amounts are cleaned and converted to EUR by `clean()`", "currency"),
        ("The changelog groups entries under Added, Changed and Fixed.", "changelog sections"),
        ("`ProgressBar` writes to stderr", "progress bar"),
        ("The page polls for orders while an order is pending", "polling"),
        ("Use absolute paths in every script", "Known Issues"),
        ("All amounts are in USD", "Current State"),
        ("❌ Don't inline styles: use the Tailwind classes", "styling"),
        ("❌ **Bad**: `any` in a component's props", "typing"),
        ("Pages are rendered by the App Router", "Next.js App Router"),
        ("The queue pops the lowest deadline first", "Priority Queue Design"),
        ("Phases run one after another", "Stage 1: Data Model"),
        ("The UI only shows the first fifty rows", "tables"),
        ("Non-functional requirements: pages render within 300 ms", "requirements"),
        ("The planning stage writes a plan file before any code", "workflow"),
        ("Small files, one job each", "Key Ideas"),
        ("Rates are cached for an hour", "Performance Considerations"),
        ("Orders move from draft to paid to shipped", "Current State Machine"),
        ("Balancing load across two workers", "Design Challenges"),
        ("Creating a fair score for late submissions", "Known Challenges"),
        ("Close a ticket once all of its subtasks are complete", "ticket rules"),
        ("When a format is not yet implemented, the export button is hidden", "exports"),
        ("The browser keeps its own history of visited pages", "Browser History"),
        ("`formatAmount(x)` in a template - good ✅", "formatting"),
        ("**Ledger**: 2 decimal places for every amount", "ledger"),
        ("**Exports**: one file per month", "exports"),
        ("A module may be shipped once it is ready for release", "releases"),
        ("Currently supports CSV and OFX statements", "imports"),
        ("**Retries**: Will retry a failed webhook three times", "webhooks"),
        ("A webhook may need a signing secret", "webhooks"),
        ("The exchange rates are never updated", "rates"),
        ("Invoices are archived once completed", "invoices"),
        ("Currently using the central bank's feed for rates", "rates"),
        ("Ensure every statement you import is complete", "imports"),
        ("Completed orders are archived nightly", "orders"),
        ("Verified users may post without review", "posting"),
        ("Unknown verbs answer 501 (not implemented)", "api"),
        ("Developed with FastAPI and SQLAlchemy", "stack"),
        ("Statements are parsed per bank", "How It Works"),
        ("**Layout:** Fixed sidebar beside a scrolling main pane", "layout"),
        ("**Integrated Modules:** payroll, ledger and reports", "modules"),
        ("Amounts are rounded half to even", "Completed Orders"),  # a state of the data
        ("Every change is logged with its author", "Recent Improvements Log"),
        ("A status line prints under the prompt", "Status Line"),
        ("The ledger is kept per user", "Active Context: Ledger App"),
        ("Retry the upload, then clear the cache", "Common Fixes"),
        ("Tags follow the version in the project file", "[2031-05-02] Release Tagging Pattern"),
        ("[2031-05-02 09:15:00] - Adopt SQLite for the local cache", "decisions"),
        ("getting-started.md: installation and first run guide", "docs"),
        ("A ticket closes when its checks pass", "Mark as Complete"),
        ("Ledger totals balance to zero", "Definition of Complete"),
        ("The dialog restores the previously selected tab", "tabs"),
        ("Each clinic's needs are gathered in interviews", "User Needs"),
        ("Features still in development sit behind a flag", "flags"),
        ("The parser has been designed to stream its input", "parsing"),
        ("Hooks run the linter before each commit", "Quality Assurance System"),
        ("Every export must be fully functional", "exports"),
        ("Snapshots are kept for a year", "Long-Term Storage"),
        ("Draw calls go through the queue", "Immediate Mode Rendering"),
        ("Answers are cached for a day", "Frequently Asked Questions"),
        ("Centralized retry handling", "Webhook Retry Pattern"),
        ("Entries expire after an hour", "How the Cache Is Updated"),
        ("The worker waits until the queue is ready for reads", "workers"),
        ("Rows are greyed out", "Row Styling (Once Complete)"),
        ("Upload progress is shown in the status bar", "Upload Progress"),
        ("Always read the scratchpad when you plan the next step", "workflow"),
        ("Each import runs in three phases", "Phase Design"),
        ("`retries` is now and then raised by hand", "retries"),
        ("✅ Done: the item is finished and checked", "Status Legend"),
        ("🔄 Planned: not started yet", "Legend"),
        ("Rates cached per currency", "Legend State Store"),
        # a target, a lifecycle's states, a template's placeholders, a rule's step, a
        # description of the current design
        ("**Coverage**: 85%+ of the parsers", "quality"),
        ("**Reviewing**: Work in progress", "Ticket Lifecycle"),
        ("[Date]: [What changed]", "Change Log"),
        ("The token needs to be created before the request", "auth"),
        ("**Current Implementation**: rates come from the daily feed", "rates"),
    ],
)
def test_durable_facts_stay_clean(fact: str, subject: str) -> None:
    assert ephemeral(fact, subject) is None
    assert excluded(fact, subject) is None


def memory(name: str, fact: str, subject: str = "api") -> Memory:
    return Memory(
        name=name,
        description=fact,
        type="project",
        subject=subject,
        reason="r",
        body=fact + "\n",
    )


def test_list_items_with_different_labels_fill_different_slots() -> None:
    assert label("`GET /tasks`: lists the tasks") == "get /tasks"
    assert label("Tests: `__tests__/name.test.ts`") == "tests"
    a = memory("a", "`POST /users`: registers a user")
    b = memory("b", "`PUT /users/me`: updates the current user")
    assert conflict(a, b) is None
    same = memory("c", "`POST /users`: logs a user in")
    assert label(same.fact) == label(a.fact)


def test_tools_for_different_jobs_do_not_conflict_but_one_slot_two_values_does() -> None:
    lint = memory("lint", "Use Black and isort for code formatting", "tools")
    tests = memory("tests", "Run tests with nox", "tools")
    assert conflict(lint, tests) is None
    rabbit = memory("rabbit", "The message broker is RabbitMQ.", "broker")
    kafka = memory("kafka", "The message broker is Kafka, run by the platform team.", "broker")
    assert conflict(rabbit, kafka) is not None


def test_two_bare_entries_of_a_list_do_not_conflict() -> None:
    # the files one change touched, listed under its heading: a list, not one slot
    one = memory("one", "`src/api/orders/[orderId]/route.ts`", "Session Cookie Rename")
    two = memory("two", "`src/api/refunds/[refundId]/route.ts`", "Session Cookie Rename")
    assert conflict(one, two) is None
    # a value stated in a sentence still fills its slot
    url = memory("url", "The default registry is `https://pkgs.example.dev`", "registry")
    old = memory("old", "The default registry is `https://registry.example.dev`", "registry")
    assert conflict(url, old) is not None


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        (r"\bab(?:cde|fgh)\b", {"cde", "fgh"}),
        (r"^\W{0,4}(?:x|yz)\s+done", {"done"}),
        (r"\bwas (?:not )?(?:lost|gone)", {"was "}),
        (r"(?:a|b*)", None),
        (r"\d+%", {"%"}),
        (r"\d+\s", None),
        (r"\u212aey", {"ey"}),  # the Kelvin sign matches "k" under re.I: never needed as is
        (r"^\W?(?:\[ \]|(?:❌|✗)(?!\W*no\b))", {"[ ]", "❌", "✗"}),  # single characters
        (r"\b[ab]\b", {"a", "b"}),
        (r"[a-c]", None),
        (r"[^a]", None),
        (r"[k\u212a]", None),
    ],
)
def test_needed_words_are_what_every_match_holds(pattern: str, words: set[str] | None) -> None:
    found = needed_words(pattern)
    assert (set(found) if found is not None else None) == words


@pytest.mark.parametrize(
    "fact",
    [
        "Fıxed the loader",  # a dotless i matches "i" under re.I: not ASCII, so scanned
        "Tests PASSED: 40 passed in 2 s",
        "Status: done",
    ],
)
def test_the_word_screen_never_hides_a_match(fact: str) -> None:
    text = " ".join(fact.split())
    assert ephemeral.__wrapped__(text, "") == _unscreened(text)


def _unscreened(text: str) -> Ephemeral | None:
    for cls, source in _FACT_RULES:
        for match in re.finditer(source, text, re.I):
            if cls == "change_account" and _RX.present_passive.search(text, 0, match.start()):
                continue
            return Ephemeral(cls, match.group(0).strip(" *") or text[:40])
    return None


def test_the_screen_passes_the_rules_a_text_holds_the_words_of() -> None:
    screen = Screen([r"\bdone\b", r"(?:abc|xyzzy|ab)\s", r"\d+", r"\bwas (?:lost|gone)"])
    assert set(screen.possible("it was done")) == {0, 2, 3}
    assert set(screen.possible("the lab is shut")) == {1, 2}  # "ab": a word too short to file
    assert set(screen.possible("a xyzzy b")) == {1, 2}
    assert set(screen.possible("nothing here")) == {2}  # no needed words: never screened out
    assert set(screen.possible(None)) == {0, 1, 2, 3}  # a text beyond ASCII
    assert screen[0].search("Done") is not None  # compiled under re.I


@pytest.mark.parametrize(
    "low",
    [
        " fixed the loader in commit 1a2b3c4d; tests passed at 14:32 ",
        " `config.toml` is defined in `src/app.py` ",
        " iteration 3: next steps are tbd, 40% done ",
        " previously ✅ status: wip ",
        " plain words about nothing at all ",
    ],
)
def test_the_screen_passes_what_each_rules_words_pass(low: str) -> None:
    screen = exclusions._SCREEN
    for i, source in enumerate(screen.sources):
        words = needed_words(source)
        assert (i in screen.possible(low)) == (words is None or any(w in low for w in words))
