"""The embedded store's memories and their vectors, and the vector lane over them.

Rows live in SQLite; reads by id use the rowids the tenant's text index knows (half
the cost), and the vector lane answers from the tenant's in-memory vector index
(caches.py). A write queues what it did on the connection (``after_commit``), so the
caches follow it only once it committed. A component of ``SQLiteStore``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from attestor_arango.clock import OPEN
from attestor_arango.errors import ConflictError
from attestor_arango.memo import Memo
from attestor_arango.models import Memory, Provenance
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.codec import (
    memory_of,
    memory_to_doc,
    provenance_of,
    query_vector,
    stored_vector,
)
from attestor_arango.store.embedded import exact
from attestor_arango.store.embedded import sql as q
from attestor_arango.store.embedded.base import SQLiteAccess
from attestor_arango.store.embedded.base import encode_doc as _encode
from attestor_arango.store.embedded.base import list_params as _list_params
from attestor_arango.store.embedded.base import scope_params as _scope_params
from attestor_arango.store.embedded.base import view_params as _view_params
from attestor_arango.store.embedded.caches import TenantCaches
from attestor_arango.store.embedded.vectors import TenantVectors
from attestor_arango.store.protocol import (
    EmbeddingSpace,
    Hit,
    MemoryFilter,
    check_tenant,
)

# the columns every memory read selects (sql.MEMORY_COLUMNS), in order: ``memory_from_row``
# unpacks a row by position
ROW_FIELDS = (
    "id", "tenant", "namespace", "content", "entity", "category", "tags", "confidence",
    "valid_from", "valid_until", "t_created", "t_expired", "superseded_by", "supersedes",
    "status", "agent_id", "role", "session_id", "source_episode_id", "agent_trail",
    "parent_agent_id", "content_hash", "signature", "metadata", "salt",
)  # fmt: skip
if tuple(c.strip() for c in q.MEMORY_COLUMNS.split(",")) != ROW_FIELDS:  # pragma: no cover
    raise RuntimeError("sql.MEMORY_COLUMNS and memories.ROW_FIELDS disagree")


def _strings(text: str) -> tuple[str, ...]:
    """A stored JSON list of strings (tags, an agent trail) as the tuple a Memory holds."""
    return tuple(json.loads(text) or ())


# a JSON list column's text -> its tuple: rows share a few (a memo, so erasure empties it)
_strings_of: Memo[str, tuple[str, ...]] = Memo(_strings, 4096)


def _row_provenance(key: tuple[str, str, str | None, str | None, str, str | None]) -> Provenance:
    agent_id, role, session_id, episode_id, trail, parent_id = key
    trail_terms = () if trail == "[]" else _strings_of(trail)
    return provenance_of((agent_id, role, session_id, episode_id, trail_terms, parent_id))


# the provenance columns as stored (the agent trail as JSON text) -> the shared Provenance
_provenance_of_row: Memo[tuple[str, str, str | None, str | None, str, str | None], Provenance]
_provenance_of_row = Memo(_row_provenance, 4096)


def memory_from_row(row: Sequence[Any]) -> Memory:
    """A memory row (``ROW_FIELDS``, JSON columns as text) as ``base.decode_row`` and
    ``codec.memory_from_doc`` make it, without the intermediate document: fields are
    unpacked by position, the JSON lists parsed once per distinct text (a memo) and the
    provenance found by its stored values. Decoding a row the other way cost ~13 us, half
    of it the document and the agent trail's JSON parse."""
    (
        memory_id, tenant, namespace, content, entity, category, tags, confidence,
        valid_from, valid_until, t_created, t_expired, superseded_by, supersedes,
        status, agent_id, role, session_id, episode_id, trail, parent_id,
        content_hash, signature, metadata, salt,
    ) = row  # fmt: skip
    return memory_of(
        memory_id,
        tenant,
        namespace,
        content,
        entity,
        category,
        () if tags == "[]" else _strings_of(tags),
        confidence,
        valid_from,
        valid_until,
        t_created,
        t_expired,
        superseded_by,
        supersedes,
        status,
        _provenance_of_row((agent_id, role, session_id, episode_id, trail, parent_id)),
        content_hash,
        signature,
        {} if metadata == "{}" else dict(json.loads(metadata) or {}),
        salt,
    )


