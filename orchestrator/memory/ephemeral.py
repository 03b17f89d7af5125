"""Ephemeral task state as classes: what one task, run or session did, is doing or will do.

The rule of promotion keeps these in the task folder; in repo memory the audit reports
them with their class. Each class is recognised by the fact's own words, or by the
heading (subject) it was filed under when the heading names the class outright ("Next
Steps", "Completed", "Current Focus", "Recent Changes", "Current Status", "What's Left to
Build", "Current Considerations", "Evolution of Project Decisions", and wish lists:
"Nice to Have", "Future Considerations", "Feature Expansion", "Ideas"; finished lists and
stamped outcomes: "Completed Screens", "Rate Feed Rework - DONE"; plans: "(Priority: High)",
"(Weeks 3-4)", "(Next Month)", "(Next Session)", "Immediate (Current Session)", "Design
Questions", "Ledger Enhancements", "Technical Gaps", "Next Actions", "Questions to Address",
"Phase 2: Exports (Next)", "Release Stages (Anticipated)", a weekday; progress: "Ledger
Import (Stage 1 Complete)", "Stage 2 Progress", "Overall Status", "Recent Progress", "(Not
Yet Created)"; a horizon alone: "Short Term"; a numbered phase of a plan ("Phase 3: Ledger
Grid") or a day's ("Day 3-4: Reports") when the fact's own words name no class; fixes
made: "Login Form Fixes"; accounts: "Recent Accomplishments", "Team Invites Consolidated";
a log's dated entry of a fix, an upgrade or a release: "[2031-05-02] Rate Cache Hotfix
(v1.4.1)"); never under a legend of marks ("Status Legend"). A neutral heading
("Logging Pattern", "Known Issues", "Current State") never makes a fact ephemeral by
itself. Under a heading that lists problems ("Design Challenges", "Risks") a fact led by
a gerund names a problem ("Balancing speed vs. accuracy"), not work under way.

- `change_account`: what was added, replaced, fixed, moved or removed, in any verb of
  change in the past tense at the head of the fact ("Replaced SerpAPI with a scraper",
  "`X` collapsed into `y()`", "... — now collected into ...", after a log's stamp:
  "[2031-05-02] - Rewrote ..."), or "Previously"/"Originally", "previously had ...", "have
  been rewritten".
  A past participle used as a description ("Built with Vite", "Configured via env vars"),
  a present passive ("Files are moved to `archive/`") and a short phrase naming a quality
  under a pattern's heading ("Centralized error logging") are not accounts.
- `progress_status`: done, complete, check marks (at the head or the end of the fact),
  a bold label's percentage ("**Backend**: 100% - ..."), "feature-complete", "is ready
  for use", "All 57 checks pass", "Status: ...", "**Status:** Done",
  "40% complete", what is built so far and what not yet ("not yet implemented", "in place,
  but ...", "(UI only)", "a placeholder"), the stage a project is in ("in the early
  prototype phase"), ready for the next work ("Ready to begin ...", "**Staging**: Ready for
  the first deploy"), "**Actual Effort**: 3 hours"; not inside a condition ("close a
  ticket once all its subtasks are complete": a rule's trigger).
- `todo_next`: unchecked boxes and crosses (❌ not done; not "❌ Don't ..."), to-dos, next
  steps, "Need for ...", "Decision needed", "to be determined", "to be documented",
  "deferred", "(planned)", "needs to be defined", "could benefit from ...", options
  still to consider ("consider adding ...").
- `in_progress`: "currently working on / being considered", "Evaluating ...", sprint goals.
- `session_summary`: what one session or run did or found ("Key achievement", "the most
  recent development", an "Example:" told in the past tense).
- `dated_status`: a state stamped with its date ("Last updated: 2031-03-14", "Completion
  date", "Created on 17.09.2030", a log's line stamped to the minute: "2031-05-02
  09:15:00 - Initial notes created").
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import groupby
from re import _constants as sre  # type: ignore[attr-defined]  # parsed patterns: `needed_words`
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

from orchestrator.checks.secrets import Patterns

CLASSES = (
    "change_account",
    "progress_status",
    "todo_next",
    "in_progress",
    "session_summary",
    "dated_status",
)

LABELS = {
    "change_account": "an account of a change",
    "progress_status": "progress or status",
    "todo_next": "a to-do or next step",
    "in_progress": "work in progress",
    "session_summary": "what one session or run did",
    "dated_status": "a status stamped with its date",
}


@dataclass(frozen=True)
class Ephemeral:
    cls: str  # one of CLASSES
    evidence: str  # the words that matched, or the heading


# a calendar date: "2031-05-02", "May 2, 2031", "May 2031"
_DATE = (
    r"(?:\b\d{4}-\d\d-\d\d\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? "
    r"(?:\d{1,2},? )?\d{4}\b)"
)
# a stamp that opens a log's entry: "[2031-05-02 14:03:00] - ", "2031-05-02: "
_STAMP = r"(?:\[?\d{4}-\d\d-\d\d(?:[ T]\d\d?:\d\d(?::\d\d)?)?\]?\s*[-\u2013\u2014:]?\s*)?"

# Headings that name a class outright: every fact filed under one belongs to it.
_HEADINGS: tuple[tuple[str, str], ...] = (
    (
        "todo_next",
        r"\b(?:next steps?|next candidates|to-?dos?|to do|ongoing tasks|backlog|roadmap|"
        r"priorities|to consider|to be determined|tbd|gaps|open tasks|"
        r"pending tasks|ready for (?:a )?new task|future work|planned work|"
        r"next (?:milestones?|phases?|tasks?|goals?|iterations?)(?: goals)?|"
        r"immediate (?:tasks|steps|goals|actions)|"
        r"(?:short|long|medium|near)[- ]term (?:goals|plans?|tasks|work|priorities|roadmap|steps)|"
        r"(?:high|medium|low) priority|(?:open|design|pending|unresolved|outstanding) questions|"
        r"under consideration|"
        r"future (?:\w+ )?(?:enhancements|improvements|features|plans|considerations|"
        r"ideas|directions|scope|development|versions?|releases?|phases|milestones|tasks|"
        r"opportunities)|"
        # wish lists: work someone may do one day, not what the project is
        r"feature (?:expansion|requests|ideas|wish ?list)|wish ?list|nice[- ]to[- ]haves?|"
        r"(?:potential|possible|proposed|planned|upcoming) (?:\w+ )?(?:features|improvements|"
        r"enhancements|additions|extensions|changes|fixes|tasks|items|phases|milestones)|"
        r"stretch goals|icebox|parking lot|"
        r"someday|areas for improvement|improvement (?:ideas|opportunities)|"
        r"(?:enhancement|new|product) ideas|what'?s left|what is left|left to (?:build|do)|"
        r"remaining (?:work|tasks|items|steps)|upcoming (?:work|tasks|items|milestones?)|"
        r"actions? needed|(?:decisions?|questions?) (?:pending|to validate|for clarification)|"
        r"next focus|(?:integration|feature|growth) opportunities|"
        r"(?:improvements|enhancements) (?:planned|needed|to make)|next (?:\w+ )?actions?|next up|"
        r"questions? to (?:address|answer|resolve|consider|decide)|"
        r"implementation (?:plan|roadmap|timeline|schedule))\b"
        # a stage marked as the next or as foreseen ("Phase 2: Exports (Next)", "Release
        # Stages (Anticipated)"), and a week's plan by its days
        r"|\((?:next|anticipated|upcoming|planned|future|later|not started|not yet \w+)\)$"
        r"|^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)$"
        r"|^(?:ideas|later|maybe)\b|^immediate(?:\s*\(|$)"
        # a horizon alone, or with its span ("Short Term", "Near Term (2-3 weeks)")
        r"|^(?:short|long|medium|near)[- ]term(?:\s*\([^)]*\))?$"
        r"|\(next (?:\d|month|week|sprint|quarter|release|iteration|session)|\(priority: ?\w+\)|\(weeks? \d+(?:\s*[-\u2013]\s*\d+)?\)"
        r"|\b(?:documentation|testing|refactoring|cleanup|infrastructure|tooling|monitoring) needs$"
        r"|\b(?:verification|assessment|review|work|changes|fixes) needed$"
        r"|(?<!completed )(?<!recent )(?<!implemented )\b(?:improvements|enhancements)$",
    ),
    (
        "progress_status",
        r"^(?:progress|done|completed|status|works)$|\(\d+% complete\)|\b(?:completed (?:steps|tasks|work)|current step|"
        r"(?:current|overall|development|project|implementation|recent) progress|"
        r"progress (?:report|log|update)s?|"
        r"(?:current|project|development|implementation) status(?!\s*[a-z])|"
        r"files (?:modified|created|changed)|quality assurance(?:\s+status)?(?=\s*$)|blockers|what works|"
        r"status report)\b"
        r"|^(?:completed|finished|implemented|done) (?:\w+ )?(?:components|features|items|"
        r"tasks|milestones|modules|pages|screens|endpoints|phases|parts)$"
        r"|\s[-\u2013\u2014:]\s*(?:complete|completed|done|fixed|resolved)$"
        # a stage stamped done ("Ledger Import (Stage 1 Complete)"; not "(Once Complete)")
        r"|\((?![^)]*\b(?:when|once|if|until|after|mark)\b)(?:[^)]*\s)?(?:complete[d]?|done|finished)\)$"
        # a numbered stage's progress and the overall status ("Stage 2 Progress"; not
        # "Upload Progress")
        r"|^(?:phase|stage|sprint|milestone|week|step|iteration) \d+\w* progress$"
        r"|^(?:overall|progress) status$"
        # the state of the whole ("System Health Status") and the stage the project is in
        r"|\bsystem (?:health )?status$|^(?:current )?project (?:stage|phase)$"
        # what was finished, then the word ("Theme Editor Complete"; not "Mark as Complete")
        r"|(?<!\bwhen)(?<!\bonce)(?<!\bif)(?<!\bas)(?<!\bis)(?<!\bare)(?<!\bbe)(?<!\bof)"
        r"(?<!\bmarked)"
        r"\s(?:complete|completed)$"
        r"|\bstatus: ",
    ),
    (
        "in_progress",
        r"\b(?:current focus|sprint goals?|in progress|active work|current work|"
        r"working on|current sprint|current challenges|current considerations|ongoing work|"
        r"(?:primary )?focus areas|(?:active|team|main|primary|immediate) (?:\w+ )?focus|"
        r"current (?:goals?|objectives?|priorities|tasks?)|"
        r"current (?:\w+ )?(?:phase|stage|milestone|iteration))\b"
        # the page of a memory bank that holds the work at hand, by its own title
        r"|^active context$",
    ),
    (
        "change_account",
        r"\b(?:project evolution|evolution of|(?:version|change|decision|release|revision) "
        r"history|recent changes|earlier changes|change ?log(?!\s+\w)|"
        r"corrections applied|what changed|recent updates|changes made|fixes applied|"
        r"(?:major|latest) (?:updates|changes|milestones?)|recent (?:activit(?:y|ies)|milestones?)|"
        r"achievements|accomplishments|recent (?:bug ?)?fixes)\b|\((?:today|yesterday)\)"
        # a list of fixes made ("Login Form Fixes"; not a troubleshooting list: "Common Fixes")
        r"|(?<!\bcommon)(?<!\bknown)(?<!\bquick)(?<!\bsuggested)(?<!\bpossible)\sfixes$"
        # a heading closing on what was done to the part it names ("Team Invites Consolidated";
        # not how it happens: "How the Cache Is Updated")
        r"|(?<!\bis)(?<!\bare)(?<!\bbe)(?<!\bget)(?<!\bgets)\s(?:consolidated|refactored|migrated|rewritten|replaced|removed|simplified|added|"
        r"implemented|updated|upgraded|improved|enhanced|streamlined|introduced)\W*$"
        # an entry of a log, stamped with its date, naming a fix, an upgrade, a release,
        # a version or finished work ("[2031-05-02] Cache Fix (v1.4.1)"); a dated decision
        # or pattern is no account
        rf"|^(?=.*{_DATE})(?!.*\b(?:decisions?|patterns?|adr)\b).*\b(?:fix(?:es)?|hotfix(?:es)?|"
        r"upgrade|release|refactor(?:ing)?|implementation|creation|enhancements?|"
        r"improvements?|planning|complete[d]?|v\d+\.\d+(?:\.\d+)?)\b",
    ),
    (
        "session_summary",
        r"\b(?:session summary|last session|this session)\b|^task\s+[a-z]+-\d+\b",
    ),
)

# verbs of change, in the past tense, that open an account of what was done
_CHANGED = (
    r"(?:added|created|updated|replaced|implemented|migrated|upgraded|downgraded|fixed|"
    r"removed|deleted|refactored|renamed|moved|converted|improved|enhanced|introduced|"
    r"switched|changed|modified|integrated|resolved|rewrote|rewritten|extracted|"
    r"consolidated|simplified|optimi[sz]ed|restructured|reorgani[sz]ed|cleaned up|dropped|"
    r"expanded|extended|eliminated|reduced|increased|tweaked|polished|revised|wired|"
    r"documented|patched|bumped|reverted|restored|re-enabled|separated|decoupled|"
    r"centrali[sz]ed|modulari[sz]ed|unified|standardi[sz]ed|streamlined|collapsed|"
    r"applied|used|built|established|deployed|transitioned|corrected|adjusted|"
    r"enabled|disabled|merged|slimmed|refreshed|hardened|ported|swapped|ensured|prevented|"
    r"developed|analy[sz]ed|outlined|began)(?:/\w+)?"  # "Created/updated the env files"
)
# participles that also describe a noun ("Completed orders are archived", "Verified users
# may post"): an account only when an article or a word of scope follows
_CHANGED_BEFORE_SCOPE = (
    r"(?:completed|verified|identified|confirmed)\s+(?:the|a|an|all|that|each|every|initial|"
    r"critical|key|remaining|existing)\b"
)
# a participle that describes rather than recounts is followed by one of these (or is
# "fixed" before a part of a layout or a price: "Fixed sidebar", "fixed rate")
_DESCRIBING = (
    r"(?:with|on|in|using|for|via|by|to|from|as|into|at|through|under|per|when|if|"
    r"and|or|only|automatically|dynamically|once|here|there|at|"
    r"(?<=fixed )(?:sidebar|header|footer|navbar|toolbar|width|height|size|position|"
    r"layout|columns?|rates?|prices?|costs?|fees?))\b"
)
_GERUND = (
    r"(?:implementing|building|adding|refining|enhancing|improving|optimi[sz]ing|"
    r"expanding|developing|creating|refactoring|migrating|fixing|integrating|"
    r"setting up|working on|rewriting|cleaning up|centrali[sz]ing|standardi[sz]ing|"
    r"ensuring|continuing)"
)
_LEAD = r"^\W{0,6}"  # bullets, bold markers, emoji before the first word
_GERUND_LED = rf"^\W{{0,6}}{_GERUND}\s+(?!{_DESCRIBING})\S"
_WEIGHING = r"^\W{0,4}(?:considering|evaluating|exploring|balancing|investigating)\b"

# a label in bold before the fact proper ("**Search**: ...", "**Audio System**: ...")
_BOLD_LABEL = r"\*\*[^*\n]{1,60}\*\*\s*:?\s*"
_FACT_RULES: tuple[tuple[str, str], ...] = (
    (
        "progress_status",
        r"^\W{0,4}(?:✅|✔|☑|\[x\])"
        # a check mark closing the line marks the item done, unless it marks an example
        # as the right one ("`useX()` - good ✅")
        r"|(?<!\bgood )(?<!\bcorrect )(?<!\bright )(?<!\bdo )(?:✅|✔️?|☑️?)\W{0,3}$"
        # how far along a labelled part is ("**Backend API**: 100% - ...")
        rf"|^\W{{0,4}}{_BOLD_LABEL}[~≈]?\d{{1,3}}\s*%(?!\s*\+)"  # "90%+" is a target
        rf"|^\W{{0,4}}{_BOLD_LABEL}(?:✅|✔|☑)"  # "**Local**: ✅ Fully functional"
        # a labelled part said to be done ("**App Router Integration**: Complete")
        rf"|^\W{{0,4}}{_BOLD_LABEL}(?:[-–—]\s*)?(?:complete|completed|done|finished)\W{{0,3}}$"
        r"|\b(?:configured|set up|up) and running\b"
        # a short item closing on the participle of its work ("Memory bank initialized")
        # (not a passive or a condition: "The cache is never updated", "... once completed")
        r"|^(?!.*\b(?:is|are|was|were|be|been|being|never|not|once|when|until|if|after|before)\b)"
        rf"\W{{0,4}}{_STAMP}(?:[\w./-]+\s){{0,5}}[\w./-]+\s(?:completed|initialized|documented|updated|"
        r"created|implemented|added|configured|fixed|deployed|finished|established|integrated|"
        r"refactored)\W{0,3}$",
    ),
    # a cross marks an item not done, unless it marks a prohibition ("❌ Don't use ...")
    (
        "todo_next",
        r"^\W{0,4}(?:\[ \]|⏭|☐|⬜|(?:❌|✗|✘)(?!\W*(?:don'?t|do not|never|no|not|bad|wrong|"
        r"avoid|incorrect)\b))",
    ),
    (
        "dated_status",
        r"\b(?:last updated|completion date|updated on|created on|initiali[sz]ed on)\b"
        r"|^\W{0,4}\*\*date\*\*\s*:"  # "**Date**: 3 March 2025"
        # a log's line stamped to the minute ("2031-05-02 14:03:00 - Log of updates below")
        r"|\b\d{4}-\d\d-\d\d[ T]\d\d?:\d\d(?::\d\d)?\]?\s*[-\u2013\u2014]\s*"
        r"(?:log of updates|(?:\w+ ){0,3}(?:created|updated|added|made|initiali[sz]ed)\b)",
    ),
    (
        "change_account",
        # (a participle opening a bold label names the part: "**Integrated Modules:** ...")
        rf"{_LEAD}{_STAMP}(?:\w+:\*{{0,2}}\s+|{_BOLD_LABEL})?{_CHANGED}\s+(?!{_DESCRIBING})"
        r"(?![^*\n]{0,40}(?::\*\*|\*\*\s*:))(?=\S)"
        rf"|{_LEAD}(?:{_BOLD_LABEL})?{_CHANGED_BEFORE_SCOPE}"
        rf"|{_LEAD}(?:previously|originally)\b"
        r"|^\W{0,4}(?:improvements|changes|fixes)\W{0,4}:"
        rf"|\b(?:previously|formerly)\s*[:,]|\b(?:previously|formerly) (?:had|was|were|used|did)\b"
        r"|\s[—–-]+\s*(?:now|fixed|restored|rewritten|removed|resolved|wired)\b"
        r"|\b(?:fixed|updated|added|removed|changed|deleted|applied)\s*:"
        r"|\band (?:fixed|resolved|removed|restored)(?=\s*\()"
        # the team's own account ("We've successfully implemented ...")
        rf"|\b(?:successfully|we'?ve|we have)\s+(?:now\s+|successfully\s+)?{_CHANGED}\b"
        r"|\bpivot(?:ed|ing)? (?:away )?from\b"
        # an account in the present perfect ("The loaders have been rewritten around streams")
        r"|\b(?:has|have) been (?:successfully )?(?:refactored|rewritten|replaced|migrated|"
        r"renamed|removed|deleted|restructured|reorgani[sz]ed|consolidated|standardi[sz]ed|"
        r"completed|implemented|added|created|fixed|resolved|integrated)\b"
        # a name said to be another now ("Column `orders.shopId` is now `orders.storeId`")
        r"|`[^`\n]+`\s+(?:is|are) now\s+(?:called\s+|named\s+)?`",
    ),
    (
        "change_account",
        r"\b(?:collapsed|moved|migrated|renamed|converted|replaced|rewritten|slimmed|"
        r"refreshed|updated|upgraded|bumped|evolved|matured|switched|transitioned)\s+(?:into|from|to)\b"
        # where a decision started and how it went ("**Initial**: npm", "**Evolution**: ...")
        r"|^\W{0,4}\*\*(?:initial(?:ly)?|original(?:ly)?|evolution|before|started)\*\*\s*:",
    ),
    (
        "change_account",
        r"\b(?:was|were)\s+(?:silently\s+|never\s+|not\s+)?(?:disabled|ignored|broken|"
        r"swallowed|wiped|failing|crashing|replaced|rewritten|removed)\b",
    ),
    (
        "progress_status",
        r"\b(?:is|are|was|were|now|planning|all \w+)\s+(?:\*\*)?(?:complete|completed|"
        r"done|finished)\b"
        r"|\b(?:complete|done)\s*\(\d+\s*%\)"
        r"|\*\*status(?:\*\*\s*:|:\*\*)|^\W{0,4}status\s*:"
        r"|\ball \d+ tests? pass|\b\d+ (?:tests? )?passed\b|\b\d+/\d+ tests? pass"
        r"|\b(?:tests|checks|specs) (?:are|were) (?:all |now )?(?:passing|green)\b"
        r"|\bproduction-ready\b|\bin a stable state\b"
        r"|\b(?:is|are) now (?:stable|working|implemented|in place|live)\b"
        r"|(?<!\bare )(?<!\bis )(?<!\bbe )\barchived to\b"
        r"|\b\d{1,3}\s*% (?:complete|completion|done)\b"
        r"|\bfeature[- ]complete\b|\b(?:is|are|now) fully (?:functional|operational)\b"
        r"|(?<!\bbe )\bfully (?:functional|operational)\W{0,3}$|\(currently [~≈]?\d{1,3}\s*%\)"
        r"|\b(?:is|are) (?:now )?ready for (?:use|production|release|deployment)\b"
        r"|\bimplemented and working\b"
        # what is left, or not there yet ("(30% Remaining)", "No tests implemented yet",
        # "Frontend error handling not implemented", "validated but processing pending")
        r"|\(\d{1,3}\s*% remaining\)|(?<!\()\bnot implemented\W{0,3}$"
        r"|\b(?:implemented|built|written) yet\b|\bbut (?:\w+ ){0,3}pending\b",
    ),
    # partly built: what is there so far and what is not yet, and the stage the project is in
    (
        "progress_status",
        r"\bnot (?:yet|fully|properly|completely) (?:implemented|integrated|functional|wired|"
        r"connected|begun|deployed|released|tested|started|published|created|running|installed|"
        r"configured|written|built|added|defined|set up|done|merged)\b"
        # part ready, the rest still wanted ("Parser ready, the export writer still needed")
        r"|\b(?:ready|done|complete|in place),\s+(?:\w+ ){0,7}(?:pending|needed|remains?|missing)\b"
        # a count so far under a label of work ("**Statements Imported**: 0")
        r"|\*\*[\w ]{0,40}(?:created|written|implemented|imported|ingested|measured|completed|"
        r"elapsed|remaining|fixed|resolved|added|closed)\*\*\s*:\s*[~≈]?\d"
        r"|\b(?:is|are|currently) non-functional\b"
        r"|(?:\b(?:is|are|currently) |\()(?:visual only|visual-only|ui only|ui-only)\b"
        r"|\bin place(?: \([^)]*\))?,? but\b"
        r"|\b(?:is|are|currently|still) in (?:the |an? )?(?:\w+ ){0,3}?(?:early|initial|conceptual|"
        r"prototype|planning|development|testing|alpha|beta)\b(?: \w+){0,3}? (?:phase|stage)\b"
        r"|^\W{0,4}(?:current )?(?:project phase|project stage)\W{0,4}:|\bnow focusing on\b"
        r"|\b(?:implemented|exists|is|are) (?:only )?as a placeholder\b",
    ),
    # ready for the next piece of work ("Ready to begin the exports", "**Staging**: Ready for
    # the first deploy", "(ready for the first push)"), a check mark before the word of done
    # inside the line, and the effort spent or the files made so far
    (
        "progress_status",
        rf"^\W{{0,4}}(?:{_BOLD_LABEL})?ready (?:to|for)\b|\(ready (?:to|for)\b"
        r"|\bready to (?:begin|start|proceed|continue|move on)\b"
        r"|(?:✅|✔️?)\s*(?:complete|completed|done|finished|fixed|working)\b"
        r"|\*\*(?:files (?:created|modified|changed|added)|lines of code|"
        r"actual (?:effort|time|duration)|completion)(?::\*\*|\*\*\s*:)",
    ),
    (
        "todo_next",
        r"^\W{0,4}(?:need for|needs? to|potential for|todo\b|to do:|next:|decision needed\b|"
        r"to be (?:determined|decided|done|documented|implemented|addressed|added|written|"
        r"defined|confirmed))"
        r"|\bto be (?:determined|defined)\b|\btbd\b|\bdeferred\b|\bstill pending\b"
        r"|\bcould benefit from\b|\bcould be (?:optimi[sz]ed|improved|simplified|refactored)\b"
        r"|^\W{0,4}\*\*future\*\*\s*:"
        # a plan's next phase and its estimate ("**Next Phase**: Exports", "**Estimated
        # Time:** 3 days")
        r"|\*\*(?:next (?:phases?|steps?|milestones?|tasks?)|estimated (?:duration|time|effort))"
        r"(?::\*\*|\*\*\s*:)"
        r"|\bneeds? to be (?:defined|decided|determined|documented|implemented|addressed)\b"
        # work outstanding, closing the fact ("Database schema needs to be created"; not a
        # rule's step: "the token needs to be created before the request")
        r"|\bneeds? to be (?:designed|created|built|set up|configured|written|tested|added|"
        r"updated|fixed|finali[sz]ed|reviewed)\W{0,3}$"
        r"|^\W{0,4}\*\*[\w ]{1,40} needed(?::\*\*|\*\*\s*:)"
        r"|\bnext steps?\b",
    ),
    # a plan labelled as one ("Future enhancement: ...", "**Future solution**: ...")
    (
        "todo_next",
        r"^\W{0,4}future (?:\w+ )?(?:solutions?|enhancements?|work|improvements?|plans?)\b",
    ),
    # work someone expects, hedged or planned ("May need more validation", "**Error
    # Recovery** - Needs more tests", "**UI**: Will update the components")
    (
        "todo_next",
        rf"^\W{{0,4}}(?:{_BOLD_LABEL}(?:[-–—]\s*)?)?(?:(?:may|might|could) (?:need|require)\b"
        r"|needs? more\b|will (?:continue|update|add|implement|create|build|refactor|migrate|"
        r"move|switch|replace|explore|investigate|look into|revisit|rework|extend|expand)\b)",
    ),
    (
        "todo_next",
        r"(?:\(planned\)|\(pending\)|\(not started\))"
        r"|\bconsider (?:implementing|adding|using|switching|moving|consolidating|migrating|"
        r"introducing|creating|replacing|splitting|extracting)\b",
    ),
    ("in_progress", _WEIGHING),
    # the stage now and the one after, by a bold label ("**Current**: review stage",
    # "**Current Mode:** review"; not "**Current Implementation**: ...", a description)
    (
        "in_progress",
        r"^\W{0,4}\*\*current(?: (?:mode|phase|stage|task|focus|sprint|step|milestone|priority|"
        r"goal|objective))?"
        r"(?::\*\*|\*\*\s*:)",
    ),
    ("todo_next", r"^\W{0,4}\*\*next\*\*\s*:"),
    # an hourglass, a loop or a barrier at the head: work still open ("⏳ Cleanup of stale
    # sessions", "🔄 **Rates cached per currency**")
    ("in_progress", r"^\W{0,4}(?:⏳|⌛|🔄|🚧)"),
    (
        "in_progress",
        r"\bcurrently (?:being|working on|focused|focusing|under (?:development|review)|"
        r"in (?:a |the )?(?:stable|early|beta|alpha|development|progress|testing))\b"
        r"|\bthis sprint\b|\bsprint \d+\b|\bnow working on\b|\bin progress\b"
        rf"|^\W{{0,4}}currently (?:{_GERUND}|initializing|testing|debugging|documenting|"
        r"reviewing|updating|writing|investigating)\b",
    ),
    (
        "session_summary",
        r"\bkey achievements?\b|\bmost recent (?:development|work|session|changes)\b"
        r"|\bfirst (?:real )?run\b(?![- ](?:guide|experience|wizard|setup|screen|flow|instructions))"
        r"|\bthis (?:session|run)\b"
        r"|^\W{0,4}example:\s.*\b(?:was|were|didn't|wasn't|weren't|did not|had|used)\b",
    ),
    ("in_progress", _GERUND_LED),
)
# The rules a gerund at the head of a fact satisfies: under a heading that lists problems
# ("Design Challenges", "Risks") a gerund names a problem ("Balancing speed vs. accuracy",
# "Creating a fair scoring"), not work under way.
_GERUND_RULES = frozenset(
    i for i, (_, source) in enumerate(_FACT_RULES) if source in (_WEIGHING, _GERUND_LED)
)


# Classes whose words inside an open condition make a rule's trigger, not a state ("close
# a ticket once its subtasks are complete", "read the notes when you plan the next step")
_CONDITIONED = frozenset({"progress_status", "todo_next"})

_RX = Patterns(
    present_passive=(
        r"\b(?:is|are|be|been|being|get|gets|can be|must be)\s+(?:\w+ly\s+)?"
        r"(?:\w+\s+(?:and|or)\s+)?$",
        re.I,
    ),
    problems=(r"\b(?:challenges|risks|trade-?offs|pitfalls|problems)\b", re.I),
    # headings whose items name qualities of a design: "Error Handling Pattern", "Benefits"
    qualities=(r"\b(?:patterns?|benefits|advantages|principles)\b", re.I),
    # a numbered phase, milestone or sprint of the project's plan ("Phase 3: Ledger Grid"):
    # its facts are work planned or done, whichever their own words do not say
    plan_stage=(r"^(?:phase|milestone|sprint|day|week) \d+\b", re.I),
    # a legend of the marks a page uses ("Status Legend": "✅ Done: ..."), or the states
    # of a lifecycle ("Spec Lifecycle": "**Implementing**: Work in progress"), not a state
    legend=(r"(?:^|\s)(?:legend|lifecycle|life cycle)$", re.I),
    # a template's line: nothing but placeholders in brackets ("[Timestamp]: [Change]");
    # one that says its content is still to come ("[TO BE DEFINED - the stack]") is a to-do
    placeholders=(
        r"^(?!.*\b(?:to be|tbd|todo|to-do|fill(?:ed)? in)\b)\W*\[[^\]\n]+\]"
        r"(?:\W*\[[^\]\n]+\])*\W*$",
        re.I,
    ),
    # a condition open up to the end of the text read: no clause has ended since
    condition=(
        r"\b(?:if|whether|when|whenever|until|once|unless|ensure|make sure)\b[^.;:!?→]*$",
        re.I,
    ),
)

# Characters that match ASCII letters under re.I though they are not ASCII themselves.
_FOLDS_TO_ASCII = frozenset("\u0130\u0131\u017f\u212a")


def needed_words(pattern: str) -> frozenset[str] | None:
    """Lower-case strings one of which every match of `pattern` (under re.I) holds, in an
    ASCII text lowered; None when the pattern has no such set. Read from the pattern's
    parsed form: literal runs that no match can skip, and alternatives joined."""
    return _needed(sre_parse.parse(pattern, re.I).data)


def _needed(items: list[Any]) -> frozenset[str] | None:
    """The best needed set of a sequence of parsed items (the one whose shortest string is
    longest), or None. A parsed sequence's items are its `data`."""
    found: list[frozenset[str]] = []
    run: list[str] = []
    for op, arg in [*items, (None, None)]:
        if op is sre.LITERAL and chr(arg) not in _FOLDS_TO_ASCII:
            run.append(chr(arg).lower())
            continue
        if run:
            found.append(frozenset({"".join(run)}))
            run = []
        inner: frozenset[str] | None = None
        if op is sre.IN:
            inner = _chars(arg)
        elif op is sre.SUBPATTERN:
            inner = _needed(arg[-1].data)
        elif op is sre.BRANCH:
            options = [_needed(branch.data) for branch in arg[1]]
            if all(o is not None for o in options):
                inner = frozenset().union(*[o for o in options if o is not None])
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT) and arg[0] >= 1:
            inner = _needed(arg[2].data)
        if inner:
            found.append(inner)
    return max(found, key=lambda words: min(map(len, words)), default=None)


