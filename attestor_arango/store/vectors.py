"""Exact vector search over an in-memory float32 matrix, one per tenant.

The matrix is loaded from SQLite once and then updated incrementally; a query
is one matrix-vector product plus a mask for the temporal view and namespace,
so no vector is re-read from disk per query.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..scope import TemporalView

_GROW = 1.5


class TenantVectors:
    def __init__(self, dimension: int, capacity: int = 1024) -> None:
        self.dimension = dimension
        self.n = 0
        self.ids: list[str] = []
        self.pos: dict[str, int] = {}
        self._ns_codes: dict[str, int] = {}
        self.matrix = np.zeros((capacity, dimension), dtype=np.float32)
        self.ns = np.zeros(capacity, dtype=np.int32)
        self.t_created = np.zeros(capacity, dtype=np.int64)
        self.t_expired = np.zeros(capacity, dtype=np.int64)
        self.valid_from = np.zeros(capacity, dtype=np.int64)
        self.valid_until = np.zeros(capacity, dtype=np.int64)

    def _grow(self) -> None:
        cap = max(16, int(len(self.ns) * _GROW))
        self.matrix = np.resize(self.matrix, (cap, self.dimension))
        for name in ("ns", "t_created", "t_expired", "valid_from", "valid_until"):
            setattr(self, name, np.resize(getattr(self, name), cap))

    def ns_code(self, namespace: str) -> int:
        return self._ns_codes.setdefault(namespace, len(self._ns_codes))

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
        if memory_id in self.pos:
            return
        if self.n == len(self.ns):
            self._grow()
        i = self.n
        self.matrix[i] = vector
        self.ns[i] = self.ns_code(namespace)
        self.t_created[i] = t_created
        self.t_expired[i] = t_expired
        self.valid_from[i] = valid_from
        self.valid_until[i] = valid_until
        self.ids.append(memory_id)
        self.pos[memory_id] = i
        self.n += 1

    def set_expired(self, memory_id: str, t_expired: int) -> None:
        i = self.pos.get(memory_id)
        if i is not None:
            self.t_expired[i] = t_expired

    def vectors(self, ids: Sequence[str], namespace: str | None) -> dict[str, np.ndarray]:
        """Cached vectors of the ids that live in ``namespace`` (any namespace: None)."""
        code = None if namespace is None else self._ns_codes.get(namespace, -1)
        out: dict[str, np.ndarray] = {}
        for memory_id in ids:
            i = self.pos.get(memory_id)
            if i is not None and (code is None or self.ns[i] == code):
                out[memory_id] = self.matrix[i].copy()
        return out

    def search(
        self, query: np.ndarray, k: int, namespace: str | None, view: TemporalView
    ) -> list[tuple[str, float]]:
        n = self.n
        if n == 0 or k <= 0:
            return []
        mask = (self.t_created[:n] <= view.as_of) & (self.t_expired[:n] > view.t_expired_after)
        if view.window is not None:
            mask &= (self.valid_from[:n] < view.window_end) & (
                self.valid_until[:n] > view.window_start
            )
        if namespace is not None:
            code = self._ns_codes.get(namespace)
            if code is None:
                return []
            mask &= self.ns[:n] == code
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return []
        sel_scores = (self.matrix[:n] @ query)[idx]
        take = min(k, idx.size)
        if take < idx.size:
            part = np.argpartition(-sel_scores, take - 1)[:take]
            # widen to every row tied with the k-th score so the id tie-break decides
            kth = sel_scores[part].min()
            part = np.flatnonzero(sel_scores >= kth)
        else:
            part = np.arange(idx.size)
        pairs = [(self.ids[int(idx[j])], float(sel_scores[j])) for j in part]
        pairs.sort(key=lambda p: (-p[1], p[0]))
        return pairs[:take]
