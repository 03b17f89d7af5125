"""Facts that fill no one slot: prohibitions that add up, chains of arrows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conftest import contradictions

from orchestrator.memory import compare, slots
from orchestrator.memory.audit import audit
from orchestrator.store.layout import Layout

Put = Callable[..., Any]


def test_prohibitions_and_flows_are_not_contradictions(layout: Layout, put: Put) -> None:
    put("no-jquery", "Never use jQuery in the frontend.", subject="frontend rules")
    put("no-moment", "Never use Moment in the frontend.", subject="frontend rules")
    put("tree", "4 Terms → 36 Weeks → 180 Lessons → Exercises", subject="data model")
    put("cascade", "Completion cascade: Tasks → Day → Week, automatic", subject="data model")
    assert contradictions(layout) == set()


def test_limits_and_plain_statements_still_conflict(layout: Layout, put: Put) -> None:
    put("up-10", "Uploads larger than 10 MB are rejected by the api.", subject="upload size")
    put("up-25", "Uploads larger than 25 MB are rejected by the api.", subject="upload size")
    put("db-pg", "The warehouse is Snowflake.", subject="warehouse")
    put("db-bq", "The warehouse is BigQuery.", subject="warehouse")
    assert contradictions(layout) == {
        frozenset({"up-10", "up-25"}),
        frozenset({"db-pg", "db-bq"}),
    }


def test_a_fact_that_opens_with_a_prohibition_is_one_whatever_its_negations(
    layout: Layout, put: Put
) -> None:
    # "no componentDidMount" inside a "Don't" rule makes two negations, still a prohibition
    put("no-pages", "Don't use class components (no componentDidMount)", subject="must not")
    put("no-ui-libs", "Don't use CSS-in-JS libraries (plain modules only)", subject="must not")
    assert contradictions(layout) == set()


def test_one_count_given_two_values_across_subjects(layout: Layout, put: Put) -> None:
    put("cols-a", "The output is a fixed 138-column spreadsheet layout.", subject="overview")
    put("cols-b", "`config.json` maps the output to 139 columns.", subject="key files")
    # another thing counted, a bound against a value, two parts, a number naming which one
    put("schema", "The SQLite store has a 6-column schema.", subject="storage")
    put("page-max", "A client may ask for at most 200 orders a page.", subject="paging limit")
    put("page-def", "`list_orders()` returns 50 orders a page by default.", subject="orders")
    put("api-ttl", "The api cache keeps entries for 43 minutes.", subject="api cache")
    put("web-ttl", "The web cache keeps entries for 72 minutes.", subject="web cache")
    put("set-1", "Setting 1 of part 1 defaults to 8.", subject="setting one")
    put("set-8", "Setting 8 of part 1 defaults to 57.", subject="setting eight")
    report = audit(layout)
    found = [f for f in report.findings if f.kind == "contradiction"]
    assert {frozenset({f.memory or "", *f.related[:1]}) for f in found} == {
        frozenset({"cols-a", "cols-b"})
    }
    assert "column" in found[0].detail and "138" in found[0].detail and "139" in found[0].detail


def test_a_clash_already_reported_under_one_subject_is_not_reported_again(
    layout: Layout, put: Put
) -> None:
    put("batch-5k", "`WarehouseLoader` writes 5000 rows per batch.", subject="load batch size")
    put("batch-20k", "Each load batch holds 20,000 rows.", subject="load batch size")
    put("upserts", "Loading upserts rows in batches of 5000 rows.", subject="warehouse loading")
    assert contradictions(layout) == {frozenset({"batch-5k", "batch-20k"})}


def test_counts_are_numbers_written_before_their_unit() -> None:
    assert slots.counts("A 138-column format, 20,000 rows and 2.5 seconds") == {
        ("138", "column"),
        ("20000", "row"),
        ("2.5", "second"),
    }
    assert ("8", "set") not in slots.counts("Setting 8 of part 1")
    assert slots.bounds("at most 200 orders") and not slots.bounds("50 orders by default")
    assert slots.forbids("Don't use X (no Y)") and not slots.forbids("Use X, not Y")


def test_two_task_state_notes_giving_one_count_two_values(layout: Layout, put: Put) -> None:
    # both are task state (excluded_content); the test count moved on between them
    put("run-a", "All 318 tests pass.", subject="current status")
    put(
        "run-b", "Suite: 322 passed (3 old tests dropped, loader rewritten).", subject="recent work"
    )
    # task state that shares no count, and a status told twice, are not contradictions
    put("step-1", "✅ Phase 1 done: parser and tokenizer", subject="progress")
    put("step-2", "✅ Phase 2 done: the evaluator", subject="progress")
    report = audit(layout)
    excluded = {f.memory for f in report.findings if f.kind == "excluded_content"}
    assert {"run-a", "run-b"} <= excluded
    found = [f for f in report.findings if f.kind == "contradiction"]
    assert {frozenset({f.memory or "", *f.related[:1]}) for f in found} == {
        frozenset({"run-a", "run-b"})
    }
    assert "test" in found[0].detail and "318" in found[0].detail and "322" in found[0].detail


def test_a_count_of_passed_tests_is_a_count_of_tests() -> None:
    assert slots.unit("pass") == slots.unit("test") == "test"
    assert slots.unit("column") == "column"


def test_two_items_under_one_label_describing_what_it_names(layout: Layout, put: Put) -> None:
    # the clash holds the label's own name ("Ky"): two descriptions of one library
    a = "**Ky**: The application uses the tiny Ky client to make requests to the GitHub API."
    put("ky-a", a, subject="api integration")
    put(
        "ky-b",
        "**Ky**: Tiny browser client used for making HTTP requests.",
        subject="api integration",
    )
    # one label, two values that are not its name: a clash
    put("db-a", "**Database**: The service stores orders in MySQL.", subject="storage")
    put("db-b", "**Database**: The service stores orders in Postgres.", subject="storage")
    assert contradictions(layout) == {frozenset({"db-a", "db-b"})}


def test_entries_of_one_list_are_not_contradictions(layout: Layout, put: Put) -> None:
    """Three facts of one subject, each naming its own thing (a service and its port, a
    script and its database), are the entries of a list, not a slot given three values."""
    put("web-port", "Frontend runs on port 7100", subject="local notes")
    put("db-port", "MariaDB runs on port 3306 (Podman)", subject="local notes")
    put("cache-port", "Memcached runs on port 11211 (Podman)", subject="local notes")
    put("run-lite", "`serve:lite` - starts the site on the DuckDB store", subject="store settings")
    put("run-full", "`serve:full` - starts the site on the MariaDB store", subject="store settings")
    put("env-lite", "`.env.lite` for DuckDB settings", subject="store settings")
    assert contradictions(layout) == set()


def test_one_slot_told_three_ways_still_conflicts(layout: Layout, put: Put) -> None:
    """The same words with three values are one slot stated three ways; so is a pair of
    entries naming one thing two ways when no third joins them."""
    put("suite-a", "The nightly suite runs 140 checks.", subject="nightly suite")
    put("suite-b", "The nightly suite runs 152 checks.", subject="nightly suite")
    put("suite-c", "The nightly suite runs 161 checks.", subject="nightly suite")
    put("store-a", "The ledger store is DuckDB.", subject="ledger store")
    put("store-b", "The ledger store is MariaDB.", subject="ledger store")
    assert contradictions(layout) == {
        frozenset({"suite-a", "suite-b"}),
        frozenset({"suite-a", "suite-c"}),
        frozenset({"suite-b", "suite-c"}),
        frozenset({"store-a", "store-b"}),
    }


def test_entries_read_by_their_numbers_links_and_asides_fill_their_own_slots(
    mk: Callable[..., Any],
) -> None:
    """Numbered entries with bold labels, entries named by a link, entries that are a
    name and an aside, and code-span labels holding a colon each name their own thing."""
    pairs = [
        (
            "2. **`deploy/nginx.conf`** -- the file is never touched by hand",
            "5. **`deploy/Procfile`** -- the file is touched by hand",
        ),
        (
            "[web/cart.js](web/cart.js) — added `clearCart()` and a `reset` event",
            "[app/main.py](app/main.py) — added the `--verbose` flag",
        ),
        (
            "4. **Retry logic in `jobs.py`** -- workers are never restarted",
            "6. **`queue/` folder** -- workers are restarted nightly",
        ),
        (
            "1. **The worker's retry loop** — it retries a failed job twice",
            "2. Mailer cleanup (Scenario 4) — it never retries a failed job",
        ),
        ("3. [Cache Layout (3/4/2025)](#cache-layout)", "4. [Cache Tuning (3/4/2025)](#tuning)"),
        ("retries (list of 4 items)", "fallbacks (list of 2 items)"),
        ("`make lint` - Check the style of the Python files", "`make lint:fix` - Fix the style"),
        (
            "[2024-03-02 09:10:00] - **Replaced the Celery queue with RQ**",
            "[2024-05-11 16:40:00] - **Replaced the cron job with a systemd timer**",
        ),
    ]
    for left, right in pairs:
        a, b = mk("a", left, subject="notes"), mk("b", right, subject="notes")
        assert compare.conflict(a, b) is None, (left, right)
    # two numbered steps are two entries, labelled or not
    a = mk("a", "1. Check `.env.example` for the mail settings", subject="before a release")
    b = mk("b", "2. Check the mail settings in `deploy/mail.toml`", subject="before a release")
    assert compare.conflict(a, b) is None
    # one entry named two ways still gives its slot two values
    a = mk("a", "2. **`deploy/nginx.conf`** -- workers: 4", subject="notes")
    b = mk("b", "2. **`deploy/nginx.conf`** -- workers: 8", subject="notes")
    assert compare.conflict(a, b) is not None


def test_lead_ins_options_weighed_and_examples_state_no_value(mk: Callable[..., Any]) -> None:
    """A lead-in ending on a colon, the pros and cons of an option and an example under a
    heading of examples state no value of a slot; the same facts stated plainly do."""
    pairs = [
        (
            "Before any release of the service, read `docs/release-checklist.md` to understand:",
            "Before any release of the service, read `docs/rollback-plan.md` to understand:",
            "releases",
        ),
        (
            "Cons: no router, every route wired by hand",
            "The project leans on a router and its conventions",
            "web framework",
        ),
        ("Pros: ships with Postgres support", "The project ships with MySQL support", "web"),
        ("Run the suite with `pytest -x -q`", "Run the suite with `nox -s unit`", "examples"),
        (
            "Redis Streams carry the report jobs",
            "Redis Pub/Sub carries the report jobs",
            "usage examples",
        ),
    ]
    for left, right, subject in pairs:
        a, b = mk("a", left, subject=subject), mk("b", right, subject=subject)
        assert compare.conflict(a, b) is None, (left, right)
    a = mk("a", "The job queue runs on Redis Streams", subject="job queue")
    b = mk("b", "The job queue runs on Redis Pub/Sub", subject="job queue")
    assert compare.conflict(a, b) is not None


def test_numbers_naming_which_one_or_ending_a_range_are_no_counts() -> None:
    assert slots.counts("Stage 2.5 adds retries to the importer") == frozenset()
    assert slots.counts("The harness compares 1-5 models side by side") == frozenset()
    assert slots.counts("It compares 1 to 5 models") == frozenset({("1", "to")})
    assert slots.counts("The harness compares 3 models") == frozenset({("3", "model")})


def test_counts_said_of_two_things_named_apart_are_not_one_count(layout: Layout, put: Put) -> None:
    put("fix-a", "Fixed OrderModal.jsx 404 errors: the route was renamed", subject="fixes")
    put("fix-b", "Fixed 401 errors in InvoiceTab.jsx calls", subject="recent changes")
    put("cols-a", "The output is a fixed 138-column spreadsheet layout.", subject="overview")
    put("cols-b", "`config.json` maps the output to 139 columns.", subject="key files")
    assert contradictions(layout) == {frozenset({"cols-a", "cols-b"})}


def test_a_condition_or_an_alternative_turned_down_denies_nothing(
    mk: Callable[..., Any],
) -> None:
    """ "Without X" and "instead of X" set a condition or name what was turned down; a
    plain "not" still denies."""
    a = mk("a", "The importer updates a row on a unique key conflict", subject="importer")
    b = mk(
        "b", "Without a unique key, the importer updated no row but added one", subject="importer"
    )
    c = mk("c", "Webhooks now update the ledger row instead of adding a new row", subject="hooks")
    d = mk("d", "A new ledger row is added for each refund", subject="hooks")
    e = mk("e", "The importer does not update a row on a unique key conflict", subject="importer")
    assert compare.conflict(c, d) is None
    assert compare.conflict(a, e) is not None
    assert slots.contrast_only(c.fact) and not slots.contrast_only(b.fact)


def test_parallel_statements_led_by_two_names_fill_two_slots(mk: Callable[..., Any]) -> None:
    """Two facts that open with different names and say the rest alike speak of two
    things; the same lead with two values is still one slot."""
    a = mk("a", "Ingest latency < 40 ms per batch", subject="targets")
    b = mk("b", "Query latency < 90 ms per batch", subject="targets")
    c = mk("c", "Hinges (all wood types) = `2 x plank price`", subject="pricing")
    d = mk("d", "Shelves (all wood types) = `plank price / 3`", subject="pricing")
    assert compare.conflict(a, b) is None
    assert compare.conflict(c, d) is None
    e = mk("e", "Ingest latency < 40 ms per batch", subject="targets")
    f = mk("f", "Ingest latency < 75 ms per batch", subject="targets")
    assert compare.conflict(e, f) is not None


def test_names_set_apart_with_nothing_naming_the_slot_do_not_clash(
    mk: Callable[..., Any],
) -> None:
    """Two names set against each other in clauses sharing one word besides them name no
    slot; a clause stating the subject's value, or two sharing the words of the slot, do."""
    a = mk("a", "Set in `vite.config.ts`", subject="bundling")
    b = mk("b", "Set in `babel.config.js`", subject="bundling")
    assert compare.conflict(a, b) is None
    c = mk("c", "Nightly exports are written by `export_job.py`", subject="storage")
    d = mk("d", "Nightly exports are written by `dump_job.py`", subject="storage")
    assert compare.conflict(c, d) is not None
    e = mk("e", "The queue is Kafka.", subject="queue")
    f = mk("f", "The queue is RabbitMQ (vhost billing).", subject="queue")
    assert compare.conflict(e, f) is not None