def _chars(items: list[Any]) -> frozenset[str] | None:
    """A set of plain characters (`[abc]`, or `❌|✗` as the parser joins it) as needed
    strings; None for a range, a class or a negated set."""
    if not items or any(op is not sre.LITERAL for op, _ in items):
        return None
    chars = [chr(arg) for _, arg in items]
    return None if _FOLDS_TO_ASCII.intersection(chars) else frozenset(c.lower() for c in chars)


class Screen:
    """Rules (regular expressions read under re.I), each compiled on first use, and which
    of them a text may match, from the words each needs (`needed_words`), found in one pass
    over the text rather than one test per word and rule: each needed word is filed under
    its first three characters, one regular expression finds which of those runs the text
    holds, and only the words filed under them are looked for. A rule with no needed words
    is never screened out, nor is any rule for a text beyond ASCII. Nothing is read or
    compiled on import: a rule the screen skips for every text is never compiled."""

    def __init__(self, sources: Sequence[str]) -> None:
        self.sources = tuple(sources)
        self._compiled: list[re.Pattern[str] | None] = [None] * len(self.sources)

    def __len__(self) -> int:
        return len(self.sources)

    def __getitem__(self, i: int) -> re.Pattern[str]:
        """Rule `i`, compiled."""
        rx = self._compiled[i]
        if rx is None:
            rx = self._compiled[i] = re.compile(self.sources[i], re.I)
        return rx

    @cached_property
    def _index(self) -> tuple[frozenset[int], tuple[tuple[int, str], ...], dict[str, Any]]:
        """The rules with no needed words, the words too short to file, and the words filed
        under their first three characters."""
        unscreened: set[int] = set()
        short: list[tuple[int, str]] = []
        filed: dict[str, list[tuple[int, str]]] = {}
        for i, source in enumerate(self.sources):
            words = needed_words(source)
            if words is None:
                unscreened.add(i)
            for word in sorted(words or ()):
                if len(word) < 3:
                    short.append((i, word))
                else:
                    filed.setdefault(word[:3], []).append((i, word))
        return frozenset(unscreened), tuple(short), filed

    @cached_property
    def _runs(self) -> re.Pattern[str]:
        """Finds, at every place of a text, the filed run that starts there."""
        return re.compile(f"(?=({_tree(sorted(self._index[2]))}))")

    def possible(self, low: str | None) -> Container[int]:
        """The indexes of the rules a text may match: `low` is the text lowered (or any
        text holding it), None when the text is not ASCII."""
        if low is None:
            return range(len(self.sources))
        unscreened, short, filed = self._index
        found = set(unscreened)
        for i, word in short:
            if i not in found and word in low:
                found.add(i)
        for run in set(self._runs.findall(low)):
            for i, word in filed[run]:
                if i not in found and word in low:
                    found.add(i)
        return found


