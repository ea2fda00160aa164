"""Decoded memories kept between reads, so a recall does not decode the same rows again.

A recall reads its ~100 candidates by id (the vector lane's, the text lane's, the
neighbouring turns) and decoding a row (SQL fetch, JSON fields, the frozen model) was
about a fifth of a recall's time. The rows a store reads recur from one recall to the
next, and a memory row is immutable except for its close (``t_expired``, ``status``,
``superseded_by``). So the decoded ``Memory`` of a row read outside a transaction is
kept here, keyed by tenant and id, and dropped:

- when the row is closed (the connection's ``expire`` op, after its commit);
- with the whole tenant, when its rows are purged or its embedding space changes (``drop``);
- all at once when another connection commits (``PRAGMA data_version`` moved), since
  this process did not see what it wrote;
- least recently used first, past ``limit`` entries (``MEMORY_ROWS``: a few MB).

Rows read inside a write transaction are neither served from nor put into the cache:
they may hold changes that are not committed yet (and may be rolled back).

A hit hands out a new ``Memory`` whose ``metadata`` is a fresh copy decoded from the
stored JSON: the one mutable field, so what one caller does to its result never
reaches another's. Everything else in a ``Memory`` is immutable and shared.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from attestor_arango.models import Memory, trusted

# about 3.5 KB per decoded memory: 2,048 rows hold ~7 MB
MEMORY_ROWS = 2048


class MemoryRows:
    """Decoded memories by (tenant, id), least recently read first; see the module docstring."""

    def __init__(self, limit: int = MEMORY_ROWS) -> None:
        self.limit = limit
        # (tenant, id) -> the memory and its metadata as stored (None: empty)
        self._rows: OrderedDict[tuple[str, str], tuple[Memory, str | None]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._rows)

    def take(
        self, tenant: str, namespace: str | None, ids: Sequence[str]
    ) -> tuple[list[Memory], list[str]]:
        """(the cached memories of ``ids`` visible in ``namespace`` (any: None), the ids to
        read from the rows). A cached row of another namespace is not visible, as the
        query's scope filter would not return it either."""
        found: list[Memory] = []
        rest: list[str] = []
        rows = self._rows
        get, seen = rows.get, rows.move_to_end
        for memory_id in ids:
            key = (tenant, memory_id)
            entry = get(key)
            if entry is None:
                rest.append(memory_id)
                continue
            seen(key)
            memory, metadata = entry
            if namespace is not None and memory.namespace != namespace:
                continue
            # a new Memory equal to the kept one, with its own copy of the metadata
            values = dict(memory.__dict__)
            values["metadata"] = {} if metadata is None else dict(json.loads(metadata) or {})
            found.append(trusted(Memory, values))
        self.hits += len(found)
        self.misses += len(rest)
        return found, rest

    def put(self, memories: Iterable[tuple[Memory, str | None]]) -> None:
        """Keeps decoded memories, each with its metadata column as stored (JSON text)."""
        rows = self._rows
        for memory, metadata in memories:
            empty = metadata is None or metadata in ("", "{}")
            rows[(memory.tenant, memory.id)] = (memory, None if empty else metadata)
            rows.move_to_end((memory.tenant, memory.id))
        while len(rows) > self.limit:
            rows.popitem(last=False)

    def held(self, tenant: str) -> int:
        """How many of the tenant's memories are kept."""
        return sum(1 for t, _ in self._rows if t == tenant)

    def discard(self, tenant: str, memory_id: str) -> None:
        self._rows.pop((tenant, memory_id), None)

    def drop(self, tenant: str) -> None:
        for key in [k for k in self._rows if k[0] == tenant]:
            del self._rows[key]

    def clear(self) -> None:
        self._rows.clear()
