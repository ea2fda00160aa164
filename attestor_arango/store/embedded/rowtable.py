"""The rows of an in-memory index: ids, namespaces and both time axes as numpy arrays.

The embedded store keeps two per-tenant caches, the vector index and the text
index. Each filters its rows by scope and temporal view before it ranks them,
with the same predicate the SQL views use; this table is that filter, once.

Finding a row by id: a persisted table (``from_sections``) keeps its ids in the
file as fixed-width UTF-8 bytes sorted once when it was written, with each
one's row and each row's rank, and looks ids up by binary search over that
mapping; only rows appended since sit in a dict. Building two id -> row dicts of
a million entries when a tenant's indexes were opened was 42 % of the first
recall at 1M memories (and decoding a million id strings most of the rest).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress

import numpy as np

from attestor_arango.scope import TemporalView
from attestor_arango.store.embedded.column import ObjectColumn

GROW = 1.5
TIMES = ("t_created", "t_expired", "valid_from", "valid_until")
# (max t_created, min t_expired, max valid_from, min valid_until) of a table with no row
_EMPTY_BOUNDS = (np.iinfo(np.int64).min, np.iinfo(np.int64).max) * 2
# persisted ids a table keeps with their rows (RowTable._remember): ~2 MB at most, beside one
# pointer per persisted row (8 MB at 1M rows) to find them by row
_SEEN = 8192


def grown(array: np.ndarray, length: int) -> np.ndarray:
    """``array`` with room for ``length`` rows: its rows kept, the new ones zero.

    Not ``np.resize``: that fills the new rows with repeated copies of the old ones,
    so a million-row index growing by half wrote (and made resident) the whole new
    capacity at once; zeros come from fresh pages the kernel maps only when written.
    """
    out = np.zeros((length, *array.shape[1:]), dtype=array.dtype)
    keep = min(length, len(array))
    out[:keep] = array[:keep]
    return out


class IdLookup:
    """Persisted ids: sorted fixed-width bytes, the row of each, and the rank of each row.

    Read-only and usually memory-mapped; a lookup touches ~log2(n) entries. An id
    holding a NUL byte cannot be stored (numpy's byte strings drop trailing NULs),
    so ``encode_ids`` refuses one and a lookup of one finds nothing here.
    """

    def __init__(self, sorted_ids: np.ndarray, rows: np.ndarray, rank: np.ndarray) -> None:
        n = len(sorted_ids)
        if sorted_ids.dtype.kind != "S" or rows.shape != (n,) or rank.shape != (n,):
            raise ValueError("the persisted id lookup's columns disagree")
        self.sorted_ids, self.rows, self.rank = sorted_ids, rows, rank
        self.width = sorted_ids.dtype.itemsize
        self.n = n

    def rows_of(self, ids: Sequence[str]) -> list[int]:
        """The row of each id (-1: not here), one vectorised binary search."""
        if not ids or self.n == 0:
            return [-1] * len(ids)
        keys = [i.encode() for i in ids]
        wanted = np.array(keys, dtype=self.sorted_ids.dtype)  # a longer key is cut: refused below
        at = np.minimum(np.searchsorted(self.sorted_ids, wanted), self.n - 1)
        hit = self.sorted_ids[at] == wanted
        hit &= np.fromiter(map(len, keys), dtype=np.int64, count=len(keys)) <= self.width
        if b"\x00" in b"".join(keys):  # numpy drops trailing NULs: such a key is never here
            hit &= np.array([b"\x00" not in k for k in keys])
        found: list[int] = np.where(hit, self.rows[at], -1).tolist()
        return found

    def take(self, rows: np.ndarray) -> list[str]:
        return [b.decode() for b in self.sorted_ids[self.rank[rows]].tolist()]

    def in_row_order(self) -> np.ndarray:
        return self.sorted_ids[self.rank]


def encode_ids(ids: Sequence[str]) -> np.ndarray:
    """Ids as fixed-width UTF-8 bytes; ValueError for one holding a NUL (not storable)."""
    keys = [i.encode() for i in ids]
    if any(b"\x00" in k for k in keys):
        raise ValueError("an id holds a NUL byte")
    return np.array(keys, dtype=f"S{max((len(k) for k in keys), default=1) or 1}")


class RowTable:
    """Append-only rows (a closed row only gets its ``t_expired`` set)."""

    def __init__(self, capacity: int = 1024) -> None:
        self.n = 0
        # rows 0..n0-1 come from a file (their ids in ``_base``); ``_ids`` and ``_pos`` hold
        # the ids of rows n0.. (of every row when n0 is 0)
        self.n0 = 0
        self._base: IdLookup | None = None
        self._ids = ObjectColumn()  # str per row, out of the garbage collector's walk
        self._pos: dict[str, int] = {}  # str -> int only: the collector untracks it
        # persisted ids found or handed out lately, -> row (``_remember``): a recall asks
        # for the rows of the ids a search just returned, two or three times
        self._seen: dict[str, int] = {}
        # the same, row -> id (None: not held), for ``take_ids``: one gather, where a dict
        # read a row cost ~500 instructions (a recall takes ~250 ids at 1k rows)
        self._named = np.empty(0, dtype=object)
        self._ns_codes: dict[str, int] = {}
        self._ns_names: list[str] = []
        self.ns = np.zeros(capacity, dtype=np.int32)
        self.t_created = np.zeros(capacity, dtype=np.int64)
        self.t_expired = np.zeros(capacity, dtype=np.int64)
        self.valid_from = np.zeros(capacity, dtype=np.int64)
        self.valid_until = np.zeros(capacity, dtype=np.int64)
        # bounds over all rows, kept as rows come and close (``all_visible``): the largest
        # t_created and valid_from, the smallest t_expired and valid_until
        self._bounds = _EMPTY_BOUNDS

    @property
    def capacity(self) -> int:
        return len(self.ns)

    def grow_to(self, capacity: int) -> None:
        for name in ("ns", *TIMES):
            setattr(self, name, grown(getattr(self, name), capacity))

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
        """The distinct namespaces of some rows (a table of one namespace needs no look)."""
        names = self._ns_names
        if len(names) == 1:
            return set(names) if len(rows) else set()
        return {names[int(code)] for code in np.unique(self.ns[rows])}

    # ids ------------------------------------------------------------------------------------
    def row_of(self, memory_id: str) -> int | None:
        i = self._pos.get(memory_id)
        if i is not None or self._base is None:
            return i
        row = self._base.rows_of([memory_id])[0]
        return None if row < 0 else row

    def __contains__(self, memory_id: str) -> bool:
        return self.row_of(memory_id) is not None

    def rows_of(self, ids: Sequence[str]) -> list[tuple[str, int]]:
        """(id, row) of those of ``ids`` the table holds, in their order."""
        pos = self._pos
        if self._base is None:
            found = [pos.get(i, -1) for i in ids]
        else:
            seen = self._seen
            try:  # every id a persisted one found lately (no id is both: ids are unique)
                return list(zip(ids, map(seen.__getitem__, ids), strict=True))
            except KeyError:
                pass
            found = [pos.get(i, seen.get(i, -1)) for i in ids]
            rest = [j for j, r in enumerate(found) if r < 0]
            if rest:
                asked = [ids[j] for j in rest]
                rows = self._base.rows_of(asked)
                for j, r in zip(rest, rows, strict=True):
                    found[j] = r
                self._remember(asked, rows)
        return [(i, r) for i, r in zip(ids, found, strict=True) if r >= 0]

    def _remember(self, ids: Sequence[str], rows: Sequence[int], every: bool = False) -> None:
        """Keeps persisted ids' rows (-1: none, not kept; an id never changes its row, and
        one not here may be appended later); forgets them all past ``_SEEN`` ids.
        ``every``: the caller knows each row is one (no -1 to filter out, half the time)."""
        seen, named = self._seen, self._named
        if len(seen) + len(ids) > _SEEN:
            named[list(seen.values())] = None  # the rows held: ``seen``'s
            seen.clear()
        if not every:
            found = [(i, r) for i, r in zip(ids, rows, strict=True) if r >= 0]
            ids, rows = [i for i, _ in found], [r for _, r in found]
        seen.update(zip(ids, rows, strict=True))
        if rows:
            named[rows] = np.fromiter(ids, dtype=object, count=len(ids))

    def take_ids(self, rows: np.ndarray | Sequence[int]) -> list[str]:
        """The ids of some rows, in their order."""
        if len(rows) == 0:  # (the text pool asks for the rows it decoded: mostly none)
            return []
        at = np.asarray(rows, dtype=np.intp)
        n0, base = self.n0, self._base
        if base is None or at.size == 0:
            return self._ids.take(at - n0)
        if int(at.max()) < n0:
            named: list[str | None] = self._named[at].tolist()
            if not all(named):  # rows not handed out lately (None): decoded, and remembered
                missing = [j for j, i in enumerate(named) if i is None]
                read = base.take(at[missing])
                for j, memory_id in zip(missing, read, strict=True):
                    named[j] = memory_id
                self._remember(read, at[missing].tolist(), every=True)
            return named  # type: ignore[return-value]  # every None was filled
        if int(at.min()) >= n0:
            return self._ids.take(at - n0)
        out = self._ids.take(np.maximum(at - n0, 0))
        low = np.flatnonzero(at < n0)
        for j, memory_id in zip(low.tolist(), base.take(at[low]), strict=True):
            out[j] = memory_id
        return out

    def append(self, memory_id: str, namespace: str, times: Sequence[int]) -> int:
        """The new row's index (the owner grows its own arrays alongside, see ``capacity``)."""
        if self.n == self.capacity:
            self.grow_to(self.next_capacity())
        i = self.n
        self.ns[i] = self.ns_code(namespace)
        for name, value in zip(TIMES, times, strict=True):
            getattr(self, name)[i] = value
        self._ids.append(memory_id)
        self._pos[memory_id] = i
        self.n += 1
        created, expired, valid_from, valid_until = (int(t) for t in times)
        top_created, low_expired, top_from, low_until = self._bounds
        self._bounds = (
            max(top_created, created),
            min(low_expired, expired),
            max(top_from, valid_from),
            min(low_until, valid_until),
        )
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
        self._ids = ObjectColumn(ids)
        self._pos = {memory_id: i for i, memory_id in enumerate(ids)}
        self.n = n
        self._bounds = self._measured_bounds()

    def _measured_bounds(self) -> tuple[int, int, int, int]:
        n = self.n
        if n == 0:
            return _EMPTY_BOUNDS
        return (
            int(self.t_created[:n].max()),
            int(self.t_expired[:n].min()),
            int(self.valid_from[:n].max()),
            int(self.valid_until[:n].min()),
        )

    def set_expired(self, memory_id: str, t_expired: int) -> None:
        i = self.row_of(memory_id)
        if i is not None:
            self.t_expired[i] = t_expired
            top_created, low_expired, top_from, low_until = self._bounds
            self._bounds = (top_created, min(low_expired, t_expired), top_from, low_until)

    def held(self, ids: Sequence[str], namespace: str | None) -> tuple[list[str], list[int]]:
        """Those of ``ids`` the table holds in ``namespace`` (any: None), in their order, and
        their rows: ``in_namespace(rows_of(ids), namespace)`` as two columns. When each id is
        found by one dict read (a persisted table's found lately, else an appended row's) and
        the table holds no other namespace, without a pair per id (the lanes' ~85 a recall)."""
        by_id = self._pos if self._base is None else self._seen
        if namespace is None or self._ns_names == [namespace]:
            try:
                return list(ids), list(map(by_id.__getitem__, ids))
            except KeyError:
                pass
        found = self.in_namespace(self.rows_of(ids), namespace)
        return [i for i, _ in found], [r for _, r in found]

    def in_namespace(
        self, found: list[tuple[str, int]], namespace: str | None
    ) -> list[tuple[str, int]]:
        """Those (id, row) pairs (``rows_of``) whose row lives in ``namespace`` (any: None),
        as one array comparison rather than a check per row (none in a table of that one
        namespace: every row is in it)."""
        if namespace is None or not found or self._ns_names == [namespace]:
            return found
        code = self._ns_codes.get(namespace)
        if code is None:
            return []
        at = np.fromiter((r for _, r in found), dtype=np.intp, count=len(found))
        return list(compress(found, (self.ns[at] == code).tolist()))

    def all_visible(self, namespace: str | None, view: TemporalView) -> bool:
        """True when the scope and view see every row (``visible_mask`` all true), decided
        from bounds over the rows instead of a pass over them.

        A read of the present over one namespace usually sees every row it holds: at a
        million rows the mask cost 4 ms per lane per recall and gathering the vector
        scores through it as much again. A row only ever gets appended or its
        ``t_expired`` lowered (closed), and both keep the bounds (a closed row's old
        bound stays a bound below), so the answer is exact whenever it is True.
        """
        if self.n == 0:
            return False
        if namespace is not None and self._ns_names != [namespace]:
            return False  # (every row's code indexes the names: one name, every row's)
        top_created, low_expired, top_from, low_until = self._bounds
        if top_created > view.as_of or low_expired <= view.t_expired_after:
            return False
        return view.window is None or (top_from < view.window_end and low_until > view.window_start)

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
    def _id_sections(self) -> dict[str, np.ndarray]:
        """The ids sorted (fixed-width bytes), the row of each, the rank of each row."""
        base = self._base
        if base is not None and self.n == self.n0:  # nothing appended: reused as mapped
            return {"idsort": base.sorted_ids, "idrow": base.rows, "idrank": base.rank}
        tail = encode_ids(list(self._ids))
        keys = tail if base is None else np.concatenate([base.in_row_order(), tail])
        if len(keys) >= 2**31:  # pragma: no cover - rows are int32 in the file
            raise ValueError("too many rows for the index file format")
        order = np.argsort(keys, kind="stable")
        rank = np.empty(len(keys), dtype=np.int32)
        rank[order] = np.arange(len(keys), dtype=np.int32)
        return {"idsort": keys[order], "idrow": order.astype(np.int32), "idrank": rank}

    def sections(self) -> tuple[dict[str, np.ndarray], list[str]]:
        """The table as arrays, and its namespace names (code order) for the file's header.

        ValueError when an id cannot be stored (one holding a NUL byte).
        """
        n = self.n
        times = np.stack([getattr(self, name)[:n] for name in TIMES], axis=1)
        arrays: dict[str, np.ndarray] = {
            **self._id_sections(),
            "ns": self.ns[:n].copy(),
            "times": np.ascontiguousarray(times, dtype=np.int64),
        }
        return arrays, list(self._ns_names)

    @classmethod
    def from_sections(
        cls, sections: dict[str, np.ndarray], prefix: str, ns_names: Sequence[str]
    ) -> RowTable:
        """A table of persisted rows: ids looked up in the mapped arrays, times in memory."""
        ns, times = sections[prefix + "ns"], sections[prefix + "times"]
        n = len(ns)
        base = IdLookup(*(sections[prefix + k] for k in ("idsort", "idrow", "idrank")))
        if base.n != n or times.shape != (n, len(TIMES)):
            raise ValueError("the persisted row table's columns disagree in length")
        table = cls(max(n, 16))
        table._ns_names = list(ns_names)
        table._ns_codes = {name: code for code, name in enumerate(table._ns_names)}
        table.ns[:n] = ns
        for col, name in enumerate(TIMES):
            getattr(table, name)[:n] = times[:, col]
        table._base, table.n0, table.n = base, n, n
        table._named = np.empty(n, dtype=object)  # every row's None
        table._bounds = table._measured_bounds()
        return table
