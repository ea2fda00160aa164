"""Deterministic recall above the Store protocol."""

from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.pipeline import recall

__all__ = ["RetrievalConfig", "recall"]
