"""Exact vector search over an in-memory matrix, one per tenant.

The matrix is loaded from SQLite once and then updated incrementally; a query never re-reads
a vector from disk. Scanning 100k float32 rows of 384 dimensions moves 150 MB through memory
per query, which is what bounded recall latency. So each row is also kept as int8 codes with
a per-row scale and a bound on the quantisation error. The query is quantised too, the scan
takes exact integer dot products of the codes (SimSIMD's int8 kernels: a quarter of the
bytes and no float conversion), every row gets an interval that provably holds its true
score, and only the rows whose interval reaches the k-th best lower bound are re-scored
exactly, in float64, from the float32 row. The answer is the exact top-k (ties included,
broken by id), with no approximation left in it; ``tests/test_embedded_vectors.py`` checks
it against a brute-force scan. Only ``search(prefilter=...)`` approximates (the pipeline
asks for it from ``vector_prefilter_rows`` visible rows: retrieval/config.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from attestor_arango.scope import TemporalView
from attestor_arango.store.codec import vector_norm
from attestor_arango.store.embedded import prefilter
from attestor_arango.store.embedded.exact import (
    RowNorms,
    UnitRows,
    WideRows,
    exact_scores,
    ranked,
)
from attestor_arango.store.embedded.indexfile import Generation, IndexFileError, crc32
from attestor_arango.store.embedded.quantise import (
    SAMPLE_STEP,
    USE_SIMSIMD,
    int8_dots,
    int8_dots32,
    kth_largest,
    quantize,
    quantize_query,
)
from attestor_arango.store.embedded.rowtable import RowTable, grown

_CHUNK = 2048  # rows per step of a bulk load (float64 temporaries stay in cache)
# below this many rows the float32 matrix sits in cache and one product beats quantising
# the query (measured crossover near 10k rows of 384 dimensions: benchmarks/vector_scan.py)
_INT8_ROWS = 10_000
# a persisted float matrix up to this size stays mapped whole (10k rows of 384: 15 MB); a larger
# one releases the pages each read touched: read-ahead around scattered reads made 100k rows
# (154 MB) resident in 50 recalls with releases every 512 rows (results/rss-s11-release.txt)
_RESIDENT_BYTES = 32 << 20


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
        # the scales as float32 too (for ``_chosen``), and the largest err and size of a row
        self.scale32 = np.zeros(capacity, dtype=np.float32)
        self.max_err = 0.0
        self.max_size = 0.0
        self._signs = prefilter.SignBits()  # the prefilter's codes, built on first use
        # a persisted index (vector_sections.py) keeps its first ``n0`` rows of codes and float32
        # vectors in read-only mapped arrays, ``matrix`` and ``codes`` the rows added since (row
        # i at i - n0); a persisted float row's CRC-32 is checked when first read (``_checked``)
        self.n0 = 0
        self._base_matrix = np.zeros((0, dimension), dtype=np.float32)
        self._base_codes = np.zeros((0, dimension), dtype=np.int8)
        self._base_crc = np.zeros(0, dtype=np.uint32)
        self._checked = np.zeros(0, dtype=bool)
        self._all_checked = False
        # reads persisted float rows (ascending, unique) without mapping their pages (IndexFile.
        # read_rows): scattered rows read through the mapping stayed resident (fault-around)
        self.read_rows: Callable[[np.ndarray], np.ndarray] | None = None
        self._last_read = (np.zeros(0, dtype=np.intp), np.zeros((0, dimension), dtype=np.float32))
        self.norms = RowNorms()  # the rows' float64 norms, kept as exact cosine reads them
        self.wide = WideRows()  # a small index's rows as float64 (``float_rows``)
        self.units = UnitRows()  # and as unit vectors (``unit_rows``)

    @property
    def n(self) -> int:
        return self.rows.n

    def _grow_to(self, cap: int) -> None:
        self.rows.grow_to(cap)
        self.matrix = grown(self.matrix, cap - self.n0)
        self.codes = grown(self.codes, cap - self.n0)
        for name in ("scale", "scale32", "err", "rounding", "size"):
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
        self.codes[i - self.n0], self.scale[i], self.scale32[i] = codes[0], scale[0], scale[0]
        self.err[i], self.rounding[i], self.size[i] = err[0], rounding[0], size[0]
        self.max_err = max(self.max_err, float(err[0]))
        self.max_size = max(self.max_size, float(size[0]))

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
        self._measure()

    def _measure(self) -> None:
        """``scale32``, ``max_err`` and ``max_size`` of the rows held (after a bulk fill)."""
        n = self.n
        self.scale32[:n] = self.scale[:n]
        self.max_err = float(self.err[:n].max()) if n else 0.0
        self.max_size = float(self.size[:n].max()) if n else 0.0

    def set_expired(self, memory_id: str, t_expired: int) -> None:
        self.rows.set_expired(memory_id, t_expired)

    def gather(self, ids: Sequence[str], namespace: str | None) -> tuple[list[str], np.ndarray]:
        """The ids held in ``namespace`` (any: None), in the order of ``ids``, and their float32
        vectors as one matrix (row j: the j-th), one gather (``float_rows``: IndexFileError)."""
        have, rows = self.held(ids, namespace)
        return have, self.float_rows(rows, np.float32)

    def held(self, ids: Sequence[str], namespace: str | None) -> tuple[list[str], np.ndarray]:
        """The ids held in ``namespace`` (any: None), in the order of ``ids``, and their rows."""
        have, rows = self.rows.held(ids, namespace)
        return have, np.array(rows, dtype=np.intp)

    def unit_rows(self, rows: np.ndarray) -> np.ndarray | None:
        """The float64 unit vectors of some rows (``exact.UnitRows``: each widened row divided
        by its kept norm, a zero norm as 1.0); None when the index is too large to keep its
        rows widened (the caller divides them)."""
        if not self.wide.fits(self.n, self.dimension):
            return None
        return self.units.of(rows, self.n, self.dimension, self._divided)

    def _divided(self, rows: np.ndarray) -> np.ndarray:
        norms = self.norms.of(rows, self.float_rows(rows, np.float32))  # a copy: changed here
        norms[norms == 0] = 1.0
        wide = self.float_rows(rows)
        wide /= norms[:, np.newaxis]
        return wide

    def float_rows(self, rows: np.ndarray, dtype: type = np.float64) -> np.ndarray:
        """The float32 vectors of some rows, as ``dtype``; IndexFileError if one is corrupt.

        Persisted rows of a small matrix (scanned whole, or no larger resident whole than
        ``_RESIDENT_BYTES``) are read from the mapping; those of a larger one are copied
        out of the file (``read_rows``) and nothing of them stays resident. A small index,
        every row checked, keeps its rows widened to float64 (``exact.WideRows``)."""
        if (
            dtype is np.float64
            and (self.n0 == 0 or self._all_checked)
            and (wide := self.wide.of(rows, self.n, self.dimension, self.float_rows)) is not None
        ):
            return wide
        # ``take`` gathers whole rows (one copy each), where ``a[rows]`` steps through each
        # row's items: ~45k instructions for the lanes' ~85 rows, ~12k as ``take``
        if self.n0 == 0:  # every row in memory: one gather
            return self.matrix.take(rows, axis=0).astype(dtype, copy=False)
        large = self.n >= _INT8_ROWS and self._base_matrix.nbytes > _RESIDENT_BYTES
        if not large and rows.size and int(rows.max()) < self.n0:
            # every row persisted, read from the mapping: one gather, each row not checked
            # before checked now (a 10k index's scan reads codes only: the lanes' rows)
            read = self._base_matrix.take(rows, axis=0)
            self._verify(rows, read)
            return read.astype(dtype, copy=False)
        out: np.ndarray = np.empty((rows.size, self.dimension), dtype=dtype)
        base = rows < self.n0
        if base.any():
            picked = rows[base]
            if self.read_rows is None or not large:
                read = self._base_matrix[picked]
                self._verify(picked, read)
                out[base] = read
            else:
                unique, back = np.unique(picked, return_inverse=True)
                out[base] = self._read_file_rows(unique)[back]
        if not base.all():
            out[~base] = self.matrix[rows[~base] - self.n0]
        return out

    def _read_file_rows(self, rows: np.ndarray) -> np.ndarray:
        """Persisted rows (ascending, unique) of a large matrix from the file, checked; those
        the previous read took are reused (a recall re-scores the lane's rows, then asks for
        its answer's vectors: at 100k 50 of the 146 rows just read, a third of its reads)."""
        kept, values = self._last_read
        at = np.minimum(np.searchsorted(kept, rows), max(kept.size - 1, 0))
        hit = kept[at] == rows if kept.size else np.zeros(rows.size, dtype=bool)
        if hit.all():
            return values[at]
        out = np.empty((rows.size, self.dimension), dtype=np.float32)
        out[hit] = values[at[hit]]
        missing = rows[~hit]
        read = self.read_rows(missing)  # type: ignore[misc]
        self._verify(missing, read)
        out[~hit] = read
        self._last_read = (rows, out)
        return out

    def _verify(self, rows: np.ndarray, values: np.ndarray) -> None:
        """Checks the CRC-32 of persisted float rows not checked before (``values[j]``: the
        bytes read of row ``rows[j]``)."""
        if self._all_checked:
            return
        for j in (~self._checked[rows]).nonzero()[0].tolist():
            r = int(rows[j])
            if crc32(values[j]) != int(self._base_crc[r]):
                raise IndexFileError(f"persisted vector row {r} does not match its checksum")
            self._checked[r] = True
        if rows.size >= self.n0 and self._checked.all():
            self._all_checked = True

    def _float_scan(self, query: np.ndarray) -> np.ndarray:
        n, n0 = self.n, self.n0
        if n0 == 0:
            return self.matrix[:n] @ query
        if not self._all_checked:  # a small index reads every row anyway
            self._verify(np.arange(n0), self._base_matrix)
        if n == n0:
            return self._base_matrix @ query
        return np.concatenate([self._base_matrix @ query, self.matrix[: n - n0] @ query])

    def _code_blocks(self) -> list[np.ndarray]:
        """The codes of every row in order: the persisted ones, then those added since."""
        return [b for b in (self._base_codes, self.codes[: self.n - self.n0]) if len(b)]

    def _codes_of(self, rows: np.ndarray) -> np.ndarray:
        codes = np.empty((rows.size, self.dimension), dtype=np.int8)
        base = rows < self.n0
        codes[base] = self._base_codes[rows[base]]
        codes[~base] = self.codes[rows[~base] - self.n0]
        return codes

    def _visible(self, namespace: str | None, view: TemporalView) -> np.ndarray | None:
        """The visible rows, ascending; None when every row is visible (no gather needed)."""
        if self.rows.all_visible(namespace, view):
            return None
        mask = self.rows.visible_mask(namespace, view)
        return np.zeros(0, dtype=np.intp) if mask is None else mask.nonzero()[0]

    def _scan(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Approximate scores of every row, and per row a bound on their error.

        Small indexes multiply the float32 matrix (it sits in cache). Larger ones
        quantise the query too and take exact integer dot products of the codes:
        |v.q - s_v s_q (c_v.c_q)| <= err_v |q| + size_v |q - s_q c_q|.
        """
        n = self.n
        q_norm = vector_norm(query.astype(np.float64))
        if n < _INT8_ROWS:
            return self._float_scan(query), self.rounding[:n] * np.float32(q_norm)
        qc = quantize_query(query)
        dots = int8_dots(self._code_blocks(), qc.codes)
        approx = dots * (self.scale[:n] * qc.scale)
        slack = self.err[:n] * np.float32(q_norm) + self.size[:n] * np.float32(qc.err)
        return approx, slack

    def _chosen(self, query: np.ndarray, idx: np.ndarray | None, take: int) -> np.ndarray | None:
        """The rows whose score interval reaches the take-th best lower bound (a superset of
        what ``_scan`` over every row gives), from fewer passes over a large index.

        With ``a_v = s_v (c_v.c_q)`` (float32: the integer dot is exact below 2**24), a
        row's upper bound is at most ``s_q a_v + S``, S the widest slack of any row, so
        only rows with ``a_v >= (floor - S) / s_q`` get their exact bounds (``_scan``'s
        arithmetic). The floor is the take-th best lower bound among the rows of largest
        ``a_v`` (a subset's is never above the whole index's). None: the shortcut does
        not apply (small index, or too loose to prune); the caller scans in full.
        """
        n = self.n
        if n < _INT8_ROWS or not USE_SIMSIMD or self.dimension * 127 * 127 >= 2**24:
            return None
        q_norm = vector_norm(query.astype(np.float64))
        q_codes, q_scale, q_err = quantize_query(query)
        max_err, max_size = self.max_err, self.max_size
        # the largest float32 slack of a row: two products and a sum, each rounded once
        widest = (max_err * q_norm + max_size * q_err) * (1 + 1e-6)
        if not np.isfinite(widest) or max_size > 1e26:
            return None  # float32 products could overflow: the float64 scan decides
        # ``int8_dots`` as float32 (exact: 384 products of int8s sum below 2**24): half the bytes
        dots = int8_dots32(self._code_blocks(), q_codes)
        a = dots * self.scale32[:n]
        if idx is not None:
            a = a[idx]
        sample = a[::SAMPLE_STEP]
        m = max(1, 4 * take // SAMPLE_STEP)
        if a.size < 16 * SAMPLE_STEP or m >= sample.size:
            return None
        guess = np.partition(sample, sample.size - m)[sample.size - m]
        top = (a >= guess).nonzero()[0]
        if top.size < take:
            return None
        # the scan's dots are exact integers: gathered, they are int8_dots' very values
        rows = top if idx is None else idx[top]
        lo, _ = self._bounds_of(rows, dots[rows].astype(np.float64), q_scale, q_err, q_norm)
        floor = float(np.partition(lo, lo.size - take)[lo.size - take])
        # a_v >= a_exact (1 - 2**-24) - 2**-149: the threshold, lowered past both
        reach = (floor - widest) / q_scale
        reach -= abs(reach) * 1e-5 + 1e-30
        limit = np.float32(reach)
        if float(limit) > reach:
            limit = np.nextafter(limit, np.float32(-np.inf))
        near = (a >= limit).nonzero()[0]
        if near.size > max(take, a.size // 20):
            return None  # a bound too loose to prune: the full scan costs no more
        cand = near if idx is None else idx[near]
        _, hi = self._bounds_of(cand, dots[cand].astype(np.float64), q_scale, q_err, q_norm)
        return cand[hi >= floor]

    def _bounds_of(
        self, rows: np.ndarray, dots: np.ndarray, q_scale: float, q_err: float, q_norm: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper score bounds of some rows from the exact integer dot products of
        their codes with the query's (float64), with ``_scan``'s very arithmetic."""
        approx = dots * (self.scale[rows] * q_scale)
        slack = self.err[rows] * np.float32(q_norm) + self.size[rows] * np.float32(q_err)
        return approx - slack, approx + slack

    def _prefiltered(
        self, query: np.ndarray, idx: np.ndarray | None, take: int, keep: int
    ) -> np.ndarray:
        """APPROXIMATE: the rows whose bounds reach the take-th best lower bound
        among the ``keep`` visible rows nearest the query by code signs (prefilter.py)."""
        q_codes, q_scale, q_err = quantize_query(query)
        bits = self._signs.of(self._code_blocks(), self.rows.capacity, self.dimension)
        cand = prefilter.nearest(bits, q_codes, idx, keep)
        q_norm = vector_norm(query.astype(np.float64))
        dots = int8_dots([self._codes_of(cand)], q_codes)  # float64, exact
        lo, hi = self._bounds_of(cand, dots, q_scale, q_err, q_norm)
        floor = float(np.partition(lo, lo.size - take)[lo.size - take])
        return cand[hi >= floor]

    def search(
        self,
        query: np.ndarray,
        k: int,
        namespace: str | None,
        view: TemporalView,
        prefilter: int = 0,
        prefilter_rows: int = 0,
    ) -> list[tuple[str, float]]:
        """The k visible rows with the highest dot product with ``query``, exactly: float64
        dots of the stored float32 rows, score descending, then id ascending. APPROXIMATE
        with ``prefilter`` > 0, on an index of >= 10k rows where >= ``prefilter_rows`` and
        more than ``prefilter`` rows are visible: the exact top-k of the ``prefilter`` rows
        nearest by code signs (``_prefiltered``), not of every row."""
        chosen, q, take = self.candidates(query, k, namespace, view, prefilter, prefilter_rows)
        if take == 0:
            return []
        return ranked(self.rows.take_ids, chosen, exact_scores(self.float_rows, chosen, q), take)

    def candidates(
        self,
        query: np.ndarray,
        k: int,
        namespace: str | None,
        view: TemporalView,
        prefilter: int = 0,
        prefilter_rows: int = 0,
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """What ``search`` scores exactly: the rows whose bounds reach its k-th best (its answer:
        their ``take`` best), the query as float32, ``take`` (k, or fewer visible rows; 0: none)."""
        q = np.asarray(query, dtype=np.float32)
        idx = self._visible(namespace, view) if self.n and k > 0 else np.zeros(0, np.intp)
        if idx is not None and idx.size == 0:
            return idx, q, 0
        visible = self.n if idx is None else idx.size
        take = min(k, visible)
        approximate = take <= prefilter < visible and visible >= prefilter_rows
        if approximate and self.n >= _INT8_ROWS and USE_SIMSIMD:
            return self._prefiltered(q, idx, take, prefilter), q, take
        chosen = self._chosen(q, idx, take)
        if chosen is None:
            # float32 bounds: their rounding is far inside the _ROUNDING slack of err
            approx, slack = self._scan(q)
            if idx is not None:
                approx, slack = approx[idx], slack[idx]
            # the take-th best lower bound: at least `take` rows score at least this much
            floor = kth_largest(approx - slack, take)
            hit = approx + slack >= floor
            chosen = hit.nonzero()[0] if idx is None else idx[hit]
        return chosen, q, take
