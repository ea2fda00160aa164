"""Decoded memories kept between reads, so a recall does not decode the same rows again.

A recall reads its ~100 candidates by id (the vector lane's, the text lane's, the
neighbouring turns) and decoding a row (SQL fetch, JSON fields, the frozen model) was
about a fifth of a recall's time. The rows a store reads recur from one recall to the
next, and a memory row is immutable except for its close (``t_expired``, ``status``,
``superseded_by``). So the decoded ``Memory`` of a row read outside a transaction is
kept here, keyed by id (with its tenant, which a read must match), and dropped:

- when the row is closed (the connection's ``expire`` op, after its commit);
- with the whole tenant, when its rows are purged or its embedding space changes (``drop``);
- all at once when another connection commits (``PRAGMA data_version`` moved), since
  this process did not see what it wrote;
- least recently used first, past ``limit`` entries (``MEMORY_ROWS``) or past ``max_bytes``
  of them (``MEMORY_BYTES``, each entry counted as ``row_bytes`` estimates it).

Rows read inside a write transaction are neither served from nor put into the cache:
they may hold changes that are not committed yet (and may be rolled back).

A hit hands out a new ``Memory`` whose ``metadata`` is a fresh copy decoded from the
stored JSON: the one mutable field, so what one caller does to its result never
reaches another's. Everything else in a ``Memory`` is immutable and shared.
"""

from __future__ import annotations

import json
import sys
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from attestor_arango.models import Memory, trusted_parts

# Rows kept (~3 MB of short turns). 8,192 held the benchmark's whole working set at 10k
# (3,930 rows) and 100k (7,247), but at 100k each extra kept row is one more object for
# every full garbage collection to walk: a single pass of 200 questions took two full
# collections instead of one (GC 210 vs 130 ms a pass) and recall CPU went 1.02-1.03x.
# Bounded by bytes as well, since a memory may hold up to 32,000 characters.
MEMORY_ROWS = 2048
MEMORY_BYTES = 16 * 1024 * 1024
# a decoded memory beside its content and metadata text: the model, its field dict, its
# datetimes and strings, the cache's key and entry (measured: ~1,370 bytes a LoCoMo turn
# of ~100 characters, all told)
ROW_OVERHEAD = 1280


def row_bytes(memory: Memory, metadata: str | None) -> int:
    """About the memory one kept row holds: its content, its stored metadata text (decoded
    again on each hit) and ``ROW_OVERHEAD``."""
    return ROW_OVERHEAD + sys.getsizeof(memory.content) + (len(metadata) if metadata else 0)


# ``trusted(Memory, values)`` built in ``take``'s loop (``trusted_parts``): without a Python
# call a memory, ~500 instructions each of the ~85 a recall takes
_BLANK, _FIELDS = trusted_parts(Memory)


class MemoryRows:
    """Decoded memories by id, least recently read first; see the module docstring.

    Keyed by the id alone, each entry holding its memory's tenant: a key of (tenant, id)
    was a tuple built, hashed and compared twice per row read (~85 rows a recall), where
    an id's hash is kept by the string. One id in two tenants (an import keeps ids) keeps
    the entry of the tenant that read it last; a read of the other tenant misses it."""

    def __init__(self, limit: int = MEMORY_ROWS, max_bytes: int = MEMORY_BYTES) -> None:
        self.limit = limit
        self.max_bytes = max_bytes
        # id -> the memory's tenant, its fields (its ``__dict__``: what a copy is made of), its
        # metadata as stored (None: empty), its row_bytes
        self._rows: OrderedDict[str, tuple[str, dict[str, Any], str | None, int]]
        self._rows = OrderedDict()
        self.bytes = 0  # the entries' row_bytes summed
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._rows)

    def take(
        self, tenant: str, namespace: str | None, ids: Sequence[str]
    ) -> tuple[dict[str, Memory], list[str]]:
        """(the cached memories of ``ids`` visible in ``namespace`` (any: None) by id, in the
        order of ``ids``, the ids to read from the rows). A cached row of another namespace is
        not visible, as the query's scope filter would not return it either; a row of another
        tenant is never found (each entry holds the memory's own tenant, see ``put``), so the
        memories handed out need no tenant check of their own."""
        found: dict[str, Memory] = {}
        rest: list[str] = []
        rows = self._rows
        get, seen = rows.get, rows.move_to_end
        blank, fields = _BLANK, _FIELDS
        for memory_id in ids:
            entry = get(memory_id)
            if entry is None or entry[0] != tenant:
                rest.append(memory_id)
                continue
            seen(memory_id)
            _, kept, metadata, _ = entry  # the kept memory's fields by key
            if namespace is not None and kept["namespace"] != namespace:
                continue
            # a new Memory equal to the kept one, with its own copy of the metadata
            values = kept.copy()
            values["metadata"] = {} if metadata is None else dict(json.loads(metadata) or {})
            memory: Any = blank()
            memory.__dict__ = values
            memory.__pydantic_fields_set__ = fields
            memory.__pydantic_extra__ = None
            memory.__pydantic_private__ = None
            memory.__class__ = Memory
            found[memory_id] = memory
        self.hits += len(found)
        self.misses += len(rest)
        return found, rest

    def put(self, memories: Iterable[tuple[Memory, str | None]]) -> None:
        """Keeps decoded memories, each with its metadata column as stored (JSON text)."""
        rows = self._rows
        for memory, metadata in memories:
            kept = None if metadata is None or metadata in ("", "{}") else metadata
            size = row_bytes(memory, kept)
            old = rows.pop(memory.id, None)
            if old is not None:
                self.bytes -= old[3]
            rows[memory.id] = (memory.tenant, memory.__dict__, kept, size)
            self.bytes += size
        while rows and (len(rows) > self.limit or self.bytes > self.max_bytes):
            self.bytes -= rows.popitem(last=False)[1][3]

    def held(self, tenant: str) -> int:
        """How many of the tenant's memories are kept."""
        return sum(1 for entry in self._rows.values() if entry[0] == tenant)

    def discard(self, tenant: str, memory_id: str) -> None:
        old = self._rows.get(memory_id)
        if old is not None and old[0] == tenant:
            del self._rows[memory_id]
            self.bytes -= old[3]

    def drop(self, tenant: str) -> None:
        for key in [k for k, entry in self._rows.items() if entry[0] == tenant]:
            self.bytes -= self._rows.pop(key)[3]

    def clear(self) -> None:
        self._rows.clear()
        self.bytes = 0
