"""User cards: memories about the people orch works for, and the ones a newer card overrules.

A `type: user` memory may carry `person` (who it is about), `relationship` (to the project
or to another person), `backstory` and `observed` (when it was said). Its `subject` is
the preference it states ("indentation", "commit messages"). Two active cards about the
same person and the same preference that say different things contradict each other: the
newer one (by `observed`, else `created`) wins and the audit reports the older one, unless
either card names the other in its `distinct_from` (both hold, for a stated reason).

Checklist C writes cards from what a person said in a task: the task's text and the
notes given with `orch approve --note`, read from the task's event log. Only first-person
statements of how the work should be done become cards ("I prefer tabs", "we always
squash", "please never push to main"); the save exclusions apply as to every candidate,
and statements about the person beyond the work (health, family, beliefs, money, contact
details) are never kept.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from orchestrator.checks.secrets import Patterns
from orchestrator.events.log import read_events
from orchestrator.memory.candidates import Candidate
from orchestrator.store.memfile import Memory
from orchestrator.store.tasks import TaskFolder

_WORD = re.compile(r"[a-z0-9]+")
# words that name the kind of a preference rather than the preference itself
_SLOT_NOISE = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "in",
        "on",
        "to",
        "my",
        "our",
        "their",
        "his",
        "her",
        "style",
        "styles",
        "preference",
        "preferences",
        "choice",
        "choices",
        "setting",
        "settings",
        "convention",
        "conventions",
        "rule",
        "rules",
        "way",
        "ways",
        "favourite",
        "favorite",
        "default",
        "defaults",
        "usual",
    ]
)
_RX = Patterns(  # compiled on first use: the audit reads cards without them
    # first-person statements of how work should be done (the object: group `what`)
    prefers=(
        r"\b(?:i|we)\s+(?:(?:always|usually|now|really|strongly)\s+)?"
        r"(?P<verb>prefer|like|want|use|switched(?:\s+the\s+team)?\s+to|moved\s+to)\s+"
        r"(?P<what>[^.;!?\n]{2,120})",
        re.I,
    ),
    always=(
        r"\b(?:please\s+)?(?P<verb>always|never)\s+(?P<what>(?:use|write|run|commit|push|"
        r"add|keep|put|name|format|squash|rebase|merge)\b[^.;!?\n]{2,120})",
        re.I,
    ),
    dislikes=(
        r"\b(?:i|we)\s+(?P<verb>don't|do not|never)\s+(?:like|want|use)\s+"
        r"(?P<what>[^.;!?\n]{2,120})",
        re.I,
    ),
    # what a person says about themselves that is not about the work: never kept
    personal=(
        r"\b(?:health|sick|illness|diagnos\w*|pregnan\w*|therap\w*|medicat\w*|family|wife|"
        r"husband|partner|child(?:ren)?|kids?|divorce|religio\w*|church|pray\w*|politic\w*|"
        r"vot(?:e|ed|ing)|salary|debt|loan|money|address|phone|birthday|age|born)\b",
        re.I,
    ),
)
# a small table of preference slots whose values people name without naming the slot
_SLOTS = {
    "indentation": {"tab", "tabs", "space", "spaces", "indent", "indentation"},
    "quotes": {"single-quote", "double-quote", "quote", "quotes"},
    "line length": {"line-length", "columns", "characters"},
    "merging": {"squash", "rebase", "merge", "merges", "merging"},
    "test runner": {"pytest", "unittest", "nose", "jest", "vitest", "mocha"},
    "formatter": {"black", "ruff", "prettier", "yapf", "gofmt", "rustfmt"},
    "package manager": {"npm", "pnpm", "yarn", "bun", "pip", "uv", "poetry"},
}


def slot(subject: str | None) -> frozenset[str]:
    """The preference a subject names, as a set of words without the noise around it."""
    words = frozenset(_WORD.findall((subject or "").lower())) - _SLOT_NOISE
    for name, values in _SLOTS.items():
        if words & values or words == frozenset(name.split()):
            return frozenset(name.split())
    return words


def person_key(person: str | None) -> str:
    return " ".join(_WORD.findall((person or "").lower()))


def _same_slot(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a and b) and (a <= b or b <= a)


def _when(memory: Memory) -> str:
    return memory.observed or memory.created or ""


def _distinct(a: Memory, b: Memory) -> bool:
    def names(m: Memory) -> set[str]:
        raw = m.extra.get("distinct_from") or []
        return {str(d.get("name")) for d in raw if isinstance(d, dict)}

    return b.name in names(a) or a.name in names(b)


def _fact_key(memory: Memory) -> tuple[str, ...]:
    return tuple(_WORD.findall(memory.fact.lower()))


@dataclass(frozen=True)
class CardConflict:
    older: Memory
    newer: Memory

    def detail(self) -> str:
        return (
            f"user card about {self.older.person}'s {self.older.subject!r} is overruled by "
            f"the newer {self.newer.name} ({_when(self.newer) or 'undated'}): "
            f"{self.older.fact[:80]!r} vs {self.newer.fact[:80]!r}; supersede the older one"
        )


def card_conflicts(memories: Sequence[Memory]) -> list[CardConflict]:
    """Every active card that a newer active card about the same person and preference
    contradicts (see the module docstring)."""
    cards = [m for m in memories if m.active and m.type == "user" and m.person]
    by_person: dict[str, list[Memory]] = defaultdict(list)
    for card in cards:
        by_person[person_key(card.person)].append(card)
    out = []
    for group in by_person.values():
        group.sort(key=lambda m: (_when(m), m.name))
        for i, older in enumerate(group):
            newer = next(
                (
                    m
                    for m in reversed(group[i + 1 :])
                    if _same_slot(slot(older.subject), slot(m.subject))
                    and _fact_key(m) != _fact_key(older)
                    and not _distinct(older, m)
                ),
                None,
            )
            if newer is not None:
                out.append(CardConflict(older, newer))
    return out


@dataclass(frozen=True)
class Said:
    """Something a person said in a task: the task's text or an approval note."""

    text: str
    at: str
    where: str  # "task" | "approval note"


