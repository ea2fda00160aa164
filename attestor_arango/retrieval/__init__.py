"""Deterministic recall above the Store protocol."""

from .config import RetrievalConfig
from .pipeline import recall

__all__ = ["RetrievalConfig", "recall"]
