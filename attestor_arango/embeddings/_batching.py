"""Helpers shared by the provider embedders: batching and shape checks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from attestor_arango.embeddings.base import normalize_rows
from attestor_arango.errors import EmbedderUnavailable, EmbeddingMismatchError, ValidationError


def batches(texts: Sequence[str], size: int) -> Iterator[list[str]]:
    """Consecutive slices of at most ``size`` texts, in input order."""
    for start in range(0, len(texts), size):
        yield list(texts[start : start + size])


def check_texts(texts: list[str]) -> None:
    """Refuse non-string input before any request is sent (a server would answer 400)."""
    if not isinstance(texts, list):
        raise ValidationError("embed() takes a list of strings; wrap a single text in a list")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValidationError(f"text #{i} is {type(text).__name__}, not str")


def check_batch_size(batch_size: int) -> int:
    if batch_size < 1:
        raise ValidationError("batch_size must be at least 1")
    return batch_size


def to_matrix(
    rows: Sequence[Sequence[float]], expected_rows: int, dimension: int | None, source: str
) -> np.ndarray:
    """Turn a provider's rows into a normalised float32 matrix, checking the shape.

    A provider that returns the wrong number of rows or a dimension that differs
    from the one already seen would silently corrupt the tenant's vector space,
    so both are errors here rather than in the store.
    """
    matrix = np.asarray(rows, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != expected_rows:
        raise EmbeddingMismatchError(
            f"{source} returned {matrix.shape[0] if matrix.ndim else 0} vectors for "
            f"{expected_rows} texts; check the server's embeddings endpoint",
            expected=expected_rows,
        )
    if dimension is not None and matrix.shape[1] != dimension:
        raise EmbeddingMismatchError(
            f"{source} returned {matrix.shape[1]}-dimensional vectors, expected {dimension}; "
            "the model behind the endpoint changed or embedder_dimension is wrong",
            expected=dimension,
            got=int(matrix.shape[1]),
        )
    if not np.all(np.isfinite(matrix)):
        raise EmbeddingMismatchError(f"{source} returned non-finite values (NaN or inf)")
    return normalize_rows(matrix)


_PROBE_TEXT = "dimension probe"


class BatchedRemoteEmbedder:
    """What the server-backed embedders share: batching, and a dimension learned from the
    server (first response, or one probe call when it is read before any embed)."""

    batch_size: int
    _dimension: int | None

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self.embed([_PROBE_TEXT])
        if self._dimension is None:
            raise EmbedderUnavailable(
                f"{type(self).__name__} returned no vector for a probe text; check the model"
            )
        return self._dimension

    def embed(self, texts: list[str]) -> np.ndarray:
        check_texts(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([self._embed_batch(chunk) for chunk in batches(texts, self.batch_size)])

    def _embed_batch(self, chunk: list[str]) -> np.ndarray:
        raise NotImplementedError  # each provider speaks its own API
