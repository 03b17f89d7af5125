"""Comparing two memories: do they say the same thing, or opposite things?

- `conflict(a, b)`: two facts on the same normalised subject disagree when some clause of
  one and some clause of the other (see `text.read_fact`):
  - give different numbers for one unit and say the rest alike ("8 threads" vs "16
    threads"; not "staging runs 2 replicas" vs "production runs 6 replicas");
  - are about the same aspect (`_aligned`: frames sharing half their words, or one inside
    the other when they name the same thing) and each asserts a value of one kind the
    other does not (`pytest -q` vs `make test`, Snowflake vs BigQuery); or
  - one denies what the other states: the negated clause's words, the subject's
    included, all stand in the affirmative one ("releases are never cut from main" vs
    "releases are cut from the main branch").
  Facts about other aspects of one subject ("the database is PostgreSQL 15" and "database
  migrations live in `migrations/`") do not conflict, nor does a fact that only adds a
  value to another (`ruff` vs `ruff` and `mypy`).
- `duplicate(a, b)`: the subjects are compatible (the more specific subject's words all
  appear in the other memory), the facts have the same polarity and no clause of one
  denies a clause of the other, their values are nested (one adds to the other), and
  either the Checklist A test holds (token Jaccard of `subject | fact` >= 0.85), or the
  stemmed-content Jaccard reaches `REWORDED` (`ANCHORED` when both name the same code
  spans, paths or URLs), or they share a code span, path or URL and the smaller one's
  content is `CONTAINED` in the larger (a general memory under a specific one). A
  conflicting pair is never a duplicate, nor are facts whose words set them on two sides
  (`opposite_sides`: before and after a change, in and out of scope), nor two list items
  led by the names of two parts of one kind (`sibling_labels`: "**Staging server**: ..."
  and "**Production server**: ...").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from orchestrator.memory import slots
from orchestrator.memory.dedup import THRESHOLD, dedup_key, jaccard, normalise_subject
from orchestrator.memory.text import Clause, Reading, read_fact, stem, subject_stems
from orchestrator.store.memfile import Memory

REWORDED = 0.6
ANCHORED = 0.4  # the same code spans, paths or URLs: rewording may go further
CONTAINED = 0.8  # the smaller memory's content the larger one holds
CONTAINED_MIN = 4  # ...when the smaller one says enough to tell
FRAME_EQUAL = 0.75
FRAME_NESTED = 0.5
MAX_BARE_FRAME = 2
MAX_CLAUSES = 4
ACROSS = 0.6  # stems two facts share, subjects aside, to near-duplicate each other
FLOOR = 0.35  # stems two facts must share, subjects aside, under fitting subjects
GENERIC = 4  # a short fact of at most this many stems naming nothing (see `rarity`)
PURPOSE = 0.5  # the frames two facts share for a conflict of values
SLOT_WORDS = 2  # words two clauses setting names apart share to name one slot
SIDE_VALUES = 2  # values one clause of a reported clash sets apart, at most


@dataclass(frozen=True)
class Conflict:
    clause_a: Clause
    clause_b: Clause
    how: str  # values | polarity | count
    slot: str = ""  # what the two values are of, when it is not the subject

    def repeats(self, other: Conflict) -> bool:
        """`other` sets the same two values against each other (among others)."""
        a, b = self.clause_a.values, self.clause_b.values
        x, y = other.clause_a.values, other.clause_b.values
        return (a <= x - y and b <= y - x) or (a <= y - x and b <= x - y)

    def detail(self) -> str:
        if self.how == "count":
            return slots.Count(self.slot, self.clause_a.values, self.clause_b.values).detail()
        if self.how == "values":
            left = ", ".join(sorted(self.clause_a.values - self.clause_b.values))
            right = ", ".join(sorted(self.clause_b.values - self.clause_a.values))
            return f"one says {left}, the other {right}"
        return "one negates what the other states"


class Readings:
    """How memories' facts read, each read once: computed, or handed over by the caller
    (the audit reads them back from its cache); each fact's `copy_key` too. A caller makes one for a run and passes
    it to the tests below; none is kept between runs."""

    def __init__(self, known: dict[tuple[str, str], Reading] | None = None) -> None:
        self.known = dict(known or {})  # (fact, subject) -> reading
        self.copies: dict[str, str] = {}  # fact -> its `copy_key`

    def copy_key(self, memory: Memory) -> str:
        """The memory's `copy_key`, worked out once a fact."""
        found = self.copies.get(memory.fact)
        if found is None:
            found = self.copies[memory.fact] = copy_key(memory)
        return found

    def of(self, memory: Memory) -> Reading:
        return self._read(memory.fact, memory.subject or "")

    def plain(self, memory: Memory) -> Reading:
        """The fact read without its subject: what it says wherever it was filed (made
        from the reading under the subject, which keeps the subject's words)."""
        key = (memory.fact, "")
        found = self.known.get(key)
        if found is None:
            found = self.known[key] = self.of(memory).with_subject_words()
        return found

    def _read(self, fact: str, subject: str) -> Reading:
        found = self.known.get((fact, subject))
        if found is None:
            found = self.known[(fact, subject)] = read_fact(fact, subject)
        return found


def reading(memory: Memory, readings: Readings | None = None) -> Reading:
    """How the memory's fact reads: from `readings`, else read now."""
    if readings is not None:
        return readings.of(memory)
    return read_fact(memory.fact, memory.subject or "")


