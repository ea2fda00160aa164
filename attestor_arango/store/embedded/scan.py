"""The int8 scan of a large vector index on more than one core, with the same exact dots.

At 100k rows of 384 dimensions the scan of the codes is the largest single cost of a
recall (4.5 ms of SimSIMD's int8 kernel on one core here). SimSIMD's own ``threads``
argument runs an OpenMP team with a static split: when the second core is busy (another
process, another recall) its half waits and the first spins at the barrier, which took
8 ms instead of 4.3 on this 2-core machine. So the rows are cut into parts instead, and
the calling thread and a few helper threads (started once, kept for the process) claim
parts one at a time until none is left. SimSIMD releases the GIL while it scans, so a
helper scans beside the caller when a core is free; when none is, the caller scans the
parts itself (a helper that wakes late finds nothing left to claim) and waits at most for
the one part a helper may hold. Scanning again a part a descheduled helper holds was
tried: on this busy machine it only added CPU (the helper's copy ran on, late) and did
not lower p95. Each part is an ordinary one-thread SimSIMD call over a slice of the rows,
so the numbers are the very integer dots of a single call, whatever the split. No
process-wide setting changes (BLAS and OpenMP thread counts stay the process owner's).
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from collections.abc import Callable, Sequence

import numpy as np

# the values (one per row, 1-D) of some code rows against the query's codes
Kernel = Callable[[np.ndarray, np.ndarray], np.ndarray]

# rows per part: a quarter of the rows, within [PART_ROWS, 4 * PART_ROWS] (each part costs
# the caller and the helper a GIL hand-off; quarters of 100k rows scanned faster than
# parts of 16k here, and a part a descheduled helper holds stays short at 1M); and the
# fewest rows of an index scanned in parts. At 100k rows, 200 LoCoMo recalls alternating
# per query in one process on a quiet 2-core machine: recall p50 15.8 vs 17.7 ms, p95 22.0
# vs 24.4 ms with parts (benchmarks/results/vector-scan-parts-s12-100k-quiet.txt); with
# the second core busy (other benchmarks running) parts cost 5-8 % instead
# (vector-lane-s12-parts-ab-100k.txt). An idle core is the common case of a memory server.
PART_ROWS = 16_384
PARALLEL_ROWS = 65_536
MAX_HELPERS = 3  # memory bandwidth, not cores, bounds a scan beyond a few threads


class _Job:
    """One scan in parts: each part claimed once, in order, by whichever thread comes first."""

    def __init__(
        self,
        parts: list[tuple[np.ndarray, slice]],
        query: np.ndarray,
        kernel: Kernel,
        out: np.ndarray,
    ) -> None:
        self.parts: list[tuple[np.ndarray, slice]] = parts
        self.query, self.kernel, self.out = query, kernel, out
        self.claims = itertools.count()  # next() is atomic: one claimant per part
        self.left = len(parts)
        self.changed = threading.Condition(threading.Lock())
        self.error: BaseException | None = None

    def work(self) -> None:
        """Claims and scans parts until none is left; the last one finished wakes the caller."""
        while (i := next(self.claims)) < len(self.parts):
            codes, where = self.parts[i]
            try:
                self.out[where] = self.kernel(codes, self.query)
            except BaseException as exc:  # raised in the caller
                self.error = exc
            with self.changed:
                self.left -= 1
                if self.left == 0:
                    self.changed.notify_all()

    def lead(self) -> None:
        """The caller's share, then the wait for parts a helper claimed (at most one each)."""
        try:
            self.work()
            with self.changed:
                self.changed.wait_for(lambda: self.left == 0)
        finally:  # a helper that wakes later finds nothing, and no job holds rows or output
            self.parts, self.out = [], np.zeros(0, dtype=self.out.dtype)
        if self.error is not None:
            raise self.error


class _Helpers:
    """Daemon threads that help with submitted scans; started again in a forked child."""

    def __init__(self, count: int) -> None:
        self.pid = os.getpid()
        self.count = count
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        for i in range(count):
            name = f"attestor-vector-scan-{i}"
            threading.Thread(target=self._serve, name=name, daemon=True).start()

    def _serve(self) -> None:
        while True:
            job = self.jobs.get()
            job.work()
            del job


_start = threading.Lock()
_helpers: _Helpers | None = None


def _pool() -> _Helpers | None:
    """The process's helpers (None with one core), started on first use."""
    global _helpers
    pool = _helpers
    if pool is not None and pool.pid == os.getpid():
        return pool
    with _start:
        if _helpers is None or _helpers.pid != os.getpid():
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
            count = min(MAX_HELPERS, cores - 1)
            _helpers = _Helpers(count) if count > 0 else None
        return _helpers


def dots(
    blocks: Sequence[np.ndarray],
    query_codes: np.ndarray,
    kernel: Kernel,
    dtype: type,
    parallel_rows: int | None = None,
) -> np.ndarray:
    """``kernel``'s values of every row of ``blocks`` (in order) against the query, as one
    ``dtype`` array; an index of at least ``parallel_rows`` rows is scanned in parts by the
    caller and any free helper (one block in one part: the kernel's own array, no copy)."""
    n = sum(len(b) for b in blocks)
    if len(blocks) == 1 and 0 < n < (PARALLEL_ROWS if parallel_rows is None else parallel_rows):
        return np.asarray(kernel(blocks[0], query_codes), dtype=dtype)
    out: np.ndarray = np.empty(n, dtype=dtype)
    step = min(max(-(-n // 4), PART_ROWS), 4 * PART_ROWS)
    if n < (PARALLEL_ROWS if parallel_rows is None else parallel_rows):
        step = n
    parts: list[tuple[np.ndarray, slice]] = []
    at = 0
    for block in blocks:
        for lo in range(0, len(block), max(step, 1)):
            rows = block[lo : lo + step]
            parts.append((rows, slice(at + lo, at + lo + len(rows))))
        at += len(block)
    pool = _pool() if len(parts) > 1 else None
    if pool is None:
        for rows, where in parts:
            out[where] = kernel(rows, query_codes)
        return out
    job = _Job(parts, query_codes, kernel, out)
    for _ in range(min(pool.count, len(parts) - 1)):
        pool.jobs.put(job)
    job.lead()
    return out
