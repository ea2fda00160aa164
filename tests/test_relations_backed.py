"""``relations_backed``: the graph step's relations read by one store query (issue 21).

Recall's graph step read every relation touching the entities a query names, sorted them
in Python and read their backing memories a page at a time (``_backed_relations``): a
question naming the user, an end of hundreds of relations, cost ~4x one naming no entity.
The embedded store now answers it by one statement. These tests hold it to what the old
Python path answered, kept here as the reference (``old_backed_relations``), on random
stores and through recall itself.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentMemory
from attestor_arango.clock import ManualClock, from_us, to_us
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.ids import SeededIdSource
from attestor_arango.models import Memory, Provenance, Relation, content_hash
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.embedded import graph as graph_module
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.protocol import BackedRelations, MemoryStore

T0 = 1_767_225_600_000_000
KEYS = ["ann", "bob", "cy", "dee", "eve", "fay"]


def old_backed_relations(
    store: MemoryStore,
    scope: Scope,
    view: TemporalView,
    rels: Sequence[Relation],
    wanted: set[str],
    existing: set[str],
    limit: int,
    page_size: int,
) -> list[Relation]:
    """The graph step's Python path before issue 21 (retrieval/pipeline.py), unchanged but
    for the page size being an argument: the reference the store query must match."""
    ordered = sorted(rels, key=lambda r: (-to_us(r.t_created), r.id))
    missing = set(wanted)
    out: list[Relation] = []
    usable = 0
    for lo in range(0, len(ordered), page_size):
        page = ordered[lo : lo + page_size]
        ids = sorted({r.memory_id for r in page if r.memory_id and r.memory_id not in existing})
        found = store.get_memories(scope, ids) if ids else {}
        visible = {
            i
            for i, m in found.items()
            if m.us("t_created") <= view.as_of and m.us("t_expired") > view.t_expired_after
        }
        visible |= {r.memory_id for r in page if r.memory_id in existing}
        for r in page:
            if r.memory_id is None or r.memory_id in visible:
                out.append(r)
                missing.difference_update((r.source, r.target))
                usable += r.memory_id is None or r.memory_id not in existing
        if not missing and usable >= limit:
            break
    return out


def _usable(rels: Sequence[Relation], existing: set[str]) -> list[Relation]:
    return [r for r in rels if r.memory_id is None or r.memory_id not in existing]


def _ends(rels: Sequence[Relation], keys: Sequence[str]) -> frozenset[str]:
    return frozenset(k for r in rels for k in (r.source, r.target) if k in keys)


def _memory(tenant: str, namespace: str, mid: str, t: int) -> Memory:
    return Memory(
        id=mid,
        tenant=tenant,
        namespace=namespace,
        content=f"fact {mid}",
        valid_from=from_us(t),
        t_created=from_us(t),
        provenance=Provenance(agent_id="a", role="planner"),
        content_hash=content_hash(f"fact {mid}"),
    )


def _random_store(store: SQLiteStore, rng: random.Random) -> list[str]:
    """Two tenants, two namespaces: memories (some closed, some created late, some erased
    later) and relations backed by them, by none, or by an id no row holds; the ids of the
    tenant acme's memories (closed and erased ones included)."""
    ids: list[str] = []
    for tenant in ("acme", "beta"):
        for i in range(rng.randint(5, 30)):
            namespace = rng.choice(["ns1", "ns2"])
            mid = f"m{i:03d}"  # the same ids in both tenants: identity is per tenant
            store.insert_memory(
                Scope(tenant, namespace),
                _memory(tenant, namespace, mid, T0 + rng.randint(0, 50)),
                None,
            )
            if tenant == "acme":
                ids.append(mid)
        held = [f"m{i:03d}" for i in range(30)]
        for j in range(rng.randint(10, 80)):
            source, target = rng.sample(KEYS, 2)
            backing = rng.choice([None, None, *held, "gone"])
            namespace = rng.choice(["ns1", "ns2"])
            store.add_relation(
                Scope(tenant, namespace),
                Relation(
                    id=f"r{rng.randint(0, 10**6):07d}-{j}",
                    tenant=tenant,
                    namespace=namespace,
                    source=source,
                    relation=rng.choice(["knows", "likes"]),
                    target=target,
                    memory_id=backing,
                    # few instants: many relations share one, so the id orders them
                    t_created=from_us(T0 + rng.randint(0, 10) * 5),
                ),
            )
    for mid in rng.sample(ids, len(ids) // 4):  # superseded: its relations closed with it
        namespace = "ns1" if store.get_memory(Scope("acme", "ns1"), mid) else "ns2"
        store.close_memory(
            Scope("acme", namespace), mid, T0 + rng.randint(20, 60), "superseded", None
        )
    for mid in rng.sample(ids, 2):  # forgotten: the row goes, its relations with it
        store.delete_memories(Scope("acme"), [mid])
    return ids


@pytest.mark.parametrize("seed", range(12))
def test_the_store_query_answers_as_the_old_python_path_on_random_stores(
    tmp_path: Path, seed: int
) -> None:
    """On random stores, scopes, views (as_of replays, closed rows shown or not), candidate
    sets, limits and page sizes: the relations the store query returns are the first
    ``limit`` the old path kept that no candidate backs, and the keys it reports as ends are
    the ends of every relation the old path keeps when read to the end; the keys the old
    path found missing (it stops early) are those missing from ``ends`` too."""
    rng = random.Random(seed)
    store = SQLiteStore(tmp_path / "m.db", persist_indexes=False)
    ids = _random_store(store, rng)
    for _ in range(25):
        scope = Scope("acme", rng.choice([None, "ns1", "ns2"]))
        view = TemporalView(as_of=T0 + rng.randint(0, 70), include_closed=rng.random() < 0.3)
        keys = sorted(rng.sample(KEYS, rng.randint(1, 3)))
        existing = set(rng.sample(ids, rng.randint(0, min(8, len(ids)))))
        wanted = set(rng.sample(keys, rng.randint(0, len(keys))))
        limit = rng.randint(0, 12)
        touching = store.relations_touching(scope, keys, view)

        new = store.relations_backed(scope, keys, view, sorted(existing), limit)

        old = old_backed_relations(
            store, scope, view, touching, wanted, existing, limit, rng.choice([1, 3, 64])
        )
        whole = old_backed_relations(store, scope, view, touching, set(keys), existing, 0, 10**6)
        assert list(new.relations) == _usable(old, existing)[:limit]
        assert new.ends == _ends(whole, keys)
        assert wanted - new.ends == wanted - _ends(old, keys)
        assert all(r.tenant == "acme" for r in new.relations)


def test_recall_answers_as_through_the_old_python_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store ``ingest_round`` filled (a hub user, her moves superseding each other, her
    friends): every answer, a replay included, is byte for byte the one the old path gave,
    at every page size it read the backing memories by."""
    clock = ManualClock(T0)
    mem = AgentMemory(
        tmp_path / "m.db", embedder=HashingEmbedder(), clock=clock, ids=SeededIdSource(5)
    )
    ctx = AgentContext(agent_id="a", tenant="acme", namespace="ns1")
    cities = ["Oslo", "Leeds", "Porto", "Lyon", "Graz"]
    for r in range(12):
        clock.advance(seconds=60)
        facts = [f"I like dish{r}x{i}." for i in range(6)]
        facts.append(f"I moved to {cities[r % len(cities)]}.")  # supersedes the last move
        facts.append(f"My friend Bo{r} Stone lives in {cities[(r + 1) % len(cities)]}.")
        mem.ingest_round({"user": " ".join(facts), "user_name": "Caroline"}, context=ctx)
    now = clock.now_us()  # one instant for every answer (decay reads the age)
    middle = now - 6 * 60 * 1_000_000
    asked = [
        ("What does Caroline like?", now),
        ("Where did Caroline move?", now),
        ("Caroline", now),
        ("Where did Caroline move?", middle),
        ("Where does Bo3 Stone live?", now),
    ]

    def answers() -> list[str]:
        return [
            mem.recall(query, context=ctx, as_of=from_us(as_of)).model_dump_json()
            for query, as_of in asked
        ]

    new = answers()
    assert any('"synthetic":true' in a for a in new)  # the premise: relations ranked
    store = mem.store
    for page_size in (5, 64):

        def old_path(
            scope: Scope,
            keys: Sequence[str],
            view: TemporalView,
            candidates: Sequence[str],
            limit: int,
            page_size: int = page_size,
        ) -> BackedRelations:
            # what the old ``_graph`` did with the old path's answer: the keys seen through
            # the graph were the ends of the relations it kept
            existing = set(candidates)
            touching = store.relations_touching(scope, keys, view)
            # the old path's wanted keys: those no candidate's entity names (any subset
            # answers alike; all of them reads the most)
            rels = old_backed_relations(
                store, scope, view, touching, set(keys), existing, limit, page_size
            )
            return BackedRelations(tuple(_usable(rels, existing)[:limit]), _ends(rels, keys))

        monkeypatch.setattr(store, "relations_backed", old_path)
        assert answers() == new


def test_a_hub_entity_decodes_only_the_relations_recall_can_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question naming an entity at an end of 200 relations: the graph step decoded all
    200; now it decodes the newest ``relation_limit`` (20), the ones it ranks."""
    clock = ManualClock(T0)
    mem = AgentMemory(
        tmp_path / "m.db", embedder=HashingEmbedder(), clock=clock, ids=SeededIdSource(3)
    )
    ctx = AgentContext(agent_id="a", tenant="acme", namespace="ns1")
    mem.add("Ann has many friends.", entity="Ann", context=ctx)
    for i in range(200):
        rel = Relation(
            id=f"r{i:03d}",
            tenant="acme",
            namespace="ns1",
            source="ann",
            relation="knows",
            target=f"friend{i}",
            t_created=from_us(T0 + i),
        )
        mem.store.add_relation(ctx.scope, rel)
    built: list[object] = []
    real = graph_module.relation_from_doc
    monkeypatch.setattr(graph_module, "relation_from_doc", lambda d: built.append(d) or real(d))
    clock.advance(seconds=60)
    out = mem.recall("Who does Ann know?", context=ctx)
    ranked = [r.memory.metadata["relation_id"] for r in out.results if r.breakdown.synthetic]
    assert ranked and set(ranked) <= {f"r{i:03d}" for i in range(180, 200)}
    assert len(built) == 20


def test_a_bad_limit_is_refused_before_any_read(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db", persist_indexes=False)
    view = TemporalView(as_of=T0)
    for bad in (-1, True, 2.5, "3", None):
        with pytest.raises(ValidationError, match="relation limit"):
            store.relations_backed(Scope("acme", "ns1"), ["ann"], view, [], bad)  # type: ignore[arg-type]


def test_the_statement_seeks_by_index_and_scans_no_table(tmp_path: Path) -> None:
    """The one statement reads relations by the (tenant, source) and (tenant, target)
    indexes, their backing memories by the (tenant, id) index and the rows it returns by
    rowid: no scan of either table, whatever the tenant holds."""
    import json
    import sqlite3

    from attestor_arango.store.embedded import sql as q

    SQLiteStore(tmp_path / "m.db", persist_indexes=False).close()
    con = sqlite3.connect(tmp_path / "m.db")
    params = {
        "tenant": "acme",
        "namespace": None,
        "as_of": T0,
        "expired_after": T0,
        "keys": json.dumps(["ann"]),
        "candidates": "[]",
        "limit": 20,
    }
    plan = [str(row[3]) for row in con.execute("EXPLAIN QUERY PLAN " + q.RELATIONS_BACKED, params)]
    con.close()
    assert not [p for p in plan if p.startswith(("SCAN relations", "SCAN memories", "SCAN m "))]
    assert any("relations_tenant_source" in p for p in plan)
    assert any("relations_tenant_target" in p for p in plan)
    assert any(p.startswith("SEARCH m USING INDEX") and "(tenant=? AND id=?)" in p for p in plan)
    assert any(p.startswith("SEARCH relations USING INTEGER PRIMARY KEY") for p in plan)
