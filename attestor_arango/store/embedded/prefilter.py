"""The vector index's APPROXIMATE first stage: rows near the query by code signs.

An exact int8 scan of a million rows of 384 dimensions moves 384 MB per query and
takes 45-60 ms here (memory-bound). Packing the sign of each int8 code into one bit
leaves 48 bytes a row (48 MB at 1M, built on a tenant's first such query: ~0.15 s); the
Hamming distance of a row's signs to the query's ranks rows roughly by angle, and only
the ``keep`` nearest (ties with the keep-th included) are then scored through the exact
bounds and re-scoring. A row outside them is never returned whatever its score, which
is why the stage only runs from ``RetrievalConfig.vector_prefilter_rows`` visible rows
(250k by default; the config's comment says what it costs in answers).

The signs are kept as columns of 64-bit words (word w of every row in one contiguous
array), so a distance is six xors, popcounts and adds over whole columns, which numpy
does in cache-sized parts: at 1M rows 9-10 ms of CPU against SimSIMD's 17-18 ms for its
binary Hamming kernel over the rows' 48 bytes (same distances), and the parts go to
scan.py's helper like the int8 scan's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attestor_arango.store.embedded import scan

_BLOCK = 1 << 16  # rows packed per step (bounded temporaries)
_WORD = 8  # bytes of a word of signs
# the selection's first guess: every _SAMPLE-th distance, and how many of the keep-th
# nearest's share it aims above (a miss is only slower: the whole count decides then)
_SAMPLE = 16
_MARGIN = 2


def _bytes_popcount(words: np.ndarray) -> np.ndarray:
    """Set bits per 64-bit word without ``np.bitwise_count`` (numpy < 2): byte table."""
    table = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)
    per_byte = table[np.ascontiguousarray(words).view(np.uint8)]
    return per_byte.reshape(-1, _WORD).sum(axis=1, dtype=np.uint8)


_popcount = getattr(np, "bitwise_count", None) or _bytes_popcount


def sign_words(codes: np.ndarray) -> np.ndarray:
    """Each row's code signs (> 0) packed 8 to a byte (``np.packbits`` order), padded with
    zero bits to whole 64-bit words: (rows, words). A pad bit is 0 in every row and in the
    query, so it never adds to a distance."""
    packed = np.packbits(codes > 0, axis=-1).reshape(-1, -(-codes.shape[-1] // 8))
    words = -(-packed.shape[1] // _WORD)
    if packed.shape[1] == words * _WORD:  # 384 dimensions: no padding, no copy
        return packed.view(np.uint64)
    padded = np.zeros((packed.shape[0], words * _WORD), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return padded.view(np.uint64)


class SignBits:
    """Every row's code signs as word columns, built on first use, extended as rows come."""

    def __init__(self) -> None:
        self.columns = np.zeros((0, 0), dtype=np.uint64)  # [word, row]
        self.n = 0

    def of(self, blocks: Sequence[np.ndarray], capacity: int, dim: int) -> np.ndarray:
        """The sign words of every row of ``blocks`` (the int8 codes in row order) as
        (words, rows) columns, packed from slices of the blocks (gathering 1M rows by index
        took 4x as long: 544 ms)."""
        n = sum(len(b) for b in blocks)
        if self.columns.shape[1] < n:
            grown = np.zeros((-(-dim // 64), max(n, capacity)), dtype=np.uint64)
            if self.n:
                grown[:, : self.n] = self.columns[:, : self.n]
            self.columns = grown
        at = 0
        for block in blocks:
            for lo in range(max(self.n - at, 0), len(block), _BLOCK):
                part = block[lo : lo + _BLOCK]
                self.columns[:, at + lo : at + lo + len(part)] = sign_words(part).T
            at += len(block)
        self.n = n
        return self.columns[:, :n]


def _hamming(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Distances of some rows (a (rows, words) view of the columns) to the query's words:
    per word column one xor, one popcount and one add, through reused buffers."""
    columns = rows.T
    m = columns.shape[1]
    diff = np.empty(m, dtype=np.uint64)
    far = _popcount(np.bitwise_xor(columns[0], query[0], out=diff)).astype(np.uint16)
    for w in range(1, columns.shape[0]):
        np.add(far, _popcount(np.bitwise_xor(columns[w], query[w], out=diff)), out=far)
    return far


def _within(far: np.ndarray, keep: int) -> np.ndarray:
    """The positions (ascending) of every distance at most the keep-th smallest's.

    That distance is the least d with at least ``keep`` distances <= d. Counting all of a
    million distances (np.bincount widens each to 8 bytes) took 2 ms, so a bound comes from
    every ``_SAMPLE``-th first: the rows at most that far (one comparison pass) hold every
    row at most the keep-th smallest distance away whenever there are ``keep`` of them,
    and the count among those alone decides, exactly as over all."""
    keep = min(keep, far.size)
    sample = far[::_SAMPLE]
    aim = min(sample.size, _MARGIN * keep // _SAMPLE + 1)
    bound = int(np.searchsorted(np.cumsum(np.bincount(sample)), aim))
    near = np.flatnonzero(far <= bound)
    if near.size < keep:  # the guess fell short: count every distance
        near = np.arange(far.size)
    close = far[near]
    reach = int(np.searchsorted(np.cumsum(np.bincount(close)), keep))  # the keep-th's
    return near[close <= reach]


def nearest(
    columns: np.ndarray, query_codes: np.ndarray, idx: np.ndarray | None, keep: int
) -> np.ndarray:
    """The rows (of ``idx``, all: None) at most the keep-th nearest's Hamming distance away
    (``columns``: ``SignBits.of``)."""
    query = sign_words(query_codes)[0]
    far = scan.dots([columns.T], query, _hamming, np.uint16)
    if idx is not None:
        far = far[idx]
    near = _within(far, keep)
    return near if idx is None else idx[near]