def _tree(words: list[str]) -> str:
    """A regular expression matching any of `words` (sorted, distinct, all as long) as a
    tree of their shared beginnings: the engine tries one branch per character that can
    come next, not one per word."""
    if not words[0]:
        return ""
    branches = [
        re.escape(head) + _tree([word[1:] for word in group])
        for head, group in groupby(words, key=lambda word: word[0])
    ]
    return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"


FACT_SOURCES = tuple(source for _, source in _FACT_RULES)
_FACT_SCREEN = Screen(FACT_SOURCES)
_HEADING_SCREEN = Screen([source for _, source in _HEADINGS])


def lowered(text: str) -> str | None:
    """`text` lowered for `Screen.rules`, or None when it is not ASCII (never screened)."""
    return text.lower() if text.isascii() else None


@lru_cache(maxsize=65536)
def ephemeral(fact: str, subject: str = "") -> Ephemeral | None:
    """The class of ephemeral task state `fact` (filed under `subject`) belongs to, or
    None. The heading is read first: one that names a class decides."""
    text = " ".join(fact.split())
    return screened(text, subject, _FACT_SCREEN.possible(lowered(text)))


def defines_states(subject: str) -> bool:
    """Whether `subject` heads a legend of marks or a lifecycle's states: its facts define
    what a state means ("🔄 In progress: being worked on"), they are in none."""
    return bool(subject) and _RX.legend.search(subject) is not None


