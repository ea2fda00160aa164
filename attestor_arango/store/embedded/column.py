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

from collections.abc import Iterable, Iterator, Sequence
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
