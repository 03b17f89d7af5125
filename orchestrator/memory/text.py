"""How memory text is read for comparison: tokens, stems, values, clauses, polarity.

Checklist A compares raw word tokens (`dedup.tokens`). The audit needs more: two facts
worded differently can say the same thing (near-duplicates), and two facts worded alike can
say opposite things (contradictions). This module splits a fact into what it is about (its
frame: content words, stemmed) and what it asserts (its values: code spans, numbers,
quoted strings, paths, URLs, proper names), plus its polarity (negations and antonyms).
Everything here is pure and cached per string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import Stemmer  # PyStemmer: the Snowball English stemmer, in C

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "always",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "either",
        "else",
        "etc",
        "every",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "may",
        "me",
        "might",
        "more",
        "most",
        "much",
        "my",
        "myself",
        "need",
        "needs",
        "now",
        "of",
        "once",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "per",
        "same",
        "shall",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "thus",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "use",
        "used",
        "uses",
        "using",
        "very",
        "via",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "within",
        "would",
        "you",
        "your",
        "yours",
        "one",
        "ones",
        "instead",
        "rather",
        "on",
        "onto",
    ]
)
NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "none",
        "nor",
        "cannot",
        "without",
        "neither",
        "nothing",
        "nobody",
        "nowhere",
    ]
)
# word -> the word it is the opposite of: "disabled" reads as "not enabled".
ANTONYMS = {
    "disable": "enable",
    "disabled": "enabled",
    "disables": "enables",
    "false": "true",
    "optional": "required",
    "forbidden": "allowed",
    "forbid": "allow",
    "forbids": "allows",
    "disallowed": "allowed",
    "disallow": "allow",
    "disallows": "allows",
    "denied": "allowed",
    "deny": "allow",
    "denies": "allows",
    "blocked": "allowed",
    "prohibited": "allowed",
    "unsupported": "supported",
    "unsafe": "safe",
    "insecure": "secure",
    "async": "sync",
    "asynchronous": "synchronous",
    "exclude": "include",
    "excludes": "includes",
    "excluded": "included",
    "invalid": "valid",
    "hidden": "visible",
    "immutable": "mutable",
    "unstable": "stable",
    "incompatible": "compatible",
    "unavailable": "available",
    "off": "on",
    "absent": "present",
    "fails": "passes",
    "failed": "passed",
    "fail": "pass",
    "reject": "accept",
    "rejects": "accepts",
    "rejected": "accepted",
    "upper": "lower",
    "uppercase": "lowercase",
    "descending": "ascending",
    "private": "public",
    "remote": "local",
    "manual": "automatic",
    "manually": "automatically",
    "skip": "include",
    "skips": "includes",
    "skipped": "included",
    "omit": "include",
    "omits": "includes",
    "omitted": "included",
}
# Participles that, standing before a noun, say which things are meant ("failed jobs are
# retried", "hidden files are skipped") rather than deny anything: read as plain words there.
ATTRIBUTIVE = frozenset(w for w in ANTONYMS if w.endswith(("ed", "en")))
# "off" denies only as a state: "the flag is off", "turned off"; not "cut off", "back off".
_STATE_VERBS = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "stays",
        "stay",
        "remains",
        "remain",
        "turned",
        "turn",
        "turns",
        "switched",
        "switch",
        "switches",
        "set",
        "sets",
        "toggled",
        "toggle",
        "left",
    ]
)
# Words technical notes use interchangeably, read as one (before stemming).
SYNONYMS = {
    **dict.fromkeys(
        [
            "store",
            "stores",
            "stored",
            "storing",
            "keep",
            "keeps",
            "kept",
            "keeping",
            "save",
            "saves",
            "saved",
            "saving",
            "persist",
            "persists",
            "persisted",
            "hold",
            "holds",
            "held",
        ],
        "store",
    ),
    **dict.fromkeys(["execute", "executes", "executed", "executing"], "run"),
    **dict.fromkeys(["compile", "compiles", "compiled", "compiling"], "build"),
    **dict.fromkeys(
        [
            "delete",
            "deletes",
            "deleted",
            "deleting",
            "remove",
            "removes",
            "removed",
            "removing",
            "drop",
            "drops",
            "dropped",
            "dropping",
            "purge",
            "purges",
            "purged",
            "erase",
            "erases",
            "erased",
        ],
        "delete",
    ),
    **dict.fromkeys(
        [
            "print",
            "prints",
            "printed",
            "printing",
            "show",
            "shows",
            "showed",
            "shown",
            "display",
            "displays",
            "displayed",
        ],
        "print",
    ),
    **dict.fromkeys(
        ["begin", "begins", "began", "begun", "launch", "launches", "launched", "start", "starts"],
        "start",
    ),
    **dict.fromkeys(["latest", "newest", "recent"], "last"),
    **dict.fromkeys(
        ["retrieve", "retrieves", "retrieved", "obtain", "obtains", "obtained"], "fetch"
    ),
}

_CODE = re.compile(r"`([^`\n]+)`")
_URL = re.compile(r"\bhttps?://[^\s)>\]`'\"]+")
_QUOTED = re.compile(r"\"([^\"\n]{1,80})\"")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")
_SUBJECT_WORD = re.compile(r"[a-z0-9][a-z0-9_'-]*")
# Every split starts at a space or at one of ;:,. (the look-ahead lets the engine skip the
# rest of the text quickly); only the joining words are read in either case.
_CLAUSE_SPLIT = re.compile(
    r"(?=[\s;:,.])\s*(?:[;:]\s+|,\s+|\.\s+"
    r"|\s+(?i:and|but|while|whereas|because|since|so|which|then)\s+|\s+[-–—]+\s+"
    r"|\s+(?=(?i:instead of|rather than)\s))"
)
_CONTRACTED = {"can't": "can", "won't": "will", "shan't": "shall", "ain't": "is"}
_TOKEN = re.compile(
    r"(?P<ph>\x00(?P<idx>\d+)\x00)"
    r"|(?P<path>(?<![\w/])(?:[\w.-]+/)+[\w.-]*)"
    r"|(?P<time>(?<![\w:.])\d{1,2}:\d{2}(?::\d{2})?(?![\w:]))"
    r"|(?P<num>(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\d,])|(?<![\w.])\d+(?:\.\d+)*(?:%|[a-z]{1,3}\b)?)"
    r"|(?P<word>[A-Za-z][A-Za-z0-9_'-]*)"
)


STEMMER = Stemmer.Stemmer("english")
# Irregular past forms the stemmer leaves alone ("rebuilt" must meet "rebuild").
IRREGULAR = {
    "built": "build",
    "rebuilt": "rebuild",
    "ran": "run",
    "wrote": "write",
    "written": "write",
    "rewrote": "rewrite",
    "rewritten": "rewrite",
    "kept": "keep",
    "left": "leave",
    "made": "make",
    "found": "find",
    "held": "hold",
    "sent": "send",
    "taken": "take",
    "took": "take",
    "given": "give",
    "gave": "give",
    "chosen": "choose",
    "chose": "choose",
    "began": "begin",
    "begun": "begin",
    "broke": "break",
    "broken": "break",
    "brought": "bring",
    "bought": "buy",
    "caught": "catch",
    "drew": "draw",
    "drawn": "draw",
    "fell": "fall",
    "fallen": "fall",
    "got": "get",
    "gotten": "get",
    "grew": "grow",
    "grown": "grow",
    "hid": "hide",
    "hidden": "hide",
    "knew": "know",
    "known": "know",
    "led": "lead",
    "lost": "lose",
    "meant": "mean",
    "met": "meet",
    "paid": "pay",
    "rose": "rise",
    "risen": "rise",
    "said": "say",
    "saw": "see",
    "seen": "see",
    "sold": "sell",
    "shown": "show",
    "spent": "spend",
    "split": "split",
    "stood": "stand",
    "thrown": "throw",
    "threw": "throw",
    "told": "tell",
    "thought": "think",
    "understood": "understand",
    "went": "go",
    "gone": "go",
    "won": "win",
    "bound": "bind",
    "fed": "feed",
    "fled": "flee",
    "dealt": "deal",
    "ate": "eat",
    "eaten": "eat",
    "forgot": "forget",
    "forgotten": "forget",
    "overridden": "override",
    "overrode": "override",
}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The English stem of a lower-case word ("repositories" -> "repositori")."""
    word = IRREGULAR.get(word, word)
    if len(word) <= 3:
        return word
    result: str = STEMMER.stemWord(word)
    return result


