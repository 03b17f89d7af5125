"""Near-duplicates found by the rare words two facts share, whatever their subjects."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.memory import compare
from orchestrator.memory.audit import AuditReport, audit
from orchestrator.memory.rarity import COMMON_DF, folded, rare_pairs, terms
from orchestrator.memory.text import read_fact
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory

Put = Callable[..., Any]

# facts about other things, so that the words of the project are common and those of a
# rule are rare, as in a real memory
FILLER = [
    ("The dashboard lists every open invoice of the project.", "dashboard"),
    ("Invoices of the project are exported as PDF files once a month.", "exports"),
    ("The project's API answers in JSON with one envelope per response.", "api"),
    ("Customers of the project log in with their e-mail address.", "login"),
    ("The project keeps its settings in one YAML file per environment.", "settings"),
    ("Background jobs of the project run in a separate worker process.", "jobs"),
]


def found(report: AuditReport) -> set[frozenset[str]]:
    return {
        frozenset({f.memory or "", *f.related[:1]})
        for f in report.findings
        if f.kind == "near_duplicate"
    }


def plant_filler(put: Put) -> None:
    for k, (fact, subject) in enumerate(FILLER):
        put(f"filler-{k}", fact, subject=subject)


def test_rewordings_that_share_rare_names_are_near_duplicates(layout: Layout, put: Put) -> None:
    plant_filler(put)
    # one rule in two rule files: a plural against a singular name, code spans unquoted
    put(
        "cascade-a",
        "After a TaskItem changes, calculateDayCompletion() runs and the Day is updated.",
        subject="completion cascade",
    )
    put(
        "cascade-b",
        "After TaskItems change, run `calculateDayCompletion()` and update the Day.",
        subject="data flow rules",
    )
    # the same touch-target rule, worded apart, the class names quoted in one only
    put(
        "touch-a",
        "Every interactive control gets `min-h-[44px] min-w-[44px]` as its tap area.",
        subject="accessibility",
    )
    put(
        "touch-b",
        "Tap areas of interactive controls need min-h-[44px] min-w-[44px].",
        subject="mobile layout",
    )
    dups = found(audit(layout))
    assert frozenset({"cascade-a", "cascade-b"}) in dups
    assert frozenset({"touch-a", "touch-b"}) in dups
    assert not any(name.startswith("filler") for pair in dups for name in pair)


def test_a_qualifier_one_fact_lacks_does_not_tell_two_items_apart(layout: Layout, put: Put) -> None:
    plant_filler(put)
    # how plain an item is, or a generic noun, is no difference: one item in two lists
    put("ledger-a", "Basic ledger reconciliation for vendor payouts", subject="features")
    put(
        "ledger-b",
        "Rudimentary ledger reconciliation for vendor payouts functionality",
        subject="milestone two",
    )
    # a word that names another item still is, qualifier or not
    put("ledger-c", "Basic ledger archiving for vendor payouts", subject="backlog")
    dups = found(audit(layout))
    assert frozenset({"ledger-a", "ledger-b"}) in dups
    assert not any("ledger-c" in pair for pair in dups)


def test_a_plain_first_version_and_a_richer_one_are_two_stages(layout: Layout, put: Put) -> None:
    plant_filler(put)
    # one feature at two stages of work: the plain version done, the richer one planned
    put("recon-plain", "Basic ledger reconciliation for vendor payouts", subject="milestone one")
    put(
        "recon-rich",
        "Advanced ledger reconciliation strategies for vendor payouts",
        subject="milestone two",
    )
    # the same stage in two lists is still one item
    put("recon-again", "Rudimentary ledger reconciliation for vendor payouts", subject="features")
    dups = found(audit(layout))
    assert not any("recon-rich" in pair for pair in dups)
    assert frozenset({"recon-plain", "recon-again"}) in dups


def test_what_rare_words_do_not_make_near_duplicates(layout: Layout, put: Put) -> None:
    plant_filler(put)
    # two endpoints of one API: list items labelled with different names
    put("get-all", "`GET /day-templates`: lists the day templates of the user.", subject="rest")
    put("get-one", "`GET /day-templates/{id}`: returns one day template.", subject="routes")
    # a fact that narrows another by the word of its own subject
    put("cache", "The rendering cache is shared between workers.", subject="caching")
    put(
        "thumb-cache",
        "The thumbnail rendering cache is shared between workers.",
        subject="thumbnail caching",
    )
    # one value each that the other lacks
    put("port-a", "The preview server listens on port 8080.", subject="preview server")
    put("port-b", "The preview server listens on port 9090 in CI.", subject="ci preview")
    # a denial against a statement
    put("sw-a", "Register the service worker in production builds.", subject="pwa")
    put("sw-b", "Never register the service worker in production builds.", subject="offline")
    # two facts that name nothing in common and share a few words
    put("deps-a", "Duplicate packages in two lock files are an error.", subject="lock files")
    put("deps-b", "A lock file listing one package twice is refused.", subject="lock errors")
    assert found(audit(layout)) == set()


def test_rare_words_weigh_more_and_common_ones_propose_no_pair(
    mk: Callable[..., Memory],
) -> None:
    memories = [
        mk(f"m{k}", f"The project stores record {k} in the project database.")
        for k in range(COMMON_DF + 10)
    ]
    memories += [
        mk("x", "Call `frobnicate()` before the project database closes."),
        mk("y", "The project must frobnicate before shutdown."),
    ]
    scores = rare_pairs(memories, compare.Readings())
    names = {(memories[a].name, memories[b].name) for a, b in scores}
    assert ("x", "y") in names
    # "project" and "database" are carried by more than COMMON_DF memories: no pair from
    # them, alone or together
    assert not any(a.startswith("m") and b.startswith("m") for a, b in names)


def test_terms_fold_names_and_values_fold_to_their_words() -> None:
    reading = read_fact("After TaskItems change, update the Day.")
    assert {"taskitem", "day"} <= terms(reading)
    assert folded(frozenset({"`lib/types.ts`", "TaskItems", "44"})) == {
        "lib",
        "types.ts",
        "taskitem",
        "44",
    }


def test_task_state_labels_and_whole_containment_by_rare_words(layout: Layout, put: Put) -> None:
    plant_filler(put)
    # one change account in two lists (ephemeral task state, still one event)
    put(
        "sorting-a",
        "**Adding command-line flags** for paging and grouping output:",
        subject="recent work",
    )
    put("sorting-b", "Added command-line paging flags", subject="project evolution")
    # labels in plain words, one inside the other, are one name
    put(
        "persist-a",
        "**Search Index:** Ensure notes are indexed in Elasticsearch and found quickly.",
        subject="sprint goals",
    )
    put(
        "persist-b",
        "**Search Index (Elasticsearch):** Ensuring notes are indexed and found quickly.",
        subject="priorities",
    )
    # one fact holds all of another's words, naming nothing
    put("peer-a", "npm install --legacy-peer-deps", subject="must do")
    put(
        "peer-b", "npm install --legacy-peer-deps (needed while two majors clash).", subject="setup"
    )
    # nearly all of one fact's rare words in a longer one that adds the stack
    put("tracker-a", "A 12-month Spanish vocabulary study planner.", subject="project summary")
    put(
        "tracker-b",
        "Project: Lingo Ladder, a 12-month Spanish vocabulary study planner. Stack: SvelteKit "
        "(server routes), TypeScript, Drizzle with Postgres, UnoCSS with a light theme.",
        subject="boltrules",
    )
    dups = found(audit(layout))
    assert frozenset({"tracker-a", "tracker-b"}) in dups
    assert frozenset({"sorting-a", "sorting-b"}) in dups
    assert frozenset({"persist-a", "persist-b"}) in dups
    assert frozenset({"peer-a", "peer-b"}) in dups
    assert not any(name.startswith("filler") for pair in dups for name in pair)


def test_short_facts_and_other_labels_under_other_subjects_stay_apart(
    layout: Layout, put: Put
) -> None:
    plant_filler(put)
    # a short fact means what its subject makes it mean
    put("tbd-a", "To be determined in DESIGN/REVIEW stage", subject="code organization")
    put("tbd-b", "To be determined in DESIGN stage", subject="testing strategy")
    put("date-a", "Created on 17.03.2024", subject="priorities")
    put("date-b", "Created on 17.03.2024 Updated on 21.05.2024", subject="scalability")
    # labels that name two parts stay two slots
    put(
        "err-a",
        "**Server Input Validation:** Rejecting malformed requests with a clear message.",
        subject="priorities",
    )
    put(
        "err-b",
        "**Client Input Validation:** Marking the fields a user still has to fix.",
        subject="sprint goals",
    )
    assert found(audit(layout)) == set()


def test_short_facts_naming_nothing_pair_across_subjects_unless_vague(
    layout: Layout, put: Put
) -> None:
    plant_filler(put)
    # a short durable fact in two lists says one thing under both
    put("sentry-a", "Sentry release tag from config", subject="error reports")
    put("sentry-b", "Sentry release tag per project environment", subject="configuration")
    # a short fact against one that names code: too vague to say what the code does
    put("order", "Dimension tables load before fact tables.", subject="warehouse")
    put(
        "strategy",
        "Fact tables load with `Loader.merge()`; dimension tables are small.",
        subject="load strategy",
    )
    dups = found(audit(layout))
    assert frozenset({"sentry-a", "sentry-b"}) in dups
    assert not {"order", "strategy"} & {name for pair in dups for name in pair}


def test_short_and_long_forms_of_a_word_are_one_term() -> None:
    short = terms(read_fact("Read the config and the env from the repo docs."))
    long = terms(read_fact("Read the configuration and the env from the repository documentation."))
    assert short == long
    assert terms(read_fact("Merges prioritize fresh rows")) == terms(
        read_fact("Merges prefer fresh rows")
    )


def test_a_short_item_in_two_lists_is_one_fact_but_a_bare_state_is_not(
    layout: Layout, put: Put
) -> None:
    plant_filler(put)
    # one item of work in two lists of to-dos, word for word and reworded
    put("herd-a", "Simple stock alerts", subject="milestone 1 (target: TBD)")
    put("herd-b", "Simple stock alerts", subject="milestone 2 (target: TBD)")
    put("loop-a", "Implement basic export screen", subject="next steps")
    put("loop-b", "Basic export screen implementation", subject="milestone 3 (target: TBD)")
    # a state that names nothing it is the state of: the item above it says what
    put("state-a", "**Status**: To be reviewed", subject="known issues")
    put("state-b", "**Status**: To be reviewed", subject="known issues")
    put("state-c", "To be determined in REVIEW stage", subject="code organization")
    put("state-d", "To be determined in DESIGN/REVIEW stage", subject="error handling")
    dups = found(audit(layout))
    assert frozenset({"herd-a", "herd-b"}) in dups
    assert frozenset({"loop-a", "loop-b"}) in dups
    assert not any(name.startswith("state") for pair in dups for name in pair)


def test_a_bare_state_opens_on_the_state_and_names_nothing() -> None:
    def bare(fact: str) -> bool:
        memory = Memory(name="m", description=fact, type="project", body=fact)
        return compare.bare_state(memory, read_fact(fact))

    assert bare("To be determined in DESIGN stage")
    assert bare("**Status**: To be scheduled")
    assert bare("Created on 17.03.2024 Updated on 21.05.2024")
    assert bare("TBD")
    assert not bare("Simple stock alerts")
    assert not bare("To be determined: whether routing uses React Router or a custom state store")


def test_making_a_thing_and_testing_it_are_two_items_of_work(layout: Layout, put: Put) -> None:
    plant_filler(put)
    put("keys-made", "Set up the webhook signing keys with rotation", subject="completed")
    put("keys-tested", "Test the webhook signing keys with rotation", subject="next steps")
    put("keys-checked", "[ ] Testing of the webhook signing keys with rotation", subject="todo")
    dups = found(audit(layout))
    assert frozenset({"keys-made", "keys-tested"}) not in dups
    assert frozenset({"keys-made", "keys-checked"}) not in dups
    assert frozenset({"keys-tested", "keys-checked"}) in dups  # one to-do in two lists
    assert compare.two_acts(
        memory_of("Test the MMKV storage"), memory_of("MMKV storage configured")
    )
    assert not compare.two_acts(
        memory_of("Test the MMKV storage"),
        memory_of("The MMKV storage passes its tests"),
    )


def memory_of(fact: str) -> Memory:
    return Memory(name="m", description=fact, type="project", body=fact + "\n", subject="s")


def test_facts_that_share_only_a_quantity_are_two_facts(layout: Layout, put: Put) -> None:
    """A size or a duration two facts both give is not one thing said twice."""
    plant_filler(put)
    for k, where in enumerate(("api", "jobs")):
        put(f"node-{k}", f"Every node of the {where} tier restarts nightly.", subject=where)
    put("disk-notebook", "24GB gp3 disk", subject="compute")
    put("disk-search", "24GB per node", subject="search cluster")
    # a quantity and a word besides it: one fact in two lists
    put("disk-again", "24GB gp3 disk", subject="storage")
    dups = found(audit(layout))
    assert dups == {frozenset({"disk-notebook", "disk-again"})}


def test_an_item_of_work_put_off_or_denied_is_one_item(layout: Layout, put: Put) -> None:
    plant_filler(put)
    # one item put off, told as a plan in one list and as a gap in another
    put(
        "sync-a",
        "Offline sync for the mobile client deferred to a later milestone",
        subject="next steps",
    )
    put("sync-b", "No offline sync in the mobile client at first (deferred)", subject="known gaps")
    # durable facts that differ so in polarity still say two things
    put("pager-a", "The pager rotation covers weekend nights too.", subject="on call")
    put("pager-b", "The pager rotation never covers weekend nights.", subject="staffing")
    dups = found(audit(layout))
    assert frozenset({"sync-a", "sync-b"}) in dups
    assert frozenset({"pager-a", "pager-b"}) not in dups


def test_an_item_of_work_repeating_its_plans_heading_is_no_parallel(
    layout: Layout, put: Put
) -> None:
    plant_filler(put)
    # the item under a plan's heading repeats a word of it ("bug"); the next steps do not
    put(
        "mailer-a",
        "**BUG-004**: Replace the stub mailer with real SMTP delivery",
        subject="Phase 1: Critical Bug Fixes (Week 1)",
    )
    put(
        "mailer-b",
        "Replace the stub mailer with real SMTP delivery for invites",
        subject="next steps",
    )
    # one item of work under each of two parts, each naming its own part: two items
    put("retry-a", "[ ] Unit tests for the billing adapter retry queue", subject="billing adapter")
    put("retry-b", "[ ] Unit tests for the invoice adapter retry queue", subject="invoice adapter")
    dups = found(audit(layout))
    assert frozenset({"mailer-a", "mailer-b"}) in dups
    assert frozenset({"retry-a", "retry-b"}) not in dups


def test_a_value_the_other_fact_says_as_a_word_is_not_one_it_lacks(
    layout: Layout, put: Put
) -> None:
    plant_filler(put)
    # one file named by its path and by its name; the platform a value in one, a word in
    # the other
    put("helm-a", "`deploy/helm/values.prod.yaml` - Kubernetes settings", subject="environments")
    put("helm-b", "`values.prod.yaml` for Kubernetes", subject="cluster config")
    # each names a store the other does not speak of at all: two facts
    put("token-a", "Session tokens are cached in Redis between requests", subject="caching")
    put("token-b", "Session tokens are cached in Memcached between requests", subject="sessions")
    # a word of a code span is no plain name, though the other fact says it: two commands
    put("ship-a", "Shipping the billing worker runs `make ship-billing`.", subject="billing")
    put("ship-b", "Shipping the billing worker runs `make publish-billing`.", subject="releases")
    dups = found(audit(layout))
    assert frozenset({"helm-a", "helm-b"}) in dups
    assert frozenset({"token-a", "token-b"}) not in dups
    assert frozenset({"ship-a", "ship-b"}) not in dups


def test_a_decay_candidate_pairs_with_its_keeper_itself(layout: Layout, put: Put) -> None:
    """Two facts that each say what a third says, but not what each other says, are not
    one group: the one its keeper does not pair with is not a decay candidate of it."""
    plant_filler(put)
    put(
        "gap-term",
        "**Row gap**: the space between table rows (`row_gap_px`)",
        subject="terminology",
        updated="2026-11-09T00:00:00Z",  # the keeper: as specific as the others, most recent
    )
    put(
        "gap-setting",
        "`row_gap_px` sets the space between table rows; a larger value spreads the rows"
        " further apart",
        subject="table layout",
        updated="2026-11-08T00:00:00Z",
    )
    put(
        "gap-larger",
        "A larger `row_gap_px` spreads the table rows further apart",
        subject="settings guide",
        updated="2026-11-07T00:00:00Z",
    )
    report = audit(layout)
    assert found(report) == {frozenset({"gap-term", "gap-setting"})}
    assert [(g.keeper, g.decay) for g in report.groups] == [("gap-term", ("gap-setting",))]


def test_the_effect_of_a_direction_or_a_side_is_another_fact(layout: Layout, put: Put) -> None:
    """What a setting is and what a higher value of it does; what a positive and a negative
    value do; the same check made by the frontend and by the backend: two facts each."""
    plant_filler(put)
    put(
        "retry-term",
        "**Retry budget**: how many times a failed upload is tried again (`retry_budget`)",
        subject="terminology",
    )
    put(
        "retry-higher",
        "A higher `retry_budget` means a failed upload is tried again more times",
        subject="tuning guide",
    )
    put(
        "bias-positive",
        "Positive `rank_bias` values put pinned items first, then recent ones",
        subject="ranking",
    )
    put(
        "bias-negative",
        "Negative `rank_bias` values put recent items first, then pinned ones",
        subject="ranking",
    )
    put(
        "dates-front",
        "The frontend checks every date field of a booking before saving it",
        subject="validation",
    )
    put(
        "dates-back",
        "The backend checks every date field of a booking before saving it",
        subject="validation",
    )
    # the same direction, worded apart, is one fact
    put(
        "retry-more",
        "A higher `retry_budget` tries a failed upload again more times",
        subject="settings",
    )
    dups = found(audit(layout))
    assert frozenset({"retry-term", "retry-higher"}) not in dups
    assert frozenset({"bias-positive", "bias-negative"}) not in dups
    assert frozenset({"dates-front", "dates-back"}) not in dups
    assert frozenset({"retry-higher", "retry-more"}) in dups
    assert compare.one_direction(memory_of("Larger pages load slower"), memory_of("Pages"))
    assert not compare.one_direction(
        memory_of("Larger pages load slower"), memory_of("A larger page loads slower")
    )


def test_short_entries_of_one_list_each_with_a_word_of_its_own_are_two_items(
    layout: Layout, put: Put
) -> None:
    """Under one subject, short entries that differ by a word each ("Invoice approval
    latency" and "Invoice export latency") are items a list names apart; one entry's words
    held in the other, or the same entry under two subjects, is still one item."""
    plant_filler(put)
    put("approval-latency", "Invoice approval latency", subject="service metrics")
    put("export-latency", "Invoice export latency", subject="service metrics")
    put("queue-local", "Local retry queue", subject="upload design")
    put("queue-durable", "Durable retry queue", subject="upload design")
    # one entry held in the other: a richer wording of one item
    put("tiles-a", "Offline map tiles", subject="map features")
    put("tiles-b", "Offline map tiles with caching", subject="map features")
    # the same words under two subjects: one item in two lists
    put("audit-a", "Weekly audit digest", subject="reports")
    put("audit-b", "Weekly audit digest", subject="email features")
    dups = found(audit(layout))
    assert frozenset({"approval-latency", "export-latency"}) not in dups
    assert frozenset({"queue-local", "queue-durable"}) not in dups
    assert frozenset({"tiles-a", "tiles-b"}) in dups
    assert frozenset({"audit-a", "audit-b"}) in dups