def _frames_equal(a: Clause, b: Clause) -> bool:
    if a.frame == b.frame:
        return True
    if not a.frame or not b.frame:
        return False
    return jaccard(a.frame, b.frame) >= FRAME_EQUAL


def _aligned(a: Clause, b: Clause) -> bool:
    """Two clauses about the same aspect: frames sharing at least half their words, or one
    frame inside the other when the clauses also name the same thing. A clause with
    no content words of its own ("the warehouse is BigQuery") states the subject's value:
    it meets a short clause, or one naming the same thing."""
    if _frames_equal(a, b) or (a.frame and b.frame and jaccard(a.frame, b.frame) >= FRAME_NESTED):
        return True
    small, big = (a, b) if len(a.frame) <= len(b.frame) else (b, a)
    if not small.frame <= big.frame:
        return False
    shared = bool(a.values & b.values)
    if not small.frame:
        return shared or len(big.frame) <= MAX_BARE_FRAME
    return shared


def _kind(value: str) -> str:
    if value[:1].isdigit():
        return "number"
    if value.startswith("`"):
        return "code"
    if value.startswith(("http://", "https://")):
        return "url"
    if "/" in value:
        return "path"
    return "quoted" if value.startswith('"') else "name"


def _kinds(values: frozenset[str]) -> set[str]:
    """Which kinds the values are: numbers, code spans, URLs, paths, quoted text, names."""
    return {_kind(v) for v in values}


def _values_clash(a: Clause, b: Clause) -> bool:
    """Each clause asserts a value of one kind that the other does not (a number against a
    number, a name against a name: not a database's name against a migrations folder)."""
    only_a, only_b = a.values - b.values, b.values - a.values
    return bool(only_a and only_b and _kinds(only_a) & _kinds(only_b))


def _numbers_clash(a: Clause, b: Clause) -> bool:
    """The clauses give different numbers for one unit ("30 seconds" and "10 seconds",
    "Python 3.11" and "Python 3.12"), agree on none for it, and say the rest alike: one
    frame inside the other, half their words shared, or one of a single word ("staging runs
    2 replicas" and "production runs 6 replicas" count different things)."""
    if not a.numbers or not b.numbers:
        return False
    for unit in {u for _, u in a.numbers} & {u for _, u in b.numbers}:
        na = {n for n, u in a.numbers if u == unit}
        nb = {n for n, u in b.numbers if u == unit}
        if na & nb:
            continue
        fa, fb = a.frame - {unit}, b.frame - {unit}
        if fa <= fb or fb <= fa or min(len(fa), len(fb)) <= 1 or jaccard(fa, fb) >= FRAME_NESTED:
            return True
    return False


def _denies(neg: Clause, pos: Clause) -> bool:
    """A negated clause denies what an affirmative one states: its words (the subject's
    included) are all in the other ("releases are never cut from main" against "releases
    are cut from the main branch"), and so are its values, unless the other names none (an
    example added to a denial: "never upper case (SELECT)" against "lower case"). A clause
    of values only ("without `--offline`") is a condition, not a denial."""
    content = neg.words - neg.values
    if not content or not content <= pos.words:
        return False
    return neg.values <= pos.words or not pos.values


def _polarity_clash(a: Clause, b: Clause, *, either_way: bool = False) -> bool:
    if a.negated == b.negated:
        return False
    if _frames_equal(a, b) and (a.frame or a.values) and a.values == b.values:
        return True
    neg, pos = (a, b) if a.negated else (b, a)
    return _denies(neg, pos) or (either_way and _denies(pos, neg))


def clause_conflict(a: Clause, b: Clause) -> str | None:
    if _numbers_clash(a, b):
        return "values"
    if _aligned(a, b) and _values_clash(a, b):
        return "values"
    if _polarity_clash(a, b):
        return "polarity"
    return None


# A list item that names what it describes first: "`GET /tasks`: lists tasks",
# "`src/views` - screen views", "Helpers: lib/[name].ts", "**Caching:** ...".
_LABEL = re.compile(r"^\W{0,4}(`[^`]{1,80}`|[\w][\w ./{}\[\]()-]{0,40}?)\**\s*(?::|\s[-–—]\s)")
# The same, read as an entry of a list that fills its own slot: after its number in a
# numbered list ("3. **`app.xml`** -- ..."), a link's text ("[Setup guide](docs/setup.md)
# — ..."; a link alone is an entry of a table of contents), a code span whole ("`npm
# test:watch` - ...": its colon is part of the name) or within the name ("**Retry logic
# in `jobs.py`** -- ...", "**The worker's queue** — ...").
_ENTRY = re.compile(
    r"^(?:\d{1,3}[.)]\s+)?(?:[^\w`\[]{0,4}(\[[^\]]{1,80}\]\([^)\s]*\))"
    r"(?=\W*$|\**\s*(?::|\s(?:--|[-–—])\s))|[^\w`]{0,4}"
    r"(`[^`]{1,80}`|[\w`][\w ./{}\[\]()`'’-]{0,60}?)(?=\**\s*(?::|\s(?:--|[-–—])\s)))"
)
# ...or a short entry that is a name and an aside in brackets: "Report Builder
# (`src/report.py`)", "retries (array of 3 items)", "`limit` (query parameter, default:
# 20)"; a code span, or a name of five words at most, with no number and no verb of being
# or having ("The timeout is 45 seconds (`TIMEOUT`)" states a value).
_NAMED_ASIDE = re.compile(
    r"^(?:\d{1,3}[.)]\s+)?[^\w`]{0,4}"
    r"(`[^`\n]{1,60}`|(?!.*\b(?:is|are|was|were|has|have|uses|runs)\b)[A-Za-z_][\w-]*"
    r"(?: [A-Za-z_][\w-]*){0,4})"
    r"[*_]{0,2}\s*\([^()]{1,120}\)\W*$"
)
_LINK_TEXT = re.compile(r"^\[([^\]]+)\]\(")


