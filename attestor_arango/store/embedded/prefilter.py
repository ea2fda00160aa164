"""The vector index's APPROXIMATE first stage: rows near the query by code signs.

An exact int8 scan of a million rows of 384 dimensions moves 384 MB per query and
takes 45-60 ms here (memory-bound). Packing the sign of each int8 code into one bit
leaves 48 bytes a row (48 MB at 1M, built on a tenant's first such query: ~0.3 s); the
Hamming distance of a row's signs to the query's ranks rows roughly by angle, and only
the ``keep`` nearest (ties with the keep-th included) are then scored through the exact
bounds and re-scoring. A row outside them is never returned whatever its score, which
is why the stage only runs from ``RetrievalConfig.vector_prefilter_rows`` visible rows
(250k by default; the config's comment says what it costs in answers).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_BLOCK = 1 << 16  # rows packed per step (bounded temporaries)


class SignBits:
    """Every row's code signs packed 8 to a byte, built on first use, extended as rows come."""

    def __init__(self) -> None:
        self.bits = np.zeros((0, 0), dtype=np.uint8)
        self.n = 0

    def of(self, blocks: Sequence[np.ndarray], capacity: int, dim: int) -> np.ndarray:
        """The packed signs of every row of ``blocks`` (the int8 codes in row order), packed
        from slices of the blocks (gathering 1M rows by index took 4x as long: 544 ms)."""
        n = sum(len(b) for b in blocks)
        width = -(-dim // 8)
        if len(self.bits) < n:
            grown = np.zeros((max(n, capacity), width), dtype=np.uint8)
            if self.n:
                grown[: self.n] = self.bits[: self.n]
            self.bits = grown
        at = 0
        for block in blocks:
            for lo in range(max(self.n - at, 0), len(block), _BLOCK):
                part = block[lo : lo + _BLOCK]
                self.bits[at + lo : at + lo + len(part)] = np.packbits(part > 0, axis=1)
            at += len(block)
        self.n = n
        return self.bits[:n]


def nearest(
    bits: np.ndarray, query_codes: np.ndarray, idx: np.ndarray | None, keep: int
) -> np.ndarray:
    """The rows (of ``idx``, all: None) at most the keep-th nearest's Hamming distance away."""
    import simsimd  # (only called where SimSIMD is installed: vectors.USE_SIMSIMD)

    q_bits = np.packbits(query_codes > 0)[None, :]
    far = np.asarray(
        simsimd.cdist(q_bits, bits, metric="hamming", dtype="bin8", out_dtype="int32")  # type: ignore[arg-type]
    )[0]
    if idx is not None:
        far = far[idx]
    counts = np.cumsum(np.bincount(far, minlength=8 * bits.shape[1] + 1))
    reach = int(np.searchsorted(counts, min(keep, far.size)))  # the keep-th nearest's distance
    near = np.flatnonzero(far <= reach)
    return near if idx is None else idx[near]