def _in_order(
    ids: Sequence[str], cached: dict[str, Memory], read: Sequence[Memory]
) -> dict[str, Memory]:
    """The memories by id, in the order asked (whichever were cached or read)."""
    by_id = {**cached, **{m.id: m for m in read}}
    return {i: by_id[i] for i in ids if i in by_id}


def _gather_normed(
    index: TenantVectors, ids: Sequence[str], namespace: str | None
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray | None]:
    """``index.gather``'s ids and float32 matrix, the rows' kept norms, and the matrix as
    float64 when the index keeps its rows widened (``exact.WideRows``, a small index: the
    first read widens them, as the lane's search need not; else None)."""
    have, rows = index.held(ids, namespace)
    matrix = index.float_rows(rows, np.float32)
    wide = index.float_rows(rows) if index.wide.fits(index.n, index.dimension) else None
    return have, matrix, index.norms.of(rows, matrix), wide


def _units(index: TenantVectors, ids: Sequence[str], namespace: str | None) -> np.ndarray | None:
    """``index.unit_rows`` of ``ids`` when it holds every one of them in ``namespace`` (an
    index too large to keep them is answered before the ids are looked up)."""
    if not index.wide.fits(index.n, index.dimension):
        return None
    have, rows = index.held(ids, namespace)
    return index.unit_rows(rows) if len(have) == len(ids) else None


