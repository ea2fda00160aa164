"""Reading a whole scope page by page: one loop for every service that walks a tenant.

Export, retention, compaction, row verification, consolidation, re-embedding and filtered
search all read every row a filter admits. Each page is one store call of at most
``page`` rows, so memory stays bounded and a backend never answers one huge query; a
consumer that has seen enough simply stops iterating and no further page is read.
"""

from __future__ import annotations

from collections.abc import Iterator

from attestor_arango.models import Episode, Memory
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import EpisodeStore, MemoryFilter, MemoryStore

PAGE = 500


def memory_pages(
    store: MemoryStore,
    scope: Scope,
    filters: MemoryFilter,
    view: TemporalView,
    page: int = PAGE,
) -> Iterator[list[Memory]]:
    """``list_memories`` pages in its order (t_created, id), until a short page."""
    offset = 0
    while True:
        batch = store.list_memories(scope, filters, view, page, offset)
        yield batch
        if len(batch) < page:
            return
        offset += len(batch)


def all_memories(
    store: MemoryStore,
    scope: Scope,
    filters: MemoryFilter,
    view: TemporalView,
    page: int = PAGE,
) -> Iterator[Memory]:
    """Every row ``filters`` admits in ``view``, one page read at a time."""
    for batch in memory_pages(store, scope, filters, view, page):
        yield from batch


def all_episodes(store: EpisodeStore, scope: Scope, page: int = PAGE) -> Iterator[Episode]:
    """Every episode of the scope in stored order, one page read at a time."""
    offset = 0
    while True:
        batch = store.list_episodes(scope, page, offset)
        yield from batch
        if len(batch) < page:
            return
        offset += len(batch)