_LABEL_CODE = re.compile(r"[`/.{}\[\]_]")


@lru_cache(maxsize=65536)
def label(fact: str) -> str:
    """The name a list item gives before its description (lower case), or ''."""
    found = _LABEL.match(fact)
    return found.group(1).strip("` ").lower() if found else ""


@lru_cache(maxsize=65536)
def entry_label(fact: str) -> str:
    """The name a list item gives itself, read as widely as an entry of a list can be
    (`_ENTRY`, `_NAMED_ASIDE`; lower case), or ''."""
    found = _ENTRY.match(fact) or _NAMED_ASIDE.match(fact)
    if found is None:
        return ""
    name = next(part for part in found.groups() if part)
    link = _LINK_TEXT.match(name)
    return (link.group(1) if link else name).strip("` ").lower()


_STEP = re.compile(r"^\s*(\d{1,3})[.)]\s")


def _steps_apart(a: str, b: str) -> bool:
    """Both facts are items of a numbered list, numbered apart."""
    sa, sb = _STEP.match(a), _STEP.match(b)
    return sa is not None and sb is not None and sa.group(1) != sb.group(1)


def different_slots(a: Memory, b: Memory, *, nested: bool = False) -> bool:
    """Two list items labelled with different names describe different things: the
    endpoints of an API, the folders of a tree, the libraries of a project. With `nested`,
    labels in plain words are one name when one's stems hold the other's ("Search
    Index" and "Search Index (Elasticsearch)", "API" and "API routes"); a label that
    is code or a path must be the very same. Without `nested` (one slot for a conflict) a
    list's entries are read by `entry_label`: their numbers, links and asides too; and
    two items of a numbered list with different numbers ("1. Check the env file", "2.
    Check the deploy checklist") are two steps or rules, each its own."""
    if not nested and _steps_apart(a.fact, b.fact):
        return True
    read = label if nested else entry_label
    la, lb = read(a.fact), read(b.fact)
    if not (la and lb and la != lb):
        return False
    if not nested or _LABEL_CODE.search(la + lb):
        return True
    sa, sb = subject_stems(la), subject_stems(lb)
    return not (sa and sb and (sa <= sb or sb <= sa))


def conflict(a: Memory, b: Memory, *, readings: Readings | None = None) -> Conflict | None:
    """How `a` and `b` disagree, or None (callers check that the subjects match). The two
    must fill one slot: list items with different labels never conflict, nor do two
    prohibitions, a chain of arrows or a fact that states no value (`slots`)."""
    if _not_one_slot(a, b):
        return None
    ra, rb = reading(a, readings), reading(b, readings)
    purpose = forbidding = None  # read once, when a clash of clauses asks
    for ca in ra.clauses[:MAX_CLAUSES]:
        for cb in rb.clauses[:MAX_CLAUSES]:
            how = clause_conflict(ca, cb)
            if how is None or (how == "polarity" and _no_denial(a, b, ca, cb)):
                continue
            if how == "values" and (
                _agree(ca, cb, ra, rb)
                or _describes_label(a, b, ca, cb)
                or slots.same_version(ca.values - cb.values, cb.values - ca.values)
                or _slot_unnamed(ca, cb)
            ):
                continue
            if how == "values":
                if forbidding is None:
                    forbidding = slots.forbids(a.fact) and slots.forbids(b.fact)
                if slots.prohibitions(ca, cb, forbidding=forbidding):
                    continue
            if purpose is None and how != "polarity":
                purpose = _same_purpose(ra, rb)
            if purpose or how == "polarity":
                return Conflict(ca, cb, how)
    return None


def _not_one_slot(a: Memory, b: Memory) -> bool:
    """What `conflict` knows before reading the clauses: the two facts fill no one slot."""
    return (
        different_slots(a, b)
        or slots.flow(a.fact)
        or slots.flow(b.fact)
        or slots.parallel_leads(a.fact, b.fact)  # one statement about two things
        or slots.own_conditions(a.fact, b.fact)  # each value under its own condition
        or slots.stamped_apart(a.fact, b.fact)  # two log entries, each of its own moment
        or slots.additions(a.fact, b.fact)  # what each adds adds up
        # a lead-in, an option weighed, an example, code
        or any(slots.unstated(m.fact, m.subject or "") for m in (a, b))
        # two entries of a list under one heading (two files it touched)
        or (_bare_value(a.fact) and _bare_value(b.fact))
    )