def screened(text: str, subject: str, possible: Container[int]) -> Ephemeral | None:
    """`ephemeral` of a fact with its whitespace collapsed (`text`), given which rules
    (indexes in `FACT_SOURCES`) it may match (`Screen.possible`)."""
    if defines_states(subject) or _RX.placeholders.match(text):
        return None
    if subject:
        heads = _HEADING_SCREEN.possible(lowered(subject))
        for i, (cls, _) in enumerate(_HEADINGS):
            if i in heads and _HEADING_SCREEN[i].search(subject):
                return Ephemeral(cls, f"filed under {subject!r}")
    problems = bool(subject) and _RX.problems.search(subject) is not None
    quality = _names_a_quality(text, subject)
    for i, (cls, _) in enumerate(_FACT_RULES):
        if i not in possible or (problems and i in _GERUND_RULES):
            continue
        if quality and cls == "change_account":
            continue
        for match in _FACT_SCREEN[i].finditer(text):
            if cls == "change_account" and _RX.present_passive.search(text, 0, match.start()):
                continue  # "files are moved to `archive/`": what happens, not what did
            if cls in _CONDITIONED and _RX.condition.search(text, 0, match.start()):
                continue  # "close a ticket once its subtasks are complete": a rule
            return Ephemeral(cls, match.group(0).strip(" *") or text[:40])
    if subject and _RX.plan_stage.search(subject):
        return Ephemeral("todo_next", f"filed under {subject!r}")
    return None


def _names_a_quality(text: str, subject: str) -> bool:
    """Whether `text` is a short phrase naming a quality under a heading of a design's
    patterns, benefits or principles: there a participle describes ("Centralized error
    logging" under "Error Handling Pattern"), where elsewhere it may recount a change."""
    return (
        bool(subject)
        and len(text.split()) <= 4
        and "`" not in text
        and _RX.qualities.search(subject) is not None
    )
