"""The embedded backend: one SQLite file (WAL), BM25 in memory or by FTS5, numpy for vectors.

Zero-config default for library use, tests and CI. A single connection is
shared behind a re-entrant lock; writes run in ``BEGIN IMMEDIATE``
transactions so check-then-write sequences (quotas, supersession) cannot race
across threads or processes. The in-memory caches (each tenant's vector index
and text index) are updated only after a commit, and dropped when another
process commits (``PRAGMA data_version``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from attestor_arango.clock import OPEN
from attestor_arango.errors import ConflictError, StoreError, ValidationError
from attestor_arango.models import Entity, Episode, Memory, Relation
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.codec import memory_from_doc, memory_to_doc
from attestor_arango.store.embedded import sql as q
from attestor_arango.store.embedded.base import decode_row as _decode
from attestor_arango.store.embedded.base import encode_doc as _encode
from attestor_arango.store.embedded.base import list_params as _list_params
from attestor_arango.store.embedded.base import scope_params as _scope_params
from attestor_arango.store.embedded.base import view_params as _view_params
from attestor_arango.store.embedded.caches import EmbeddedCaches
from attestor_arango.store.embedded.fts import TEXT_INDEXES, EmbeddedText
from attestor_arango.store.embedded.governance import EmbeddedGovernance
from attestor_arango.store.embedded.graph import EmbeddedGraph
from attestor_arango.store.embedded.health import role_health
from attestor_arango.store.embedded.persisted import index_folder
from attestor_arango.store.embedded.schema import migrate
from attestor_arango.store.embedded.text_index import TenantText
from attestor_arango.store.embedded.vectors import TenantVectors
from attestor_arango.store.protocol import EmbeddingSpace, Hit, MemoryFilter, check_tenant

# Rows each in-memory cache (vectors, text) may hold over all tenants of a store: at 100k
# memories of 384 dimensions the vector cache takes ~190 MB and the text cache ~76 MB
CACHE_ROWS = 2_000_000


class SQLiteStore(EmbeddedCaches, EmbeddedText, EmbeddedGovernance):
    """The Store protocol over one SQLite file."""

    backend = "embedded"

    def __init__(
        self,
        path: str | Path,
        text_index: str = "memory",
        cache_rows: int = CACHE_ROWS,
        persist_indexes: bool = True,
    ) -> None:
        """Opens (creating if needed) the store at ``path``.

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
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(
                str(path), check_same_thread=False, isolation_level=None, timeout=30.0
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the embedded store at {path}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute("PRAGMA busy_timeout=30000")
        # erasure: deleted rows are overwritten in the file, not left in free pages
        self._conn.execute("PRAGMA secure_delete=ON")
        self.schema_version = migrate(self._conn)
        self._lock = threading.RLock()
        self._depth = 0
        self._pending: list[tuple[str, Any]] = []
        self._vectors: dict[str, TenantVectors] = {}
        self._texts: dict[str, TenantText] = {}
        self._cache_use: OrderedDict[str, None] = OrderedDict()  # tenants, least recent first
        self._text_share: dict[str, float] = {}  # per tenant, see embedded_fts.py
        self._data_version = self._read_data_version()
        self._index_folder = index_folder(path) if persist_indexes else None
        self._written: set[str] = set()
        self.graph = EmbeddedGraph(self)  # entities, relations, episodes (graph.py)

    # lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        """Saves the indexes that changed since their files, then closes the connection."""
        with self._lock:
            try:
                self._refresh_caches()
                self._save_all()
                self._refresh_written()
            except (sqlite3.Error, OSError):
                pass  # the files are a cache: the next open rebuilds or catches up
            self._conn.close()

    def health(self) -> dict[str, Any]:
        """Each role probed (store/embedded/health.py); ok only when all of them answer."""
        with self._lock:
            roles = role_health(self._conn)
        return {
            "backend": self.backend,
            "path": str(self.path),
            "schema_version": self.schema_version,
            **roles,
            "ok": all(roles.values()),
        }

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._refresh_caches()
            self._conn.execute("BEGIN IMMEDIATE")
            # holding the write lock: a commit that landed since the check above is seen now
            self._refresh_caches()
            self._depth = 1
            self._pending = []
            try:
                yield
                gens = self._pending_generations()
            except BaseException:
                self._conn.execute("ROLLBACK")
                self._pending = []
                raise
            else:
                self._conn.execute("COMMIT")
                ops = list(self._pending)
                self._apply_pending()
                self._set_generations(gens, ops)
            finally:
                self._depth = 0

    def _exec(self, sql: str, params: dict[str, Any] | None = None) -> sqlite3.Cursor:
        try:
            return self._conn.execute(sql, params or {})
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"the write conflicts with stored data: {exc}") from exc
        except OverflowError:  # an integer argument past SQLite's 64 bits (offset 2**63...)
            raise ValidationError(
                "a number in the request is out of range (it must fit in 64 bits)"
            ) from None
        except UnicodeEncodeError:
            raise ValidationError("text with a lone UTF-16 surrogate cannot be stored") from None
        except sqlite3.Error as exc:
            raise StoreError(f"embedded store error: {exc}") from exc

    def _read(self, sql: str, params: dict[str, Any]) -> list[sqlite3.Row]:
        with self._lock:
            return self._exec(sql, params).fetchall()

    # embedding space ------------------------------------------------------------------------
    def get_embedding_space(self, scope: Scope) -> EmbeddingSpace | None:
        rows = self._read(q.GET_SPACE, {"tenant": scope.tenant})
        return EmbeddingSpace(rows[0]["name"], rows[0]["dimension"]) if rows else None

    def set_embedding_space(self, scope: Scope, space: EmbeddingSpace) -> None:
        with self.transaction():
            params = {"tenant": scope.tenant, "name": space.name, "dimension": space.dimension}
            self._exec(q.SET_SPACE, params)
            self._after_commit("drop", scope.tenant)

    # memories ------------------------------------------------------------------------------
    def insert_memory(self, scope: Scope, memory: Memory, vector: np.ndarray | None) -> None:
        check_tenant(scope, [memory])
        doc = _encode(memory_to_doc(memory))
        blob = None
        if vector is not None:
            vector = np.asarray(vector, dtype=np.float32)
            space = self.get_embedding_space(scope)
            if space is None or vector.shape != (space.dimension,):
                raise ValidationError(
                    f"vector of shape {vector.shape} does not fit the tenant's embedding space "
                    f"{space}; embed with the tenant's embedder",
                )
            blob = vector.tobytes()
        with self.transaction():
            cur = self._exec(q.INSERT_MEMORY, {**doc, "embedding": blob})
            self._exec(q.INSERT_FTS, {"rowid": cur.lastrowid, "content": memory.content})
            times = (doc["t_created"], doc["t_expired"], doc["valid_from"], doc["valid_until"])
            self._after_commit(
                "text",
                (scope.tenant, memory.id, memory.namespace, memory.content, times, cur.lastrowid),
            )
            if blob is not None:
                self._after_commit(
                    "add",
                    (
                        scope.tenant,
                        memory.id,
                        memory.namespace,
                        vector,
                        doc["t_created"],
                        doc["t_expired"],
                        doc["valid_from"],
                        doc["valid_until"],
                    ),
                )

    def _memories(self, scope: Scope, rows: Sequence[sqlite3.Row]) -> list[Memory]:
        out = [memory_from_doc(_decode(r)) for r in rows]
        check_tenant(scope, out)
        return out

    def get_memory(self, scope: Scope, memory_id: str) -> Memory | None:
        rows = self._read(q.GET_MEMORY, {"id": memory_id, **_scope_params(scope)})
        found = self._memories(scope, rows)
        return found[0] if found else None

    def memory_ids_matching(self, scope: Scope, fragment: str, limit: int) -> list[str]:
        params = {"fragment": fragment, "limit": limit, **_scope_params(scope)}
        rows = [dict(r) for r in self._read(q.MEMORY_IDS_MATCHING, params)]
        check_tenant(scope, rows)
        return [str(r["id"]) for r in rows]

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> dict[str, Memory]:
        """By rowid where the tenant's text index knows it (half the cost), else by id.

        The scope filter applies either way; a row read by rowid counts only if its
        id was asked for, and an id not found by rowid is looked up by id.
        """
        if not ids:
            return {}
        wanted = list(dict.fromkeys(ids))
        params = _scope_params(scope)
        with self._lock:
            texts = self._texts.get(scope.tenant)
            rowids = list(texts.rowids_of(wanted).values()) if texts is not None else []
            rows: list[sqlite3.Row] = []
            if rowids:
                want = set(wanted)
                by_rowid = self._read(
                    q.GET_MEMORIES_BY_ROWID, {"rowids": json.dumps(rowids), **params}
                )
                rows = [r for r in by_rowid if r["id"] in want]
            found = {r["id"] for r in rows}
            rest = [i for i in wanted if i not in found]
            if rest:
                rows += self._read(q.GET_MEMORIES, {"ids": json.dumps(rest), **params})
        return {m.id: m for m in self._memories(scope, rows)}

    def get_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        with self._lock:
            index = self._tenant_vectors(scope.tenant)
            if index is not None:
                found = self._vector_read(scope.tenant, lambda v: v.vectors(ids, scope.namespace))
                if len(found) == len(set(ids)):
                    return found
            rows = self._exec(
                q.GET_VECTORS, {"ids": json.dumps(list(ids)), **_scope_params(scope)}
            ).fetchall()
        check_tenant(scope, [dict(r) for r in rows])
        return {r["id"]: np.frombuffer(r["embedding"], dtype=np.float32).copy() for r in rows}

    def close_memory(
        self, scope: Scope, memory_id: str, t_expired: int, status: str, superseded_by: str | None
    ) -> None:
        with self.transaction():
            cur = self._exec(
                q.CLOSE_MEMORY,
                {
                    "id": memory_id,
                    "t_expired": t_expired,
                    "status": status,
                    "superseded_by": superseded_by,
                    "open": OPEN,
                    **_scope_params(scope),
                },
            )
            if cur.rowcount != 1:
                raise ConflictError(
                    f"memory {memory_id} is not open in this scope (already closed or unknown)",
                )
            self._exec(
                q.CLOSE_MEMORY_RELATIONS,
                {"id": memory_id, "t_expired": t_expired, "open": OPEN, **_scope_params(scope)},
            )
            self._after_commit("expire", (scope.tenant, memory_id, t_expired))

    def find_active(
        self, scope: Scope, entity: str, category: str, view: TemporalView
    ) -> list[Memory]:
        params = {
            **_scope_params(scope),
            **_view_params(view),
            "entity": entity,
            "category": category,
        }
        return self._memories(scope, self._read(q.FIND_ACTIVE, params))

    def list_memories(
        self, scope: Scope, filters: MemoryFilter, view: TemporalView, limit: int, offset: int = 0
    ) -> list[Memory]:
        params = {**_list_params(scope, filters, view), "limit": limit, "offset": offset}
        if filters.content_hash is not None:
            sql = q.LIST_BY_HASH
        elif filters.entity is not None:
            sql = q.LIST_BY_ENTITY
        else:
            sql = q.LIST_MEMORIES
        return self._memories(scope, self._read(sql, params))

    def count_memories(self, scope: Scope, filters: MemoryFilter, view: TemporalView) -> int:
        sql = q.COUNT_LISTED_BY_ENTITY if filters.entity is not None else q.COUNT_LISTED
        return int(self._read(sql, _list_params(scope, filters, view))[0][0])

    def count_rows(self, scope: Scope) -> dict[str, int]:
        params = _scope_params(scope)
        with self._lock:
            row = self._exec(q.COUNT_MEMORIES, {**params, "open": OPEN}).fetchone()
            counts = {k: int(row[k]) for k in ("total", "active", "superseded", "archived")}
            counts["episodes"] = self._exec(q.COUNT_EPISODES, params).fetchone()[0]
            counts["entities"] = self._exec(q.COUNT_ENTITIES, params).fetchone()[0]
            counts["relations"] = self._exec(q.COUNT_RELATIONS, params).fetchone()[0]
            counts["audit"] = self._exec(q.COUNT_AUDIT, {"tenant": scope.tenant}).fetchone()[0]
        return counts

    # candidate lanes ---------------------------------------------------------------------------
    def vector_candidates(
        self, scope: Scope, vector: np.ndarray, k: int, view: TemporalView
    ) -> list[Hit]:
        with self._lock:
            index = self._tenant_vectors(scope.tenant)
            if index is None:
                return []
            query = np.asarray(vector, dtype=np.float32)
            if query.shape != (index.dimension,):
                raise ValidationError(
                    f"query vector has shape {query.shape}, the tenant's space has dimension "
                    f"{index.dimension}",
                )
            pairs = self._vector_read(
                scope.tenant, lambda v: v.search(query, k, scope.namespace, view)
            )
            texts = self._texts.get(scope.tenant)
            terms = {} if texts is None else texts.terms_of([i for i, _ in pairs])
        found = self.get_memories(scope, [i for i, _ in pairs])
        # the text index's scoring terms go along, so the pipeline need not tokenise again
        return [Hit(found[i], s, terms.get(i)) for i, s in pairs if i in found]

    # introspection for tests and doctor ---------------------------------------------------------
    # graph and episodes: the component's answers (graph.py) ---------------------------------
    def upsert_entity(self, scope: Scope, entity: Entity) -> None:
        self.graph.upsert_entity(scope, entity)

    def list_entities(self, scope: Scope) -> list[Entity]:
        return self.graph.list_entities(scope)

    def add_relation(self, scope: Scope, relation: Relation) -> None:
        self.graph.add_relation(scope, relation)

    def relations_touching(
        self, scope: Scope, entity_keys: Sequence[str], view: TemporalView
    ) -> list[Relation]:
        return self.graph.relations_touching(scope, entity_keys, view)

    def hops(
        self, scope: Scope, sources: Sequence[str], max_depth: int, view: TemporalView
    ) -> dict[str, int]:
        return self.graph.hops(scope, sources, max_depth, view)

    def put_episode(self, scope: Scope, episode: Episode) -> None:
        self.graph.put_episode(scope, episode)

    def get_episode(self, scope: Scope, episode_id: str) -> Episode | None:
        return self.graph.get_episode(scope, episode_id)

    def list_episodes(self, scope: Scope, limit: int, offset: int = 0) -> list[Episode]:
        return self.graph.list_episodes(scope, limit, offset)

    def integrity_check(self) -> str:
        with self._lock:
            return str(self._conn.execute("PRAGMA integrity_check").fetchone()[0])

    def cached_tenants(self) -> list[str]:
        """Tenants with a vector or text cache in memory."""
        return sorted(set(self._vectors) | set(self._texts))
