"""The embedded store's graph and episodes: entities, relations, hops, conversation rounds.

Entities and relations are plain rows; ``hops`` is a breadth-first walk over
its ends, one query per level. A component of ``SQLiteStore``, handed the connection
(``SQLiteAccess``) and the caches: it tells them when an entity changed (the entities
kept with their name index: caches.known_entities), and keeps the relations it decoded
among the tenant's kept values (``_decoded``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from attestor_arango.models import Entity, Episode, Relation
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.codec import (
    entity_from_doc,
    entity_to_doc,
    episode_from_doc,
    episode_to_doc,
    relation_from_doc,
    relation_to_doc,
)
from attestor_arango.store.embedded import sql as q
from attestor_arango.store.embedded.base import SQLiteAccess, decode_row, encode_doc, scope_params
from attestor_arango.store.embedded.caches import TenantCaches
from attestor_arango.store.protocol import BackedRelations, check_relation_limit, check_tenant

# relations kept decoded over all tenants (``EmbeddedGraph._decoded``): ~1 kB each
RELATION_ROWS = 20_000


class EmbeddedGraph:
    """Entities, relations and episodes of one SQLite file."""

    def __init__(self, db: SQLiteAccess, caches: TenantCaches) -> None:
        self._db = db
        self._caches = caches

    # graph ------------------------------------------------------------------------------------
    def upsert_entity(self, scope: Scope, entity: Entity) -> None:
        check_tenant(scope, [entity])
        with self._db.transaction():
            rows = self._db.execute(
                q.GET_ENTITY,
                {"tenant": entity.tenant, "namespace": entity.namespace, "key": entity.key},
            ).fetchall()
            aliases = set(entity.aliases)
            if rows:
                held = set(json.loads(rows[0]["aliases"]))
                if aliases <= held and entity.kind in (None, rows[0]["kind"]):
                    # the row would stay as it is (the first name is kept, the kind only
                    # set, aliases only added): an add naming a known entity writes nothing,
                    # and the entities kept with their name index stay valid
                    return
                aliases |= held
            doc = entity_to_doc(entity)
            doc["aliases"] = sorted(aliases)
            self._db.execute(q.UPSERT_ENTITY, encode_doc(doc))
            # the entities kept with their name index (caches.known_entities) start again
            self._db.after_commit("state", ("entities", entity.tenant, {}))

    def list_entities(self, scope: Scope) -> list[Entity]:
        rows = self._db.read(q.LIST_ENTITIES, scope_params(scope))
        out = [entity_from_doc(decode_row(r)) for r in rows]
        check_tenant(scope, out)
        return out

    def add_relation(self, scope: Scope, relation: Relation) -> None:
        check_tenant(scope, [relation])
        with self._db.transaction():
            self._db.execute(q.INSERT_RELATION, encode_doc(relation_to_doc(relation)))

    def relations_touching(
        self, scope: Scope, entity_keys: Sequence[str], view: TemporalView
    ) -> list[Relation]:
        if not entity_keys:
            return []
        # read and kept under one hold of the lock: an erasure committing in between would
        # otherwise leave the erased relations among the kept ones
        with self._db.lock:
            rows = self._db.read(q.RELATIONS_TOUCHING, _touching_params(scope, entity_keys, view))
            out = self._decoded(scope.tenant, rows)
        check_tenant(scope, out)
        return out

    def relations_backed(
        self,
        scope: Scope,
        entity_keys: Sequence[str],
        view: TemporalView,
        candidates: Sequence[str],
        limit: int,
    ) -> BackedRelations:
        """``GraphStore.relations_backed`` in one statement (``sql.RELATIONS_BACKED``): the
        backing memories are checked by the (tenant, id) index inside SQLite, so a hub
        entity's hundreds of relations are neither decoded nor their memories read.
        ``ValidationError`` for a bad ``limit``; ``TenantLeakError`` for a foreign row."""
        check_relation_limit(limit)
        if not entity_keys:
            return BackedRelations((), frozenset())
        params = {
            **_touching_params(scope, entity_keys, view),
            "candidates": json.dumps(sorted(set(candidates))),
            "limit": limit,
        }
        # read and kept under one hold of the lock (as ``relations_touching``)
        with self._db.lock:
            rows = self._db.read(q.RELATIONS_BACKED, params)
            rels = self._decoded(scope.tenant, [r for r in rows if r["id"] is not None])
        check_tenant(scope, rels)
        return BackedRelations(tuple(rels), frozenset(r["source"] for r in rows if r["id"] is None))

    def _decoded(self, tenant: str, rows: Sequence[sqlite3.Row]) -> list[Relation]:
        """The relations of ``rows``, each decoded once while the tenant's kept values last.

        A relation row changes only its ``t_expired`` (a close), so one decoded before is
        reused when that still matches: a question naming an entity every conversation
        names read and built its hundreds of relations on every recall. Kept among
        ``caches.kept`` values (an erasure's drop, another connection's commit and a purge
        of the relations let them go), at most ``RELATION_ROWS`` over all tenants (the
        least recently read tenants' go first: ``caches.trim``).
        """
        held: dict[str, tuple[int, Relation]] = self._caches.holder("relations", tenant)
        if len(held) + len(rows) > RELATION_ROWS:
            held.clear()
        out = []
        for row in rows:
            expired = row["t_expired"]
            kept = held.get(row["id"])
            if kept is not None and kept[0] == expired:
                out.append(kept[1])
                continue
            rel = relation_from_doc(decode_row(row))
            held[rel.id] = (expired, rel)
            out.append(rel)
        self._caches.trim("relations", tenant, len, RELATION_ROWS)
        return out

    def _ends_touching(
        self, scope: Scope, entity_keys: Sequence[str], view: TemporalView
    ) -> list[tuple[str, str]]:
        """(source, target) of the relations ``relations_touching`` returns, without
        decoding them: a walk from an entity every conversation names read and built
        ~1,500 relations a recall (~30 ms) for their two ends."""
        rows = self._db.read(q.RELATION_ENDS_TOUCHING, _touching_params(scope, entity_keys, view))
        owners = {(r["tenant"], r["namespace"]) for r in rows}
        check_tenant(scope, [{"tenant": t, "namespace": n} for t, n in sorted(owners)])
        return [(r["source"], r["target"]) for r in rows]

    def hops(
        self, scope: Scope, sources: Sequence[str], max_depth: int, view: TemporalView
    ) -> dict[str, int]:
        depth = {key: 0 for key in sources}
        frontier = sorted(depth)
        for level in range(1, max_depth + 1):
            if not frontier:
                break
            nxt: set[str] = set()
            within = set(frontier)
            for source, target in self._ends_touching(scope, frontier, view):
                for a, b in ((source, target), (target, source)):
                    if a in within and b not in depth:
                        nxt.add(b)
            for key in nxt:
                depth[key] = level
            frontier = sorted(nxt)
        return depth

    # episodes ---------------------------------------------------------------------------------
    def put_episode(self, scope: Scope, episode: Episode) -> None:
        check_tenant(scope, [episode])
        with self._db.transaction():
            self._db.execute(q.INSERT_EPISODE, encode_doc(episode_to_doc(episode)))

    def get_episode(self, scope: Scope, episode_id: str) -> Episode | None:
        rows = self._db.read(q.GET_EPISODE, {"id": episode_id, **scope_params(scope)})
        out = [episode_from_doc(decode_row(r)) for r in rows]
        check_tenant(scope, out)
        return out[0] if out else None

    def list_episodes(
        self, scope: Scope, limit: int, offset: int = 0, *, newest_first: bool = False
    ) -> list[Episode]:
        params = {**scope_params(scope), "limit": limit, "offset": offset}
        sql = q.LIST_EPISODES_NEWEST if newest_first else q.LIST_EPISODES
        out = [episode_from_doc(decode_row(r)) for r in self._db.read(sql, params)]
        check_tenant(scope, out)
        return out


def _touching_params(
    scope: Scope, entity_keys: Sequence[str], view: TemporalView
) -> dict[str, object]:
    return {
        **scope_params(scope),
        "as_of": view.as_of,
        "expired_after": view.t_expired_after,
        "keys": json.dumps(sorted(set(entity_keys))),
    }