def named(a: Memory, b: Memory, how: Conflict, readings: Readings) -> Conflict | None:
    """The clash `how` (of `a` and `b`, on one subject) as the audit reports it, the slot
    named as the facts write it, or None when the facts themselves do not name one slot
    (docs/memory.md, "A reported contradiction names its slot"): a heading two list items
    share names a section, not a slot. Reported are: a denial of what the other fact
    states; one count of one counted thing given two numbers (`slots.count`); and two
    values set against each other in clauses that write the slot's name alike
    (`SLOT_WORDS` words besides the values and units, or one code span, path or name
    both write, or a clause that says nothing but the slot and its value: "The queue is
    Kafka"). Never a fact crossed out, nor values one clause relates to the other's (it
    writes the other's value too, in any form) or holds inside its own (a path under a
    path)."""
    if how.how == "count":
        return how
    if slots.struck(a.fact) or slots.struck(b.fact):
        return None
    ca, cb = how.clause_a, how.clause_b
    if how.how == "polarity":
        neg, fact = (ca, a.fact) if ca.negated else (cb, b.fact)
        return Conflict(ca, cb, how.how, slots.written(fact, neg.words - neg.values))
    if _related(ca, cb) or _nested(ca.values - cb.values, cb.values - ca.values):
        return None
    if _numbers_clash(ca, cb):
        found = slots.count(readings.plain(a), readings.plain(b), a.fact, b.fact)
        if found is not None:
            left, right = (Clause(frozenset(), v, False) for v in (found.left, found.right))
            return Conflict(left, right, "count", found.slot)
    if _many_apart(ca, cb) or slots.accounts(a.fact, b.fact):
        return None
    slot = _slot_named(ca, cb, a.fact)
    return Conflict(ca, cb, how.how, slot) if slot else None


def _many_apart(ca: Clause, cb: Clause) -> bool:
    """A clause sets more than `SIDE_VALUES` values apart from the other's: a list of
    names, each in a role of its own ("`refreshTrash` wrapped in `useCallback` with a
    `session` dependency", "Missing columns: `a`, `b`, `c`"), against which the other's
    value replaces no one value a reader could tell; the clash names no value it rivals.
    Numbers on both sides are the rivals, whatever names stand beside them ("gives up
    after 30 seconds (`TIMEOUT`)" against "cut off after 10 seconds")."""
    left, right = ca.values - cb.values, cb.values - ca.values
    if numeric_values(left) and numeric_values(right):
        return False
    return max(len(left), len(right)) > SIDE_VALUES


def _slot_named(ca: Clause, cb: Clause, fact: str) -> str:
    """The slot two clashing clauses write alike (see `named`), as `fact` writes it, or
    ''."""
    units = frozenset(u for _, u in ca.numbers | cb.numbers)
    shared = (ca.words & cb.words) - ca.values - cb.values - units
    if len(shared) >= SLOT_WORDS:
        return slots.written(fact, shared | units)
    both = sorted(v for v in ca.values & cb.values if not v[:1].isdigit())
    if both:
        return ", ".join(both)
    if shared and (_only(ca, shared | units) or _only(cb, shared | units)):
        return slots.written(fact, shared)
    return ""


def _only(clause: Clause, words: frozenset[str]) -> bool:
    """The clause writes nothing but `words` besides its values."""
    return clause.words - clause.values <= words


def _related(ca: Clause, cb: Clause) -> bool:
    """A value one clause sets apart stands in the other clause too, in some form: that
    clause relates the two ("StatsCollector now caches job totals in a Deque" against
    "Queries cached job totals from StatsCollector"), or the two are one word ("API" and
    "APIs")."""
    return any(stem(v) in {stem(w) for w in other.words} for v, other in _apart(ca, cb))


def _apart(ca: Clause, cb: Clause) -> list[tuple[str, Clause]]:
    """Each value one clause sets against the other, with that other clause."""
    return [(v, cb) for v in ca.values - cb.values] + [(v, ca) for v in cb.values - ca.values]


def _nested(left: frozenset[str], right: frozenset[str]) -> bool:
    """A path, code span or URL of one side lies under one of the other's (`/docs` and
    `/docs/{id}/link`): both hold."""
    xs = [x.strip("`").rstrip("/") for x in left]
    ys = [y.strip("`").rstrip("/") for y in right]
    return any(
        "/" in short and long.startswith(short + "/")
        for x in xs
        for y in ys
        for short, long in ((x, y), (y, x))
    )


def _slot_unnamed(ca: Clause, cb: Clause) -> bool:
    """Two names set against each other in clauses sharing fewer than `SLOT_WORDS` words
    besides them ("Configured in `esbuild.config.mjs`", "Configured in `tsconfig.json`";
    "OpenAI Agents SDK", "OpenAI API key"): nothing says which slot both fill, and a
    list's entries read that way. A clause that says nothing but the subject's value
    ("The warehouse is BigQuery" under "warehouse") names it. Numbers keep their own
    test (`_numbers_clash`)."""
    if _numbers_clash(ca, cb) or not ca.frame or not cb.frame:
        return False
    return len((ca.words - ca.values) & (cb.words - cb.values)) < SLOT_WORDS


def _no_denial(a: Memory, b: Memory, ca: Clause, cb: Clause) -> bool:
    """The negated side of a clash of polarity denies nothing of the other: it only says
    "without" or "instead of", its negation stands in an aside in brackets or in a
    sentence under its own condition, or it names too little of its own to say what it
    denies (`slots`)."""
    neg, clause, other = (a, ca, b) if ca.negated else (b, cb, a)
    return (
        slots.contrast_only(neg.fact)
        or slots.aside_denial(neg.fact)
        or slots.conditional_denial(neg.fact)
        or slots.thin_denial(clause, neg.fact, other.fact)
    )


