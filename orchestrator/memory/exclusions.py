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
from dataclasses import dataclass
from functools import lru_cache

from orchestrator.memory.ephemeral import LABELS, ephemeral, may_match, needed_words

KINDS = ("git_history", "ephemeral_task_state", "derivable_from_code")

_SHA = r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b"
_PAST_GIT = (
    r"(?:committed|merged|reverted|rebased|pushed|cherry-picked|cherry picked|squashed|"
    r"force-pushed|landed|amended|tagged)"
)
_GIT_HISTORY = [
    re.compile(rf"\b(?:commit|revision|rev|sha|changeset)\s+`?{_SHA}", re.I),
    re.compile(
        rf"`?{_SHA}`?\s+(?:fixed|fixes|broke|breaks|added|adds|removed|introduced|"
        rf"reverted|reverts|changed|landed|is the|was the)\b",
        re.I,
    ),
    re.compile(rf"\b(?:in|by|since|from|after|before|with)\s+(?:commit\s+)?`?{_SHA}`?", re.I),
    re.compile(rf"\b(?:was|were|got|has been|have been|had been|just)\s+{_PAST_GIT}\b", re.I),
    re.compile(
        rf"(?:`[^`]+`|\b[\w./-]*/[\w./-]+|\b(?:it|this|that))\s+{_PAST_GIT}\s+(?:in|into|onto|to)"
        rf"\s+`?(?:main|master|develop|trunk|origin|upstream)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:commit|merge)\s+messages?\b(?!\s+(?:must|should|follow|format|style|"
        r"convention|template|are\s+(?:written|checked|validated)))",
        re.I,
    ),
    re.compile(
        r"\b(?:pull request|PR|merge request|MR)\s*#\d+\s+(?:was|were|got|has|have|"
        r"[a-z]+ed)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:in|by|via|from|with|after|since)\s+(?:pull request|PR|merge request|MR)\s*#\d+",
        re.I,
    ),
    re.compile(
        r"\b(?:merged|opened|closed|reverted|landed|approved|reviewed)\s+(?:the\s+)?"
        r"(?:pull request|PR|merge request|MR)\s*#?\d+",
        re.I,
    ),
    re.compile(r"\b(?:closed|fixed|resolved)\s+(?:issue\s+)?#\d+", re.I),
    re.compile(
        rf"\b(?:reverted|reverting|cherry-picked|cherry picked)\s+(?:commit\s+)?`?{_SHA}", re.I
    ),
    re.compile(
        r"\b(?:was|were)\s+(?:fixed|added|removed|introduced|changed|reverted)\s+in\s+"
        r"(?:pull request|PR|merge request|MR|commit)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:the\s+)?(?:last|latest|previous|recent|most recent|first)\s+commits?\b"
        r"(?!\s+(?:must|should|hook))",
        re.I,
    ),
    re.compile(
        r"\bgit\s+(?:log|blame|history|reflog)\s+(?:shows|says|showed|lists|listed)\b", re.I
    ),
    re.compile(
        r"\bbranch\s+`?[\w./-]+`?\s+(?:was|were|has been|got)\s+(?:created|deleted|"
        r"merged|rebased|pushed|renamed)\b",
        re.I,
    ),
]

# A fact that pins a dependency to a revision states configuration, not history.
_PIN = re.compile(
    rf"\b(?:pinned|pins?|locked|vendored|frozen)\s+(?:\w+\s+){{0,3}}?(?:to|at)\s+"
    rf"(?:the\s+)?(?:revision|rev|commit|sha|hash)?\s*`?{_SHA}",
    re.I,
)

