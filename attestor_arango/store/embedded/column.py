"""A growable column of Python objects that the garbage collector does not walk.

The in-memory indexes hold one id, one text and one tuple of terms per row. In a
``list`` every one of those references is visited by each full garbage
collection, and on this machine that cost about 6 ms per 100k rows per list: a
loaded 100k-memory tenant made every full collection in the embedding process
take ~60 ms. A numpy array of dtype ``object`` holds the same references
without taking part in garbage collection, so its size does not matter to it.
That is safe here because the column only holds strings and tuples of
strings, which cannot form reference cycles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np

GROW = 1.5


class ObjectColumn:
    """Append-only; reads by row number, by slice or by an array of row numbers."""

    def __init__(self, values: Iterable[Any] = ()) -> None:
        items = list(values)
        self._n = len(items)
        self._data = np.empty(max(16, self._n), dtype=object)
        # fromiter keeps each item whole; a slice assignment would unpack tuples
        self._data[: self._n] = np.fromiter(items, dtype=object, count=self._n)

    def __len__(self) -> int:
        return self._n

    def append(self, value: Any) -> None:
        if self._n == len(self._data):
            grown = np.empty(int(len(self._data) * GROW) + 1, dtype=object)
            grown[: self._n] = self._data[: self._n]
            self._data = grown
        self._data[self._n] = value
        self._n += 1

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return self._data[: self._n][index].tolist()
        if not -self._n <= index < self._n:
            raise IndexError(f"row {index} is outside a column of {self._n} rows")
        return self._data[index % self._n if index < 0 else index]

    def take(self, rows: np.ndarray | Sequence[int]) -> list[Any]:
        """The values of many rows at once (one numpy gather, no Python loop)."""
        return self._data[: self._n][np.asarray(rows, dtype=np.intp)].tolist()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._data[: self._n].tolist())

    def sizes(self, rows: np.ndarray) -> np.ndarray:
        """``len`` of each of some rows' values (int64), without copying them out."""
        values = self._data[: self._n][rows]
        return np.fromiter(map(len, values), dtype=np.int64, count=len(values))


SEP = "\x00"  # between the strings of a tuple row in a ``BlobColumn`` (no term holds it)
_SEP_BYTE = SEP.encode()[0]