def norm_code(span: str) -> str:
    """A code span as a value: whitespace collapsed, trailing `()` and `/` kept apart."""
    return "`" + " ".join(span.split()) + "`"


@dataclass(frozen=True)
class Clause:
    frame: frozenset[str]  # stemmed content words, antonyms read as their base word
    values: frozenset[str]  # code spans, numbers, quoted strings, URLs, paths, proper names
    negated: bool  # an odd number of negations/antonyms
    words: frozenset[str] = frozenset()  # frame and values with the subject's words kept
    numbers: frozenset[tuple[str, str]] = frozenset()  # (number, unit): "30 seconds", "Python 3.12"


@dataclass(frozen=True)
class Reading:
    """A fact read for comparison (subject words are left to `subject_stems`)."""

    stems: frozenset[str]  # every content stem and value (for similarity)
    values: frozenset[str]
    negated: bool
    clauses: tuple[Clause, ...]

    @classmethod
    def of(cls, clauses: tuple[Clause, ...]) -> Reading:
        """The reading its clauses make: their frames and values, and the polarity."""
        frames: set[str] = set()
        values: set[str] = set()
        negated = False
        for clause in clauses:
            frames |= clause.frame
            values |= clause.values
            negated ^= clause.negated
        return cls(frozenset(frames | values), frozenset(values), negated, clauses)

    @cached_property
    def flat_values(self) -> frozenset[str]:
        """The values with each code span read as its words and numbers: `useRef` and
        useRef, `npm install --legacy-peer-deps` and the same words unquoted, compare
        alike (what `compare.duplicate_across` uses; contradictions keep whole spans)."""
        out: set[str] = set()
        for value in self.values:
            out |= span_tokens(value) if value.startswith("`") else {value}
        return frozenset(out)

    @cached_property
    def flat_stems(self) -> frozenset[str]:
        """The stems with each code span read as the stems of its words."""
        out: set[str] = set()
        for item in self.stems:
            if item.startswith("`"):
                for word in _WORD.findall(item.lower()):
                    out.update(_word_stems(word))
            else:
                out.add(item)
        return frozenset(out)

    def with_subject_words(self) -> Reading:
        """The reading as if no subject had been given: every content word in the frames
        (a proper name the subject names reads as a frame word, not a value)."""
        return Reading.of(
            tuple(
                Clause(c.words - c.values, c.values, c.negated, c.words, c.numbers)
                for c in self.clauses
            )
        )

    def to_data(self) -> list[Any]:
        """The clauses as JSON data (what the audit's cache keeps)."""
        return [
            [sorted(c.frame), sorted(c.values), c.negated, sorted(c.words), sorted(c.numbers)]
            for c in self.clauses
        ]

    @classmethod
    def from_data(cls, data: list[Any]) -> Reading:
        return cls.of(
            tuple(
                Clause(
                    frozenset(frame),
                    frozenset(values),
                    bool(negated),
                    frozenset(words),
                    frozenset((n, u) for n, u in numbers),
                )
                for frame, values, negated, words, numbers in data
            )
        )


