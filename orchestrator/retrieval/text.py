"""Text helpers for the search index: query terms, stop words, flattening JSON to text.

The index tokenises with FTS5's `porter unicode61` tokenizer; `terms` splits a query the
same way (Unicode letters and digits, lower-cased) so that what the ranking weighs is what
FTS5 matches. Stop words are the common English function words (a general list, the
kind search engines ship), plus the question words a user types before what they want.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

TOKENIZER = "porter unicode61 remove_diacritics 2"
WORD = re.compile(r"[^\W_]+", re.UNICODE)

_STOP_WORDS = """
    a about above after again against all am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn
    doing don down during each few for from further had hadn has hasn have haven having he
    her here hers herself him himself his how i if in into is isn it its itself just ll
    me more most mustn my myself no nor not now of off on once only or other ought our
    ours ourselves out over own re s same shan she should shouldn so some such t than
    that the their theirs them themselves then there these they this those through to too
    under until up ve very was wasn we were weren what when where which while who whom
    why will with won would wouldn y you your yours yourself yourselves d m o ma
    also could might must shall
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())


def words(text: str) -> list[str]:
    """Every word of `text`, lower-cased, split as the index's tokenizer splits."""
    return [w.lower() for w in WORD.findall(text)]


def query_terms(text: str) -> list[str]:
    """The distinct content words of a query, in order (stop words and lone letters dropped)."""
    seen: dict[str, None] = {}
    for word in words(text):
        if word in STOP_WORDS or (len(word) == 1 and not word.isdigit()):
            continue
        seen.setdefault(word, None)
    return list(seen)


def fts_phrase(term: str) -> str:
    """`term` as an FTS5 string literal (so that no word is read as query syntax)."""
    return '"' + term.replace('"', '""') + '"'


PROVENANCE_KEYS = frozenset({"v", "id", "episodes", "source", "sources", "turns", "offsets"})


def strings_in(value: Any) -> Iterator[str]:
    """Every string inside a JSON value, depth first; keys, numbers and provenance left out."""
    if isinstance(value, str):
        if value.strip():
            yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in PROVENANCE_KEYS:
                yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)


def flatten(value: Any) -> str:
    """A JSON value as searchable text: its strings, one a line."""
    return "\n".join(strings_in(value))


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