def _bare_value(fact: str) -> bool:
    """A fact that is one name alone, a path or a code span with no word around it
    (`src/api/orders.ts`): an entry of a list, which states no value of a slot."""
    text = fact.strip().rstrip(",;.")
    return len(text.split()) == 1 or (
        text.count("`") == 2 and text.startswith("`") and text.endswith("`")
    )


def _describes_label(a: Memory, b: Memory, ca: Clause, cb: Clause) -> bool:
    """Two list items under one label (`conflict` has set different labels aside) whose
    clash holds the label's own name: "**Ky**: the app uses Ky to call the GitHub API" and
    "**Ky**: a tiny client for HTTP requests" describe the thing the label names, each its
    own way; two items that set a value against another
    ("**Database**: MySQL", "**Database**: Postgres") still clash."""
    name = label(a.fact)
    if not name or name != label(b.fact):
        return False
    named = subject_stems(name)
    return any(stem(v) in named for v in ca.values ^ cb.values)


def _names_too(values: frozenset[str], other: Reading) -> bool:
    """Every one of `values` stands in the other fact too, as a value or a word."""
    said = other.flat_stems.union(*(c.words for c in other.clauses))
    return all(v in said or stem(v) in said for v in values)


def _agree(ca: Clause, cb: Clause, ra: Reading, rb: Reading) -> bool:
    """Each fact names, somewhere, the values the other's clause holds against its own:
    "**Vue Composables**: ... uses ref and computed" and "Vue composables (ref,
    computed) are used ..." name the same things in other clauses, so no slot has two
    values. A fact that names only one side ("moved from Snowflake to BigQuery" against
    "the warehouse is Snowflake") still disagrees."""
    return _names_too(ca.values - cb.values, rb) and _names_too(cb.values - ca.values, ra)


def count_conflict(a: Memory, b: Memory, readings: Readings) -> Conflict | None:
    """`a` and `b`, whatever their subjects, give one count two values (`slots.count`).
    Not one slot: list items with different labels, chains of arrows, one supersession, a
    bound against a value, parallel statements about two parts (they differ in words one
    subject names), and a subject that narrows its fact (the words a subject adds to the
    other's do not appear in the other memory: "import page size limit" against "import
    page size"), and two facts that each name a place the other does not (`_own_things`)."""
    if linked(a, b) or different_slots(a, b) or slots.flow(a.fact) or slots.flow(b.fact):
        return None
    if slots.own_conditions(a.fact, b.fact) or slots.stamped_apart(a.fact, b.fact):
        return None  # each count under its own condition, or of its own logged moment
    if slots.dated(a.subject or "") and slots.dated(b.subject or ""):
        return None  # two entries of a log: each records the count of its own moment
    ra, rb = readings.plain(a), readings.plain(b)
    bound_a, bound_b = (slots.bounds(f"{m.subject or ''}: {m.fact}") for m in (a, b))
    if bound_a != bound_b or _parallel(a, b, ra, rb):
        return None
    sa, sb = subject_stems(a.subject or ""), subject_stems(b.subject or "")
    if (sa < sb or sb < sa) and not _subjects_compatible(a, b, readings):
        return None
    found = slots.count(ra, rb, a.fact, b.fact)
    if found is None or _own_things(a, b):
        return None
    left, right = (Clause(frozenset(), v, False) for v in (found.left, found.right))
    return Conflict(left, right, "count", found.slot)


# the places a fact names: code spans, paths, file names ("OrderModal.jsx")
_PLACES = re.compile(r"`[^`\n]+`|[\w.-]*/[\w./-]+|\b[\w-]+\.[a-z][a-z0-9]{0,4}\b")


def _own_things(a: Memory, b: Memory) -> bool:
    """Each fact names a place (a code span, a path, a file) that the other does not:
    "Fixed OrderModal.jsx 404 errors" and "Fixed 401 errors in InvoiceTab.jsx" count for
    two files, not one count twice."""
    fa, fb = a.fact.lower(), b.fact.lower()
    own_a = {p for p in _PLACES.findall(fa) if p.strip("`") not in fb}
    own_b = {p for p in _PLACES.findall(fb) if p.strip("`") not in fa}
    return bool(own_a) and bool(own_b)


def _same_purpose(ra: Reading, rb: Reading) -> bool:
    """The facts speak to one purpose: the larger frame (the words besides the values)
    holds `PURPOSE` of the smaller one's words, or one of them has none of its own. "Use Black for code
    formatting" and "Run tests with nox" name two tools for two jobs."""
    fa = frozenset().union(*(c.frame for c in ra.clauses[:MAX_CLAUSES]))
    fb = frozenset().union(*(c.frame for c in rb.clauses[:MAX_CLAUSES]))
    return not fa or not fb or containment(fa, fb) >= PURPOSE


def linked(a: Memory, b: Memory) -> bool:
    """One supersedes the other (either side of the link is enough)."""
    return (
        a.name in b.supersedes
        or b.name in a.supersedes
        or a.superseded_by == b.name
        or b.superseded_by == a.name
    )


def same_subject(a: Memory, b: Memory) -> bool:
    sa, sb = normalise_subject(a.subject), normalise_subject(b.subject)
    return bool(sa) and sa == sb


def content_stems(memory: Memory, *, readings: Readings | None = None) -> frozenset[str]:
    """Stems of subject and fact, values included: what the memory is about and says."""
    return subject_stems(memory.subject or "") | reading(memory, readings).stems