_SPAN_TOKEN = re.compile(r"[a-z0-9][a-z0-9_.]*")


@lru_cache(maxsize=65536)
def span_tokens(span: str) -> frozenset[str]:
    """The words and numbers of a code span, lower case, stopwords left out."""
    found = (t.rstrip(".") for t in _SPAN_TOKEN.findall(span.lower()))
    return frozenset(t for t in found if t and t not in STOPWORDS)


def _protect(text: str) -> tuple[str, list[str]]:
    """Replace code spans, URLs and quoted strings with placeholders (so clause splitting and
    word reading do not break them) and return them as values."""
    found: list[str] = []

    def keep(value: str) -> str:
        found.append(value)
        return f" \x00{len(found) - 1}\x00 "

    text = _CODE.sub(lambda m: keep(norm_code(m.group(1))), text)
    text = _URL.sub(lambda m: keep(m.group(0).rstrip(".,;:").lower()), text)
    text = _QUOTED.sub(lambda m: keep('"' + m.group(1).strip().lower() + '"'), text)
    return text, found


@lru_cache(maxsize=65536)
def _word_stems(lower: str) -> tuple[str, ...]:
    """Stems of one lower-case word: synonyms read as one, a hyphenated word as its parts
    ("slow-marked" -> "slow", "mark"; "e-mail" -> "mail"). Kept per word: a store's facts
    repeat their words."""
    if "-" not in lower:  # most words: one part
        part = lower.strip("'")
        if len(part) < 2 or part in STOPWORDS:
            return ()
        return (stem(SYNONYMS.get(part, part)),)
    out = []
    for part in lower.split("-"):
        part = part.strip("'")
        if len(part) < 2 or part in STOPWORDS:
            continue
        out.append(stem(SYNONYMS.get(part, part)))
    return tuple(out)