def pack_strings(values: Sequence[Any], tuples: bool) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes of every value end to end, and the n + 1 offsets that cut them apart."""
    encoded = [(SEP.join(v) if tuples else v).encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def packed(column: ObjectColumn | BlobColumn, tuples: bool) -> tuple[np.ndarray, np.ndarray]:
    """``pack_strings`` of a whole column; a ``BlobColumn``'s blob is reused, not decoded.

    Saving a persisted index again (persisted.py) then costs its new rows only,
    plus one copy of the bytes, instead of decoding and re-encoding every row.
    """
    if isinstance(column, ObjectColumn):
        return pack_strings(list(column), tuples)
    return column.packed()


class BlobColumn:
    """An ``ObjectColumn`` whose first rows live in a read-only (memory-mapped) byte blob.

    A persisted index keeps its texts and terms this way: opening it creates no
    Python object per row, and a read decodes only the rows it takes. Rows
    appended afterwards go to an ``ObjectColumn`` tail. ``tuples``: each row is a
    tuple of strings (stored joined by ``SEP``).
    """

    def __init__(
        self,
        blob: np.ndarray,
        offsets: np.ndarray,
        tuples: bool,
        check: Callable[[np.ndarray, np.ndarray], None] | None = None,
    ) -> None:
        self._blob = np.ascontiguousarray(blob, dtype=np.uint8).data.cast("B")
        self._offsets = offsets
        # verifies the byte spans [lo, hi) of the blob about to be decoded (a file's lazy
        # block checksums, ``IndexFile.check``); raises where they do not match
        self._check = check
        self._base = len(offsets) - 1
        self._tuples = tuples
        self._tail = ObjectColumn()

    def __len__(self) -> int:
        return self._base + len(self._tail)

    def appended(self) -> list[Any]:
        """The rows appended since the blob (the ones not persisted yet)."""
        return list(self._tail)

    def packed(self) -> tuple[np.ndarray, np.ndarray]:
        """The blob and offsets of every row (see ``packed``): base bytes, then the tail's."""
        self.check_all()
        base = np.frombuffer(self._blob, dtype=np.uint8)[: int(self._offsets[-1])]
        if not len(self._tail):
            return base, np.asarray(self._offsets, dtype=np.int64)
        blob, offsets = pack_strings(list(self._tail), self._tuples)
        return (
            np.concatenate([base, blob]),
            np.concatenate([self._offsets[:-1], offsets + int(self._offsets[-1])]),
        )

    def append(self, value: Any) -> None:
        self._tail.append(value)

    def _decode(self, row: int) -> Any:
        lo, hi = int(self._offsets[row]), int(self._offsets[row + 1])
        if self._check is not None:
            self._check(np.array([lo]), np.array([hi]))
        return self._decode_span(lo, hi)

    def check_all(self) -> None:
        """Verifies the whole blob (before its bytes are written into another file)."""
        if self._check is not None:
            self._check(np.array([0]), np.array([int(self._offsets[-1])]))

    def _decode_span(self, lo: int, hi: int) -> Any:
        text = str(self._blob[lo:hi], "utf-8")
        if not self._tuples:
            return text
        return tuple(text.split(SEP)) if text else ()

    def __getitem__(self, index: int) -> Any:
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"row {index} is outside a column of {n} rows")
        row = index % n
        return self._decode(row) if row < self._base else self._tail[row - self._base]

    def take(self, rows: np.ndarray | Sequence[int]) -> list[Any]:
        at = np.asarray(rows, dtype=np.intp)
        base = self._base
        if at.size and int(at.max()) < base:  # all persisted: slice bounds in one gather
            starts, ends = self._offsets[at], self._offsets[at + 1]
            if self._check is not None:
                self._check(starts, ends)
            lo, hi = starts.tolist(), ends.tolist()
            return [self._decode_span(a, b) for a, b in zip(lo, hi, strict=True)]
        tail = self._tail
        return [self._decode(r) if r < base else tail[r - base] for r in at.tolist()]

    def sizes(self, rows: np.ndarray) -> np.ndarray:
        """The number of strings in each of some tuple rows (int64), counted in the blob's
        bytes (separators) instead of decoding the rows: BM25 over a text pool needs every
        row's length but the terms of only a few rows."""
        if not self._tuples:
            raise TypeError("sizes() counts the strings of tuple rows")
        at = np.asarray(rows, dtype=np.intp)
        base = self._base
        persisted = at < base
        out = np.zeros(at.size, dtype=np.int64)
        if not persisted.all():
            tail = self._tail
            out[~persisted] = [len(tail[r - base]) for r in at[~persisted].tolist()]
        if not persisted.any():
            return out
        stored = at[persisted]
        starts, ends = self._offsets[stored], self._offsets[stored + 1]
        if self._check is not None:
            self._check(starts, ends)
        spans = (ends - starts).astype(np.int64)
        # every byte of those rows, end to end, and where each row's bytes begin in that run
        begin = np.zeros(spans.size + 1, dtype=np.int64)
        np.cumsum(spans, out=begin[1:])
        where = np.arange(int(begin[-1]), dtype=np.int64) + np.repeat(starts - begin[:-1], spans)
        seps = np.zeros(int(begin[-1]) + 1, dtype=np.int64)
        np.cumsum(np.frombuffer(self._blob, dtype=np.uint8)[where] == _SEP_BYTE, out=seps[1:])
        # a row of k strings has k - 1 separators; an empty row (no bytes) has no string
        out[persisted] = np.where(spans > 0, seps[begin[1:]] - seps[begin[:-1]] + 1, 0)
        return out

    def __iter__(self) -> Iterator[Any]:
        for row in range(len(self)):
            yield self[row]