def said_in(task: TaskFolder) -> list[Said]:
    """The task's text and the approval notes, from its event log, oldest first."""
    out = []
    for event in read_events(task.event_log_path).events:
        if event.event_type != "state_change":
            continue
        p = event.payload
        if p.get("step") == "task_created" and isinstance(p.get("task"), dict):
            text = p["task"].get("text")
            if isinstance(text, str):
                out.append(Said(text, event.ts, "task"))
        elif p.get("step") == "approval_given" and isinstance(p.get("approval"), dict):
            note = p["approval"].get("note")
            if isinstance(note, str) and note.strip():
                out.append(Said(note, event.ts, "approval note"))
    return out


def _subject(what: str) -> str:
    words = [w for w in _WORD.findall(what.lower()) if w not in _SLOT_NOISE]
    for name, values in _SLOTS.items():
        if set(words) & values:
            return name
    return " ".join(words[:3])


def card_candidates(task: TaskFolder, person: str, said: Iterable[Said]) -> list[Candidate]:
    """Checklist C's candidates for user cards: first-person statements of how the work
    should be done, one card each (statements about the person beyond the work dropped)."""
    out = []
    for n, s in enumerate(said, start=1):
        for sentence in re.split(r"(?<=[.!?])\s+|\n", s.text):
            if _RX.personal.search(sentence):
                continue
            for rx in (_RX.prefers, _RX.always, _RX.dislikes):
                match = rx.search(sentence)
                if match is None:
                    continue
                what = match.group("what").strip().rstrip(",")
                verb = match.group("verb").lower()
                fact = f"{person} {_verb_phrase(verb)} {what}."
                out.append(
                    Candidate(
                        source="person",
                        ref=f"{s.where}:{n}",
                        fact=fact,
                        subject=_subject(what),
                        type="user",
                        reason=f"{person} said so ({s.where} of task {task.slug})",
                        card=(
                            ("person", person),
                            ("relationship", "runs orch in this repository"),
                            ("observed", s.at),
                        ),
                    )
                )
                break
    return out


def _verb_phrase(verb: str) -> str:
    if verb in ("always", "never"):
        return f"wants the work to {verb}"
    if verb in ("don't", "do not"):
        return "does not want"
    if verb.startswith(("switched", "moved")):
        return verb
    return {"prefer": "prefers", "like": "likes", "want": "wants", "use": "uses"}.get(verb, verb)