def test_one_version_to_two_precisions_is_one_value(mk: Callable[..., Any]) -> None:
    a = mk("a", "The backend runs on Django 4.2 with Celery.", subject="stack")
    b = mk("b", "The backend runs on Django 4.2.0 with Celery.", subject="stack")
    c = mk("c", "The backend runs on Django 5.1 with Celery.", subject="stack")
    assert compare.conflict(a, b) is None
    assert compare.conflict(a, c) is not None
    assert slots.same_version(frozenset({"4.2"}), frozenset({"4.2.0"}))


def test_denials_in_an_aside_or_of_another_word_form_deny_nothing(
    mk: Callable[..., Any],
) -> None:
    """A negation inside brackets adds a state of work; a one-word denial meets only the
    word it writes ("it never renders" against "a renderer"); "do not wrap them" against
    "Wrap errors" still denies."""
    a = mk("a", "Parsing slows down on files over 2 GB.", subject="known issues")
    b = mk("b", "Parsing slows down on files over 2 GB (not fixed yet).", subject="known issues")
    assert compare.conflict(a, b) is None and slots.aside_denial(b.fact)
    c = mk("c", "Pages come from a static renderer script run once.", subject="site build")
    d = mk("d", "The server only serves `dist/`; it never renders.", subject="site build")
    assert compare.conflict(c, d) is None
    e = mk("e", "Wrap errors with context so callers can inspect them.", subject="errors")
    f = mk("f", "Return errors as they are: do not wrap them.", subject="errors")
    assert compare.conflict(e, f) is not None


