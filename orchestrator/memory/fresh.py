"""Ignore memory on request: does a user turn ask for no memory tier?

"ignore memory", "don't use memory", "fresh context" and their close variants ("disregard
your memories", "without using the saved memory", "start with a clean slate") ask for a
turn without repo memory. Turns that only talk *about* memory do not: "don't ignore the
memory leak", "ignore memory usage warnings", "a fresh context manager", "do not use
memory-mapped files". The test is lexical and deliberately narrow: a request must direct a
verb at memory itself, not at a memory-related thing of the program.
"""

from __future__ import annotations

import re

# Words after "memory" that make it the program's memory, not the agent's.
_TECHNICAL = (
    r"leak|leaks|leaking|usage|use|limit|limits|footprint|pressure|profil\w*|cache|caches|"
    r"caching|cached|map|maps|mapped|mapping|management|manager|consumption|error|errors|"
    r"corruption|safety|safe|bandwidth|address\w*|pool|pools|allocat\w*|buffer|buffers|bound|"
    r"intensive|overhead|growth|spike|spikes|issue|issues|problem|problems|card|chip|chips|"
    r"model|layout|order|ordering|fence|fences|barrier|barriers|region|regions|segment\w*|"
    r"page|pages|paging|dump|dumps|efficient|efficiency|heavy|hog|checker|sanitizer|stats|"
    r"metrics|monitor\w*|size|sizes|requirement\w*|allocation|fragmentation|access|accesses|"
    r"reads|writes|bug|bugs|warning|warnings|alignment|view|views|database|db|backend|storage|"
    r"store\s+(?:class|implementation|module)|tests?"
)
_NOT_TECHNICAL = rf"(?![\s-]+(?:{_TECHNICAL})\b)"
_FILLER = (
    r"(?:(?:the|your|my|our|all|any|of|stored|saved|persistent|persisted|repo|repository|"
    r"prior|previous|past|existing|long-term|agent|orch|old|earlier|what's|whats|in)\s+){0,3}"
)
_MEMORY = rf"memor(?:y|ies)\b{_NOT_TECHNICAL}"
_NEGATION = re.compile(
    r"\b(?:not|never|don't|dont|doesn't|shouldn't|mustn't|won't|can't|cannot|do not|no)\b"
)

_DIRECT = re.compile(
    rf"\b(?:ignore|ignoring|disregard|disregarding|skip|skipping|forget|forgetting|drop|"
    rf"bypass|bypassing|set aside|leave out|turn off|switch off|disable|disabling)\s+"
    rf"{_FILLER}{_MEMORY}"
)
_REFUSE_USE = re.compile(
    rf"\b(?:don't|dont|do not|never|please don't|no need to|stop|without|avoid|shouldn't|"
    rf"should not|must not|mustn't|won't|will not|not)\s+(?:to\s+)?"
    rf"(?:use|using|read|reading|load|loading|consult|consulting|rely on|relying on|"
    rf"look at|looking at|check|checking|access|accessing|apply|applying|pull in|pulling in|"
    rf"bring in|inject|injecting|include|including|draw on|drawing on|refer to|referring to)\s+"
    rf"{_FILLER}{_MEMORY}"
)
_WITHOUT = re.compile(rf"\b(?:without|no|minus|sans)\s+(?:any\s+)?(?:the\s+)?{_MEMORY}")
_OFF = re.compile(rf"\b{_MEMORY}\s+(?:off|disabled)\b")
_FRESH = re.compile(
    r"\b(?:(?:fresh|clean|blank|empty)\s+(?:context|slate|start)\b(?![\s-]+(?:manager|object|"
    r"variable|var|window|class|instance|dict|for each|per)\b)|start(?:ing)?\s+(?:over\s+)?fresh\b)"
)


def _normal(text: str) -> str:
    return " ".join(text.lower().replace("’", "'").replace("‘", "'").split())


def _negated_before(text: str, start: int) -> bool:
    """A negation in the four words before `start` ("don't ignore the memory leak")."""
    before = text[:start].split()[-4:]
    return bool(_NEGATION.search(" ".join(before)))


def wants_fresh_context(text: str) -> bool:
    """True when a user turn asks for no memory tier ("ignore memory", "fresh context"...)."""
    t = _normal(text)
    if "memor" not in t and "fresh" not in t and "clean" not in t and "slate" not in t:
        return False
    for match in _DIRECT.finditer(t):
        if not _negated_before(t, match.start()):
            return True
    if _REFUSE_USE.search(t):
        return True
    for match in _WITHOUT.finditer(t):
        # "there is no memory" is a statement; "no memory this time" / "without memory" ask
        if match.group(0).startswith(("without", "minus", "sans")) or not re.search(
            r"\b(?:is|are|was|were|has|have|had)\s+$", t[: match.start()]
        ):
            return True
    if _OFF.search(t):
        return True
    return any(not _negated_before(t, m.start()) for m in _FRESH.finditer(t))
