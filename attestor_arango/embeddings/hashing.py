"""A deterministic, model-free embedder: the offline fallback.

Feature hashing of word unigrams, word bigrams and character trigrams with a
keyed BLAKE2 hash (stable across processes, unlike ``hash()``). It knows no
synonyms, but it makes the default install run anywhere and gives tests exact,
reproducible vectors.
"""

from __future__ import annotations

import hashlib
import itertools
import re

import numpy as np

from attestor_arango.embeddings.base import normalize_rows

_WORD = re.compile(r"[\w']+", re.UNICODE)


class HashingEmbedder:
    """Word and character-trigram feature hashing; no model, no synonyms.

    ``fallback_reason`` is set when ``auto`` chose it because no semantic model could be
    loaded: ``doctor`` and every recall then say so (a chosen hashing embedder is quiet).
    """

    def __init__(self, dimension: int = 384, *, fallback_reason: str | None = None) -> None:
        if dimension < 8:
            raise ValueError("dimension must be at least 8")
        self.dimension = dimension
        self.name = f"hashing-v1-{dimension}"
        self.fallback_reason = fallback_reason

    def _features(self, text: str) -> list[tuple[str, float]]:
        words = [w.lower() for w in _WORD.findall(text)]
        feats: list[tuple[str, float]] = [("w:" + w, 1.0) for w in words]
        feats += [(f"b:{a} {b}", 0.5) for a, b in itertools.pairwise(words)]
        for w in words:
            padded = f"#{w}#"
            feats += [("c:" + padded[i : i + 3], 0.25) for i in range(len(padded) - 2)]
        return feats

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat, weight in self._features(text):
                digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                index = value % self.dimension
                sign = 1.0 if (value >> 63) & 1 else -1.0
                out[row, index] += sign * weight
        return normalize_rows(out)
