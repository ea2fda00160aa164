"""Exact vector search over an in-memory matrix, one per tenant.

The matrix is loaded from SQLite once and then updated incrementally; a query
never re-reads a vector from disk. Scanning 100k float32 rows of 384 dimensions
moves 150 MB through memory per query, which is what bounded recall latency. So
each row is also kept as int8 codes with a per-row scale and a bound on the
quantisation error. The query is quantised too, the scan takes exact integer
dot products of the codes (SimSIMD's int8 kernels: a quarter of the bytes and
no float conversion), every row gets an interval that provably holds its true
score, and only the rows whose interval reaches the k-th best lower bound are
re-scored exactly, in float64, from the float32 row. The answer is the exact top-k (ties included,
broken by id), with no approximation left in it; ``tests/test_embedded_vectors.py``
checks it against a brute-force scan.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

try:
    import simsimd

    USE_SIMSIMD = True
except ImportError:  # pragma: no cover - a platform without its wheels uses numpy
    USE_SIMSIMD = False

from attestor_arango.scope import TemporalView
from attestor_arango.store.embedded.indexfile import Generation, IndexFileError, Section, crc32
from attestor_arango.store.embedded.rowtable import RowTable, grown

_SAMPLE_STEP = 32  # kth_largest: one value in 32 sets the threshold
_CHUNK = 2048  # rows per step of the numpy fallback scan and of exact re-scoring (stays in cache)
# below this many rows the float32 matrix sits in cache and one product beats quantising
# the query (measured crossover near 10k rows of 384 dimensions: benchmarks/vector_scan.py)
_INT8_ROWS = 10_000
# float32 rounding of a scanned score is far below this share of |row| * |query|; the
# bound is widened by it so that rounding can never push a true top-k row out
_ROUNDING = 1e-4


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


def int8_dots(codes: np.ndarray, query_codes: np.ndarray) -> np.ndarray:
    """Exact integer dot products of every code row with the query's codes, as float64.

    SimSIMD's int8 kernels do this about four times faster than numpy can cast
    the codes to float; numpy is the fallback (and the reference in tests). Both
    are exact, so they return the same numbers.
    """
    if USE_SIMSIMD and len(codes):
        return np.asarray(simsimd.cdist(query_codes[None, :], codes, metric="dot"))[0]
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


def kth_largest(values: np.ndarray, k: int) -> float:
    """The k-th largest of ``values`` (1 <= k <= size), exactly.

    A full partition of 100k scores costs several times the scan's other steps. A
    threshold read off a strided sample usually leaves a few hundred values at or
    above it; when at least k do, the k-th largest is among them. When fewer do,
    the whole array is partitioned.
    """
    n = values.size
    if n >= 16 * _SAMPLE_STEP:
        sample = values[::_SAMPLE_STEP]
        m = max(1, 4 * k // _SAMPLE_STEP)
        if m < sample.size:
            guess = np.partition(sample, sample.size - m)[sample.size - m]
            above = values[values >= guess]
            if above.size >= k:
                return float(np.partition(above, above.size - k)[above.size - k])
    return float(np.partition(values, n - k)[n - k])


class TenantVectors:
    def __init__(self, dimension: int, capacity: int = 1024) -> None:
        self.dimension = dimension
        self.rows = RowTable(capacity)
        # what the index reflects, and what its file holds (persisted.py; None: unknown / none)
        self.generation: Generation | None = None
        self.saved: Generation | None = None
        self.saved_rows = 0
        self.matrix = np.zeros((capacity, dimension), dtype=np.float32)
        self.codes = np.zeros((capacity, dimension), dtype=np.int8)
        # float32 scales held as float64 (exactly): the scan multiplies in float64
        self.scale = np.zeros(capacity, dtype=np.float64)
        self.err = np.zeros(capacity, dtype=np.float32)
        self.rounding = np.zeros(capacity, dtype=np.float32)
        self.size = np.zeros(capacity, dtype=np.float32)
        # a persisted index (from_sections) keeps its first ``n0`` rows of codes and float32
        # vectors in read-only mapped arrays; ``matrix`` and ``codes`` then hold the rows
        # added since (row i at i - n0). Each persisted float row has a CRC-32, checked the
        # first time the row is read (``_checked``), so opening does not read them all
        self.n0 = 0
        self._base_matrix = np.zeros((0, dimension), dtype=np.float32)
        self._base_codes = np.zeros((0, dimension), dtype=np.int8)
        self._base_crc = np.zeros(0, dtype=np.uint32)
        self._checked = np.zeros(0, dtype=bool)
        self._all_checked = False
        # unmaps the persisted float rows' pages once read (IndexFile.release): a large
        # index reads a few scattered rows per query, which would otherwise stay resident
        # and, with the kernel's read-ahead, add up to the whole matrix within a few hundred
        self.release_rows: Callable[[], None] | None = None

    @property
    def n(self) -> int:
        return self.rows.n

    def _grow_to(self, cap: int) -> None:
        self.rows.grow_to(cap)
        self.matrix = grown(self.matrix, cap - self.n0)
        self.codes = grown(self.codes, cap - self.n0)
        for name in ("scale", "err", "rounding", "size"):
            setattr(self, name, grown(getattr(self, name), cap))

    def add(
        self,
        memory_id: str,
        namespace: str,
        vector: np.ndarray,
        t_created: int,
        t_expired: int,
        valid_from: int,
        valid_until: int,
    ) -> None:
        if memory_id in self.rows:
            return
        if self.rows.n == self.rows.capacity:
            self._grow_to(self.rows.next_capacity())
        i = self.rows.append(memory_id, namespace, (t_created, t_expired, valid_from, valid_until))
        self.matrix[i - self.n0] = vector
        codes, scale, err, rounding, size = quantize(self.matrix[i - self.n0])
        self.codes[i - self.n0], self.scale[i] = codes[0], scale[0]
        self.err[i], self.rounding[i], self.size[i] = err[0], rounding[0], size[0]

    def load(
        self,
        ids: Sequence[str],
        namespaces: Sequence[str],
        matrix: np.ndarray,
        times: np.ndarray,
    ) -> None:
        """Bulk-add rows to an empty index (one quantisation pass, not one per row).

        ``times`` holds t_created, t_expired, valid_from, valid_until per row.
        """
        if self.n or self.n0:
            raise RuntimeError("load() fills an empty index; use add() afterwards")
        n = len(ids)
        if self.rows.capacity < n:
            self._grow_to(n)
        self.matrix[:n] = matrix
        for lo in range(0, n, _CHUNK):  # float64 temporaries stay small
            hi = min(lo + _CHUNK, n)
            codes, scale, err, rounding, size = quantize(self.matrix[lo:hi])
            self.codes[lo:hi], self.scale[lo:hi] = codes, scale
            self.err[lo:hi], self.rounding[lo:hi], self.size[lo:hi] = err, rounding, size
        self.rows.load(ids, namespaces, times)

    def set_expired(self, memory_id: str, t_expired: int) -> None:
        self.rows.set_expired(memory_id, t_expired)

    def vectors(self, ids: Sequence[str], namespace: str | None) -> dict[str, np.ndarray]:
        """Cached vectors of the ids that live in ``namespace`` (any namespace: None)."""
        found = self.rows.in_namespace(self.rows.rows_of(ids), namespace)
        if not found:
            return {}
        rows = self.float_rows(np.array([i for _, i in found], dtype=np.intp)).astype(np.float32)
        return {memory_id: rows[j] for j, (memory_id, _) in enumerate(found)}

    def float_rows(self, rows: np.ndarray) -> np.ndarray:
        """The float32 vectors of some rows, as float64; IndexFileError if one is corrupt."""
        out = np.empty((rows.size, self.dimension), dtype=np.float64)
        base = rows < self.n0
        if base.any():
            picked = rows[base]
            self._verify(picked)
            out[base] = self._base_matrix[picked]
            if self.release_rows is not None and self.n >= _INT8_ROWS:  # small: scanned whole
                self.release_rows()
        if not base.all():
            out[~base] = self.matrix[rows[~base] - self.n0]
        return out

    def _verify(self, rows: np.ndarray) -> None:
        """Checks the CRC-32 of persisted float rows not checked before."""
        if self._all_checked:
            return
        todo = rows[~self._checked[rows]]
        if todo.size == 0:
            return
        for r in np.unique(todo).tolist():
            if crc32(self._base_matrix[r]) != int(self._base_crc[r]):
                raise IndexFileError(f"persisted vector row {r} does not match its checksum")
            self._checked[r] = True
        if rows.size >= self.n0 and self._checked.all():
            self._all_checked = True

    def _float_scan(self, query: np.ndarray) -> np.ndarray:
        n, n0 = self.n, self.n0
        if n0 == 0:
            return self.matrix[:n] @ query
        self._verify(np.arange(n0))  # a small index reads every row anyway
        return np.concatenate([self._base_matrix @ query, self.matrix[: n - n0] @ query])

    def _int8_dots(self, query_codes: np.ndarray) -> np.ndarray:
        n, n0 = self.n, self.n0
        if n0 == 0:
            return int8_dots(self.codes[:n], query_codes)
        if n == n0:
            return int8_dots(self._base_codes, query_codes)
        tail = int8_dots(self.codes[: n - n0], query_codes)
        return np.concatenate([int8_dots(self._base_codes, query_codes), tail])

    def _visible(self, namespace: str | None, view: TemporalView) -> np.ndarray | None:
        mask = self.rows.visible_mask(namespace, view)
        return None if mask is None else np.flatnonzero(mask)

    def _scan(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Approximate scores of every row, and per row a bound on their error.

        Small indexes multiply the float32 matrix (it sits in cache). Larger ones
        quantise the query too and take exact integer dot products of the codes:
        |v.q - s_v s_q (c_v.c_q)| <= err_v |q| + size_v |q - s_q c_q|.
        """
        n = self.n
        q_norm = float(np.linalg.norm(query.astype(np.float64)))
        if n < _INT8_ROWS:
            return self._float_scan(query), self.rounding[:n] * np.float32(q_norm)
        q_codes, q_scale, q_err, _, _ = quantize(query)
        dots = self._int8_dots(q_codes[0])
        approx = dots * (self.scale[:n] * float(q_scale[0]))
        slack = self.err[:n] * np.float32(q_norm) + self.size[:n] * q_err[0]
        return approx, slack

    def search(
        self, query: np.ndarray, k: int, namespace: str | None, view: TemporalView
    ) -> list[tuple[str, float]]:
        """The k visible rows with the highest dot product with ``query``, exactly.

        Scores are float64 dot products of the stored float32 rows; order is
        score descending, then id ascending.
        """
        if self.n == 0 or k <= 0:
            return []
        idx = self._visible(namespace, view)
        if idx is None or idx.size == 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        # float32 bounds: their rounding is far inside the _ROUNDING slack of err
        approx, slack = self._scan(q)
        if idx.size < self.n:  # most reads see every row: skip the gather then
            approx, slack = approx[idx], slack[idx]
        take = min(k, idx.size)
        # the take-th best lower bound: at least `take` rows score at least this much
        floor = kth_largest(approx - slack, take)
        chosen = idx[approx + slack >= floor]
        # an elementwise product summed per row: the same arithmetic for a row
        # whatever else was chosen with it (a BLAS kernel may vary with shape);
        # in chunks, so that a query tied with every row cannot allocate them all
        q64 = q.astype(np.float64)
        exact = np.empty(chosen.size, dtype=np.float64)
        for lo in range(0, chosen.size, _CHUNK):
            part = chosen[lo : lo + _CHUNK]
            exact[lo : lo + part.size] = (self.float_rows(part) * q64).sum(axis=1)
        if chosen.size > take:  # keep the take best, and every row tied with the last
            kth = np.partition(exact, chosen.size - take)[chosen.size - take]
            keep = exact >= kth
            chosen, exact = chosen[keep], exact[keep]
        pairs = list(zip(self.rows.take_ids(chosen), exact.tolist(), strict=True))
        pairs.sort(key=lambda p: (-p[1], p[0]))
        return pairs[:take]

    # persistence (persisted.py) ----------------------------------------------------------
    def sections(self) -> tuple[dict[str, Section], dict[str, object]]:
        """The index as arrays and header values.

        Persisted rows go out as they are mapped, with the CRC-32s they were written
        with (a row corrupt in the old file stays detectably corrupt in the new one),
        so saving again reads their bytes once and computes checksums of new rows only.
        """
        n, n0 = self.n, self.n0
        rows, ns_names = self.rows.sections()
        tail = self.matrix[: n - n0]
        tail_crc = np.fromiter((crc32(row) for row in tail), dtype=np.uint32, count=n - n0)
        arrays: dict[str, Section] = {
            **{f"r.{k}": v for k, v in rows.items()},
            "matrix": (self._base_matrix, tail) if n0 else tail,
            "row_crc": (self._base_crc, tail_crc) if n0 else tail_crc,
            "codes": (self._base_codes, self.codes[: n - n0]) if n0 else self.codes[:n],
            "scale": self.scale[:n],
            "err": self.err[:n],
            "rounding": self.rounding[:n],
            "size": self.size[:n],
        }
        return arrays, {"namespaces": ns_names, "rows": n, "dimension": self.dimension}

    @classmethod
    def from_sections(
        cls, sections: dict[str, np.ndarray], meta: dict[str, object]
    ) -> TenantVectors:
        """An index over persisted arrays: codes and vectors mapped, the rest in memory."""
        dimension = meta["dimension"]
        names = meta["namespaces"]
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise ValueError("the persisted vector index's header has no valid dimension")
        if not isinstance(names, list):
            raise ValueError("the persisted vector index's header has no namespace list")
        index = cls(dimension, capacity=16)
        rows = RowTable.from_sections(sections, "r.", names)
        n = rows.n
        shapes = [sections[k].shape for k in ("matrix", "codes")]
        small = [sections[k].shape for k in ("row_crc", "scale", "err", "rounding", "size")]
        if shapes != [(n, dimension)] * 2 or small != [(n,)] * 5:
            raise ValueError("the persisted vector index's columns disagree in shape")
        index.rows = rows
        index.n0 = n
        index._base_matrix = sections["matrix"]
        index._base_codes = sections["codes"]
        index._base_crc = sections["row_crc"]
        index._checked = np.zeros(n, dtype=bool)
        capacity = rows.capacity
        index.matrix = np.zeros((capacity - n, dimension), dtype=np.float32)
        index.codes = np.zeros((capacity - n, dimension), dtype=np.int8)
        for name in ("scale", "err", "rounding", "size"):
            column = np.zeros(capacity, dtype=getattr(index, name).dtype)
            column[:n] = sections[name]
            setattr(index, name, column)
        return index
