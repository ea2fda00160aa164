"""A bounded memo for pure functions of one argument, instead of ``functools.lru_cache``.

An ``lru_cache`` keeps its entries as linked nodes that every full garbage
collection walks: its 65k stems alone added ~15 ms to each full collection of a
process with a loaded 100k-memory index. A plain dict of strings to strings
(or ints) holds nothing the collector can follow, so CPython stops tracking it
and its size costs the collector nothing. When the dict is full it is emptied
rather than trimmed, which needs no iteration and so stays safe when threads
share it; the functions are pure, so a miss only costs the call again.

Their keys are texts the process saw (memory contents, queries, their words), so
an erasure that removes rows (``purge_user``, compaction, a retention ``delete``)
calls ``forget_all``: every memo of the process is emptied, and no word of the
erased rows stays reachable in one. A memo is a pure function's cache, so emptying
it changes no result; every tenant shares it for the same reason (a value depends
on the text alone, never on whose it is).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar
from weakref import WeakSet

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class Memo(Generic[K, T]):
    def __init__(self, fn: Callable[[K], T], size: int) -> None:
        if size < 1:
            raise ValueError("a memo needs room for at least one entry")
        self._fn = fn
        self._size = size
        self._values: dict[K, T] = {}
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        _ALL.add(self)

    def __call__(self, key: K) -> T:
        try:
            return self._values[key]
        except KeyError:
            pass
        value = self._fn(key)
        if len(self._values) >= self._size:
            self._values.clear()
        self._values[key] = value
        return value

    @property
    def known(self) -> Callable[[K], T | None]:
        """The value of a key already computed, else None: the memo's dict's own ``get`` (a
        C call, no Python frame; ``__call__`` costs a bound method and a frame, ~600
        instructions a hit). The dict is emptied in place, never replaced, so the bound
        ``get`` stays the memo's; a caller whose values may be None uses ``__call__``."""
        return self._values.get

    def __len__(self) -> int:
        return len(self._values)

    def clear(self) -> None:
        self._values.clear()


_ALL: WeakSet[Memo[Any, Any]] = WeakSet()  # every memo of the process


def forget_all() -> None:
    """Empties every memo of the process: after an erasure, so none holds its words. The
    standard library's URL cache too: Starlette parses each request's URL with
    ``urllib.parse.urlsplit``, an ``lru_cache`` of the last 128 URLs, and a URL carries
    what the caller asked for (``/ui/memories?q=<name>``, ``/v1/.../<entity>``)."""
    for each in list(_ALL):
        each.clear()
    clear_urls = getattr(urllib.parse, "clear_cache", None)  # in the stdlib, not in typeshed
    if clear_urls is not None:
        clear_urls()


def memo(size: int) -> Callable[[Callable[[K], T]], Memo[K, T]]:
    """Decorator: ``@memo(65_536)`` over a pure function of one hashable argument."""

    def wrap(fn: Callable[[K], T]) -> Memo[K, T]:
        return Memo(fn, size)

    return wrap
