"""Word statistics for plain text."""

from wordstats.core import word_count, words

__all__ = ["word_count", "words"]
