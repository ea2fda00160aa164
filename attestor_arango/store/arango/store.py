"""ArangoStore: the Store protocol on ArangoDB 3.12 (>= 3.12.6) through python-arango.

Memories, their vectors and the BM25 view live in one database; every query is an
``aql/`` file run by the tenant-filter executor. This module holds lifecycle, memories and
the two candidate lanes; ``store_graph`` adds graph, episodes, audit, quotas and
governance. Backends never rank: lanes return raw cosine / BM25 scores.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from arango.exceptions import ArangoError

from attestor_arango.clock import OPEN
from attestor_arango.errors import ConflictError, StoreError, ValidationError
from attestor_arango.models import Memory, MemoryStatus
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.arango.docs import (
    hit_from_arango,
    memory_from_arango,
    memory_to_arango,
    vector_from_arango,
    vector_to_list,
)
from attestor_arango.store.arango.entity_keys import EntityKeyFolding
from attestor_arango.store.arango.executor import ArangoQueryError
from attestor_arango.store.arango.planning import (
    ann_needs_fallback,
    ann_result_short,
    plan_vector_search,
    probes_for,
    view_binds,
)
from attestor_arango.store.arango.schema import load_schema, missing_view_links
from attestor_arango.store.arango.vectors import VectorMoves
from attestor_arango.store.codec import query_vector, stored_vector
from attestor_arango.store.protocol import (
    EmbeddingSpace,
    Hit,
    MemoryFilter,
    TextHit,
    check_tenant,
    pool_of,
)

_WORD = re.compile(r"\w", re.UNICODE)
TENANT_SIZE_TTL_S = 10.0


class ArangoStore(VectorMoves, EntityKeyFolding):
    """The Store protocol over one ArangoDB database (see docs/arangodb.md)."""

    # lifecycle -----------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        """Per role: collections present, the view's links intact, vector index state."""
        try:
            version = str(self._db.version())
            index = self.vector_index(refresh=True)
            have = {c["name"] for c in self._db.collections()}  # type: ignore[union-attr]
            views = load_schema()["views"]
            view_names = {v["name"] for v in self._db.views()}  # type: ignore[union-attr]
            text = all(
                v["name"] in view_names and not missing_view_links(self._db, v) for v in views
            )
        except (ArangoError, OSError, StoreError) as exc:
            return {"backend": self.backend, "ok": False, "error": str(exc)}
        document = {"memories", "episodes", "audit", "audit_heads"} <= have
        graph = {"entities", "graph_nodes", "relations"} <= have
        return {
            "backend": self.backend,
            "database": self._db.name,
            "server_version": version,
            "document": document,
            "text": text,
            "graph": graph,
            "vector": document,  # the exact scan answers whenever memories exist
            "vector_index": index,
            "ok": document and text and graph,
        }

    # embedding space (re-embedding: vectors.py) ----------------------------------------------
    def get_embedding_space(self, scope: Scope) -> EmbeddingSpace | None:
        state = self.space_state(scope)
        return None if state is None else state.space

    def set_embedding_space(self, scope: Scope, space: EmbeddingSpace) -> None:
        self._retrying("space_set", scope, {"name": space.name, "dimension": space.dimension})

    def hold_embedding_space(self, scope: Scope, space: EmbeddingSpace) -> bool:
        """Whether ``space`` is the tenant's, rewriting its record (``aql/space_hold.aql``) so
        that a re-embedding's flip (``vector_flip``, which updates the same record) and this
        call's transaction cannot both commit: the later of the two meets a write-write
        conflict (1200, ``ConflictError``; docs-hugo 3.12 develop/transactions/
        locking-and-isolation.md). Outside a transaction nothing is held past the call. Raises
        ``StoreError`` / ``ConflictError``."""
        rows = self._run(
            "space_hold",
            scope.tenant_wide(),
            {"name": space.name, "dimension": space.dimension},
        )
        return len(rows) == 1

    def _checked_vector(self, scope: Scope, vector: np.ndarray) -> list[float]:
        return vector_to_list(stored_vector(vector, self.get_embedding_space(scope)))

    # memories ------------------------------------------------------------------------------
    def insert_memory(self, scope: Scope, memory: Memory, vector: np.ndarray | None) -> None:
        check_tenant(scope, [memory])
        doc = memory_to_arango(memory, None)
        if vector is not None:
            doc["vector"] = self._checked_vector(scope, vector)
            index = self.vector_index()
            if index.get("exists") and index.get("dimension") not in (None, len(doc["vector"])):
                raise ValidationError(
                    f"the vector index expects dimension {index.get('dimension')}, this tenant "
                    f"embeds with {len(doc['vector'])}; one database serves one dimension",
                )
        self._run("memory_insert", scope, {"doc": doc})

    def get_memory(self, scope: Scope, memory_id: str) -> Memory | None:
        rows = self._run("memory_get", scope, {"namespace": scope.namespace, "id": memory_id})
        return memory_from_arango(rows[0]) if rows else None

    def memory_ids_matching(
        self, scope: Scope, fragment: str, limit: int, created_by: int | None = None
    ) -> list[str]:
        rows = self._run(
            "memory_ids_matching",
            scope,
            {
                "namespace": scope.namespace,
                "fragment": fragment,
                "limit": limit,
                "created_by": created_by,
            },
        )
        return [str(row["id"]) for row in rows]

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> dict[str, Memory]:
        if not ids:
            return {}
        rows = self._run("memory_get_many", scope, {"namespace": scope.namespace, "ids": list(ids)})
        return {m.id: m for m in map(memory_from_arango, rows)}

    def get_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        rows = self._run("memory_vectors", scope, {"namespace": scope.namespace, "ids": list(ids)})
        return {str(r["id"]): vector_from_arango(r) for r in rows}

    def close_memory(
        self, scope: Scope, memory_id: str, t_expired: int, status: str, superseded_by: str | None
    ) -> None:
        """Closes the memory and, atomically, the open relations derived from it."""
        with self.transaction():
            rows = self._run(
                "memory_close",
                scope,
                {
                    "namespace": scope.namespace,
                    "id": memory_id,
                    "open_us": OPEN,
                    "t_expired": t_expired,
                    "status": status,
                    "superseded_by": superseded_by,
                },
            )
            if len(rows) != 1:
                raise ConflictError(
                    f"memory {memory_id} is not open in this scope (already closed or unknown)",
                )
            self._run(
                "relation_close_for_memory",
                scope,
                {
                    "namespace": scope.namespace,
                    "id": memory_id,
                    "open_us": OPEN,
                    "t_expired": t_expired,
                },
            )

    def find_active(
        self, scope: Scope, entity: str, category: str, view: TemporalView
    ) -> list[Memory]:
        rows = self._run(
            "memory_find_active",
            scope,
            {
                "namespace": scope.namespace,
                "entity": entity,
                "category": category,
                **view_binds(view),
            },
        )
        return [memory_from_arango(r) for r in rows]

    def list_memories(
        self, scope: Scope, filters: MemoryFilter, view: TemporalView, limit: int, offset: int = 0
    ) -> list[Memory]:
        rows = self._run(
            "memory_list",
            scope,
            {
                "namespace": scope.namespace,
                "entity": filters.entity,
                "category": filters.category,
                "tags": list(filters.tags) if filters.tags else None,
                "status": filters.status,
                "content_hash": filters.content_hash,
                **view_binds(view),
                "offset": max(0, offset),
                "limit": max(0, limit),
            },
        )
        return [memory_from_arango(r) for r in rows]

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
        rows = self._run(
            "memory_session_latest",
            scope,
            {
                "namespace": scope.namespace,
                "session_id": session_id,
                "tag": tag,
                "before": min(before, OPEN),  # as view_binds' window end: OPEN + 1 is no double
                **view_binds(view),
                "offset": max(0, offset),
                "limit": max(0, limit),
            },
        )
        return [memory_from_arango(r) for r in rows]

    def count_memories(self, scope: Scope, filters: MemoryFilter, view: TemporalView) -> int:
        rows = self._run(
            "memory_count_listed",
            scope,
            {
                "namespace": scope.namespace,
                "entity": filters.entity,
                "category": filters.category,
                "tags": list(filters.tags) if filters.tags else None,
                "status": filters.status,
                "content_hash": filters.content_hash,
                **view_binds(view),
            },
        )
        return int(rows[0]["n"]) if rows else 0

    def count_rows(self, scope: Scope) -> dict[str, int]:
        counts = {"total": 0, "active": 0, "superseded": 0, "archived": 0}
        rows = self._run("memory_count", scope, {"namespace": scope.namespace, "open_us": OPEN})
        for row in rows:
            n = int(row["n"])
            counts["total"] += n
            if row["is_open"]:
                counts["active"] += n
            elif row["status"] == MemoryStatus.SUPERSEDED.value:
                counts["superseded"] += n
            elif row["status"] == MemoryStatus.ARCHIVED.value:
                counts["archived"] += n
        for key, collection in (
            ("episodes", "episodes"),
            ("entities", "entities"),
            ("relations", "relations"),
        ):
            counts[key] = self._count_in(scope, collection)
        rows = self._run("audit_count", scope, {"namespace": scope.namespace})
        counts["audit"] = int(rows[0]["n"]) if rows else 0
        return counts

    # candidate lanes ----------------------------------------------------------------------
    def vector_candidates(
        self,
        scope: Scope,
        vector: np.ndarray,
        k: int,
        view: TemporalView,
        prefilter: int = 0,
        prefilter_rows: int = 0,
    ) -> list[Hit]:
        # ``prefilter`` (the embedded index's approximate first stage) has no meaning here
        state = self.space_state(scope)
        if state is None:
            return []
        space = state.space
        query = query_vector(vector, space.dimension)
        if k <= 0:
            return []
        qv = vector_to_list(query)
        index = self.vector_index()
        plan = plan_vector_search(
            index=index,
            dimension=space.dimension,
            tenant_vectors=self._tenant_vector_count(scope),
            min_docs=self.vector_min_docs,
            in_transaction=self.in_transaction,
            zero_query=not np.any(query),
            moving=state.moving,
        )
        if plan.path == "ann":
            try:
                rows = self.executor.run(
                    "vector_ann",
                    scope,
                    {
                        "namespace": scope.namespace,
                        "query_vector": qv,
                        "n_probe": probes_for(self.n_probe, index),
                        **view_binds(view),
                        "k": k,
                    },
                )
            except ArangoQueryError as exc:
                if not ann_needs_fallback(exc.error_code):
                    raise
                self.vector_index(refresh=True)  # the index changed under us; re-read it
            else:
                # the ANN query reads ``vector`` alone: if a re-embedding flipped the tenant
                # since the state above was read, its rows may hold both spaces (scan exactly)
                if not ann_result_short(len(rows), k) and self.space_state(scope) == state:
                    return _ranked(rows)
        rows = self._run(
            "vector_exact",
            scope,
            {
                "namespace": scope.namespace,
                "query_vector": qv,
                **view_binds(view),
                "k": k,
            },
        )
        return _ranked(rows)

    def _tenant_vector_count(self, scope: Scope) -> int:
        """The tenant's size for the ANN-or-exact decision, cached for a few seconds.

        Counted over the tenant's memories (answered from the (tenant, ...) index without
        reading documents) rather than over vectors (``m.vector != null`` would read every
        document and cost as much as the exact scan it is meant to avoid).
        """
        now = time.monotonic()
        cached = self._tenant_sizes.get(scope.tenant)
        if cached is not None and now - cached[1] < TENANT_SIZE_TTL_S:
            return cached[0]
        size = self._count_in(scope.tenant_wide(), "memories")
        self._tenant_sizes[scope.tenant] = (size, now)
        return size

    def text_pool(self, scope: Scope, query: str, k: int, view: TemporalView) -> list[TextHit]:
        # ArangoSearch returns whole documents anyway; a projected query would save
        # decoding here but cost the lane a second round trip for the rows it keeps
        return pool_of(self._text_hits(scope, query, k, view))

    def _text_hits(self, scope: Scope, query: str, k: int, view: TemporalView) -> list[Hit]:
        """The BM25 query itself (ArangoSearch ``text_en``), as decoded hits."""
        if k <= 0 or not _WORD.search(query):
            return []  # no word characters: text_en yields no tokens, nothing can match
        if self.search_wait_for_sync and not self.in_transaction:
            rows = self._run(
                "text_bm25_wait",
                scope,
                {
                    "namespace": scope.namespace,
                    "query": query,
                    **view_binds(view),
                    "k": k,
                },
            )
        else:
            rows = self._run(
                "text_bm25",
                scope,
                {
                    "namespace": scope.namespace,
                    "query": query,
                    **view_binds(view),
                    "k": k,
                },
            )
        return [hit_from_arango(r) for r in rows]


def _ranked(rows: list[dict[str, Any]]) -> list[Hit]:
    """Cosine descending, id ascending: the order both backends promise."""
    hits = [hit_from_arango(r) for r in rows]
    return sorted(hits, key=lambda h: (-h.score, h.memory.id))
