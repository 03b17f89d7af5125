"""Splitting text into words, and counting them."""

import re

WORD_RE = re.compile(r"[a-z0-9]+")


def words(text):
    """The words of `text`, lower-cased, in order."""
    return WORD_RE.findall(text.lower())


def word_count(text):
    """How many words `text` holds."""
    return len(words(text))
