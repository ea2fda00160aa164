"""The embedded store's in-memory caches: which are loaded, kept in step, dropped.

Each tenant's vector index and text index live in memory once read (mapped from
their files where persisted.py has them). They are updated only after a commit
(the connection hands over what a transaction did: ``CommitListener``), dropped when
another process commits (``PRAGMA data_version``) and, past ``cache_rows`` rows over
all tenants, for the least recently read tenants. A component of ``SQLiteStore``;
the memories, text and governance components ask it for a tenant's indexes.

It also keeps the few small values every write reads (``kept``: the tenant's embedding
space, its quota and its audit chain's last entry), so an add does not read them again
from SQLite: the writes of this connection set them once they committed, and another
connection's commit empties them like the indexes.

Whether another connection committed is asked of SQLite (``PRAGMA data_version``, ~11 us
outside a transaction: it takes a read lock of the WAL) before a read of the caches, or
once for a whole request's reads (``reading``): a recall made six such checks, one per
store call, and now makes one as it begins.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from attestor_arango.errors import StoreError
from attestor_arango.store.embedded import sql as q
from attestor_arango.store.embedded.base import SQLiteAccess
from attestor_arango.store.embedded.connection import Op
from attestor_arango.store.embedded.indexfile import Generation, IndexFileError
from attestor_arango.store.embedded.persisted import PersistedIndexes
from attestor_arango.store.embedded.rowcache import MemoryRows
from attestor_arango.store.embedded.text_index import TenantText
from attestor_arango.store.embedded.vectors import TenantVectors
from attestor_arango.store.protocol import EmbeddingSpace, KnownEntities

T = TypeVar("T")

# entities held with their name indexes over all tenants (``known_entities``): ~1.8 kB each
# (1.3 kB the Entity, 0.5 kB its forms, measured), so at most ~90 MB
ENTITY_ROWS = 50_000


class TenantCaches:
    """Loading and keeping the per-tenant caches; see the module docstring."""

    def __init__(
        self,
        db: SQLiteAccess,
        persisted: PersistedIndexes,
        cache_rows: int,
        data_version: Callable[[], int],
    ) -> None:
        self._db = db
        self.persisted = persisted
        self.cache_rows = cache_rows
        self.vectors: dict[str, TenantVectors] = {}
        self.texts: dict[str, TenantText] = {}
        self._use: OrderedDict[str, None] = OrderedDict()  # tenants, least recent first
        self._data_version_of = data_version
        self._data_version = data_version()
        self.rows = MemoryRows()  # decoded memories between reads (rowcache.py)
        self.state: dict[tuple[str, str], Any] = {}  # (kind, tenant) -> value (``kept``)
        self._reading = threading.local()  # per thread: how deep in ``reading`` it is
        # per kind of ``holder`` dict, the tenants that read one, least recent first
        self._kept_use: dict[str, OrderedDict[str, None]] = {}

    # following the commits (CommitListener) ---------------------------------------------
    @contextmanager
    def reading(self) -> Iterator[None]:
        """The calling thread's reads of the caches inside are one request's (a recall):
        other connections' commits are checked once, as it begins, not before each read.

        So the request reads the caches as they were when it began, as if it ran at that
        instant, and a commit that lands while it runs is seen by the next request (a
        request that begins after another process's commit finished always sees it).
        Without it each store call checks, and the calls of one recall could read caches
        of different moments. Other threads check as before; a write transaction always
        checks (under SQLite's write lock), and so does ``kept`` inside one.
        """
        local = self._reading
        depth = getattr(local, "depth", 0)
        if depth == 0:
            with self._db.lock:
                self.refresh()
        local.depth = depth + 1
        try:
            yield
        finally:
            local.depth = depth

    def fresh(self) -> None:
        """Before a read of the caches: ``refresh``, unless this thread reads inside
        ``reading`` (which checked as it began)."""
        if not getattr(self._reading, "depth", 0):
            self.refresh()

    def refresh(self) -> None:
        """Another connection committed: our caches may be stale, reload lazily."""
        version = self._data_version_of()
        if version != self._data_version:
            self.vectors.clear()
            self.texts.clear()
            self.rows.clear()
            self.state.clear()
            self._data_version = version

    def prepare(self, ops: list[Op]) -> dict[str, Generation]:
        # a tenant's rows removed (an erasure, a compaction): its files go before COMMIT as
        # well as after it, so a process killed in between leaves none of the rows behind
        # (under the write lock no file can be installed again before the COMMIT)
        for tenant in {p for op, p in ops if op == "drop"}:
            self.persisted.remove_files(tenant)
        loaded = set(self.texts) | set(self.vectors)
        return self.persisted.pending_generations(ops, loaded)

    def committed(self, ops: list[Op], prepared: dict[str, Generation] | None) -> None:
        for op, payload in ops:
            self._apply(op, payload)
        if prepared:
            self.persisted.set_generations(prepared, ops, self.texts, self.vectors)

    def _apply(self, op: str, payload: Any) -> None:
        # a tenant's caches not loaded yet are loaded later, from the committed rows
        if op == "state":
            kind, tenant, value = payload
            self.state[(kind, tenant)] = value
            return
        if op == "drop":
            for key in [k for k in self.state if k[1] == payload]:
                del self.state[key]
            self.rows.drop(payload)
            self.vectors.pop(payload, None)
            self.texts.pop(payload, None)
            self.persisted.remove_files(payload)
            return
        vectors, texts = self.vectors.get(payload[0]), self.texts.get(payload[0])
        if op == "text":
            self.persisted.written.add(payload[0])
        if op == "add" and vectors is not None:
            vectors.add(*payload[1:])
        elif op == "text" and texts is not None:
            texts.add(*payload[1:])
        elif op == "expire":
            self.rows.discard(payload[0], payload[1])
            for index in (vectors, texts):
                if index is not None:
                    index.set_expired(payload[1], payload[2])

    # reading ----------------------------------------------------------------------------
    def kept(self, kind: str, tenant: str, read: Callable[[], T]) -> T:
        """A small value of the tenant that every write reads, read from the rows once.

        The open transaction's own change of it comes first (queued as a ``"state"`` op,
        applied to what is kept only once it committed, so a rollback leaves the committed
        value); then the value kept, unless another connection committed since
        (``refresh``); else ``read()``, kept unless this transaction changed the tenant
        in a way the ops do not say (a ``"drop"``: its rows are not committed yet).
        """
        # under the connection's lock: another thread's open transaction (and its queue)
        # is waited for, as a read of the rows would be
        with self._db.lock:
            queued, pending = self._db.pending_state(kind, tenant)
            if queued == "state":
                value: T = pending
                return value
            own = queued == "drop"
            if not self._db.in_transaction:  # a write transaction refreshed under its lock
                self.fresh()
            key = (kind, tenant)
            if not own and key in self.state:
                kept: T = self.state[key]
                return kept
            value = read()
            if not own:
                self.state[key] = value
            return value

    def known_entities(
        self, tenant: str, namespace: str | None, read: Callable[[], KnownEntities]
    ) -> KnownEntities:
        """The entities of a tenant's namespace with their name index (``read()`` once),
        kept like ``kept`` values until the tenant's entities change.

        A write of an entity queues an empty holder for the tenant (``"state"``, kind
        ``"entities"``), so the open transaction reads its own entities and what it read
        is kept only once it committed; an erasure's ``"drop"`` and another connection's
        commit empty it. Past ``ENTITY_ROWS`` entities held over all tenants, the least
        recently read tenants' are let go (read again when next asked for).
        """
        with self._db.lock:
            # every recall asks, mostly with no write transaction open: then ``kept`` has no
            # queued value to read first, and a kept one is taken with no ``holder`` call
            if not self._db.in_transaction:
                self.fresh()
                kept = self.state.get(("entities", tenant))
                known = kept.get(namespace) if kept else None
                if known is not None:
                    self._read_now("entities", tenant)
                    return known
            held: dict[str | None, KnownEntities] = self.holder("entities", tenant)
            known = held.get(namespace)
            if known is None:
                known = held[namespace] = read()
                self.trim("entities", tenant, _entities_held, ENTITY_ROWS)
            return known

    def holder(self, kind: str, tenant: str) -> dict[Any, Any]:
        """The tenant's dict of ``kind`` among the ``kept`` values (emptied as they are), to
        fill; marked as just read for ``trim``."""
        with self._db.lock:
            held: dict[Any, Any] = self.kept(kind, tenant, dict)
            self._read_now(kind, tenant)
            return held

    def _read_now(self, kind: str, tenant: str) -> None:
        """Marks the tenant's ``kind`` dict as the most recently read (``trim``)."""
        use = self._kept_use.get(kind)
        if use is None:
            use = self._kept_use[kind] = OrderedDict()
        use[tenant] = None
        use.move_to_end(tenant)

    def trim(self, kind: str, tenant: str, size: Callable[[Any], int], limit: int) -> None:
        """Lets go of other tenants' ``kind`` dicts (``holder``), least recently read first,
        while their ``size`` summed over all tenants is past ``limit``; the tenant being read
        keeps its own, however large."""
        with self._db.lock:  # the kept values change under it (commits, ``kept``)
            use = self._kept_use.setdefault(kind, OrderedDict())
            held = sum(size(v) for k, v in self.state.items() if k[0] == kind and v)
            for other in list(use):
                if held <= limit:
                    break
                if other != tenant:
                    value = self.state.pop((kind, other), None)
                    held -= size(value) if value else 0
                    del use[other]

    def _used(self, tenant: str) -> None:
        """Marks the tenant's caches as just read; drops other tenants' past ``cache_rows``.

        Each cache (vectors, text) may hold ``cache_rows`` rows over all tenants; the
        least recently read tenants go first, and are loaded again when next read.
        The tenant being read is never dropped, however large. Checked on every read,
        so rows written into cached tenants are counted too.
        """
        use = self._use
        if len(use) == 1 and tenant in use and (tenant in self.vectors or tenant in self.texts):
            return  # the only tenant held: nothing to reorder, nothing it may drop
        use.pop(tenant, None)
        use[tenant] = None
        for caches in (self.vectors, self.texts):
            held = sum(c.n for c in caches.values())
            for other in list(self._use):
                if held <= self.cache_rows:
                    break
                if other != tenant and other in caches:
                    held -= caches.pop(other).n
        for other in list(self._use):
            if other not in self.vectors and other not in self.texts:
                del self._use[other]

    def tenant_vectors(self, tenant: str) -> TenantVectors | None:
        """The tenant's vector index (loaded if needed); None before its first vector."""
        self.fresh()
        cached = self.vectors.get(tenant)
        if cached is not None:
            self._used(tenant)
            return cached
        rows = self._db.read(q.GET_SPACE, {"tenant": tenant})
        if not rows:
            return None
        space = EmbeddingSpace(rows[0]["name"], rows[0]["dimension"])
        index = self.persisted.load_vectors(tenant, space)
        self.vectors[tenant] = index
        self._used(tenant)
        return index

    def vector_read(self, tenant: str, read: Callable[[TenantVectors], T]) -> T:
        """``read`` of the tenant's vector index; a persisted row found corrupt on the way
        drops the file and the index, and the read runs again on one rebuilt from the rows
        (StoreError when the tenant has no embedding space left to rebuild it from)."""
        index = self.vectors[tenant]
        try:
            return read(index)
        except IndexFileError as exc:
            self.vectors.pop(tenant, None)
            path = self.persisted.index_path(tenant, "vectors")
            if path is not None:
                path.unlink(missing_ok=True)
            rebuilt = self.tenant_vectors(tenant)
            if rebuilt is None:  # its embedding space went meanwhile (the tenant was purged)
                raise StoreError(
                    f"tenant {tenant!r}'s vector index file was corrupt and the tenant has no "
                    "embedding space any more to rebuild it from; retry the call"
                ) from exc
            return read(rebuilt)

    def text_read(self, tenant: str, read: Callable[[TenantText], T]) -> T:
        """``read`` of the tenant's text index (loaded if needed); a persisted block found
        corrupt on the way (texts, terms and postings are checked as they are read) drops
        the file and the index, and the read runs again on one rebuilt from the rows."""
        try:
            return read(self.tenant_text(tenant))
        except IndexFileError:
            self.texts.pop(tenant, None)
            path = self.persisted.index_path(tenant, "text")
            if path is not None:
                path.unlink(missing_ok=True)
            return read(self.tenant_text(tenant))

    def tenant_text(self, tenant: str) -> TenantText:
        """The tenant's text index, loaded if needed."""
        self.fresh()
        cached = self.texts.get(tenant)
        if cached is not None:
            self._used(tenant)
            return cached
        index = self.persisted.load_text(tenant)
        self.texts[tenant] = index
        self._used(tenant)
        return index

    def residue(self, tenant: str) -> dict[str, int]:
        """Rows of the tenant still held in memory (zero once its caches were dropped)."""
        self.refresh()
        cached, texts = self.vectors.get(tenant), self.texts.get(tenant)
        return {
            "vector_cache": 0 if cached is None else cached.n,
            "text_cache": 0 if texts is None else texts.n,
            "memory_cache": self.rows.held(tenant),
            "graph_cache": self._graph_held(tenant),
        }

    def _graph_held(self, tenant: str) -> int:
        """Entities and relations of the tenant kept decoded (``known_entities``, and the
        relations the embedded graph keeps among the kept values)."""
        entities = self.state.get(("entities", tenant)) or {}
        relations = self.state.get(("relations", tenant)) or {}
        return _entities_held(entities) + len(relations)

    def tenants(self) -> list[str]:
        """Tenants with a vector or text cache in memory."""
        return sorted(set(self.vectors) | set(self.texts))

    def save(self) -> None:
        """At close: the index files of what changed, and of tenants written to unread."""
        self.refresh()
        self.persisted.save_all(self.texts, self.vectors)
        self.persisted.refresh_written(self.texts, self.vectors)


def _entities_held(held: dict[str | None, KnownEntities]) -> int:
    """The entities of one tenant's ``known_entities`` holder, over its namespaces."""
    return sum(len(k.entities) for k in held.values())
