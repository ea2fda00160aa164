"""Deterministic recall above the Store protocol."""

from typing import TYPE_CHECKING

from attestor_arango.lazy import lazy_exports

if TYPE_CHECKING:
    from attestor_arango.retrieval.config import RetrievalConfig
    from attestor_arango.retrieval.pipeline import recall

__getattr__ = lazy_exports(
    __name__,
    {
        "RetrievalConfig": "attestor_arango.retrieval.config",
        "recall": "attestor_arango.retrieval.pipeline",
    },
)

__all__ = ["RetrievalConfig", "recall"]