def _subjects_compatible(a: Memory, b: Memory, readings: Readings | None) -> bool:
    """The more specific subject's words all appear in the other memory ("scheduler cache
    sharing" is not "cache sharing" unless the other memory speaks of the scheduler);
    subjects of one size: either way round ("running tests" meets "test command")."""
    sa, sb = subject_stems(a.subject or ""), subject_stems(b.subject or "")
    if not sa or not sb:
        return True
    if len(sa) > len(sb):
        return sa <= content_stems(b, readings=readings)
    if len(sb) > len(sa):
        return sb <= content_stems(a, readings=readings)
    return sa <= content_stems(b, readings=readings) or sb <= content_stems(a, readings=readings)


def _values_compatible(a: frozenset[str], b: frozenset[str]) -> bool:
    """Equal, or one adds values to the other (`ruff` vs `ruff` and `mypy`; "in chunks" vs
    "in chunks of 50000 rows"); a value each asserts that the other does not (30 vs 60
    seconds, `pytest -q` vs `make test`) makes them two assertions."""
    return a <= b or b <= a


def anchored(values: frozenset[str]) -> frozenset[str]:
    """The values that name something in the repository or on the web: code spans, paths,
    URLs (empty when there are none; `values` itself when all of them do)."""
    if all(map(_names_a_place, values)):
        return values
    return frozenset(filter(_names_a_place, values))


def _names_a_place(value: str) -> bool:
    """A code span, a path or a URL."""
    return value.startswith(("`", "http://", "https://")) or "/" in value


def opposed(ra: Reading, rb: Reading) -> bool:
    """Some clause of one says the opposite of a clause of the other."""
    return any(
        _polarity_clash(ca, cb, either_way=True)
        for ca in ra.clauses[:MAX_CLAUSES]
        for cb in rb.clauses[:MAX_CLAUSES]
    )