_EPHEMERAL = [
    re.compile(
        r"\b(?:passed|failed|finished|completed|succeeded|ran|started|crashed|broke|"
        r"stopped|timed out|went green|went red|merged|deployed|done)\b[^.;]{0,40}?\b(?:at|around)"
        r"\s+\d{1,2}:\d{2}(?::\d{2})?\b",
        re.I,
    ),
    re.compile(
        r"\b(?:iteration|attempt|retry|run)\s+#?\d+\s+(?:passed|failed|succeeded|"
        r"finished|completed|timed out|is done|was done|crashed)\b",
        re.I,
    ),
    # "Iteration 4: tests passed", "In iteration 4 the build failed"
    re.compile(r"^\s*(?:iteration|attempt)\s+#?\d+\s*[:\-–—]", re.I),
    re.compile(
        r"(?:^|\bin\s+|[,;]\s*)(?:iteration|attempt)\s+#?\d+\b(?:`[^`]*`|[^.;`]){0,60}?\b"
        r"(?:passed|failed|succeeded|finished|completed|crashed|is done|was done|left|remaining)\b",
        re.I,
    ),
    # a status stamped with the moment it was true
    re.compile(r"\bas of\s+(?:\d{4}-\d{2}-\d{2}[ T,]+)?\d{1,2}:\d{2}\b", re.I),
    re.compile(
        r"\b(?:phase|step|stage|task)\s+#?\d+\s+(?:(?:is|was|has been)\s+)?(?:passed|"
        r"failed|done|complete|completed|finished|in progress|started|succeeded)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:tests?|build|ci|lint|linter|checks?|suite|pipeline)\s+(?:now\s+)?"
        r"(?:passed|failed|succeeded|went green|went red|(?:is|are)\s+(?:now\s+)?"
        r"(?:passing|failing|green|red|broken)\s+(?:now|again|at the moment|currently|"
        r"after|since))\b",
        re.I,
    ),
    re.compile(
        r"\b(?:file|files|module)\s+`?[\w./-]+`?\s+(?:was|were|has been|have been|got)\s+"
        r"(?:modified|edited|changed|updated|created|deleted|touched|rewritten|renamed)\b",
        re.I,
    ),
    re.compile(
        r"`[^`]+`\s+(?:was|were|has been|have been|got)\s+(?:modified|edited|changed|"
        r"updated|created|deleted|touched|rewritten)\b",
        re.I,
    ),
    re.compile(
        r"^(?:i|we)?\s*(?:just\s+)?(?:modified|edited|changed|updated|touched|"
        r"rewrote|ran|fixed|added|deleted|removed|created)\s+(?:file\s+)?`",
        re.I,
    ),
    re.compile(
        r"\b(?:i|we)\s+(?:just\s+)?(?:modified|edited|changed|updated|touched|rewrote|"
        r"ran|fixed|added|deleted|removed|created|tried|started|finished)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:right now|just now|so far|at the moment|in progress|"
        r"work in progress|this session|this run|earlier today|today|yesterday|"
        r"this morning|this afternoon|tonight|last night)\b(?!['’]s)",
        re.I,
    ),
    re.compile(r"^\s*(?:wip|todo|next step|next up|status|progress)\s*[:\-]", re.I),
    re.compile(
        r"\b\d{1,3}\s*%\s+(?:of\s+[^.;]{1,40}?\s+)?(?:(?:is|was|are|were)\s+)?(?:done|"
        r"complete|completed|finished|migrated|processed|through)\b",
        re.I,
    ),
    re.compile(r"\b(?:still|now)\s+(?:failing|passing|broken|works|working|fails|passes)\b", re.I),
]

