"""ArangoStore parts beyond memories: graph, episodes, audit chain, quotas, governance.

Graph model: ``entities`` holds the descriptive records (``upsert_entity``); traversals run
over ``graph_nodes`` (one vertex per tenant/namespace/entity key) and the ``relations`` edge
collection. Relations may name entities nobody registered, exactly as in the embedded
backend, so ``add_relation`` upserts the two vertices itself; ``list_entities`` is not
affected by that.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arango.exceptions import ArangoError

from attestor_arango.errors import ConflictError, StoreError, ValidationError
from attestor_arango.models import AuditEntry, Entity, Episode, Relation
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.arango.base import COLLECTIONS, ArangoBase
from attestor_arango.store.arango.docs import (
    audit_from_arango,
    audit_to_arango,
    entity_from_arango,
    entity_to_arango,
    episode_from_arango,
    episode_to_arango,
    relation_from_arango,
    relation_to_arango,
)
from attestor_arango.store.arango.planning import READ_ONLY_REFUSALS, drain_in_batches
from attestor_arango.store.protocol import (
    BackedRelations,
    KnownEntities,
    check_relation_limit,
    check_tenant,
)
from attestor_arango.validation import entity_key

# Erasure order (edges before vertices, vectors before their rows); never the audit chain,
# never the quota (an operator's limit, not the subject's data: governance/purge.py).
PURGE_STEPS = (
    "relations",
    "graph_nodes",
    "entities",
    "vectors",
    "memories",
    "episodes",
    "write_counts",
    "embedding_spaces",
)
MAX_HOPS = 4  # the traversal's literal depth range in aql/graph_hops*.aql is 1..4


class GraphAndGovernance(ArangoBase):
    # shared ----------------------------------------------------------------------------------
    def _count_in(self, scope: Scope, collection: str) -> int:
        """Rows of one collection in the scope; the collection name comes from an allowlist."""
        if collection not in COLLECTIONS:
            raise StoreError(f"refusing to bind unknown collection {collection!r}")
        rows = self._run(
            "scope_count", scope, {"namespace": scope.namespace, "@collection": collection}
        )
        return int(rows[0]["n"]) if rows else 0

    # graph -------------------------------------------------------------------------------
    def upsert_entity(self, scope: Scope, entity: Entity) -> None:
        check_tenant(scope, [entity])
        doc = entity_to_arango(entity)
        doc["aliases"] = sorted(set(entity.aliases))
        self._retrying(
            "entity_upsert", scope, {"namespace": entity.namespace, "key": entity.key, "doc": doc}
        )

    def list_entities(self, scope: Scope) -> list[Entity]:
        rows = self._run("entity_list", scope, {"namespace": scope.namespace})
        return [entity_from_arango(r) for r in rows]

    def known_entities(self, scope: Scope) -> KnownEntities:
        """Read again on every call: several processes write one deployment, and nothing
        here learns of their commits (the embedded store keeps it between changes)."""
        return KnownEntities.of(self.list_entities(scope))

    def _vertex(self, scope: Scope, namespace: str, key: str) -> str:
        rows = self._retrying("graph_node_upsert", scope, {"namespace": namespace, "key": key})
        vertex = str(rows[0]["vertex"]) if rows else ""
        if not vertex.startswith("graph_nodes/"):
            raise StoreError(f"graph_node_upsert returned no vertex handle for {key!r}")
        return vertex

    def add_relation(self, scope: Scope, relation: Relation) -> None:
        check_tenant(scope, [relation])
        source = self._vertex(scope, relation.namespace, relation.source)
        target = self._vertex(scope, relation.namespace, relation.target)
        self._run(
            "relation_insert",
            scope,
            {
                "namespace": relation.namespace,
                "from_vertex": source,
                "to_vertex": target,
                "doc": relation_to_arango(relation),
            },
        )

    def relations_touching(
        self, scope: Scope, entity_keys: Sequence[str], view: TemporalView
    ) -> list[Relation]:
        if not entity_keys:
            return []
        rows = self._run(
            "relations_touching",
            scope,
            {
                "namespace": scope.namespace,
                "keys": sorted(set(entity_keys)),
                "as_of": view.as_of,
                "t_expired_after": view.t_expired_after,
            },
        )
        return [relation_from_arango(r) for r in rows]

    def relations_backed(
        self,
        scope: Scope,
        entity_keys: Sequence[str],
        view: TemporalView,
        candidates: Sequence[str],
        limit: int,
    ) -> BackedRelations:
        """``GraphStore.relations_backed`` by one query (aql/relations_backed.aql): the
        backing memories are looked up on the server through the (tenant, id) index.
        ``ValidationError`` for a bad ``limit``; ``TenantLeakError`` for a foreign row."""
        check_relation_limit(limit)
        if not entity_keys:
            return BackedRelations((), frozenset())
        rows = self._run(
            "relations_backed",
            scope,
            {
                "namespace": scope.namespace,
                "keys": sorted(set(entity_keys)),
                "as_of": view.as_of,
                "t_expired_after": view.t_expired_after,
                "candidates": sorted(set(candidates)),
                "limit": limit,
            },
        )
        # the executor checked every row's tenant and namespace; a key row carries ``end_key``
        rels = [relation_from_arango(r) for r in rows if "end_key" not in r]
        return BackedRelations(
            tuple(rels), frozenset(str(r["end_key"]) for r in rows if "end_key" in r)
        )

    def hops(
        self, scope: Scope, sources: Sequence[str], max_depth: int, view: TemporalView
    ) -> dict[str, int]:
        if not 0 <= max_depth <= MAX_HOPS:
            raise ValidationError(f"max_depth must be between 0 and {MAX_HOPS}; got {max_depth}")
        depth = {key: 0 for key in sources}
        if not depth or max_depth == 0:
            return depth
        if scope.namespace is None:
            rows = self._run(
                "graph_hops",
                scope,
                {
                    "sources": sorted(depth),
                    "max_depth": max_depth,
                    "as_of": view.as_of,
                    "t_expired_after": view.t_expired_after,
                },
            )
        else:
            rows = self._run(
                "graph_hops_ns",
                scope,
                {
                    "namespace": scope.namespace,
                    "sources": sorted(depth),
                    "max_depth": max_depth,
                    "as_of": view.as_of,
                    "t_expired_after": view.t_expired_after,
                },
            )
        for row in rows:
            key, d = str(row["key"]), int(row["depth"])
            if 0 < d <= max_depth and d < depth.get(key, max_depth + 1):
                depth[key] = d
        return depth

    # episodes ------------------------------------------------------------------------------
    def put_episode(self, scope: Scope, episode: Episode) -> None:
        check_tenant(scope, [episode])
        self._run("episode_insert", scope, {"doc": episode_to_arango(episode)})

    def get_episode(self, scope: Scope, episode_id: str) -> Episode | None:
        rows = self._run("episode_get", scope, {"namespace": scope.namespace, "id": episode_id})
        return episode_from_arango(rows[0]) if rows else None

    def list_episodes(
        self, scope: Scope, limit: int, offset: int = 0, *, newest_first: bool = False
    ) -> list[Episode]:
        offset, limit = max(0, offset), max(0, limit)
        if newest_first:
            rows = self._run(
                "episode_list_newest",
                scope,
                {"namespace": scope.namespace, "offset": offset, "limit": limit},
            )
        else:
            rows = self._run(
                "episode_list",
                scope,
                {"namespace": scope.namespace, "offset": offset, "limit": limit},
            )
        return [episode_from_arango(r) for r in rows]

    # audit (append-only; never purged) -----------------------------------------------------
    def last_audit(self, scope: Scope) -> AuditEntry | None:
        rows = self._run("audit_last", scope.tenant_wide(), {})
        return audit_from_arango(rows[0]) if rows else None

    def append_audit(self, scope: Scope, entry: AuditEntry) -> None:
        tenant_wide = scope.tenant_wide()
        check_tenant(tenant_wide, [entry])
        with self.transaction():
            self._run("audit_append", tenant_wide, {"doc": audit_to_arango(entry)})
            head = self._run(
                "audit_head_advance", tenant_wide, {"seq": entry.seq, "hash": entry.hash}
            )
            if not head or int(head[0]["seq"]) != entry.seq:
                raise ConflictError(
                    f"audit chain of {entry.tenant!r} is already past seq {entry.seq}; "
                    "entries only append after the head",
                )

    def read_audit(self, scope: Scope, limit: int, after_seq: int = 0) -> list[AuditEntry]:
        rows = self._run(
            "audit_read", scope.tenant_wide(), {"after_seq": after_seq, "limit": max(0, limit)}
        )
        return [audit_from_arango(r) for r in rows]

    def read_audit_actions(
        self, scope: Scope, actions: Sequence[str], limit: int
    ) -> list[AuditEntry]:
        rows = self._run(
            "audit_actions",
            scope.tenant_wide(),
            {"actions": list(actions), "limit": max(0, limit)},
        )
        return [audit_from_arango(r) for r in rows]

    def audit_head(self, scope: Scope) -> tuple[int, str] | None:
        rows = self._run("audit_head_get", scope.tenant_wide(), {})
        return (int(rows[0]["seq"]), str(rows[0]["hash"])) if rows else None

    # quotas --------------------------------------------------------------------------------
    def get_quota(self, scope: Scope) -> int | None:
        rows = self._run("quota_get", scope.tenant_wide(), {})
        value = rows[0]["daily_writes"] if rows else None
        return None if value is None else int(value)

    def set_quota(self, scope: Scope, daily_writes: int | None) -> None:
        self._retrying("quota_set", scope.tenant_wide(), {"daily_writes": daily_writes})

    def count_writes(self, scope: Scope, day: str) -> int:
        rows = self._run("writes_get", scope.tenant_wide(), {"day": day})
        return int(rows[0]["writes"]) if rows else 0

    def add_writes(self, scope: Scope, day: str, n: int) -> int:
        rows = self._retrying("writes_add", scope.tenant_wide(), {"day": day, "n": n})
        return int(rows[0]["writes"])

    # recall-id keys (core/recall_key.py) ---------------------------------------------------
    def get_recall_key(self, scope: Scope) -> str | None:
        rows = self._run("recall_key_get", scope.tenant_wide(), {})
        return str(rows[0]["key"]) if rows else None

    def put_recall_key(self, scope: Scope, key: str) -> str | None:
        try:
            rows = self._retrying("recall_key_put", scope.tenant_wide(), {"key": key})
        except StoreError as exc:  # a read-only account: the caller falls back
            if getattr(exc.__cause__, "error_code", None) in READ_ONLY_REFUSALS:
                return None
            raise
        return str(rows[0]["key"])

    # governance ------------------------------------------------------------------------------
    def purge_collections(self) -> tuple[str, ...]:
        return PURGE_STEPS

    def purge_collection(self, scope: Scope, collection: str) -> int:
        """Removes the tenant's rows of one collection in bounded, resumable batches.

        Each batch of at most ``purge_batch`` rows is its own stream transaction (or joins an
        enclosing ``transaction()``), so no purge meets the 512 MiB transaction limit and a
        failure keeps the batches already committed; a re-run continues (idempotent).
        """
        if collection not in PURGE_STEPS:
            raise ValidationError(
                f"unknown purge collection {collection!r}; use one of {list(PURGE_STEPS)}"
            )
        tenant_wide = scope.tenant_wide()
        batch = self.purge_batch
        self._tenant_sizes.pop(scope.tenant, None)

        def one_batch() -> int:
            with self.transaction():
                if collection == "vectors":
                    rows = self._run("purge_vectors", tenant_wide, {"batch": batch})
                else:
                    rows = self._run(
                        "purge_collection",
                        tenant_wide,
                        {"@collection": collection, "batch": batch},
                    )
            return len(rows)

        return drain_in_batches(one_batch, batch)

    def purge_tenant(self, scope: Scope) -> dict[str, int]:
        """Every purge step in order, each committing its own batches (no outer transaction).

        A failure raises after the steps before it were committed; ``tenant_residue`` tells
        what is left and running the purge again finishes it.
        """
        return {name: self.purge_collection(scope, name) for name in PURGE_STEPS}

    def flush_erasure(self) -> int:
        """Rewrites the data files of every collection an erasure removes rows from, so no
        removed row's bytes stay in them (the embedded backend's ``VACUUM``); returns how
        many collections could not be rewritten (0: done; -1 inside a transaction, where
        nothing is rewritten). The erasure reports a count above 0 as left to finish.

        ``collection.compact()`` has RocksDB rewrite the collection's ``.sst`` files keeping
        only live entries (left alone, a removed document stays in them until a background
        compaction reaches its range). Like ``VACUUM`` it rewrites every tenant's rows of
        the collection, so an erasure costs I/O in proportion to the collections' size.
        The ArangoSearch view's segments are not rewritten here: the view drops the removed
        rows' terms when it consolidates (``consolidationIntervalMsec``, schemas/views.json).
        """
        if self.in_transaction:
            return -1
        failed = 0
        for name in PURGE_STEPS:
            try:
                self.database.collection(name).compact()
            except ArangoError:  # no permission, the server gone: on record, run it again
                failed += 1
        return failed

    def tenant_residue(self, scope: Scope) -> dict[str, int]:
        tenant_wide = scope.tenant_wide()
        residue: dict[str, int] = {}
        for name in PURGE_STEPS:
            if name == "vectors":
                rows = self._run("memory_vector_count", tenant_wide, {})
                residue[name] = int(rows[0]["n"]) if rows else 0
            else:
                residue[name] = self._count_in(tenant_wide, name)
        return residue

    def delete_memories(self, scope: Scope, ids: Sequence[str]) -> int:
        """The rows, the relations derived from them and, in the same transaction, the
        entities (records and traversal vertices) that only they named (``_drop_unnamed``)."""
        if not ids:
            return 0
        namespace, listed = scope.namespace, list(ids)
        with self.transaction():
            named = self._run(
                "entity_names_of_memories", scope, {"namespace": namespace, "ids": listed}
            )
            self._run(
                "relation_delete_for_memories", scope, {"namespace": namespace, "ids": listed}
            )
            rows = self._run("memory_delete_many", scope, {"namespace": namespace, "ids": listed})
            self._drop_unnamed(scope.tenant, named)
        return len(rows)

    def _drop_unnamed(self, tenant: str, named: Sequence[dict[str, Any]]) -> None:
        """The entities of ``named`` (namespace, name) no row or relation of their namespace
        names any more: an entity's name is a word of the rows that named it, so it goes
        with the last of them (a superseded version still names it: it stays). As the
        embedded backend's ``delete_memories``; the keys are compared normalised
        (``entity_key``), as the entities are stored."""
        keys: dict[str, set[str]] = {}
        for row in named:
            keys.setdefault(str(row["namespace"]), set()).add(entity_key(str(row["name"])))
        for namespace, candidates in sorted(keys.items()):
            where = Scope(tenant, namespace)
            rows = self._run("entity_names_in_namespace", where, {"namespace": namespace})
            unnamed = sorted(candidates - {entity_key(str(r["name"])) for r in rows})
            if unnamed:
                self._run("entity_delete_keys", where, {"namespace": namespace, "keys": unnamed})
                self._run(
                    "graph_node_delete_keys", where, {"namespace": namespace, "keys": unnamed}
                )
