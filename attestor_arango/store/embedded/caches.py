"""The embedded store's in-memory caches: which are loaded, kept in step, dropped.

Each tenant's vector index and text index live in memory once read (mapped from
their files where persisted.py has them). They are updated only after a commit
(``_after_commit`` queues what a transaction did), dropped when another process
commits (``PRAGMA data_version``) and, past ``cache_rows`` rows over all tenants,
for the least recently read tenants. Mixed into ``SQLiteStore``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from attestor_arango.scope import Scope
from attestor_arango.store.embedded.indexfile import IndexFileError
from attestor_arango.store.embedded.persisted import PersistedIndexes
from attestor_arango.store.embedded.vectors import TenantVectors
from attestor_arango.store.protocol import EmbeddingSpace

T = TypeVar("T")


class EmbeddedCaches(PersistedIndexes):
    """Loading and keeping the per-tenant caches; see the module docstring."""

    cache_rows: int
    _data_version: int
    _cache_use: OrderedDict[str, None]

    if TYPE_CHECKING:

        def get_embedding_space(self, scope: Scope) -> EmbeddingSpace | None: ...

    def _read_data_version(self) -> int:
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _refresh_caches(self) -> None:
        """Another connection committed: our caches may be stale, reload lazily."""
        version = self._read_data_version()
        if version != self._data_version:
            self._vectors.clear()
            self._texts.clear()
            self._data_version = version

    def _used(self, tenant: str) -> None:
        """Marks the tenant's caches as just read; drops other tenants' past ``cache_rows``.

        Each cache (vectors, text) may hold ``cache_rows`` rows over all tenants; the
        least recently read tenants go first, and are loaded again when next read.
        The tenant being read is never dropped, however large. Checked on every read,
        so rows written into cached tenants are counted too.
        """
        self._cache_use.pop(tenant, None)
        self._cache_use[tenant] = None
        for caches in (self._vectors, self._texts):
            held = sum(c.n for c in caches.values())
            for other in list(self._cache_use):
                if held <= self.cache_rows:
                    break
                if other != tenant and other in caches:
                    held -= caches.pop(other).n
        for other in list(self._cache_use):
            if other not in self._vectors and other not in self._texts:
                del self._cache_use[other]

    def _tenant_vectors(self, tenant: str) -> TenantVectors | None:
        self._refresh_caches()
        cached = self._vectors.get(tenant)
        if cached is not None:
            self._used(tenant)
            return cached
        space = self.get_embedding_space(Scope(tenant))
        if space is None:
            return None
        index = self._load_vectors(tenant, space)
        self._vectors[tenant] = index
        self._used(tenant)
        return index

    def _vector_read(self, tenant: str, read: Callable[[TenantVectors], T]) -> T:
        """``read`` of the tenant's vector index; a persisted row found corrupt on the way
        drops the file and the index, and the read runs again on one rebuilt from the rows."""
        index = self._vectors[tenant]
        try:
            return read(index)
        except IndexFileError:
            self._vectors.pop(tenant, None)
            path = self._index_path(tenant, "vectors")
            if path is not None:
                path.unlink(missing_ok=True)
            rebuilt = self._tenant_vectors(tenant)
            assert rebuilt is not None
            return read(rebuilt)

    def _after_commit(self, op: str, payload: Any) -> None:
        if self._depth:
            self._pending.append((op, payload))
        else:
            self._apply(op, payload)

    def _apply_pending(self) -> None:
        pending, self._pending = self._pending, []
        for op, payload in pending:
            self._apply(op, payload)

    def _apply(self, op: str, payload: Any) -> None:
        # a tenant's caches not loaded yet are loaded later, from the committed rows
        if op == "drop":
            self._vectors.pop(payload, None)
            self._texts.pop(payload, None)
            self._remove_files(payload)
            return
        vectors, texts = self._vectors.get(payload[0]), self._texts.get(payload[0])
        if op == "text":
            self._written.add(payload[0])
        if op == "add" and vectors is not None:
            vectors.add(*payload[1:])
        elif op == "text" and texts is not None:
            texts.add(*payload[1:])
        elif op == "expire":
            for index in (vectors, texts):
                if index is not None:
                    index.set_expired(payload[1], payload[2])
