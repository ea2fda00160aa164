"""Okapi BM25, once: the inverse document frequency and a term's share of a row's score.

Three places score text with BM25 and must agree to the last bit: the embedded text
index (numpy over postings), the pipeline's view-stable re-scoring (Python floats over a
candidate pool) and the coverage step (idf weights). Each computes the same expression in
the same order from these functions, so a float is the same wherever it is made.
"""

from __future__ import annotations

import math
from typing import TypeVar

import numpy as np

K1 = 1.2
B = 0.75

Num = TypeVar("Num", float, np.ndarray)


def idf(n: int, df: int) -> float:
    """log(1 + (n - df + 0.5) / (df + 0.5)): positive for every df <= n."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def length_norm(length: Num, avgdl: float, k1: float = K1, b: float = B) -> Num:
    """k1 * (1 - b + b * length / avgdl), the denominator's length part."""
    return k1 * (1.0 - b + b * length / avgdl)


def term_score(weight: float | Num, tf: Num, norm: Num, k1: float = K1) -> Num:
    """One term's part of a row's score: weight * tf * (k1 + 1) / (tf + norm)."""
    return weight * tf * (k1 + 1) / (tf + norm)
