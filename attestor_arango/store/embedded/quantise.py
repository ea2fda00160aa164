"""Per-row int8 quantisation with sound error bounds, exact integer dot products of the
codes, and an exact k-th largest.

The vector index (vectors.py) scans int8 codes and keeps, per row, bounds on what
the quantisation can have changed in a score; these are the pieces it computes them
with, kept apart so the index's own module stays one reading long.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from attestor_arango.store.embedded import scan

try:
    import simsimd

    USE_SIMSIMD = True
except ImportError:  # pragma: no cover - a platform without its wheels uses numpy
    USE_SIMSIMD = False

SAMPLE_STEP = 32  # kth_largest: one value in 32 sets the threshold
# float32 rounding of a scanned score is far below this share of |row| * |query|; the
# bound is widened by it so that rounding can never push a true top-k row out
_ROUNDING = 1e-4
_CHUNK = 2048  # rows per step of the numpy fallback scan (stays in cache)


def _round_up(bound: np.ndarray) -> np.ndarray:
    """float32 copies of float64 bounds, never smaller than the bounds."""
    out = bound.astype(np.float32)
    return np.nextafter(out, np.float32(np.inf), where=out < bound, out=out.copy())


def quantize(
    rows: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row: int8 codes, their float32 scale, and three float32 bounds.

    ``err`` bounds |v - scale * codes| plus a rounding slack, ``rounding`` the
    slack alone, ``size`` bounds |scale * codes|. For any query q,
    |v.q - scale * codes.q| <= err * |q|, and a float32 product of v and q is
    within rounding * |q| of the exact one.
    """
    v = np.atleast_2d(np.asarray(rows, dtype=np.float64))
    peak = np.abs(v).max(axis=1) if v.shape[1] else np.zeros(len(v))
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    levels = np.clip(np.rint(v / scale[:, None]), -127, 127)
    codes = levels.astype(np.int8)
    approx = scale.astype(np.float64)[:, None] * levels
    rounding = _ROUNDING * np.linalg.norm(v, axis=1)
    err = np.linalg.norm(v - approx, axis=1) + rounding
    size = np.linalg.norm(approx, axis=1)
    return codes, scale, _round_up(err), _round_up(rounding), _round_up(size)


class QueryCodes(NamedTuple):
    """A query's int8 codes with the two numbers a search uses of its ``quantize`` result."""

    codes: np.ndarray  # int8, one row
    scale: float  # the float32 scale, exactly
    err: float  # the float32 error bound, exactly


def quantize_query(query: np.ndarray) -> QueryCodes:
    """``quantize`` of one vector, keeping only its codes, scale and ``err``: the same
    arithmetic, bit for bit, in a third of the numpy calls. A recall quantises its query
    once, but inside a recall each numpy call meets cold caches: ``quantize`` of the
    query took 170-270 us there, several times its cost in a loop.
    ``tests/test_quantise_query.py`` checks it against ``quantize``.
    """
    v = np.asarray(query, dtype=np.float64).reshape(1, -1)
    peak = float(np.abs(v).max()) if v.size else 0.0
    # np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32), for one value
    scale = float(np.float32(peak / 127.0)) if peak > 0 else 1.0
    levels = v / scale  # float64 division by the float32 scale, as quantize's broadcast
    np.rint(levels, out=levels)
    np.clip(levels, -127, 127, out=levels)
    codes = levels.astype(np.int8)[0]
    levels *= scale  # quantize's approx: scale (float64) * levels
    levels -= v
    # np.linalg.norm(x, axis=1) is sqrt(add.reduce(x * x, axis=1)) for real x
    err = float(np.sqrt(np.add.reduce(levels * levels, axis=1))[0])
    err += _ROUNDING * float(np.sqrt(np.add.reduce(v * v, axis=1))[0])
    return QueryCodes(codes, scale, _up32(err))


def _up32(value: float) -> float:
    """The smallest float32 not below ``value`` when rounding went down (``_round_up``)."""
    out = np.float32(value)
    if float(out) < value:
        out = np.nextafter(out, np.float32(np.inf))
    return float(out)


def kth_largest(values: np.ndarray, k: int) -> float:
    """The k-th largest of ``values`` (1 <= k <= size), exactly.

    A full partition of 100k scores costs several times the scan's other steps. A
    threshold read off a strided sample usually leaves a few hundred values at or
    above it; when at least k do, the k-th largest is among them. When fewer do,
    the whole array is partitioned.
    """
    n = values.size
    if n >= 16 * SAMPLE_STEP:
        sample = values[::SAMPLE_STEP]
        m = max(1, 4 * k // SAMPLE_STEP)
        if m < sample.size:
            guess = np.partition(sample, sample.size - m)[sample.size - m]
            above = values[values >= guess]
            if above.size >= k:
                return float(np.partition(above, above.size - k)[above.size - k])
    return float(np.partition(values, n - k)[n - k])


def int8_dots(blocks: Sequence[np.ndarray], query_codes: np.ndarray) -> np.ndarray:
    """Exact integer dot products of every code row of ``blocks`` (in order) with the
    query's codes, as float64.

    SimSIMD's int8 kernels do this about four times faster than numpy can cast
    the codes to float (a large index on more than one core: scan.py); numpy is the
    fallback (and the reference in tests). Both are exact: the same numbers.
    """
    if USE_SIMSIMD:
        return scan.dots(blocks, query_codes, simd_dots64, np.float64)
    return np.concatenate([np.zeros(0), *(_numpy_dots(b, query_codes) for b in blocks)])


def _numpy_dots(codes: np.ndarray, query_codes: np.ndarray) -> np.ndarray:
    n, dim = codes.shape
    # integer sums stay exact in float32 while they stay below 2**24
    exact = np.float32 if dim * 127 * 127 < 2**24 else np.float64
    out = np.empty(n, dtype=exact)
    q = query_codes.astype(exact)
    buf = np.empty((min(_CHUNK, n), dim), dtype=exact)
    for i in range(0, n, _CHUNK):
        j = min(i + _CHUNK, n)
        block = buf[: j - i]
        np.copyto(block, codes[i:j], casting="unsafe")
        np.matmul(block, q, out=out[i:j])
    return out.astype(np.float64)


def simd_dots32(codes: np.ndarray, query_codes: np.ndarray) -> np.ndarray:
    """SimSIMD's exact integer dots of some code rows with the query's codes, as float32
    (exact while ``dim * 127 * 127 < 2**24``). Never through SimSIMD's ``out=``: in 6.5
    each such call drops one reference to None too many, which on Python 3.11 ends the
    process after enough calls ("deallocating None")."""
    dots = simsimd.cdist(query_codes[None, :], codes, metric="dot", out_dtype="float32")
    return np.asarray(dots)[0]


def simd_dots64(codes: np.ndarray, query_codes: np.ndarray) -> np.ndarray:
    """``simd_dots32`` as float64 (exact at any dimension SimSIMD takes)."""
    return np.asarray(simsimd.cdist(query_codes[None, :], codes, metric="dot"))[0]


def int8_dots32(blocks: Sequence[np.ndarray], query_codes: np.ndarray) -> np.ndarray:
    """``int8_dots`` of the rows of ``blocks`` (in order) as float32 from SimSIMD (exact while
    ``dim * 127 * 127 < 2**24``: the caller checks), half the bytes to write and read
    again; a large index on more than one core (scan.py)."""
    return scan.dots(blocks, query_codes, simd_dots32, np.float32)