def test_counts_in_dated_log_entries_or_of_two_qualified_things_are_no_clash(
    layout: Layout, put: Put
) -> None:
    """Two dated entries of a log each record the count of their moment; "7 unit tests"
    and "12 integration tests" count two suites; two undated statuses of one suite still
    clash, and so do a current state and a dated entry."""
    put("log-a", "Suite: 210 tests green.", subject="2025-03-02 - Parser rework")
    put("log-b", "Suite: 234 tests green.", subject="2025-03-09 - Cache layer")
    put("unit", "Suite: 7 unit tests all green", subject="module one")
    put("integ", "Suite: 12 integration tests all green", subject="module two")
    put("now-a", "All 88 checks passing.", subject="current state")
    put("now-b", "**QA**: all 91 checks passing, lint clean", subject="workflow status")
    put("state", "All 57 tests pass.", subject="current state")
    put(
        "entry",
        "Suite: 61 passed (one flaky test rewritten).",
        subject="Recent changes (2025-04-02)",
    )
    assert contradictions(layout) == {
        frozenset({"now-a", "now-b"}),
        frozenset({"state", "entry"}),
    }
    assert slots.dated("Release notes (June 9, 2025)") and not slots.dated("Phase 2")


def test_a_total_and_a_count_not_said_to_be_one_are_two_scopes(layout: Layout, put: Put) -> None:
    """A module's "12 endpoints" and "40 endpoints in total" count a part and the whole;
    two totals, or two plain counts, of one thing still clash."""
    put("part", "The billing service exposes 12 REST endpoints.", subject="backend")
    put("sum", "The gateway exposes 40 REST endpoints in total.", subject="api")
    put("sum-a", "Overall the gateway exposes 38 REST endpoints.", subject="gateway status")
    assert contradictions(layout) == {frozenset({"sum", "sum-a"})}
    assert slots.whole("Overall: 128 checks") and not slots.whole("all 11 checks pass")


def test_a_count_given_three_values_or_more_is_a_log_not_a_clash(layout: Layout, put: Put) -> None:
    """Runs logged one after another ("9 suites", "8 suites", "6 suites") record a count
    along its history: no one of them is the wrong one; two values still clash."""
    put("run-1", "`make check` now passes (9 suites, 40 checks).", subject="verification")
    put("run-2", "`make check` now passes (8 suites, 35 checks).", subject="verification")
    put("run-3", "`make check` now passes (6 suites, 27 checks).", subject="verification")
    put("state", "All 57 tests pass.", subject="current state")
    put("entry", "Suite: 61 passed (one flaky test rewritten).", subject="recent changes")
    report = audit(layout)
    excluded = {f.memory for f in report.findings if f.kind == "excluded_content"}
    assert {"run-1", "run-2", "run-3", "state", "entry"} <= excluded
    # durable facts under three headings, three values: a history told across a log
    put("lint-1", "The lint job checks 120 rules.", subject="linting")
    put("lint-2", "The lint job checks 134 rules.", subject="ci checks")
    put("lint-3", "The lint job checks 151 rules.", subject="quality gates")
    assert contradictions(layout) == {frozenset({"state", "entry"})}