class EmbeddedMemories:
    """Memories, vectors, counts and the vector lane of one SQLite file."""

    def __init__(self, db: SQLiteAccess, caches: TenantCaches) -> None:
        self._db = db
        self._caches = caches

    # embedding space ------------------------------------------------------------------------
    def get_embedding_space(self, scope: Scope) -> EmbeddingSpace | None:
        # read by every write (twice): kept between writes (caches.kept)
        return self._caches.kept("space", scope.tenant, lambda: self._read_space(scope.tenant))

    def _read_space(self, tenant: str) -> EmbeddingSpace | None:
        rows = self._db.read(q.GET_SPACE, {"tenant": tenant})
        return EmbeddingSpace(rows[0]["name"], rows[0]["dimension"]) if rows else None

    def set_embedding_space(self, scope: Scope, space: EmbeddingSpace) -> None:
        with self._db.transaction():
            params = {"tenant": scope.tenant, "name": space.name, "dimension": space.dimension}
            self._db.execute(q.SET_SPACE, params)
            self._db.after_commit("drop", scope.tenant)
            self._db.after_commit("state", ("space", scope.tenant, space))

    def hold_embedding_space(self, scope: Scope, space: EmbeddingSpace) -> bool:
        """Whether ``space`` is the tenant's; inside a transaction the write lock (BEGIN
        IMMEDIATE, other connections' commits seen) keeps it so until the commit."""
        return self.get_embedding_space(scope) == space

    # memories ------------------------------------------------------------------------------
    def insert_memory(self, scope: Scope, memory: Memory, vector: np.ndarray | None) -> None:
        check_tenant(scope, [memory])
        doc = _encode(memory_to_doc(memory))
        blob = None
        if vector is not None:
            blob = stored_vector(vector, self.get_embedding_space(scope)).tobytes()
        with self._db.transaction():
            cur = self._db.execute(q.INSERT_MEMORY, {**doc, "embedding": blob})
            self._db.execute(q.INSERT_FTS, {"rowid": cur.lastrowid, "content": memory.content})
            times = (doc["t_created"], doc["t_expired"], doc["valid_from"], doc["valid_until"])
            self._db.after_commit(
                "text",
                (scope.tenant, memory.id, memory.namespace, memory.content, times, cur.lastrowid),
            )
            if blob is not None:
                self._db.after_commit(
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
        out = list(map(memory_from_row, rows))
        check_tenant(scope, out)
        return out

    def get_memory(self, scope: Scope, memory_id: str) -> Memory | None:
        rows = self._db.read(q.GET_MEMORY, {"id": memory_id, **_scope_params(scope)})
        found = self._memories(scope, rows)
        return found[0] if found else None

    def memory_ids_matching(
        self, scope: Scope, fragment: str, limit: int, created_by: int | None = None
    ) -> list[str]:
        params = {
            "fragment": fragment,
            "limit": limit,
            "created_by": created_by,
            **_scope_params(scope),
        }
        rows = [dict(r) for r in self._db.read(q.MEMORY_IDS_MATCHING, params)]
        check_tenant(scope, rows)
        return [str(r["id"]) for r in rows]

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> dict[str, Memory]:
        """By rowid where the tenant's text index knows it (half the cost), else by id.

        The scope filter applies either way; a row read by rowid counts only if its
        id was asked for, and an id not found by rowid is looked up by id.
        """
        if not ids:
            return {}
        asked = wanted = list(dict.fromkeys(ids))
        params = _scope_params(scope)
        with self._db.lock:
            # decoded rows kept from earlier reads (rowcache.py), never inside a write
            # transaction: its rows may not be committed
            cache = None if self._db.in_transaction else self._caches.rows
            cached: dict[str, Memory] = {}
            if cache is not None:
                self._caches.fresh()  # another connection's commit empties it
                # the scope's own rows only (keyed by tenant, namespace filtered): checked
                # against the scope when they were read, not again
                cached, wanted = cache.take(scope.tenant, scope.namespace, wanted)
                if not wanted:  # in the order asked, each id once
                    return cached
            texts = self._caches.texts.get(scope.tenant)
            rowids = list(texts.rowids_of(wanted).values()) if texts is not None else []
            rows: list[sqlite3.Row] = []
            if rowids:
                want = set(wanted)
                by_rowid = self._db.read(
                    q.GET_MEMORIES_BY_ROWID, {"rowids": json.dumps(rowids), **params}
                )
                rows = [r for r in by_rowid if r["id"] in want]
            found = {r["id"] for r in rows}
            rest = [i for i in wanted if i not in found]
            if rest:
                rows += self._db.read(q.GET_MEMORIES, {"ids": json.dumps(rest), **params})
            read = self._memories(scope, rows)
            if cache is not None:
                cache.put(zip(read, (r["metadata"] for r in rows), strict=True))
        return _in_order(asked, cached, read)

    def get_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        with self._db.lock:
            indexed = self.vector_matrix(scope, ids)
            if indexed is not None:
                return dict(zip(*indexed, strict=True))
            rows = self._db.execute(
                q.GET_VECTORS, {"ids": json.dumps(list(ids)), **_scope_params(scope)}
            ).fetchall()
        check_tenant(scope, [dict(r) for r in rows])
        return {r["id"]: np.frombuffer(r["embedding"], dtype=np.float32).copy() for r in rows}

    def vector_matrix(
        self, scope: Scope, ids: Sequence[str]
    ) -> tuple[list[str], np.ndarray] | None:
        """``get_vectors``' answer from the tenant's vector index as the ids found, in the
        order of ``ids``, and one float32 matrix of their vectors (row j: the j-th id), so
        that the lanes' union is scored without joining a dict of rows again; None when
        the index does not hold every one of ``ids`` in the scope (``get_vectors`` then
        reads the rows). Not part of the Store contract (retrieval's ``VectorMatrix``)."""
        with self._db.lock:
            index = self._caches.tenant_vectors(scope.tenant)
            if index is None:
                return None
            have, matrix = self._caches.vector_read(
                scope.tenant, lambda v: v.gather(ids, scope.namespace)
            )
        # every id held (each once, unless ``ids`` repeats one): the sets are compared
        # only when the counts differ
        if len(have) == len(ids) or len(set(have)) == len(set(ids)):
            return have, matrix
        return None

    def vector_matrix_normed(
        self, scope: Scope, ids: Sequence[str]
    ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray | None] | None:
        """``vector_matrix``, each vector's float64 norm as exact cosine takes it
        (``exact.row_norms``), kept in the index per row once computed (``exact.RowNorms``),
        and the matrix as float64 when the index keeps its rows widened (``exact.WideRows``;
        else None). Not part of the Store contract (retrieval's ``NormedMatrix``)."""
        with self._db.lock:
            index = self._caches.tenant_vectors(scope.tenant)
            if index is None:
                return None
            have, matrix, norms, wide = self._caches.vector_read(
                scope.tenant, lambda v: _gather_normed(v, ids, scope.namespace)
            )
        if len(have) == len(ids) or len(set(have)) == len(set(ids)):  # as ``vector_matrix``
            return have, matrix, norms, wide
        return None

    def vector_units(self, scope: Scope, ids: Sequence[str]) -> np.ndarray | None:
        """The float64 unit vectors of ``ids`` (row j: the j-th), as the index keeps them once
        divided (``exact.UnitRows``); None when the index does not hold every one of ``ids``
        in the scope, or keeps no widened rows. Not part of the Store contract (retrieval's
        ``freshness.UnitVectors``)."""
        with self._db.lock:
            if self._caches.tenant_vectors(scope.tenant) is None:
                return None
            return self._caches.vector_read(scope.tenant, lambda v: _units(v, ids, scope.namespace))

    def close_memory(
        self, scope: Scope, memory_id: str, t_expired: int, status: str, superseded_by: str | None
    ) -> None:
        with self._db.transaction():
            cur = self._db.execute(
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
            self._db.execute(
                q.CLOSE_MEMORY_RELATIONS,
                {"id": memory_id, "t_expired": t_expired, "open": OPEN, **_scope_params(scope)},
            )
            self._db.after_commit("expire", (scope.tenant, memory_id, t_expired))

    def find_active(
        self, scope: Scope, entity: str, category: str, view: TemporalView
    ) -> list[Memory]:
        params = {
            **_scope_params(scope),
            **_view_params(view),
            "entity": entity,
            "category": category,
        }
        return self._memories(scope, self._db.read(q.FIND_ACTIVE, params))

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
        return self._memories(scope, self._db.read(sql, params))

    def count_memories(self, scope: Scope, filters: MemoryFilter, view: TemporalView) -> int:
        sql = q.COUNT_LISTED_BY_ENTITY if filters.entity is not None else q.COUNT_LISTED
        return int(self._db.read(sql, _list_params(scope, filters, view))[0][0])

    def count_rows(self, scope: Scope) -> dict[str, int]:
        params = _scope_params(scope)
        with self._db.lock:
            row = self._db.execute(q.COUNT_MEMORIES, {**params, "open": OPEN}).fetchone()
            counts = {k: int(row[k]) for k in ("total", "active", "superseded", "archived")}
            counts["episodes"] = self._db.execute(q.COUNT_EPISODES, params).fetchone()[0]
            counts["entities"] = self._db.execute(q.COUNT_ENTITIES, params).fetchone()[0]
            counts["relations"] = self._db.execute(q.COUNT_RELATIONS, params).fetchone()[0]
            counts["audit"] = self._db.execute(q.COUNT_AUDIT, params).fetchone()[0]
        return counts

    # candidate lanes ---------------------------------------------------------------------------
    def vector_candidates(
        self,
        scope: Scope,
        vector: np.ndarray,
        k: int,
        view: TemporalView,
        prefilter: int = 0,
        prefilter_rows: int = 0,
    ) -> list[Hit]:
        ids, scores = self.vector_ranked(scope, vector, k, view, prefilter, prefilter_rows)
        found = self.get_memories(scope, ids)
        return [Hit(found[i], s) for i, s in zip(ids, scores or (), strict=True) if i in found]

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
        """``vector_candidates``' ranking before its rows are read: the ids and scores of the
        index's k best in the scope and view, best first, as two columns (the ids' rows are
        read by ``get_memories``, which drops any the scope's own filter does not return).
        Not ``ordered``: when the index's bounds chose exactly those k rows, their ids in row
        order and no scores (None; ``exact.top``). Not part of the Store contract
        (retrieval's ``RanksVectors``): the lanes read the vector lane's rows once and make
        its hits once, with their exact cosines."""

        def top(v: TenantVectors) -> tuple[list[str], list[float] | None]:
            chosen, q, take = v.candidates(q32, k, scope.namespace, view, prefilter, prefilter_rows)
            return exact.top(v.rows.take_ids, v.float_rows, chosen, q, take, ordered)

        with self._db.lock:
            index = self._caches.tenant_vectors(scope.tenant)
            if index is None:
                return [], []
            q32 = query_vector(vector, index.dimension)
            return self._caches.vector_read(scope.tenant, top)
