"""The embedded backend: one SQLite file (WAL), BM25 in memory or by FTS5, numpy for vectors.

Zero-config default for library use, tests and CI. ``SQLiteStore`` only assembles
the components and forwards the Store protocol to them; each component is handed
the connection and the other components it needs, never the store:

- ``db``: the connection, its lock and transactions (connection.py);
- ``caches``: each tenant's vector and text index in memory, kept in step with the
  commits, with their files beside the store (caches.py, persisted.py);
- ``memories``: memories, vectors, counts and the vector lane (memories.py);
- ``text``: the text lane, in memory or by FTS5 (fts.py);
- ``graph``: entities, relations and episodes (graph.py);
- ``governance``: audit chain, quotas, erasure, re-embedding (governance.py).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import weakref
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from attestor_arango.errors import StoreError, ValidationError
from attestor_arango.models import AuditEntry, Entity, Episode, Memory, Relation
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.embedded.caches import TenantCaches
from attestor_arango.store.embedded.connection import SQLiteConnection
from attestor_arango.store.embedded.fts import TEXT_INDEXES, EmbeddedText
from attestor_arango.store.embedded.governance import EmbeddedGovernance
from attestor_arango.store.embedded.graph import EmbeddedGraph
from attestor_arango.store.embedded.health import role_health
from attestor_arango.store.embedded.memories import EmbeddedMemories
from attestor_arango.store.embedded.persisted import PersistedIndexes, index_folder
from attestor_arango.store.embedded.sessions import latest_in_session
from attestor_arango.store.protocol import (
    BackedRelations,
    EmbeddingSpace,
    Hit,
    KnownEntities,
    MemoryFilter,
    PoolScores,
    ScopeGuarded,
    TextHit,
    VectorBatch,
)

# Rows each in-memory cache (vectors, text) may hold over all tenants of a store: at 100k
# memories of 384 dimensions the vector cache takes ~190 MB and the text cache ~76 MB
CACHE_ROWS = 2_000_000
# every store open in this process, by its file: an erasure through one tells the others on
# the same file to drop what they hold of it (``flush_erasure``), not only at their next read
_OPEN: weakref.WeakValueDictionary[int, SQLiteStore] = weakref.WeakValueDictionary()
_OPEN_LOCK = threading.Lock()


class SQLiteStore(ScopeGuarded):
    """The Store protocol over one SQLite file (a call without a ``Scope`` fails closed:
    ``ScopeGuarded``)."""

    backend = "embedded"

    def __init__(
        self,
        path: str | Path,
        text_index: str = "memory",
        cache_rows: int = CACHE_ROWS,
        persist_indexes: bool = True,
    ) -> None:
        """Opens (creating if needed) the store at ``path``, and settles what an erasure
        killed half-way left on disk (``EmbeddedGovernance.settle_interrupted``).

        ``persist_indexes``: keep each tenant's vector and text index in files beside the
        store (``<path>.idx/``), so the next process maps them instead of rebuilding them
        from the rows (persisted.py). Raises ValidationError for a bad setting and
        StoreError when the file cannot be opened.
        """
        if text_index not in TEXT_INDEXES:
            raise ValidationError(
                f"unknown text index {text_index!r}; use one of {list(TEXT_INDEXES)}"
            )
        if isinstance(cache_rows, bool) or not isinstance(cache_rows, int) or cache_rows < 1:
            raise ValidationError("cache_rows must be a positive integer (rows held in memory)")
        self.text_index = text_index
        self.cache_rows = cache_rows
        self.path = Path(path)
        self.db = SQLiteConnection(path)
        self.schema_version = self.db.schema_version
        folder = index_folder(path) if persist_indexes else None
        self.persisted = PersistedIndexes(self.db, folder)
        self.caches = TenantCaches(self.db, self.persisted, cache_rows, self.db.data_version)
        self.db.listener = self.caches
        self.memories = EmbeddedMemories(self.db, self.caches)
        self.text = EmbeddedText(self.db, self.caches, text_index)
        self.graph = EmbeddedGraph(self.db, self.caches)
        self.governance = EmbeddedGovernance(self.db, self.caches)
        self.governance.settle_interrupted()  # what a killed erasure left on disk
        self._file = _file_key(path)
        if self._file is not None:
            with _OPEN_LOCK:
                _OPEN[id(self)] = self

    # lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        """Saves the indexes that changed since their files, then closes the connection."""
        with _OPEN_LOCK:
            _OPEN.pop(id(self), None)
        with self.db.lock:
            # the files are a cache: the next open rebuilds or catches up
            with contextlib.suppress(sqlite3.Error, OSError):
                self.caches.save()
            self.db.close()

    def health(self) -> dict[str, Any]:
        """Each role probed (store/embedded/health.py); ok only when all of them answer."""
        with self.db.lock:
            roles = role_health(self.db.conn)
        return {
            "backend": self.backend,
            "path": str(self.path),
            "schema_version": self.schema_version,
            **roles,
            "ok": all(roles.values()),
        }

    def transaction(self) -> AbstractContextManager[None]:
        return self.db.transaction()

    def settle(self, as_of: int) -> None:
        """A read of ``as_of`` that follows sees every write with a transaction time at or
        before it, another process's still open one too (``SQLiteConnection.settle``).
        Beside the Store contract (``Runtime.view`` asks for it)."""
        self.db.settle(as_of)

    def reads_together(self) -> AbstractContextManager[None]:
        """The calling thread's reads inside answer one request (a recall): other
        connections' commits are checked once, as it begins (caches.py, ``reading``).
        Beside the Store contract (core/recall.py asks for it)."""
        return self.caches.reading()

    def integrity_check(self) -> str:
        with self.db.lock:
            return str(self.db.conn.execute("PRAGMA integrity_check").fetchone()[0])

    def cached_tenants(self) -> list[str]:
        """Tenants with a vector or text cache in memory."""
        return self.caches.tenants()

    # memories (memories.py) ------------------------------------------------------------
    def get_embedding_space(self, scope: Scope) -> EmbeddingSpace | None:
        return self.memories.get_embedding_space(scope)

    def set_embedding_space(self, scope: Scope, space: EmbeddingSpace) -> None:
        self.memories.set_embedding_space(scope, space)

    def hold_embedding_space(self, scope: Scope, space: EmbeddingSpace) -> bool:
        return self.memories.hold_embedding_space(scope, space)

    def insert_memory(self, scope: Scope, memory: Memory, vector: np.ndarray | None) -> None:
        self.memories.insert_memory(scope, memory, vector)

    def get_memory(self, scope: Scope, memory_id: str) -> Memory | None:
        return self.memories.get_memory(scope, memory_id)

    def memory_ids_matching(
        self, scope: Scope, fragment: str, limit: int, created_by: int | None = None
    ) -> list[str]:
        return self.memories.memory_ids_matching(scope, fragment, limit, created_by)

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> dict[str, Memory]:
        return self.memories.get_memories(scope, ids)

    def get_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return self.memories.get_vectors(scope, ids)

    def vector_matrix(
        self, scope: Scope, ids: Sequence[str]
    ) -> tuple[list[str], np.ndarray] | None:
        """See ``EmbeddedMemories.vector_matrix`` (beside the Store contract)."""
        return self.memories.vector_matrix(scope, ids)

    def vector_matrix_normed(
        self, scope: Scope, ids: Sequence[str]
    ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray | None] | None:
        """See ``EmbeddedMemories.vector_matrix_normed`` (beside the Store contract)."""
        return self.memories.vector_matrix_normed(scope, ids)

    def vector_units(self, scope: Scope, ids: Sequence[str]) -> np.ndarray | None:
        """See ``EmbeddedMemories.vector_units`` (beside the Store contract)."""
        return self.memories.vector_units(scope, ids)

    def close_memory(
        self, scope: Scope, memory_id: str, t_expired: int, status: str, superseded_by: str | None
    ) -> None:
        self.memories.close_memory(scope, memory_id, t_expired, status, superseded_by)

    def find_active(
        self, scope: Scope, entity: str, category: str, view: TemporalView
    ) -> list[Memory]:
        return self.memories.find_active(scope, entity, category, view)

    def list_memories(
        self, scope: Scope, filters: MemoryFilter, view: TemporalView, limit: int, offset: int = 0
    ) -> list[Memory]:
        return self.memories.list_memories(scope, filters, view, limit, offset)

    def count_memories(self, scope: Scope, filters: MemoryFilter, view: TemporalView) -> int:
        return self.memories.count_memories(scope, filters, view)

    def latest_in_session(
        self,
        scope: Scope,
        session_id: str,
        tag: str,
        view: TemporalView,
        before: int,
        limit: int,
        offset: int = 0,
    ) -> list[Memory]:
        return latest_in_session(self.db, scope, session_id, tag, view, before, limit, offset)

    def count_rows(self, scope: Scope) -> dict[str, int]:
        return self.memories.count_rows(scope)

    # candidate lanes (memories.py, fts.py) ----------------------------------------------
    def vector_candidates(
        self,
        scope: Scope,
        vector: np.ndarray,
        k: int,
        view: TemporalView,
        prefilter: int = 0,
        prefilter_rows: int = 0,
    ) -> list[Hit]:
        return self.memories.vector_candidates(scope, vector, k, view, prefilter, prefilter_rows)

    def vector_ranked(
        self,
        scope: Scope,
        vector: np.ndarray,
        k: int,
        view: TemporalView,
        prefilter: int = 0,
        prefilter_rows: int = 0,
        ordered: bool = True,
    ) -> tuple[list[str], list[float] | None]:
        """See ``EmbeddedMemories.vector_ranked`` (beside the Store contract)."""
        return self.memories.vector_ranked(
            scope, vector, k, view, prefilter, prefilter_rows, ordered
        )

    def text_pool(self, scope: Scope, query: str, k: int, view: TemporalView) -> list[TextHit]:
        return self.text.text_pool(scope, query, k, view)

    @property
    def text_scores_follow_view(self) -> bool:
        """Whether ``text_pool`` scores BM25 over the view alone (the in-memory index), not
        with FTS5's statistics of every row of the file; beside the Store contract
        (``retrieval.text_lane.scores_follow_view``)."""
        return self.text.text_index == "memory"

    def text_pool_scores(
        self, scope: Scope, query: str, k: int, view: TemporalView
    ) -> PoolScores | None:
        """The text pool's BM25 over the pool alone (fts.py); beside the Store contract."""
        return self.text.text_pool_scores(scope, query, k, view)

    def scoring_terms(self, scope: Scope, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The text index's scoring terms of ``ids`` (fts.py); beside the Store contract."""
        return self.text.scoring_terms(scope, ids)

    # graph and episodes (graph.py) ------------------------------------------------------
    def upsert_entity(self, scope: Scope, entity: Entity) -> None:
        self.graph.upsert_entity(scope, entity)

    def list_entities(self, scope: Scope) -> list[Entity]:
        return self.graph.list_entities(scope)

    def known_entities(self, scope: Scope) -> KnownEntities:
        """Kept between calls until the tenant's entities change (caches.py)."""
        return self.caches.known_entities(
            scope.tenant, scope.namespace, lambda: KnownEntities.of(self.list_entities(scope))
        )

    def add_relation(self, scope: Scope, relation: Relation) -> None:
        self.graph.add_relation(scope, relation)

    def relations_touching(
        self, scope: Scope, entity_keys: Sequence[str], view: TemporalView
    ) -> list[Relation]:
        return self.graph.relations_touching(scope, entity_keys, view)

    def relations_backed(
        self,
        scope: Scope,
        entity_keys: Sequence[str],
        view: TemporalView,
        candidates: Sequence[str],
        limit: int,
    ) -> BackedRelations:
        return self.graph.relations_backed(scope, entity_keys, view, candidates, limit)

    def hops(
        self, scope: Scope, sources: Sequence[str], max_depth: int, view: TemporalView
    ) -> dict[str, int]:
        return self.graph.hops(scope, sources, max_depth, view)

    def put_episode(self, scope: Scope, episode: Episode) -> None:
        self.graph.put_episode(scope, episode)

    def get_episode(self, scope: Scope, episode_id: str) -> Episode | None:
        return self.graph.get_episode(scope, episode_id)

    def list_episodes(
        self, scope: Scope, limit: int, offset: int = 0, *, newest_first: bool = False
    ) -> list[Episode]:
        return self.graph.list_episodes(scope, limit, offset, newest_first=newest_first)

    # audit, quotas, erasure (governance.py) ---------------------------------------------
    def replace_vectors(
        self, scope: Scope, space: EmbeddingSpace, batches: Iterable[VectorBatch]
    ) -> int:
        return self.governance.replace_vectors(scope, space, batches)

    def last_audit(self, scope: Scope) -> AuditEntry | None:
        return self.governance.last_audit(scope)

    def append_audit(self, scope: Scope, entry: AuditEntry) -> None:
        self.governance.append_audit(scope, entry)

    def read_audit(self, scope: Scope, limit: int, after_seq: int = 0) -> list[AuditEntry]:
        return self.governance.read_audit(scope, limit, after_seq)

    def read_audit_actions(
        self, scope: Scope, actions: Sequence[str], limit: int
    ) -> list[AuditEntry]:
        return self.governance.read_audit_actions(scope, actions, limit)

    def audit_head(self, scope: Scope) -> tuple[int, str] | None:
        return self.governance.audit_head(scope)

    def get_quota(self, scope: Scope) -> int | None:
        return self.governance.get_quota(scope)

    def set_quota(self, scope: Scope, daily_writes: int | None) -> None:
        self.governance.set_quota(scope, daily_writes)

    def count_writes(self, scope: Scope, day: str) -> int:
        return self.governance.count_writes(scope, day)

    def get_recall_key(self, scope: Scope) -> str | None:
        return self.governance.get_recall_key(scope)

    def put_recall_key(self, scope: Scope, key: str) -> str | None:
        return self.governance.put_recall_key(scope, key)

    def add_writes(self, scope: Scope, day: str, n: int) -> int:
        return self.governance.add_writes(scope, day, n)

    def purge_tenant(self, scope: Scope) -> dict[str, int]:
        return self.governance.purge_tenant(scope)

    def purge_collections(self) -> tuple[str, ...]:
        return self.governance.purge_collections()

    def purge_collection(self, scope: Scope, collection: str) -> int:
        return self.governance.purge_collection(scope, collection)

    def flush_erasure(self, attempts: int = 10, wait_s: float = 0.2) -> int:
        """Rewrites the file and empties the WAL after an erasure (governance.py), then has
        every other store of this process open on the same file drop its caches, as its
        next read would (an idle one held the erased rows' words for as long as it stayed
        open); returns the WAL frames left."""
        left = self.governance.flush_erasure(attempts, wait_s)
        self._siblings_forget()
        return left

    def _siblings_forget(self) -> None:
        """The other stores of this process on this file: their caches checked against the
        file (``TenantCaches.refresh``: another connection committed, so all are dropped).
        Each under its own lock, none held here: no two stores wait on each other."""
        with _OPEN_LOCK:
            others = [s for s in _OPEN.values() if s is not self and s._file == self._file]
        for other in others:
            with other.db.lock, contextlib.suppress(sqlite3.Error, StoreError):
                # not closed meanwhile, and not inside its own transaction (this thread's):
                # that one checks the file again at its next read
                if id(other) in _OPEN and not other.db.in_transaction:
                    other.caches.refresh()

    def tenant_residue(self, scope: Scope) -> dict[str, int]:
        return self.governance.tenant_residue(scope)

    def delete_memories(self, scope: Scope, ids: Sequence[str]) -> int:
        return self.governance.delete_memories(scope, ids)


def _file_key(path: str | Path) -> tuple[int, int] | None:
    """Which file a store is on, the same for every name of it (a symlink, a hard link, a
    relative path); None for an in-memory database, which no other store shares."""
    text = str(path)
    if text == ":memory:" or text.startswith("file::memory:"):
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)
