"""An embedder made on first use, so commands that never embed never load a model.

A CLI call such as ``list``, ``get`` or ``stats`` reads no vectors; building the local
ONNX model (or probing Ollama) for it was most of the call's time. ``LazyEmbedder``
holds the factory and builds the real embedder the first time its name, dimension,
``embed`` or any other attribute is asked for; from then on it forwards to it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from attestor_arango.embeddings.base import Embedder


class LazyEmbedder:
    """Forwards to ``factory()``, called once, on first use (thread-safe)."""

    def __init__(self, factory: Callable[[], Embedder]) -> None:
        self._factory = factory
        self._real: Embedder | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the real embedder was built (for tests and doctor)."""
        return self._real is not None

    def real(self) -> Embedder:
        """The embedder itself, built now if it was not yet."""
        if self._real is None:
            with self._lock:
                if self._real is None:
                    self._real = self._factory()
        return self._real

    @property
    def name(self) -> str:
        return self.real().name

    @property
    def dimension(self) -> int:
        return self.real().dimension

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.real().embed(texts)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.real(), attr)
