"""Retrieval: the `.orch/search.sqlite` index over what orch remembers, and its ranking."""

from orchestrator.retrieval.index import Hit, SearchIndex, index_written
from orchestrator.retrieval.ranking import Ranking
from orchestrator.retrieval.sources import KINDS, Doc

__all__ = ["KINDS", "Doc", "Hit", "Ranking", "SearchIndex", "index_written"]