# Pairs of words that set an order, a side or a direction, which reading drops as stop
# words or keeps as stems of little weight: "Validate before changes" and "Validate after
# changes", "What is in scope?" and "What is out of scope?", "Positive values favour
# retries first" and "Negative values favour retries last", "The frontend validates
# dates" and "The backend validates dates" say two things in otherwise equal words.
_OPPOSITES = (
    ("before", "after"),
    ("in", "out"),
    ("inside", "outside"),
    ("above", "below"),
    ("on", "off"),
    ("upper", "lower"),
    ("higher", "lower"),
    ("larger", "smaller"),
    ("positive", "negative"),
    ("increase", "decrease"),
    ("minimum", "maximum"),
    ("min", "max"),
    ("long", "short"),
    ("frontend", "backend"),
    ("client", "server"),
    ("development", "production"),
    ("import", "export"),
    ("input", "output"),
    ("upload", "download"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("light", "dark"),
    ("buy", "sell"),
)
_PLAIN_WORD = re.compile(r"[a-z]+")


@lru_cache(maxsize=65536)
def _plain_words(fact: str) -> frozenset[str]:
    return frozenset(_PLAIN_WORD.findall(fact.lower()))


def opposite_sides(a: Memory, b: Memory) -> bool:
    """One fact has a word of `_OPPOSITES` the other lacks, and the other has its opposite
    that the first lacks: the same words set on two sides (before and after a change)."""
    wa, wb = _plain_words(a.fact), _plain_words(b.fact)
    only_a, only_b = wa - wb, wb - wa
    return any(
        (x in only_a and y in only_b) or (y in only_a and x in only_b) for x, y in _OPPOSITES
    )


# A fact that opens on a direction or a sign of a value: what a higher, larger or
# negative setting does ("A larger `row_gap_px` spreads the rows", "Negative weights
# ...", "More retries ...").
_DIRECTION_FIRST = re.compile(
    r"^\W*(?:an? |the )?(higher|larger|lower|smaller|bigger|greater|more|less|fewer|"
    r"longer|shorter|positive|negative)\b",
    re.I,
)


def one_direction(a: Memory, b: Memory) -> bool:
    """The facts open on different directions or signs of a value, or one on none: the
    effect of raising a setting is another fact than what the setting is ("**Row gap**:
    the space between rows (`row_gap_px`)" and "A larger `row_gap_px` spreads the rows
    further apart"), and than the effect of a negative value of it."""
    return _direction(a.fact) != _direction(b.fact)


def _direction(fact: str) -> str:
    found = _DIRECTION_FIRST.match(fact)
    return found.group(1).lower() if found else ""


# words of checking a thing (testing it, verifying it), as against making or using it
_CHECK_WORDS = r"(?:test(?:s|ed|ing)?|verif(?:y|ies|ied|ying|ication)|validat\w*|qa)\b"
_CHECKING = re.compile(rf"\b{_CHECK_WORDS}", re.I)
_CHECKING_FIRST = re.compile(rf"^\W{{0,6}}(?:\[.\]\s*)?{_CHECK_WORDS}", re.I)


def two_acts(a: Memory, b: Memory) -> bool:
    """One fact opens on checking a thing and the other does not speak of checking at
    all: "Test the storage layer" and "Set up the storage layer" are two items of work."""
    return any(
        _CHECKING_FIRST.match(x.fact) is not None and _CHECKING.search(y.fact) is None
        for x, y in ((a, b), (b, a))
    )


def containment(a: frozenset[str], b: frozenset[str]) -> float:
    """How much of the smaller set the larger holds."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def duplicate(a: Memory, b: Memory, *, readings: Readings | None = None) -> float | None:
    """The similarity score when `a` and `b` near-duplicate each other, else None."""
    if same_subject(a, b) and conflict(a, b, readings=readings) is not None:
        return None
    if opposite_sides(a, b) or sibling_labels(a, b) or one_direction(a, b):
        return None
    if not _subjects_compatible(a, b, readings):
        return None
    ra, rb = reading(a, readings), reading(b, readings)
    if ra.negated != rb.negated or opposed(ra, rb):
        return None  # one denies something the other does not, or what the other states
    if ra.values and rb.values and not _values_compatible(ra.values, rb.values):
        return None
    raw = jaccard(dedup_key(a), dedup_key(b))
    if raw >= THRESHOLD:
        return raw
    if bool(ra.values) != bool(rb.values) and not same_subject(a, b):
        return None
    sa, sb = content_stems(a, readings=readings), content_stems(b, readings=readings)
    score = jaccard(sa, sb)
    if score >= REWORDED:
        return score
    aa, ab = anchored(ra.values), anchored(rb.values)
    if aa and aa == ab and score >= ANCHORED:
        return score  # naming the very same things, worded apart
    if aa & ab and min(len(sa), len(sb)) >= CONTAINED_MIN and containment(sa, sb) >= CONTAINED:
        return score  # one says no more than the other, about the same things
    return None


_WORDS = re.compile(r"[\w./-]+")

# A fact that opens on a state of work: "To be determined ...", "Status: To be reviewed",
# "TBD", "Pending", "Deferred", "Not yet ...", "Created on ...", "Last updated ...".
_STATE_FIRST = re.compile(
    r"^\W*(?:status\W+)?(?:to be\b|tbd\b|pending\b|deferred\b|not yet\b|created on\b|"
    r"last updated\b)",
    re.I,
)


def bare_state(memory: Memory, reading: Reading) -> bool:
    """The fact gives a state of work and names nothing it is the state of: it opens on the
    state and says at most `GENERIC` words besides its numbers ("To be determined in DESIGN
    stage", "Status: To be reviewed", "Created on 17.03.2024"). Its heading, or the item
    above it, says what it is about, so two of them, word for word, are two facts."""
    words = reading.flat_stems - numeric_values(reading.flat_values)
    return len(words) <= GENERIC and _STATE_FIRST.match(memory.fact) is not None


# words a heading ends on to give a state of work, not what it is about
_STATE_WORDS = frozenset(
    ["complete", "completed", "done", "finished", "tbd", "todo", "pending", "progress", "wip"]
)


def sibling_subjects(a: Memory, b: Memory) -> bool:
    """The subjects name two parts of one kind: they end on the same word and differ
    before it, neither's words holding the other's ("Orchestrator adapter" and "Billing
    adapter"), so one line written under each ("✅ Unit tests for all calls") is said of
    each part, not twice of one. A heading that ends on a state of work ("... (Target:
    TBD)", "... Complete") names no part, and one that only qualifies the other ("Next
    steps", "Next immediate steps") names the same list."""
    return _siblings(normalise_subject(a.subject), normalise_subject(b.subject))


def sibling_labels(a: Memory, b: Memory) -> bool:
    """Two list items led by names of two parts of one kind (`label`, read as
    `sibling_subjects` reads subjects): "**Team reports**: ..." and "**Org reports**: ..."
    say one thing of each part. Not when both descriptions say the words the labels
    differ by: then the labels are two titles of one statement ("**Server isolation**:
    each server runs as its own process" and "**Process isolation**: each server runs as
    its own process")."""
    la, lb = normalise_subject(label(a.fact)), normalise_subject(label(b.fact))
    if not _siblings(la, lb):
        return False
    apart = {stem(w) for w in set(la.split()) ^ set(lb.split())}
    return not apart <= _description_stems(a.fact) & _description_stems(b.fact)


def _description_stems(fact: str) -> frozenset[str]:
    """The stems of what a labelled list item says after its label (`_LABEL`)."""
    found = _LABEL.match(fact)
    rest = fact[found.end() :] if found else fact
    return frozenset(stem(w) for w in re.findall(r"[a-z0-9]+", rest.lower()))


def _siblings(a: str, b: str) -> bool:
    """Two names that end on the same word and differ before it, neither's words holding
    the other's, the last word naming no state of work."""
    sa, sb = a.split(), b.split()
    if len(sa) < 2 or len(sb) < 2 or sa[-1] != sb[-1] or sa[-1] in _STATE_WORDS:
        return False
    ha, hb = set(sa[:-1]), set(sb[:-1])
    return not (ha <= hb or hb <= ha)


# A closing aside of code spans only: "Added input checks (`src/checks.js`)" is a copy of
# "Added input checks" that says where.
_CODE_ASIDE = re.compile(r"\s*\((?:\s*`[^`\n]+`\s*[,;]?)+\)\W*$")


# An item's mark of work before its words, and a verb of work opening them: "[x] Pagination
# for search results", "Add pagination for search results" and "❌ Pagination for search
# results" are one item; so is "Version tracking for laws - Complete".
_WORK_MARK = re.compile(
    r"^(?:\W*\[[ xX]\])?\W*(?:(?:implement|develop|create|add|build|set up|complete|finish)"
    r"(?:ed|d|s|ing)?\s+(?!(?:with|on|in|using|for|via|by|to|from|as|and)\b))?",
    re.I,
)
_DONE_TAIL = re.compile(r"\s+[-–—:]\s*(?:completed?|done|finished|implemented)\W*$", re.I)


def copy_key(memory: Memory) -> str:
    """The fact's words, lower case, without punctuation, markup, a closing aside of code
    spans (`_CODE_ASIDE`), a mark of work before them or a verb of work opening them and a
    closing "- done" (`_WORK_MARK`, `_DONE_TAIL`; where two words at least are left): equal
    for copies."""
    fact = memory.fact
    if fact.endswith((")", ").")) and "`" in fact:
        fact = _CODE_ASIDE.sub("", fact)
    words = _WORDS.findall(_DONE_TAIL.sub("", _WORK_MARK.sub("", fact, count=1)).lower())
    return " ".join(words if len(words) >= 2 else _WORDS.findall(fact.lower()))


def duplicate_across(
    a: Memory,
    b: Memory,
    *,
    readings: Readings | None = None,
    copies_only: bool = False,
    loose: bool = False,
) -> float | None:
    """The similarity score when `a` and `b` say the same thing whatever subjects they were
    filed under, else None: copies (the same words), or facts whose own stems reach
    `ACROSS` with nested values and the same polarity, and that do not differ in words
    one subject names and the other does not. A copy that names nothing but a state of
    work (`bare_state`: "to be determined in the design stage") means what its heading makes
    it mean: it is never one fact with its copy; a short copy that names something ("Simple
    stock alerts" in two milestones) is. `copies_only` admits copies alone (for
    ephemeral task state);
    `loose` waives the similarity thresholds, not the other rules (for a pair a model
    proposes, see `proposals`)."""
    readings = readings or Readings()
    ra, rb = readings.plain(a), readings.plain(b)
    if ra.negated != rb.negated or opposed(ra, rb) or opposite_sides(a, b):
        return None
    if sibling_labels(a, b):
        return None  # two entries of a list, each led by the name of its part
    if one_direction(a, b) and readings.copy_key(a) != readings.copy_key(b):
        return None  # what a setting is, and what a higher value of it does
    va, vb = ra.flat_values, rb.flat_values  # code spans as their words
    if readings.copy_key(a) == readings.copy_key(b):
        if va != vb and not _values_compatible(va, vb):
            return None  # the same words saying where, two places apart
        return None if bare_state(a, ra) or sibling_subjects(a, b) else 1.0
    if copies_only or (va and vb and not _values_compatible(va, vb)):
        return None
    na, nb = numeric_values(va), numeric_values(vb)
    if na and nb and na != nb:
        return None  # "setting 1 defaults to 8" and "setting 8 defaults to 57"
    score = jaccard(ra.flat_stems, rb.flat_stems)
    if score < ACROSS and not _holds(ra, rb) and not loose:
        return None
    return None if _parallel(a, b, ra, rb) else score


def says_alike(a: Memory, b: Memory, readings: Readings) -> bool:
    """The facts themselves, subjects aside, share `FLOOR` of their stems (or one holds
    the other's, or name two code spans, paths or URLs alike): list items under one
    heading share the heading's words, not their meaning."""
    ra, rb = readings.plain(a), readings.plain(b)
    return (
        jaccard(ra.stems, rb.stems) >= FLOOR
        or containment(ra.stems, rb.stems) >= CONTAINED
        or len(anchored(ra.values) & anchored(rb.values)) >= 2
    )


def _holds(ra: Reading, rb: Reading) -> bool:
    """One fact says no more than the other (`CONTAINED` of its stems, at least
    `CONTAINED_MIN` of them) and both name one thing: "npm install --legacy-peer-deps" in
    "npm install --legacy-peer-deps (needed for the React 19 upgrade)"."""
    sa, sb = ra.flat_stems, rb.flat_stems
    small, big = (sa, sb) if len(sa) <= len(sb) else (sb, sa)
    return (
        len(small) >= CONTAINED_MIN
        and containment(small, big) >= CONTAINED
        and bool(ra.flat_values & rb.flat_values)
    )


def numeric_values(values: frozenset[str]) -> frozenset[str]:
    return frozenset(v for v in values if v[:1].isdigit())


def _parallel(a: Memory, b: Memory, ra: Reading, rb: Reading) -> bool:
    """The facts differ where their subjects do: the same statement about two parts ("the
    api client sends requests over HTTP/1.1", "the database client ...")."""
    own = subject_stems(a.subject or "") ^ subject_stems(b.subject or "")
    return bool((ra.flat_stems ^ rb.flat_stems) & own)


def specificity(memory: Memory, *, readings: Readings | None = None) -> tuple[int, int]:
    """How concrete a memory is: anchors (citations, lines, symbols) and asserted values."""
    anchors = sum(1 + (c.line is not None) + bool(c.symbol) for c in memory.citations)
    return anchors, len(reading(memory, readings).values)


def keeper(memories: list[Memory], *, readings: Readings | None = None) -> Memory:
    """The memory a near-duplicate group keeps: most specific, else most recent."""
    return max(
        memories,
        key=lambda m: (
            specificity(m, readings=readings),
            m.updated or m.created or "",
            len(m.fact),
            m.name,
        ),
    )
