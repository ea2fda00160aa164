"""The Embedder protocol."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows of a fixed dimension.

    ``name`` identifies the embedding space (model and revision); the store
    refuses to mix vectors of different names or dimensions in one tenant.
    """

    # Read-only in the protocol: remote embedders learn their dimension from the
    # server's first answer, so they expose it as a property.
    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray: ...


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


def fallback_reason(embedder: Embedder) -> str | None:
    """Why ``auto`` fell back to hashing, or None for any embedder that was not a fallback.

    Here rather than in ``chain`` so that asking it does not import every provider.
    """
    reason = getattr(embedder, "fallback_reason", None)
    return reason if isinstance(reason, str) else None