def _clause_tokens(text: str, protected: list[str]) -> list[tuple[str, str]]:
    """(kind, text) of each token of a clause, kind value | num | word: placeholders and
    paths naming a file or of three parts (`public/assets/images`) are values, times and
    numbers are numbers, other paths (`and/or`, `frontend/backend`) are words."""
    tokens: list[tuple[str, str]] = []
    for placeholder, idx, path, time, num, word in _TOKEN.findall(text):  # one group is set
        if word:
            tokens.append(("word", word))
        elif placeholder:
            tokens.append(("value", protected[int(idx)]))
        elif path:
            last = path.rsplit("/", 1)[-1]
            if (
                "." in last
                or path.endswith("/")
                or path.count("/") >= 2
                or any(c.isdigit() for c in last)
            ):
                tokens.append(("value", path.lower()))
            else:
                tokens += [("word", w) for w in _WORD.findall(path)]
        else:
            tokens.append(("num", (time or num).lower().replace(",", "")))
    return tokens


def _lower_at(tokens: list[tuple[str, str]], i: int) -> str:
    return tokens[i][1].lower() if 0 <= i < len(tokens) else ""


# the words `_negates` may find negating: any other word never is
_NEGATING = NEGATIONS | {"instead", "rather", "out"}


def _negates(lower: str, tokens: list[tuple[str, str]], i: int) -> bool:
    """A word that negates what follows it: "not", "never" ("never X" reads as "not
    (always) X"; "always" is a stopword), "instead of X" and "rather than X" (which deny X,
    a clause of their own), "leaves out X" (omits X, like "skips X")."""
    if lower in NEGATIONS:
        return True
    if lower in ("instead", "rather") and _lower_at(tokens, i + 1) in ("of", "than"):
        return True
    return lower == "out" and i > 0 and _lower_at(tokens, i - 1) in ("leave", "leaves", "left")


def _antonym_base(lower: str, tokens: list[tuple[str, str]], i: int) -> str | None:
    """The word an antonym denies ("disabled": "enabled"), or None where it denies
    nothing: "off" only as a state ("is off", not "cut off"), a participle standing before
    a noun only after a state verb ("failed jobs" says which jobs)."""
    base = ANTONYMS.get(lower)
    if base is None:
        return None
    prev = _lower_at(tokens, i - 1)
    if lower == "off":
        return base if prev in _STATE_VERBS else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if (
        lower in ATTRIBUTIVE
        and prev not in _STATE_VERBS
        and nxt is not None
        and nxt[0] == "word"
        and nxt[1].lower() not in STOPWORDS
        and nxt[1].lower() not in NEGATIONS
    ):
        return None
    return base


