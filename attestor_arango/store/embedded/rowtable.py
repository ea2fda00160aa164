"""The rows of an in-memory index: ids, namespaces and both time axes as numpy arrays.

The embedded store keeps two per-tenant caches, the vector index and the text
index. Each filters its rows by scope and temporal view before it ranks them,
with the same predicate the SQL views use; this table is that filter, once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attestor_arango.scope import TemporalView
from attestor_arango.store.embedded.column import ObjectColumn

GROW = 1.5
TIMES = ("t_created", "t_expired", "valid_from", "valid_until")


class RowTable:
    """Append-only rows (a closed row only gets its ``t_expired`` set)."""

    def __init__(self, capacity: int = 1024) -> None:
        self.n = 0
        self.ids = ObjectColumn()  # str per row, out of the garbage collector's walk
        self.pos: dict[str, int] = {}  # str -> int only: the collector untracks it
        self._ns_codes: dict[str, int] = {}
        self._ns_names: list[str] = []
        self.ns = np.zeros(capacity, dtype=np.int32)
        self.t_created = np.zeros(capacity, dtype=np.int64)
        self.t_expired = np.zeros(capacity, dtype=np.int64)
        self.valid_from = np.zeros(capacity, dtype=np.int64)
        self.valid_until = np.zeros(capacity, dtype=np.int64)

    @property
    def capacity(self) -> int:
        return len(self.ns)

    def grow_to(self, capacity: int) -> None:
        for name in ("ns", *TIMES):
            setattr(self, name, np.resize(getattr(self, name), capacity))

    def next_capacity(self) -> int:
        return max(16, int(self.capacity * GROW))

    def ns_code(self, namespace: str) -> int:
        code = self._ns_codes.get(namespace)
        if code is None:
            code = self._ns_codes[namespace] = len(self._ns_names)
            self._ns_names.append(namespace)
        return code

    def namespace(self, row: int) -> str:
        return self._ns_names[int(self.ns[row])]

    def namespaces(self, rows: np.ndarray) -> set[str]:
        """The distinct namespaces of some rows."""
        return {self._ns_names[int(code)] for code in np.unique(self.ns[rows])}

    def append(self, memory_id: str, namespace: str, times: Sequence[int]) -> int:
        """The new row's index (the owner grows its own arrays alongside, see ``capacity``)."""
        if self.n == self.capacity:
            self.grow_to(self.next_capacity())
        i = self.n
        self.ns[i] = self.ns_code(namespace)
        for name, value in zip(TIMES, times, strict=True):
            getattr(self, name)[i] = value
        self.ids.append(memory_id)
        self.pos[memory_id] = i
        self.n += 1
        return i

    def load(self, ids: Sequence[str], namespaces: Sequence[str], times: np.ndarray) -> None:
        """Fill an empty table; ``times`` holds t_created, t_expired, valid_from, valid_until."""
        if self.n:
            raise RuntimeError("load() fills an empty table; use append() afterwards")
        n = len(ids)
        if self.capacity < n:
            self.grow_to(n)
        self.ns[:n] = [self.ns_code(ns) for ns in namespaces]
        for col, name in enumerate(TIMES):
            getattr(self, name)[:n] = times[:, col]
        self.ids = ObjectColumn(ids)
        self.pos = {memory_id: i for i, memory_id in enumerate(ids)}
        self.n = n

    def set_expired(self, memory_id: str, t_expired: int) -> None:
        i = self.pos.get(memory_id)
        if i is not None:
            self.t_expired[i] = t_expired

    def in_namespace(self, row: int, namespace: str | None) -> bool:
        return namespace is None or self._ns_codes.get(namespace) == int(self.ns[row])

    def visible_mask(self, namespace: str | None, view: TemporalView) -> np.ndarray | None:
        """Which rows the scope and view see; None when the namespace has no row at all."""
        n = self.n
        mask = (self.t_created[:n] <= view.as_of) & (self.t_expired[:n] > view.t_expired_after)
        if view.window is not None:
            mask &= (self.valid_from[:n] < view.window_end) & (
                self.valid_until[:n] > view.window_start
            )
        if namespace is not None:
            code = self._ns_codes.get(namespace)
            if code is None:
                return None
            mask &= self.ns[:n] == code
        return mask

    # persistence (persisted.py) ----------------------------------------------------------
    def sections(self) -> tuple[dict[str, np.ndarray], list[str]]:
        """The table as arrays, and its namespace names (code order) for the file's header.

        Ids are joined by newlines (``persisted.py`` refuses to write an id holding one).
        """
        n = self.n
        ids = "\n".join(self.ids[:n]).encode()
        times = np.stack([getattr(self, name)[:n] for name in TIMES], axis=1)
        arrays: dict[str, np.ndarray] = {
            "ids": np.frombuffer(ids, dtype=np.uint8),
            "ns": self.ns[:n].copy(),
            "times": np.ascontiguousarray(times, dtype=np.int64),
        }
        return arrays, list(self._ns_names)

    @classmethod
    def from_sections(
        cls, ids_blob: np.ndarray, ns: np.ndarray, times: np.ndarray, ns_names: Sequence[str]
    ) -> RowTable:
        """A table of persisted rows, in memory (a few numbers per row; they change)."""
        n = len(ns)
        ids = ids_blob.tobytes().decode().split("\n") if n else []
        if len(ids) != n or times.shape != (n, len(TIMES)):
            raise ValueError("the persisted row table's columns disagree in length")
        table = cls(max(n, 16))
        table._ns_names = list(ns_names)
        table._ns_codes = {name: code for code, name in enumerate(table._ns_names)}
        table.ns[:n] = ns
        for col, name in enumerate(TIMES):
            getattr(table, name)[:n] = times[:, col]
        table.ids = ObjectColumn(ids)
        table.pos = {memory_id: i for i, memory_id in enumerate(ids)}
        table.n = n
        return table
