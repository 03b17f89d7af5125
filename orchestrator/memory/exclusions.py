"""Save exclusions: what never belongs in `memories/repo/`.

- `git_history`: records of what happened in git (commit ids, merges, reverts, pull
  requests, commit messages). Git keeps them; a memory would only go stale. A dependency
  pinned to a revision ("pinned to revision 9c1e5f7") is configuration, not history.
- `ephemeral_task_state`: the state of one run ("iteration 3 passed at 14:32", "file X
  modified", "phase 2 is done", "currently working on...").
- `derivable_from_code`: what reading the code tells anyone (where a symbol is defined,
  how many lines or methods a file has, what a module imports), stated with no reason,
  rule or consequence that the code does not carry.

The test reads the fact (a memory's first paragraph, or a candidate's text). It looks for
statements *about* these things, not words: "Run `pre-commit` before committing" and
"Feature branches are rebased on `main` before review" are durable rules, not git history;
"The cache is rebuilt when `config.toml` is modified" is not a record of a modification.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass
from functools import lru_cache

from orchestrator.checks.secrets import Patterns
from orchestrator.memory.ephemeral import FACT_SOURCES, LABELS, Screen, defines_states, screened

KINDS = ("git_history", "ephemeral_task_state", "derivable_from_code")

_SHA = r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b"
_PAST_GIT = (
    r"(?:committed|merged|reverted|rebased|pushed|cherry-picked|cherry picked|squashed|"
    r"force-pushed|landed|amended|tagged)"
)
_GIT_HISTORY = [
    rf"\b(?:commit|revision|rev|sha|changeset)\s+`?{_SHA}",
    rf"`?{_SHA}`?\s+(?:fixed|fixes|broke|breaks|added|adds|removed|introduced|"
    rf"reverted|reverts|changed|landed|is the|was the)\b",
    rf"\b(?:in|by|since|from|after|before|with)\s+(?:commit\s+)?`?{_SHA}`?",
    rf"\b(?:was|were|got|has been|have been|had been|just)\s+{_PAST_GIT}\b",
    rf"(?:`[^`]+`|\b[\w./-]*/[\w./-]+|\b(?:it|this|that))\s+{_PAST_GIT}\s+(?:in|into|onto|to)"
    rf"\s+`?(?:main|master|develop|trunk|origin|upstream)\b",
    r"\b(?:commit|merge)\s+messages?\b(?!\s+(?:must|should|follow|format|style|"
    r"convention|template|are\s+(?:written|checked|validated)))",
    r"\b(?:pull request|PR|merge request|MR)\s*#\d+\s+(?:was|were|got|has|have|"
    r"[a-z]+ed)\b",
    r"\b(?:in|by|via|from|with|after|since)\s+(?:pull request|PR|merge request|MR)\s*#\d+",
    r"\b(?:merged|opened|closed|reverted|landed|approved|reviewed)\s+(?:the\s+)?"
    r"(?:pull request|PR|merge request|MR)\s*#?\d+",
    r"\b(?:closed|fixed|resolved)\s+(?:issue\s+)?#\d+",
    rf"\b(?:reverted|reverting|cherry-picked|cherry picked)\s+(?:commit\s+)?`?{_SHA}",
    r"\b(?:was|were)\s+(?:fixed|added|removed|introduced|changed|reverted)\s+in\s+"
    r"(?:pull request|PR|merge request|MR|commit)\b",
    r"\b(?:the\s+)?(?:last|latest|previous|recent|most recent|first)\s+commits?\b"
    r"(?!\s+(?:must|should|hook))",
    r"\bgit\s+(?:log|blame|history|reflog)\s+(?:shows|says|showed|lists|listed)\b",
    r"\bbranch\s+`?[\w./-]+`?\s+(?:was|were|has been|got)\s+(?:created|deleted|"
    r"merged|rebased|pushed|renamed)\b",
]

# A fact that pins a dependency to a revision states configuration, not history.
_PIN = (
    rf"\b(?:pinned|pins?|locked|vendored|frozen)\s+(?:\w+\s+){{0,3}}?(?:to|at)\s+"
    rf"(?:the\s+)?(?:revision|rev|commit|sha|hash)?\s*`?{_SHA}",
    re.I,
)

_EPHEMERAL = [
    r"\b(?:passed|failed|finished|completed|succeeded|ran|started|crashed|broke|"
    r"stopped|timed out|went green|went red|merged|deployed|done)\b[^.;]{0,40}?\b(?:at|around)"
    r"\s+\d{1,2}:\d{2}(?::\d{2})?\b",
    r"\b(?:iteration|attempt|retry|run)\s+#?\d+\s+(?:passed|failed|succeeded|"
    r"finished|completed|timed out|is done|was done|crashed)\b",
    # "Iteration 4: tests passed", "In iteration 4 the build failed"
    r"^\s*(?:iteration|attempt)\s+#?\d+\s*[:\-–—]",
    r"(?:^|\bin\s+|[,;]\s*)(?:iteration|attempt)\s+#?\d+\b(?:`[^`]*`|[^.;`]){0,60}?\b"
    r"(?:passed|failed|succeeded|finished|completed|crashed|is done|was done|left|remaining)\b",
    # a status stamped with the moment it was true
    r"\bas of\s+(?:\d{4}-\d{2}-\d{2}[ T,]+)?\d{1,2}:\d{2}\b",
    r"\b(?:phase|step|stage|task)\s+#?\d+\s+(?:(?:is|was|has been)\s+)?(?:passed|"
    r"failed|done|complete|completed|finished|in progress|started|succeeded)\b",
    r"\b(?:tests?|build|ci|lint|linter|checks?|suite|pipeline)\s+(?:now\s+)?"
    r"(?:passed|failed|succeeded|went green|went red|(?:is|are)\s+(?:now\s+)?"
    r"(?:passing|failing|green|red|broken)\s+(?:now|again|at the moment|currently|"
    r"after|since))\b",
    r"\b(?:file|files|module)\s+`?[\w./-]+`?\s+(?:was|were|has been|have been|got)\s+"
    r"(?:modified|edited|changed|updated|created|deleted|touched|rewritten|renamed)\b",
    r"`[^`]+`\s+(?:was|were|has been|have been|got)\s+(?:modified|edited|changed|"
    r"updated|created|deleted|touched|rewritten)\b",
    r"^(?:i|we)?\s*(?:just\s+)?(?:modified|edited|changed|updated|touched|"
    r"rewrote|ran|fixed|added|deleted|removed|created)\s+(?:file\s+)?`",
    r"\b(?:i|we)\s+(?:just\s+)?(?:modified|edited|changed|updated|touched|rewrote|"
    r"ran|fixed|added|deleted|removed|created|tried|started|finished)\b",
    r"\b(?:right now|just now|so far|at the moment|in progress|"
    r"work in progress|this session|this run|earlier today|today|yesterday|"
    r"this morning|this afternoon|tonight|last night)\b(?!['’]s)",
    r"^\s*(?:wip|todo|next step|next up|status|progress)\s*[:\-]",
    r"\b\d{1,3}\s*%\s+(?:of\s+[^.;]{1,40}?\s+)?(?:(?:is|was|are|were)\s+)?(?:done|"
    r"complete|completed|finished|migrated|processed|through)\b",
    r"\b(?:still|now)\s+(?:failing|passing|broken|works|working|fails|passes)\b",
]

_DERIVABLE = [
    r"`[^`]+`(?:\s+\w+){0,2}\s+(?:is|are)\s+(?:defined|declared|implemented|located|"
    r"found|kept)\s+in\s+(?:the\s+\w+\s+)?`[^`]+`",
    r"`[^`]+`\s+(?:lives|live|sits|resides)\s+in\s+`[^`]+`",
    r"`[^`]+`\s+(?:has|contains|is)\s+(?:about\s+|exactly\s+|roughly\s+)?\d+\s+"
    r"(?:lines?|methods?|functions?|classes|arguments?|parameters?|fields?|tests?|"
    r"files?|modules?|imports?)\b(?:\s+long)?",
    r"`[^`]+`\s+(?:takes|accepts)\s+(?:\d+|one|two|three|four|five)\s+"
    r"(?:arguments?|parameters?|args?)\b",
    r"`[^`]+`\s+imports\s+`[^`]+`",
    r"`[^`]+`\s+(?:defines|contains|declares|exports)\s+(?:(?:the\s+)?(?:functions?|"
    r"classes|class|methods?|types?|constants?)\s+)?`[^`]+`",
    r"`[^`]+`\s+(?:is a|is the)\s+(?:subclass|method|function|class)\s+(?:of|in)\s+"
    r"`[^`]+`",
    r"\bthere\s+(?:are|is)\s+\d+\s+(?:files?|tests?|functions?|classes|modules?|"
    r"methods?)\s+in\s+`[^`]+`",
    r"`[^`]+`\s+(?:returns|yields)\s+(?:an?\s+)?`[^`]+`\s*\.?$",
]
# A derivable statement that carries a rule, a reason or a consequence is more than the code.
_CARRIES_MORE = (
    r"\b(?:because|since|so that|must|never|always|should|do not|don't|avoid|to keep|"
    r"to prevent|to avoid|otherwise|required|careful|note that|important|instead|unless|"
    r"only|why|breaks|break|slow|fast|safe|unsafe|expensive|cheap|prefer|rather than|"
    r"deliberately|intentionally|on purpose|workaround|caveat|gotcha)\b",
    re.I,
)


@dataclass(frozen=True)
class Exclusion:
    kind: str  # one of KINDS
    evidence: str  # the words that matched
    cls: str = ""  # for ephemeral task state: its class (see `ephemeral.CLASSES`)

    def reason(self) -> str:
        what = {
            "git_history": "git history (git keeps it)",
            "ephemeral_task_state": "ephemeral task state (true for one run only)",
            "derivable_from_code": "state derivable from the code (reading the code tells it)",
        }[self.kind]
        if self.cls:
            what += f", {LABELS[self.cls]}"
        return f"{what}: {self.evidence!r}"


# Words one of a group's patterns needs (plain substring tests on the lower-cased fact, far
# cheaper than the patterns): a fact without any skips the whole group.
_GIT_HINTS = (
    "commit", "merg", "revert", "rebas", "push", "cherry", "squash", "landed", "amend",
    "tagged", "revision", "rev ", "sha", "changeset", "pr ", "pr#", "pull request", "mr ",
    "git", "branch", "#",
)  # fmt: skip
_EPHEMERAL_HINTS = (
    ":", "%", "iteration", "attempt", "retry", "run", "phase", "step", "stage", "task", "pass",
    "fail", "succeed", "green", "red", "broken", "modif", "edit", "chang", "updat", "creat",
    "delet", "touch", "rewr", "renam", " i ", "we ", "ran", "fix", "add", "remov", "now",
    "progress", "session", "today", "yesterday", "morning", "afternoon", "night", "wip",
    "todo", "next", "status", "still", "so far", "moment", "as of", "done", "complete",
)  # fmt: skip
_HEX = r"\b[0-9a-f]{7,40}\b"

# Every rule with the words one of which its every match holds in an ASCII text lowered
# (`ephemeral.needed_words`): a fact holding none of a rule's words skips that rule's scan,
# the costly step. One screen reads a fact for all three groups and the rules of
# `ephemeral` at once.
_SCREEN = Screen((*_GIT_HISTORY, *_EPHEMERAL, *_DERIVABLE, *FACT_SOURCES))
_GIT_AT = range(len(_GIT_HISTORY))
_EPHEMERAL_AT = range(_GIT_AT.stop, _GIT_AT.stop + len(_EPHEMERAL))
_DERIVABLE_AT = range(_EPHEMERAL_AT.stop, _EPHEMERAL_AT.stop + len(_DERIVABLE))
_FACT_AT = range(_DERIVABLE_AT.stop, len(_SCREEN))


@lru_cache(maxsize=65536)
def excluded(fact: str, subject: str = "") -> Exclusion | None:
    """The save exclusion `fact` (filed under `subject`) falls under, or None when it may
    be saved. Ephemeral task state is recognised as a class (see `ephemeral`)."""
    text = " ".join(fact.split())
    if not text:
        return None
    low = f" {text.lower()} "
    screen = low if text.isascii() else None  # padded, as the hints read it
    possible = _SCREEN.possible(screen)
    git = [_SCREEN[i] for i in _GIT_AT if i in possible]
    if git and (any(h in low for h in _GIT_HINTS) or _RX.hex.search(low)):
        pins = {m.group(0).rsplit(None, 1)[-1].strip("`") for m in _RX.pin.finditer(text)}
        for rx in git:
            for found in rx.finditer(text):
                if pins and any(pin in found.group(0) for pin in pins):
                    continue  # "pinned to revision 9c1e5f7": configuration
                return Exclusion("git_history", found.group(0).strip())
    said = _said_of_one_run(text, low, subject, possible)
    if said is not None:
        return said
    state = screened(text, subject, [i - _FACT_AT.start for i in _FACT_AT if i in possible])
    if state is not None:
        return Exclusion("ephemeral_task_state", state.evidence, state.cls)
    if "`" in text:
        for i in _DERIVABLE_AT:
            match = _SCREEN[i].search(text) if i in possible else None
            if match and not _RX.carries_more.search(text):
                return Exclusion("derivable_from_code", match.group(0).strip())
    return None


def _said_of_one_run(
    text: str, low: str, subject: str, possible: Container[int]
) -> Exclusion | None:
    """The words of `text` (`low`: lowered and padded) that tie it to one run or moment,
    by the general rules of task state; none under a heading that defines states."""
    rules = [_SCREEN[i] for i in _EPHEMERAL_AT if i in possible]
    if not rules or not any(h in low for h in _EPHEMERAL_HINTS) or defines_states(subject):
        return None
    for rx in rules:
        match = rx.search(text)
        if match:
            return Exclusion("ephemeral_task_state", match.group(0).strip())
    return None


# Gate notes: what a gate did in one run of a task. A gate is named by orch's gate words
# (`tests_pass`, `PHASE_REVIEW_GATE`) or by what gates run (tests, lint, build, type
# checks, CI, the review); its outcome is told in the past tense or as a verdict.
_GATE_NAME = (
    r"\b(?:gates?|tests?|test suite|suite|lint(?:er|ing)?|ruff|mypy|type ?checks?|build|ci|"
    r"checks?|review|tests_pass|lint_clean|schema_valid|safety_clear|"
    r"human_approved_if_required|[A-Z]+(?:_[A-Z]+)*_GATE)\b",
    re.I,
)
_GATE_OUTCOME = (
    r"\b(?:passed|failed|fixed|succeeded|ran|retried|went (?:green|red)|"
    r"(?:after|on) (?:the|a|one) (?:retry|second attempt|first attempt)|once|twice|"
    r"(?:is|are) (?:now )?(?:green|red|passing|failing))\b",
    re.I,
)
_GATE_VERDICT = r"\b(?:PASS|FAIL|NOT_RUN|SKIPPED|GO|BLOCKED)\b"  # as orch writes them
# a note that says why, or how to work, is a lesson about the gate, not its run
_GATE_LESSON = (
    r"\b(?:because|since|so that|unless|when|whenever|if|must|should|always|never|"
    r"needs?|requires?|otherwise|to avoid|to keep|run with|set)\b",
    re.I,
)


_RX = Patterns(
    pin=_PIN,
    carries_more=_CARRIES_MORE,
    hex=_HEX,
    gate_name=_GATE_NAME,
    gate_outcome=_GATE_OUTCOME,
    gate_verdict=_GATE_VERDICT,
    gate_lesson=_GATE_LESSON,
)


def gate_note(fact: str) -> bool:
    """A note of what a gate did in one run ("tests passed after the retry", "gate
    lint_clean failed once", "lint was fixed in phase 2", orch's own "phase 1: tests_pass:
    PASS"): it names a gate and an outcome, gives no reason or rule, and is no record of git
    history. Ephemeral task state that Checklist C drops without a decision (see
    docs/memory.md)."""
    text = " ".join(fact.split())
    if not text or not _RX.gate_name.search(text) or _RX.gate_lesson.search(text):
        return False
    if not (_RX.gate_outcome.search(text) or _RX.gate_verdict.search(text)):
        return False
    found = excluded(text)
    return found is None or found.kind != "git_history"  # a commit's record has its own