@dataclass
class _ClauseReader:
    """One pass over a clause's tokens: what it is about and what it asserts."""

    ignore: frozenset[str]  # the subject's words and stems: kept out of the frame
    values: set[str] = field(default_factory=set)
    frame: set[str] = field(default_factory=set)
    words: set[str] = field(default_factory=set)
    unit_at: dict[int, str] = field(default_factory=dict)  # token index -> its unit stem
    negations: int = 0

    def value(self, token: str) -> None:
        self.values.add(token)
        self.words.add(token)

    def word(self, tokens: list[tuple[str, str]], i: int) -> None:
        """A word is a negation, a stopword, a proper name (a value: capitalised or with an
        underscore, past the clause's first word) or content stems (the frame)."""
        token = tokens[i][1]
        lower = folded = token.lower()
        if "'" in lower:
            if lower.endswith("n't"):
                self.negations += 1
                lower = _CONTRACTED.get(lower, lower[:-3])
            lower = lower.strip("'").removesuffix("'s")  # "the Dockerfile's base image"
        if lower in _NEGATING and _negates(lower, tokens, i):
            self.negations += 1
            return
        if not lower or lower in STOPWORDS:
            return
        if i > 0 and (token != folded or "_" in token) and len(token) > 1:
            self.value(lower)
            self.unit_at[i] = lower
            return
        base = _antonym_base(lower, tokens, i) if lower in ANTONYMS else None
        if base is not None:
            self.negations += 1
            lower = base
        stems = _word_stems(lower)
        if stems:
            self.unit_at[i] = stems[-1]
        for s in stems:
            self.words.add(s)
            if lower not in self.ignore and s not in self.ignore:
                self.frame.add(s)

    def clause(self, tokens: list[tuple[str, str]]) -> Clause:
        """The clause read; each number is paired with its unit (the content word right
        after it, else right before it)."""
        numbers = set()
        for i, (kind, token) in enumerate(tokens):
            if kind != "num":
                continue
            unit = self.unit_at.get(i + 1) or self.unit_at.get(i - 1)
            if unit is not None:
                numbers.add((token, unit))
        return Clause(
            frozenset(self.frame),
            frozenset(self.values - self.ignore),
            self.negations % 2 == 1,
            frozenset(self.words),
            frozenset(numbers),
        )


def _read_clause(text: str, protected: list[str], ignore: frozenset[str]) -> Clause:
    """One pass over a clause: placeholders, paths and numbers are values; words are
    negations, stopwords, proper names (values) or content stems (the frame). `words` keeps
    the subject's words too."""
    tokens = _clause_tokens(text, protected)
    reader = _ClauseReader(ignore)
    for i, (kind, token) in enumerate(tokens):
        if kind == "word":
            reader.word(tokens, i)
        else:
            reader.value(token)
    return reader.clause(tokens)


@lru_cache(maxsize=65536)
def read_fact(fact: str, subject: str = "") -> Reading:
    """Read `fact`; the words of `subject` are left out of the clause frames."""
    ignore = frozenset(subject_stems(subject)) | frozenset(
        w.lower() for w in _WORD.findall(subject)
    )
    protected_text, protected = _protect(fact)
    pieces = [p for p in _CLAUSE_SPLIT.split(protected_text.strip().rstrip(".")) if p.strip()]
    merged: list[Clause] = []
    for piece in pieces:
        clause = _read_clause(piece, protected, ignore)
        if merged and not clause.words - clause.values:
            # "`ruff` and `mypy`": a piece with no words of its own continues the one before
            prev = merged[-1]
            clause = Clause(
                prev.frame,
                prev.values | clause.values,
                prev.negated != clause.negated,
                prev.words | clause.words,
                prev.numbers | clause.numbers,
            )
            merged[-1] = clause
        else:
            merged.append(clause)
    return Reading.of(tuple(merged) or (Clause(frozenset(), frozenset(), False),))


@lru_cache(maxsize=65536)
def subject_stems(subject: str) -> frozenset[str]:
    """Stemmed content words of a subject: "Running the tests" -> {"run", "test"}."""
    out = set()
    for word in _SUBJECT_WORD.findall(subject.lower()):
        if word not in STOPWORDS:
            out.add(stem(word))
    return frozenset(out)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