_DERIVABLE = [
    re.compile(
        r"`[^`]+`(?:\s+\w+){0,2}\s+(?:is|are)\s+(?:defined|declared|implemented|located|"
        r"found|kept)\s+in\s+(?:the\s+\w+\s+)?`[^`]+`",
        re.I,
    ),
    re.compile(r"`[^`]+`\s+(?:lives|live|sits|resides)\s+in\s+`[^`]+`", re.I),
    re.compile(
        r"`[^`]+`\s+(?:has|contains|is)\s+(?:about\s+|exactly\s+|roughly\s+)?\d+\s+"
        r"(?:lines?|methods?|functions?|classes|arguments?|parameters?|fields?|tests?|"
        r"files?|modules?|imports?)\b(?:\s+long)?",
        re.I,
    ),
    re.compile(
        r"`[^`]+`\s+(?:takes|accepts)\s+(?:\d+|one|two|three|four|five)\s+"
        r"(?:arguments?|parameters?|args?)\b",
        re.I,
    ),
    re.compile(r"`[^`]+`\s+imports\s+`[^`]+`", re.I),
    re.compile(
        r"`[^`]+`\s+(?:defines|contains|declares|exports)\s+(?:(?:the\s+)?(?:functions?|"
        r"classes|class|methods?|types?|constants?)\s+)?`[^`]+`",
        re.I,
    ),
    re.compile(
        r"`[^`]+`\s+(?:is a|is the)\s+(?:subclass|method|function|class)\s+(?:of|in)\s+"
        r"`[^`]+`",
        re.I,
    ),
    re.compile(
        r"\bthere\s+(?:are|is)\s+\d+\s+(?:files?|tests?|functions?|classes|modules?|"
        r"methods?)\s+in\s+`[^`]+`",
        re.I,
    ),
    re.compile(r"`[^`]+`\s+(?:returns|yields)\s+(?:an?\s+)?`[^`]+`\s*\.?$", re.I),
]
# A derivable statement that carries a rule, a reason or a consequence is more than the code.
_CARRIES_MORE = re.compile(
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
_HEX = re.compile(r"\b[0-9a-f]{7,40}\b")
Rules = list[tuple[re.Pattern[str], frozenset[str] | None]]


def _with_needs(rules: list[re.Pattern[str]]) -> Rules:
    """Each rule with the words one of which its every match holds in an ASCII text
    lowered (`ephemeral.needed_words`; None: no such words)."""
    return [(rx, needed_words(rx.pattern)) for rx in rules]


# a fact holding none of a rule's words skips that rule's scan (the costly step)
_GIT_RULES = _with_needs(_GIT_HISTORY)
_EPHEMERAL_RULES = _with_needs(_EPHEMERAL)
_DERIVABLE_RULES = _with_needs(_DERIVABLE)


def _may_match(rules: Rules, screen: str | None) -> list[re.Pattern[str]]:
    """The rules a match of which the text may hold, in order (`screen`: the text lowered,
    None when it is not ASCII; see `ephemeral.may_match`)."""
    return [rx for rx, words in rules if may_match(screen, words)]


@lru_cache(maxsize=65536)
def excluded(fact: str, subject: str = "") -> Exclusion | None:
    """The save exclusion `fact` (filed under `subject`) falls under, or None when it may
    be saved. Ephemeral task state is recognised as a class (see `ephemeral`)."""
    text = " ".join(fact.split())
    if not text:
        return None
    low = f" {text.lower()} "
    screen = low if text.isascii() else None  # padded, as the hints read it
    if any(h in low for h in _GIT_HINTS) or _HEX.search(low):
        pins = {m.group(0).rsplit(None, 1)[-1].strip("`") for m in _PIN.finditer(text)}
        for rx in _may_match(_GIT_RULES, screen):
            for found in rx.finditer(text):
                if pins and any(pin in found.group(0) for pin in pins):
                    continue  # "pinned to revision 9c1e5f7": configuration
                return Exclusion("git_history", found.group(0).strip())
    if any(h in low for h in _EPHEMERAL_HINTS):
        for rx in _may_match(_EPHEMERAL_RULES, screen):
            match = rx.search(text)
            if match:
                return Exclusion("ephemeral_task_state", match.group(0).strip())
    state = ephemeral(text, subject)
    if state is not None:
        return Exclusion("ephemeral_task_state", state.evidence, state.cls)
    if "`" in text:
        for rx in _may_match(_DERIVABLE_RULES, screen):
            match = rx.search(text)
            if match and not _CARRIES_MORE.search(text):
                return Exclusion("derivable_from_code", match.group(0).strip())
    return None


# Gate notes: what a gate did in one run of a task. A gate is named by orch's gate words
# (`tests_pass`, `PHASE_REVIEW_GATE`) or by what gates run (tests, lint, build, type
# checks, CI, the review); its outcome is told in the past tense or as a verdict.
_GATE_NAME = re.compile(
    r"\b(?:gates?|tests?|test suite|suite|lint(?:er|ing)?|ruff|mypy|type ?checks?|build|ci|"
    r"checks?|review|tests_pass|lint_clean|schema_valid|safety_clear|"
    r"human_approved_if_required|[A-Z]+(?:_[A-Z]+)*_GATE)\b",
    re.I,
)
_GATE_OUTCOME = re.compile(
    r"\b(?:passed|failed|fixed|succeeded|ran|retried|went (?:green|red)|"
    r"(?:after|on) (?:the|a|one) (?:retry|second attempt|first attempt)|once|twice|"
    r"(?:is|are) (?:now )?(?:green|red|passing|failing))\b",
    re.I,
)
_GATE_VERDICT = re.compile(r"\b(?:PASS|FAIL|NOT_RUN|SKIPPED|GO|BLOCKED)\b")  # as orch writes them
# a note that says why, or how to work, is a lesson about the gate, not its run
_GATE_LESSON = re.compile(
    r"\b(?:because|since|so that|unless|when|whenever|if|must|should|always|never|"
    r"needs?|requires?|otherwise|to avoid|to keep|run with|set)\b",
    re.I,
)


def gate_note(fact: str) -> bool:
    """A note of what a gate did in one run ("tests passed after the retry", "gate
    lint_clean failed once", "lint was fixed in phase 2", orch's own "phase 1: tests_pass:
    PASS"): it names a gate and an outcome, gives no reason or rule, and is no record of git
    history. Ephemeral task state that Checklist C drops without a decision (see
    docs/memory.md)."""
    text = " ".join(fact.split())
    if not text or not _GATE_NAME.search(text) or _GATE_LESSON.search(text):
        return False
    if not (_GATE_OUTCOME.search(text) or _GATE_VERDICT.search(text)):
        return False
    found = excluded(text)
    return found is None or found.kind != "git_history"  # a commit's record has its own
