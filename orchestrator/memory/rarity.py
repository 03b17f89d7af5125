"""Near-duplicates by the words they share, weighted by how rare each is in the memory.

Two facts filed under different subjects, worded apart, still say one thing when they
share the words that few other facts use: `min-h-[44px]`, calculateDayCompletion, the
legacy-peer-deps flag, a surcharge zone. A word most facts carry (the project's name, a
heading's word) says little. Each memory is read as its terms (`terms`): the stems of its
fact, code spans read as their words, proper names folded to the stem of their lower case
(TaskItem and TaskItems, Day and Days), a word written short or long as one term
(`ALIASES`: config and configuration, repo and repository); each term weighs
`log((n + 1) / df)` over the n active memories, df being how many carry it.

- `rare_pairs`: candidates and their scores. A term at most `RARE_DF` memories carry
  joins alone, two terms at most `COMMON_DF` carry join as a pair (an inverted index of
  bounded postings, never all pairs); the score is the weighted Jaccard of the two term
  sets, and the weighted share of the smaller set the other holds (ephemeral task state:
  see `rare_pairs`); a qualifier one fact has and the other lacks (`QUALIFIERS`: basic,
  main, rudimentary, functionality...) counts on neither side.
- `alike`: the rules a candidate must meet on top of its scores (`RARE_JACCARD` and
  `RARE_HELD`, or a lower Jaccard, `RARE_JACCARD_HELD`, when nearly all the smaller
  fact's weight stands in the other, `RARE_MOSTLY_HELD`: a one-line
  description of the product inside the project line that adds its stack): not two list items labelled with different names (two endpoints of one
  API), the same polarity and no clause of one denying the other, values nested once
  folded (code spans and paths as their words, names as their stems: one may add a value,
  neither may assert one the other lacks, though a value the other says as a plain word
  it does not lack), numbers nested, more shared than a quantity
  (a number and its unit: two steps of "(30 minutes)" each), and not parallel statements
  about two parts (one fact has words the other lacks that are its own subject's). Labels
  in plain words one inside the other are one name (`compare.different_slots`), a short
  fact naming no code span, path or URL (`_generic`) pairs under another subject only
  when the other names none either (`_vague`), and a state of work naming nothing it is
  the state of ("To be determined in DESIGN stage", "Status: To be reviewed";
  `compare.bare_state`) pairs with nothing.

Ephemeral task state is compared here too, with ephemeral task state only: one change
account or to-do in two lists is one event told twice; accounts of two changes share too
few rare words to pair; a durable fact and the item of work on it say two things.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass
from itertools import combinations

from orchestrator.memory import compare
from orchestrator.memory.text import Reading, span_tokens, stem, subject_stems
from orchestrator.store.memfile import Memory

RARE_DF = 12  # a term more memories carry than this proposes no pair alone
COMMON_DF = 50  # ...nor with one other term, when more memories carry it than this
RARE_JACCARD = 0.3  # the weighted Jaccard of the two term sets, at least
RARE_HELD = 0.6  # the weight of the smaller set the other holds, at least
RARE_MOSTLY_HELD = 0.85  # ...or this much of it, when the weighted Jaccard is lower
RARE_JACCARD_HELD = 0.2  # ...but still this much
RARE_UNNAMED = 0.5  # the weighted Jaccard of two facts that name nothing in common
RARE_WHOLE = 0.9  # ...or the weight of the smaller set the other holds

# Stems of words agent memory writes short or long, and of verbs it uses for one another,
# read as one term ("config" and "configuration", "prefers" and "prioritizes"; "enhance",
# "refine" and "improve", each a word of making a thing better), and forms of one verb
# the stemmer leaves apart ("creation" and "create", "handlers" and "handling").
ALIASES = {
    "app": "applic",
    "arg": "argument",
    "async": "asynchron",
    "auth": "authent",
    "config": "configur",
    "creation": "creat",
    "db": "databas",
    "dep": "depend",
    "dir": "directori",
    "doc": "document",
    "enhanc": "improv",
    "err": "error",
    "favor": "prefer",
    "favour": "prefer",
    "handler": "handl",
    "impl": "implement",
    "info": "inform",
    "init": "initi",
    "msg": "messag",
    "param": "paramet",
    "perf": "perform",
    "pkg": "packag",
    "priorit": "prefer",
    "prioritis": "prefer",
    "refin": "improv",
    "repo": "repositori",
    "sync": "synchron",
    "temp": "temporari",
    "tmp": "temporari",
}


# Stems of words that say how plain or how central an item is, or name it generically,
# not which item it is: one fact having such a word that the other lacks tells them not
# apart ("Basic invoice tracking functionality" and "Rudimentary invoice tracking",
# "Implement basic export screen" and "Implement main export screen" are one item).
QUALIFIERS = frozenset(
    {"basic", "simpl", "main", "initi", "rudimentari", "primari", "function", "featur"}
)
NO_TERMS: frozenset[str] = frozenset()
# Stems that place an item at a stage: a plain first version against a richer later one.
# One fact at each end names two stages of work on one feature ("Basic caching" and
# "Advanced caching strategies", "Basic error handling" and "Error handling improvements").
PLAIN_STAGE = frozenset({"basic", "simpl", "initi", "rudimentari", "minim"})
RICH_STAGE = frozenset({"advanc", "enhanc", "improv", "comprehens", "sophist"})


@dataclass(frozen=True, slots=True)
class Score:
    jaccard: float  # shared weight over the union's weight
    held: float  # shared weight over the smaller set's weight
    says: int  # how many terms the smaller set has

    @property
    def passes(self) -> bool:
        """Enough shared, or the smaller fact nearly all held in the other when it says
        enough to tell (`compare.CONTAINED_MIN` terms: "The deploy key is:" is held in
        any fact about a deploy key)."""
        return (self.jaccard >= RARE_JACCARD and self.held >= RARE_HELD) or (
            self.jaccard >= RARE_JACCARD_HELD
            and self.held >= RARE_MOSTLY_HELD
            and self.says >= compare.CONTAINED_MIN
        )


def terms(reading: Reading) -> frozenset[str]:
    """What the fact says, for weighing: its stems (code spans as their words), each proper
    name as the stem of its lower case (TaskItems and TaskItem weigh as one term), and the
    values `folded` (`min-h-[44px]` quoted or not names 44px)."""
    names = {v for v in reading.values if v.isalpha()}
    stems = reading.flat_stems
    if names:
        stems = frozenset(
            stem(t.lower()) if t in names or (t.isalpha() and t.lower() in names) else t
            for t in stems
        )
    return frozenset(ALIASES.get(t, t) for t in stems | folded(reading.values))


def folded(values: frozenset[str]) -> frozenset[str]:
    """Values compared loosely: numbers as they are, anything else as its words, each
    alphabetic word stemmed (`lib/types.ts` and lib/types.ts, TaskItem and TaskItems). A
    number inside a code span is an argument, not a count: it stays marked as code
    (`--jobs 8` does not say "8 at a time")."""
    out: set[str] = set()
    for value in values:
        if value[:1].isdigit():
            out.add(value)
            continue
        code = value.startswith("`")
        for t in span_tokens(value):
            out.add(stem(t) if t.isalpha() else "`" + t if code and t[:1].isdigit() else t)
    return frozenset(out)


def rare_pairs(
    active: Sequence[Memory], readings: compare.Readings, passing: frozenset[str] = frozenset()
) -> dict[tuple[int, int], Score]:
    """Pairs (by position in `active`) that may pass `Score.passes`, with their scores.

    Two durable facts score by the weight of every term they share, the project's common
    topics included ("playlist" in a quarter of a music player's facts, "offline").
    Ephemeral task state (`passing`) scores against ephemeral task state so too when they
    share `compare.ACROSS` of their weight ("Implement grouping by album artist" and "❌
    Grouping tracks by album artist"), else by its rare terms only (at most `RARE_DF` memories
    carry them): items of work name the project's topics, and one topic in three
    milestones ("Defining core checkout flows", "Core checkout flow validation", "Complete
    core checkout flow") is three stages of work, not one item. A durable fact and
    ephemeral task state are not scored (see `rare_duplicates`).

    Candidates come from an inverted index of bounded postings, never from all pairs: a
    term at most `RARE_DF` memories carry joins alone, and two terms of the project's
    topics (at most `COMMON_DF` memories carry each) join as a pair ("offline" and
    "playlist": "Offline playback for every saved playlist" and "**Offline Mode**: ...
    saved playlists play offline"), so a pair sharing several common words
    and no rare one is compared, and the postings stay short as the store grows. A
    candidate whose shared weight, all of it, is short of `RARE_JACCARD_HELD` of the
    heavier fact's is left out: no rule could take it."""
    found = [terms(readings.plain(m)) for m in active]
    df: Counter[str] = Counter()
    for ts in found:
        df.update(ts)
    n = len(active)
    weight = {t: math.log((n + 1) / d) for t, d in df.items()}
    of = weight.__getitem__
    total = [sum(map(of, ts)) for ts in found]
    qualified = [NO_TERMS if ts.isdisjoint(QUALIFIERS) else ts & QUALIFIERS for ts in found]
    # the least shared weight a pair needs: `RARE_JACCARD_HELD` of the heavier one's (its
    # qualifiers aside, which may not count)
    least = [
        RARE_JACCARD_HELD * (t - sum(map(of, q))) for t, q in zip(total, qualified, strict=True)
    ]
    task = [m.name in passing for m in active]
    # task state and durable facts never share a posting: they are not compared
    # (positions in tuples, which the garbage collector stops tracking; lists it keeps scanning)
    postings: dict[tuple[bool, str, str], tuple[int, ...]] = {}
    for i, ts in enumerate(found):
        common = []
        for t in ts:
            seen = df[t]
            if seen <= RARE_DF:
                key = (task[i], t, "")
                postings[key] = (*postings.get(key, ()), i)
            elif seen <= COMMON_DF:
                common.append(t)
        if len(common) > 1:
            for one, two in combinations(sorted(common), 2):
                key = (task[i], one, two)
                postings[key] = (*postings.get(key, ()), i)
    candidates = {pair for members in postings.values() for pair in combinations(members, 2)}
    subjects = [subject_stems(m.subject or "") for m in active]
    out = {}
    for a, b in candidates:
        both = found[a] & found[b]
        shared = sum(map(of, both))
        if shared < (least[a] if least[a] > least[b] else least[b]):
            continue  # short of the lowest Jaccard any rule takes, whatever is left out
        # the words both subjects name say what the facts are about, not what they say
        about = subjects[a] & subjects[b] & both
        sizes = _sizes(found, total, qualified, of, a, b)
        score = _score(both, shared, about, weight, sizes)
        if task[a] and score.jaccard < compare.ACROSS:
            rare = {t for t in both if df[t] <= RARE_DF}
            score = _score(rare, sum(map(of, rare)), about, weight, sizes)
        out[(a, b)] = score
    return out


def _sizes(
    found: list[frozenset[str]],
    total: list[float],
    qualified: list[frozenset[str]],
    of: Callable[[str], float],
    a: int,
    b: int,
) -> tuple[tuple[float, int], tuple[float, int]]:
    """Each memory's weight, less that of the `QUALIFIERS` it has and the other lacks (a
    qualifier both have still counts as shared), and its number of terms, all counted."""
    ta, tb = total[a], total[b]
    if qualified[a]:
        ta -= sum(map(of, qualified[a] - found[b]))
    if qualified[b]:
        tb -= sum(map(of, qualified[b] - found[a]))
    return (ta, len(found[a])), (tb, len(found[b]))


def _score(
    counted: Set[str],
    shared: float,
    about: frozenset[str],
    weight: dict[str, float],
    sizes: tuple[tuple[float, int], tuple[float, int]],
) -> Score:
    """The weighted Jaccard and share held of two memories (`sizes`: each one's weight and
    number of terms) sharing the terms `counted` (of weight `shared`), less the words both
    subjects name."""
    (ta, na), (tb, nb) = sizes
    s = shared
    if about:
        s -= sum(map(weight.__getitem__, about & counted))
        lost = sum(map(weight.__getitem__, about))
        ta, tb = ta - lost, tb - lost
    union, smaller = ta + tb - s, min(ta, tb)
    return Score(
        s / union if union > 0 else 0.0,
        s / smaller if smaller > 0 else 0.0,
        na if ta <= tb else nb,
    )


def _parallel(a: Memory, b: Memory, ra: Reading, rb: Reading, *, task: bool = False) -> bool:
    """The facts differ where their subjects do: one has words the other lacks that are
    its own subject's ("the api client sends requests over HTTP/1.1" under api against
    "the database client ..."; "the scheduler cache is shared" under scheduler cache
    against "the cache is shared"). Two items of work (`task`) must each have such words:
    an item under a plan's heading often repeats one of its words ("**BUG-004**: Replace
    the stub mailer" under "Phase 1: Critical Bug Fixes") where the same item in the next
    steps does not, and that names no part."""
    own_a, own_b = ra.flat_stems - rb.flat_stems, rb.flat_stems - ra.flat_stems
    sa, sb = subject_stems(a.subject or ""), subject_stems(b.subject or "")
    own = bool(own_a & (sa - sb)), bool(own_b & (sb - sa))
    return all(own) if task else any(own)


def _nested(va: frozenset[str], vb: frozenset[str], ra: Reading, rb: Reading) -> bool:
    """The folded values `va` and `vb` of two facts are nested: one set holds the other,
    or the values one fact asserts beyond the other's are all plain names that the other
    says as words ("`deploy/helm/values.prod.yaml` - Kubernetes settings" and
    "`values.prod.yaml` for Kubernetes": the platform is a value in one reading and a word
    in the other). A word of a code span or a path is no plain name: `make deploy-queue`
    and `make release-queue` name two commands, though the other fact speaks of deploys."""
    return (
        va <= vb or vb <= va or _said_as_words(vb - va, rb, ra) or _said_as_words(va - vb, ra, rb)
    )


def _said_as_words(values: frozenset[str], own: Reading, other: Reading) -> bool:
    """Each of `values` (folded, of the reading `own`) is a plain name `own` asserts and a
    term of `other`."""
    names = folded(frozenset(v for v in own.values if v.isalpha()))
    return values <= names and values <= terms(other)


def _generic(reading: Reading) -> bool:
    """A fact of at most `compare.GENERIC` words besides its numbers, naming no code span,
    path or URL ("Simple stock alerts", "Nightly sync cycle")."""
    words = terms(reading) - compare.numeric_values(reading.flat_values)
    return len(words) <= compare.GENERIC and not compare.anchored(reading.values)


def _vague(reading: Reading, other: Reading) -> bool:
    """A short fact naming nothing (`_generic`) is too vague to say what another fact says
    under another subject when the other names a code span, path or URL that it does not
    ("Dimension tables load before fact tables" is not what `WarehouseLoader.merge()`
    loads)."""
    return _generic(reading) and bool(compare.anchored(other.values))


def _stages(plain: frozenset[str], rich: frozenset[str]) -> bool:
    """`plain` names a first, plain version (`PLAIN_STAGE`) and `rich` a richer one
    (`RICH_STAGE`), each without the other's word."""
    return bool(
        plain & PLAIN_STAGE
        and rich & RICH_STAGE
        and not plain & RICH_STAGE
        and not rich & PLAIN_STAGE
    )


def _quantity_only(ra: Reading, rb: Reading) -> bool:
    """The facts share nothing but a quantity both give, its number with the same unit
    ("24GB gp3 disk" and "24GB per search node", two steps that each take "(30 minutes)"):
    a size or a duration both happen to have, not one thing said twice."""
    shared = terms(ra) & terms(rb)
    both = frozenset().union(*(c.numbers for c in ra.clauses)) & frozenset().union(
        *(c.numbers for c in rb.clauses)
    )
    return bool(shared) and shared <= {w for pair in both for w in pair}


def alike(
    a: Memory, b: Memory, readings: compare.Readings, score: Score, *, task: bool = False
) -> bool:
    """Whether a pair `rare_pairs` scored high enough says one thing (see the module).
    Two items of ephemeral task state (`task`) may differ in polarity: "❌ Dark mode for
    the reader" and "Dark mode for the reader is not built yet" are one item, its state
    told with a mark or with a negation (a clause of one denying a clause of the other
    still sets them apart); and they are parallel only as `_parallel` reads items of
    work."""
    if compare.linked(a, b) or compare.different_slots(a, b, nested=True):
        return False
    if compare.two_acts(a, b):
        return False  # making a thing and testing it
    if compare.one_direction(a, b):
        return False  # what a setting is, and what a higher value of it does
    if compare.sibling_subjects(a, b) and readings.copy_key(a) == readings.copy_key(b):
        return False  # one line written under each of two parts
    ra, rb = readings.plain(a), readings.plain(b)
    if _stages(ra.flat_stems, rb.flat_stems) or _stages(rb.flat_stems, ra.flat_stems):
        return False  # a plain first version and a richer later one: two stages
    if compare.bare_state(a, ra) or compare.bare_state(b, rb):
        return False  # a state of work naming nothing: its heading says what it is about
    if not compare.same_subject(a, b) and (_vague(ra, rb) or _vague(rb, ra)):
        return False
    if (ra.negated != rb.negated and not task) or compare.opposed(ra, rb):
        return False
    if compare.opposite_sides(a, b):
        return False
    va, vb = folded(ra.flat_values), folded(rb.flat_values)
    if va and vb and not _nested(va, vb, ra, rb):
        return False
    if not va & vb and score.jaccard < RARE_UNNAMED and score.held < RARE_WHOLE:
        return False  # sharing no named thing, the facts must share more of their words
    na, nb = compare.numeric_values(va), compare.numeric_values(vb)
    if na and nb and not (na <= nb or nb <= na):
        return False
    if _quantity_only(ra, rb):
        return False
    return not _parallel(a, b, ra, rb, task=task)


def rare_duplicates(
    active: Sequence[Memory], readings: compare.Readings, passing: frozenset[str] = frozenset()
) -> set[tuple[str, str]]:
    """Pairs of active memories that say one thing by the weight of their shared words.
    Ephemeral task state (`passing`) pairs with ephemeral task state only: a durable fact
    and an item of work on the same thing ("Offline playback for every saved playlist" and
    "❌ Offline playback improvements") say two things, what the product is and where
    work on it stands (word-for-word copies are found apart, see `compare.copy_key`)."""
    out = set()
    for (i, j), score in rare_pairs(active, readings, passing).items():
        a, b = active[i], active[j]
        if not score.passes:
            continue
        if alike(a, b, readings, score, task=a.name in passing):
            out.add((min(a.name, b.name), max(a.name, b.name)))
    return out
