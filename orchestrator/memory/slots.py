"""What cannot give one slot two values, whatever the words say.

`compare.conflict` calls two facts contradictory when they give one slot different
values. Two shapes of fact fill no slot that way:

- `prohibitions`: two negated clauses ("don't use class components", "don't use CSS-in-JS
  libraries") list what is ruled out; prohibitions add up, they do not compete
  (limits, which rule out by a number, still do).
- `flow`: a fact written as a chain of arrows ("4 terms → 36 weeks → 180 lessons", "order
  edited → recount the invoice → update the ledger") names the steps of a hierarchy or a
  cascade; another fact naming other steps describes another part of it.

A fact that opens with a prohibition ("Don't use class components (no
componentDidMount)") is one however many negations it holds (`forbids`).

A denial that only says "without X" or "instead of X" (`contrast_only`: "Without a unique
key, the upsert inserted duplicates"; "jobs now update the row instead of adding one")
sets a condition or names what was turned down: it denies no statement of another fact.

Nor does a fact that states no value of its own (`unstated`): a lead-in ending on a colon
("Read `docs/setup.md` to understand:") introduces the list or block that follows; an
option weighed ("Cons: no built-in validation", "Pros: ships with a router") says what
one choice of several would bring, not what the project is; and an example, filed under
a heading of examples ("Examples", "Usage examples"), is one instance of many.

Four more shapes name no one slot (`thin_denial`, `aside_denial`, `parallel_leads`,
`same_version`): a denial of one word ("it never generates" meets any fact about a
generator under that subject: what it denies is not named); a negation only inside an
aside in brackets ("degrades on large files (not addressed yet)" repeats the other fact
and adds a state of work); two facts led by different names that say the rest alike
("Write throughput > 100 MB/s", "Read throughput > 500 MB/s"; "Anvils = ...",
"Hinges = ..."), parallel statements about two things; and one version written to two
precisions ("3.5", "3.5.0").

Nor do two facts that each open on a condition of their own, up to a comma
(`own_conditions`: "For buy orders, ..." and "For sell orders, ..."; "If found, ..." and
"If not found, ..."): each value holds in its own case.
Two facts that each open on a verb of what was done (`accounts`: "Confirmed ...",
"Successfully tested ...") are two events, not two values of one slot.

Across subjects one slot is read (`count`): the same count of the same thing, "a
138-column export layout" against "export column map (139 columns)": one unit given two
numbers, no number agreeing, in clauses that share a word besides the unit (what is
counted: "export"; a number before "passed" counts tests, `unit`). A 6-column database
schema is another slot, and so is a bound (`bounds`: "at most 200 orders a page") against
a plain value ("50 orders per page by default"); `compare.count_conflict` adds the rules
on subjects. Nor does a total (`whole`: "40 endpoints in total", "Overall: 128 tests")
clash with a count that does not say it is one ("the orders module has 12 endpoints"): the
two count at two scopes, a whole and maybe a part of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from orchestrator.checks.secrets import Patterns
from orchestrator.memory.text import ANTONYMS, NEGATIONS, Clause, Reading, stem

MIN_ARROWS = 2  # a chain: three steps at least
_UNITS = {"pass": "test"}  # a stem written after a count -> the unit it counts
_RX = Patterns(  # compiled on first use: only a pair of facts compared needs them
    arrow=r"→|⇒|->|=>",
    bound=(
        r"\b(?:at (?:most|least)|up to|no (?:more|fewer|less) than|max(?:imum)?|min(?:imum)?|"
        r"limit(?:s|ed)?|caps?|capped)\b",
        re.IGNORECASE,
    ),
    count=r"(?<![\w.])(\d+(?:\.\d+)?)[\s-]+([a-z]+)(?:[ -]([a-z]+))?",
    # what stands before a number that is no count: a word naming which one of a series
    # ("Stage 1.5 provides", "Phase 2 tables") or the start of a range ("1-5 models")
    not_counted=(
        r"(?:\b(?:stage|phase|step|part|tier|level|version|v|release|sprint|week|day|round|"
        r"iteration|milestone|chapter|section|issue|ticket|item|option|setting|scenario)\s*#?"
        r"|\d\s*(?:[-–]|to)\s*)$"
    ),
    thousands=r"(?<=\d),(?=\d{3}\b)",
    per=r"\s+(?:[a-z]+\s+){0,2}per\s+([a-z]+)",
    # an HTTP status, which names a kind of answer: "HTTP 500", "404 errors", "201 response"
    status_before=r"\b(?:http|status)(?:\s+code)?\s*$",
    year=r"(?:19|20)\d\d",
    struck=r"~~.*?~~",
    whole=(r"\b(?:in total|totals?|overall|altogether|in all|combined)\b", re.IGNORECASE),
    written=r"[A-Za-z][\w'-]*",
    forbids=(r"^\W*(?:don'?t|do not|never|avoid|no)\b", re.IGNORECASE),
    lead_in=r":[\s*_]*$",
    option=(
        r"^\W{0,4}(?:pros?|cons?|(?:dis)?advantages?|drawbacks?|trade-?offs?|alternatives?)\W*:",
        re.IGNORECASE,
    ),
    examples=(r"\bexamples?\b", re.IGNORECASE),
    contrast=(r"\b(?:without|instead of|rather than)\b", re.IGNORECASE),
    # a fact opening on a verb of what was done: "Confirmed ...", "Successfully tested ..."
    account=(
        r"^\W{0,4}(?:\d{1,3}[.)]\s+)?(?:\[[ xX]\]\s*)?[*_]{0,2}(?:successfully\s+)?"
        r"[a-z]{2,}(?<!e)ed\b(?![*_]*:)",
        re.IGNORECASE,
    ),
    # a fact opening on the condition or case its statement holds under, up to a comma or
    # a colon: "For long positions, ...", "If not found, ...", "If a plan is needed: ..."
    condition=(
        r"^\W{0,4}(?:\d{1,3}[.)]\s+)?[*_]{0,2}(?:if|when|whenever|unless|once|while|for|on|in|"
        r"during|after|before)\s+([^,;:.()]{1,80}?)[*_]{0,2}\s*[,:]\s*\w",
        re.IGNORECASE,
    ),
    # a sentence opening on a condition its statement holds under (a denial in it holds
    # only there): "Without the scope, the app cannot ...", "If the key is missing, ..."
    conditional=(
        r"^\W{0,4}(?:without|if|unless|when|whenever|once)\s+[^,;:.()]{1,80}?,",
        re.IGNORECASE,
    ),
    sentence=r"(?<=[.!?;])\s+|\s*\*\*[^*]{1,40}\*\*:\s*",
    # a log entry's own moment at the head of the fact: "[2025-04-01 19:05:02] ...",
    # "2025-04-01: ...", "**2025-04-01 10:12** - ..."
    stamp=(
        r"^\W{0,6}(\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?)\b",
        re.IGNORECASE,
    ),
    # code, not a statement: a fence (escaped or not) or a line comment at the head
    code=r"^\s*(?:\\?`\\?`\\?`|//|/\*)",
    # a verb that adds one more thing: what two facts add adds up
    adds=(
        r"^\W{0,4}(?:\d{1,3}[.)]\s+)?[*_]{0,2}(?:adds|creates|introduces|inserts|appends|"
        r"registers|includes)\s",
        re.IGNORECASE,
    ),
    word=r"[a-z]+(?:n't)?",
    aside=r"\([^()]*\)|\[[^\[\]]*\]",
    lead=r"^(?:\s*(?:[-*+]|\d{1,3}[.)])\s+)?(?:\[[ xX]\]\s*)?[*_]*(`[^`]+`|\"[^\"]+\"|'[^']+'|[\w.-]+)",
    dated=(
        r"\b\d{4}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
        r"\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|"
        r"sep|oct|nov|dec)[a-z]*\.?\s+\d{4}\b",
        re.IGNORECASE,
    ),
)
MIN_DENIED = 2  # words a denial names, to say what it denies
PARALLEL = 0.5  # the stems two facts led by different names share after their leads
_DENYING = (NEGATIONS - {"without"}) | frozenset(ANTONYMS)


@dataclass(frozen=True)
class Count:
    """One count given two values: `slot` names what is counted."""

    slot: str
    left: frozenset[str]
    right: frozenset[str]

    def detail(self) -> str:
        return (
            f"the number of {self.slot}: one says {', '.join(sorted(self.left))}, "
            f"the other {', '.join(sorted(self.right))}"
        )


def prohibitions(a: Clause, b: Clause, *, forbidding: bool = False) -> bool:
    """Both clauses rule things out (or both facts open with a prohibition: `forbidding`),
    and neither by a number (two limits, "uploads over 10 MB are rejected" and "over 25
    MB", do compete)."""
    ruled_out = forbidding or (a.negated and b.negated)
    return ruled_out and not a.numbers and not b.numbers


def forbids(fact: str) -> bool:
    """The fact opens with a prohibition: don't, do not, never, avoid, no."""
    return _RX.forbids.match(fact) is not None


def unstated(fact: str, subject: str) -> bool:
    """The fact states no value of a slot: a lead-in to what follows, an option weighed,
    an example (see the module)."""
    return (
        _RX.lead_in.search(fact) is not None
        or _RX.option.match(fact) is not None
        or _RX.examples.search(subject) is not None
        or code(fact)
    )


def contrast_only(fact: str) -> bool:
    """The fact's negations are all "without", "instead of" or "rather than" (no "not",
    "never", "n't" or antonym): a condition or an alternative turned down (see the
    module)."""
    if _RX.contrast.search(fact) is None:
        return False
    words = _RX.word.findall(fact.lower())
    return not any(w in _DENYING or w.endswith("n't") for w in words)


def _denying(text: str) -> bool:
    words = _RX.word.findall(text.lower())
    return any(w in _DENYING or w.endswith("n't") for w in words)


def aside_denial(fact: str) -> bool:
    """The fact's negations all stand inside brackets: an aside (a state of work, a
    caveat) added to a statement, which denies nothing of another fact."""
    return _denying(fact) and not _denying(_RX.aside.sub(" ", fact))


def thin_denial(clause: Clause, fact: str, other: str) -> bool:
    """A negated clause of fewer than `MIN_DENIED` words ("it never generates", "nothing
    built") whose word the other fact does not write as it does: what it denies is not
    named, and a fact using another form of the word ("a one-shot generator", "a
    from-scratch build") states something else. A denial of the very word ("do not wrap
    them" against "Wrap errors with `%w`") still meets it."""
    if len(clause.words) >= MIN_DENIED:
        return False
    written = set(_RX.word.findall(fact.lower()))
    said = set(_RX.word.findall(other.lower()))
    return not any(w in said for w in written if stem(w) in clause.words)


def _lead(fact: str) -> tuple[str, str]:
    """The name a fact opens with (a word, a code span or a quotation, lower case), and the
    rest of the fact."""
    found = _RX.lead.match(fact)
    if found is None:
        return "", fact.lower()
    return found.group(1).strip("`\"'").lower(), fact[found.end() :].lower()


def parallel_leads(fact_a: str, fact_b: str) -> bool:
    """The facts open with different names, neither standing in the other fact, and say
    the rest alike (`PARALLEL` of their stems shared): the same statement about two
    things ("Write throughput > 100 MB/s per node", "Read throughput > 500 MB/s per
    node"), not one thing given two values."""
    lead_a, rest_a = _lead(fact_a)
    lead_b, rest_b = _lead(fact_b)
    if not lead_a or not lead_b or lead_a == lead_b:
        return False
    if lead_a in fact_b.lower() or lead_b in fact_a.lower():
        return False
    sa = {stem(w) for w in _RX.word.findall(rest_a)}
    sb = {stem(w) for w in _RX.word.findall(rest_b)}
    return bool(sa and sb) and len(sa & sb) >= PARALLEL * len(sa | sb)


def _condition(fact: str) -> frozenset[str] | None:
    """The stems of the condition a fact opens with ("For long positions, ..." ->
    long, position), or None when it opens on none."""
    found = _RX.condition.match(fact)
    if found is None:
        return None
    return frozenset(stem(w) for w in _RX.word.findall(found.group(1).lower()))


def own_conditions(fact_a: str, fact_b: str) -> bool:
    """Both facts open on a condition or case of their own ("For long positions, entry
    sits below the lower band", "For short positions, above the upper band"; "If found,
    return the cached rows", "If not found, query the database"): each value holds
    under its own condition, so they give no one slot two values. Two facts under the
    same condition still can."""
    cond_a, cond_b = _condition(fact_a), _condition(fact_b)
    return cond_a is not None and cond_b is not None and cond_a != cond_b


def stamped_apart(fact_a: str, fact_b: str) -> bool:
    """Both facts open on a date or a time stamp of their own ("[2025-04-01 19:05:02]
    Create release 2.14.23", "[2025-04-01 22:21:07] Create release 2.14.24"): two entries
    of a log, each recording its own moment, not one slot given two values. Two entries
    stamped alike still can clash."""
    found_a, found_b = _RX.stamp.match(fact_a), _RX.stamp.match(fact_b)
    return found_a is not None and found_b is not None and found_a.group(1) != found_b.group(1)


def code(fact: str) -> bool:
    """The fact is code (it opens on a code fence, escaped or not, or a line comment):
    an example to copy, which states no value of a slot."""
    return _RX.code.match(fact) is not None


def additions(fact_a: str, fact_b: str) -> bool:
    """Both facts open on a verb that adds one thing more ("Adds `conversationId` to
    messages", "Adds a `topicIds` array to messages"): what they add adds up, as the
    steps of one change do; neither replaces the other's."""
    return _RX.adds.match(fact_a) is not None and _RX.adds.match(fact_b) is not None


def conditional_denial(fact: str) -> bool:
    """Every denial of the fact stands in a sentence that opens on its own condition
    ("Without the Drive scope, the app cannot find sheets by name"): it says what holds
    in a case the other fact need not be in (a rationale's counterfactual), not that the
    other fact is false."""
    parts = [p for p in _RX.sentence.split(fact) if p and p.strip()]
    denying = [p for p in parts if _denying(p)]
    return bool(denying) and all(_RX.conditional.match(p) for p in denying)


def accounts(fact_a: str, fact_b: str) -> bool:
    """Both facts open on a verb of what was done ("Confirmed the billing routes are
    secured", "Successfully tested the import with the sample files"): two accounts of
    work, each an event that took place, not two values of one slot; what they name
    apart adds up. A label ("**Deprecated**: ...") is no account."""
    return _RX.account.match(fact_a) is not None and _RX.account.match(fact_b) is not None


def _version(value: str) -> str:
    parts = value.split(".")
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def same_version(left: frozenset[str], right: frozenset[str]) -> bool:
    """The numbers two clauses hold apart are one version written to two precisions
    ("3.5" and "3.5.0"), nothing else."""
    if not left or not right or not all(v[:1].isdigit() for v in left | right):
        return False
    return {_version(v) for v in left} == {_version(v) for v in right}


def dated(subject: str) -> bool:
    """The subject carries a date ("2025-03-14 - Retry fixes", "Release (June 9, 2025)"):
    the entry of a log, recording its own moment."""
    return _RX.dated.search(subject) is not None


def struck(fact: str) -> bool:
    """The fact is crossed out (`~~...~~` around all its words): withdrawn, it states
    nothing."""
    return "~~" in fact and not any(ch.isalnum() for ch in _RX.struck.sub("", fact))


def bounds(fact: str) -> bool:
    """The fact states a bound (at most, up to, a maximum, a limit), not a value."""
    return _RX.bound.search(fact) is not None


def counts(fact: str) -> frozenset[tuple[str, str]]:
    """(number, unit) for each number written right before its unit: "138-column",
    "139 columns", "20,000 rows"; not "Setting 8" or "part 1", where the number names
    which one, nor "Stage 1.5 provides" (the same, before a verb), nor the end of a range
    ("1-5 models", "1 to 5 models": a bound, which a value inside it does not contradict),
    nor an HTTP status ("404 errors", `_status`)."""
    plain = _RX.thousands.sub("", fact.lower())
    return frozenset(
        (found.group(1), stem(found.group(2)))
        for found in _RX.count.finditer(plain)
        if _RX.not_counted.search(plain, max(0, found.start() - 16), found.start()) is None
        and _RX.year.fullmatch(found.group(1)) is None
        and not _status(plain, found)
    )


_STATUS_UNITS = frozenset({"error", "respons", "status", "code"})
# the statuses an account of web work names without saying "HTTP"
_STATUSES = frozenset(
    [
        "200",
        "201",
        "202",
        "204",
        "301",
        "302",
        "304",
        "400",
        "401",
        "403",
        "404",
        "405",
        "409",
        "410",
        "422",
        "429",
        "500",
        "502",
        "503",
        "504",
    ]
)


def _status(plain: str, found: re.Match[str]) -> bool:
    """The number is an HTTP status ("Fixed 404 error in the orders endpoint", "HTTP 500
    error test"): it names which answer, as "Stage 2" names which stage, and counts
    nothing; two statuses are two errors, not one count given two values."""
    number = found.group(1)
    if len(number) != 3 or number[0] not in "12345":
        return False
    before = _RX.status_before.search(plain, max(0, found.start() - 16), found.start())
    return before is not None or (number in _STATUSES and stem(found.group(2)) in _STATUS_UNITS)


def _qualifiers(fact: str, numbers: frozenset[str]) -> frozenset[str]:
    """The words written right after the units of `numbers` in the fact ("9 unit tests":
    "test"), empty where a unit ends its phrase."""
    plain = _RX.thousands.sub("", fact.lower())
    return frozenset(
        stem(found.group(3))
        for found in _RX.count.finditer(plain)
        if found.group(1) in numbers and found.group(3)
    )


def _per(fact: str, numbers: frozenset[str]) -> frozenset[str]:
    """What the counts of `numbers` are given per ("5 patterns per domain": "domain"),
    empty where a count is a plain number of things."""
    plain = _RX.thousands.sub("", fact.lower())
    out = set()
    for found in _RX.count.finditer(plain):
        if found.group(1) in numbers:
            rate = _RX.per.match(plain, found.end())
            if rate is not None:
                out.add(stem(rate.group(1)))
    return frozenset(out)


def _two_things(fact_a: str, fact_b: str, na: frozenset[str], nb: frozenset[str]) -> bool:
    """The words after the counted ones differ in both facts: "9 comprehensive unit tests"
    and "16 comprehensive registry tests" count two suites, however alike the unit read.
    So do a rate and a count ("5 domain patterns per domain" against "4 domains"), or
    rates per different things: how many for each one is not how many in all."""
    if _per(fact_a, na) != _per(fact_b, nb):
        return True
    qa, qb = _qualifiers(fact_a, na), _qualifiers(fact_b, nb)
    return bool(qa and qb) and not qa & qb


def unit(word: str) -> str:
    """The unit a counted word (a stem) names: a number of tests is written "318 tests"
    or "322 passed"."""
    return _UNITS.get(word, word)


def _units(numbers: frozenset[tuple[str, str]]) -> frozenset[tuple[str, str]]:
    return frozenset((n, unit(u)) for n, u in numbers)


def whole(fact: str) -> bool:
    """The fact gives a total ("in total", "overall", "combined"): the count of a whole."""
    return _RX.whole.search(fact) is not None


def count(a: Reading, b: Reading, fact_a: str, fact_b: str) -> Count | None:
    """The facts give one count two values (see the module), or None. A total against a
    count not said to be one is two scopes, not one count."""
    if whole(fact_a) != whole(fact_b):
        return None
    written_a, written_b = counts(fact_a), counts(fact_b)
    for ca in a.clauses:
        for cb in b.clauses:
            ka, kb = _units(ca.numbers & written_a), _units(cb.numbers & written_b)
            for what in {u for _, u in ka} & {u for _, u in kb}:
                na = frozenset(n for n, u in ka if u == what)
                nb = frozenset(n for n, u in kb if u == what)
                counted = (ca.frame & cb.frame) - {what}
                if counted and not na & nb and not _two_things(fact_a, fact_b, na, nb):
                    unit_word = written(fact_a, frozenset({what})) or what
                    return Count(f"{unit_word} ({written(fact_a, counted)})", na, nb)
    return None


def written(fact: str, stems: frozenset[str]) -> str:
    """The words of `fact` whose stems are in `stems`, in the fact's order, each once: a
    slot named as the fact writes it ("runs" and "scheduler", not "run" and "schedul")."""
    out: dict[str, str] = {}  # stem -> the word first written for it
    for word in _RX.written.findall(fact):
        low = word.lower()
        key = low if low in stems else stem(low)
        if key in stems:
            out.setdefault(key, low)
    return " ".join(out.values())


@lru_cache(maxsize=65536)
def flow(fact: str) -> bool:
    """The fact is a chain of arrows: steps, not one value."""
    return len(_RX.arrow.findall(fact)) >= MIN_ARROWS
