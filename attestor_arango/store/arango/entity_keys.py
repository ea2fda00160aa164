"""Entity keys stored before they were folded to Unicode NFKC, folded on ArangoDB.

``validation.entity_key`` folds a name to NFKC, lower case, single spaces; before, it only
lowered and collapsed spaces. Every reader and writer now uses the folded key, so a key
stored before (a decomposed "café", a full-width "ａｎｎ") no longer meets the spellings it
stands for: ``relations_touching``, ``hops`` and the clean-up of ``delete_memories`` look
for "café" and miss "cafe\u0301". The embedded store rewrote its keys once (schema
migration 9); ArangoDB has no schema version, so ``init`` folds them here, tenant by
tenant, and running it again changes nothing.

Only keys with a character outside printable ASCII can change (the old keys were already
lower case with single spaces, and an ASCII string is its own NFKC form), so the queries
read only those; AQL has no NFKC, each key is folded here with ``entity_key``. What moves:

- relation ends (``source`` / ``target``) take the folded key and the edge is aimed at the
  folded key's traversal vertex (created when missing);
- then a traversal vertex with an unfolded key is removed: every edge that ended at it was
  re-aimed just before (an edge's ends are its vertices' keys, ``add_relation``);
- an entity record is merged into the record of its folded key by the same upsert a second
  ``upsert_entity`` makes (the first name stays, aliases are united, a kind it has wins),
  then removed. Two old keys that fold to one become one entity; the embedded migration
  keeps the first row and drops the later one's aliases, this keeps them.

Each page of at most ``batch`` documents is its own stream transaction (a failure keeps
the pages committed before it; running the fold again resumes), and every query runs
under the tenant's ``Scope``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attestor_arango.errors import ValidationError
from attestor_arango.scope import Scope
from attestor_arango.store.arango.docs import entity_from_arango
from attestor_arango.store.arango.store_graph import GraphAndGovernance
from attestor_arango.validation import entity_key

# Documents per transaction: each folded document costs two or three small queries, so a
# page stays a few seconds long, far from the stream transaction's idle timeout and size
# limit, and holds its row locks briefly.
FOLD_BATCH = 500

Page = Callable[[str], list[dict[str, Any]]]


class EntityKeyFolding(GraphAndGovernance):
    def entity_key_tenants(self) -> list[str]:
        """The tenants holding a key the folding may change (names only, cross-tenant)."""
        return sorted(str(t) for t in self.executor.run_admin("admin_entity_key_tenants", {}))

    def fold_entity_keys(self, scope: Scope, batch: int = FOLD_BATCH) -> dict[str, int]:
        """Folds the tenant's stored entity keys to ``entity_key``'s form; how many relations,
        traversal vertices and entity records changed (0 each when run again).

        Raises ``ValidationError`` for a ``batch`` below 1, and what the queries raise
        (``StoreError``; the page that failed is rolled back, the ones before stay).
        """
        if batch < 1:
            raise ValidationError(f"batch must be at least 1; got {batch}")
        tenant_wide = scope.tenant_wide()

        def relations(after: str) -> list[dict[str, Any]]:
            return self._run(
                "relation_ends_unfolded", tenant_wide, {"after": after, "batch": batch}
            )

        def vertices(after: str) -> list[dict[str, Any]]:
            return self._run(
                "entity_keys_unfolded",
                tenant_wide,
                {"@collection": "graph_nodes", "after": after, "batch": batch},
            )

        def records(after: str) -> list[dict[str, Any]]:
            return self._run(
                "entity_keys_unfolded",
                tenant_wide,
                {"@collection": "entities", "after": after, "batch": batch},
            )

        # relations first: a vertex is removed only after the edges ending at it moved
        return {
            "relations": self._fold_pages(relations, self._fold_relation_ends, batch),
            "graph_nodes": self._fold_pages(vertices, self._fold_vertex, batch),
            "entities": self._fold_pages(records, self._fold_record, batch),
        }

    def _fold_pages(self, page: Page, fold: Callable[[dict[str, Any]], bool], batch: int) -> int:
        """Reads and folds page after page, each in its own transaction, until one comes back
        short; pages by the last document key, so documents written meanwhile (the folded
        records an upsert inserts) cannot make it loop."""
        after, folded = "", 0
        while True:
            with self.transaction():
                rows = page(after)
                folded += sum(1 for row in rows if fold(row))
            if len(rows) < batch:
                return folded
            after = str(rows[-1]["_key"])

    def _fold_relation_ends(self, row: dict[str, Any]) -> bool:
        old_source, old_target = str(row["source"]), str(row["target"])
        source, target = entity_key(old_source), entity_key(old_target)
        if (source, target) == (old_source, old_target) or not source or not target:
            return False
        namespace = str(row["namespace"])
        where = Scope(str(row["tenant"]), namespace)
        self._run(
            "relation_fold_ends",
            where,
            {
                "edge": str(row["_key"]),
                "source": source,
                "target": target,
                "from_vertex": self._vertex(where, namespace, source),
                "to_vertex": self._vertex(where, namespace, target),
            },
        )
        return True

    def _fold_vertex(self, row: dict[str, Any]) -> bool:
        key = str(row["key"])
        folded = entity_key(key)
        if folded == key or not folded:
            return False
        namespace = str(row["namespace"])
        where = Scope(str(row["tenant"]), namespace)
        self._run("graph_node_delete_keys", where, {"namespace": namespace, "keys": [key]})
        return True

    def _fold_record(self, row: dict[str, Any]) -> bool:
        entity = entity_from_arango(row)
        folded = entity_key(entity.key)
        if folded == entity.key or not folded:
            return False
        where = Scope(entity.tenant, entity.namespace)
        self.upsert_entity(where, entity.model_copy(update={"key": folded}))
        self._run(
            "entity_delete_keys", where, {"namespace": entity.namespace, "keys": [entity.key]}
        )
        return True
