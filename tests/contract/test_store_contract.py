"""The Store protocol contract, run against every backend in ``STORE_FACTORIES``."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from attestor_arango.clock import OPEN, from_us, to_us
from attestor_arango.errors import ConflictError, TenantRequiredError, ValidationError
from attestor_arango.models import (
    AuditEntry,
    Entity,
    Episode,
    Memory,
    Provenance,
    Relation,
    content_hash,
)
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import BackedRelations, EmbeddingSpace, MemoryFilter, Store

T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z
A = Scope("acme", "ns1")
B = Scope("beta", "ns1")
DIM = 8


def vec(*values: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def mem(
    scope: Scope,
    mid: str,
    content: str,
    t: int = T0,
    entity: str | None = None,
    category: str | None = None,
    tags: tuple[str, ...] = (),
    valid_from: int | None = None,
    valid_until: int | None = None,
) -> Memory:
    return Memory(
        id=mid,
        tenant=scope.tenant,
        namespace=scope.namespace or "ns1",
        content=content,
        entity=entity,
        category=category,
        tags=tags,
        valid_from=from_us(valid_from if valid_from is not None else t),
        valid_until=None if valid_until is None else from_us(valid_until),
        t_created=from_us(t),
        provenance=Provenance(agent_id="a1", role="planner", agent_trail=("a1",)),
        content_hash=content_hash(content),
    )


def setup(store: Store, *scopes: Scope) -> None:
    for s in scopes:
        store.set_embedding_space(s, EmbeddingSpace("test", DIM))


def now(t: int = T0 + 1_000_000) -> TemporalView:
    return TemporalView(as_of=t)


def test_scope_without_tenant_fails_closed() -> None:
    with pytest.raises(TenantRequiredError):
        Scope("")
    with pytest.raises(ValidationError):
        Scope("acme", "bad namespace!")


def test_insert_get_roundtrip_keeps_every_field(store: Store) -> None:
    setup(store, A)
    m = mem(
        A,
        "m1",
        "Alice leads the platform team",
        entity="alice",
        category="role",
        tags=("org", "people"),
        valid_until=T0 + 10**9,
    )
    m = m.model_copy(update={"metadata": {"k": [1, 2]}, "signature": "sig"})
    store.insert_memory(A, m, vec(1, 0))
    got = store.get_memory(A, "m1")
    assert got == m
    assert store.get_memories(A, ["m1", "nope"]) == {"m1": m}
    np.testing.assert_allclose(store.get_vectors(A, ["m1"])["m1"], vec(1, 0), rtol=1e-6)


def test_other_tenant_sees_nothing(store: Store) -> None:
    setup(store, A, B)
    store.insert_memory(A, mem(A, "m1", "secret plan alpha"), vec(1, 0))
    assert store.get_memory(B, "m1") is None
    assert store.get_memories(B, ["m1"]) == {}
    assert store.get_vectors(B, ["m1"]) == {}
    assert store.vector_candidates(B, vec(1, 0), 10, now()) == []
    assert store.text_pool(B, "secret plan", 10, now()) == []
    assert store.list_memories(B, MemoryFilter(), now(), 10) == []


def test_text_pool_rows_are_the_stored_memories(store: Store) -> None:
    setup(store, A, B)
    texts = ["alpha beta", "alpha alpha gamma", "beta gamma delta", "alpha", "gamma"]
    for i, text in enumerate(texts):
        store.insert_memory(A, mem(A, f"m{i}", text, t=T0 + i), vec(1, i))
    store.insert_memory(B, mem(B, "b0", "alpha beta"), vec(1, 0))
    store.close_memory(A, "m3", T0 + 50, "archived", None)
    for view in (now(), now(T0 + 2), TemporalView(as_of=T0 + 1_000_000, include_closed=True)):
        for query, k in (("alpha", 10), ("alpha gamma", 2), ("beta delta", 10), ("zeta", 5)):
            pool = store.text_pool(A, query, k, view)
            found = store.get_memories(A, [t.id for t in pool])
            assert [(t.id, t.content, t.t_created) for t in pool] == [
                (m.id, m.content, m.us("t_created")) for m in (found[t.id] for t in pool)
            ]
            assert len(pool) <= k and all(t.score > 0 for t in pool)
            assert [t.score for t in pool] == sorted((t.score for t in pool), reverse=True)
    assert {t.id for t in store.text_pool(A, "alpha", 10, now())} == {"m0", "m1"}
    assert store.text_pool(B, "gamma", 10, now()) == []


def test_namespace_partitions_within_tenant(store: Store) -> None:
    other = Scope("acme", "ns2")
    setup(store, A)
    store.insert_memory(A, mem(A, "m1", "alpha fact"), vec(1, 0))
    store.insert_memory(other, mem(other, "m2", "alpha fact two"), vec(1, 0.1))
    assert [h.memory.id for h in store.vector_candidates(A, vec(1, 0), 10, now())] == ["m1"]
    assert [t.id for t in store.text_pool(other, "alpha", 10, now())] == ["m2"]
    tenant_wide = A.tenant_wide()
    ids = {h.memory.id for h in store.vector_candidates(tenant_wide, vec(1, 0), 10, now())}
    assert ids == {"m1", "m2"}


def test_close_once_and_views(store: Store) -> None:
    setup(store, A)
    store.insert_memory(A, mem(A, "m1", "v1", entity="e", category="c"), vec(1, 0))
    store.insert_memory(A, mem(A, "m2", "v2", t=T0 + 10, entity="e", category="c"), vec(0, 1))
    store.close_memory(A, "m1", T0 + 10, "superseded", "m2")
    with pytest.raises(ConflictError):
        store.close_memory(A, "m1", T0 + 20, "archived", None)
    closed = store.get_memory(A, "m1")
    assert closed is not None and closed.superseded_by == "m2"
    assert closed.t_expired == from_us(T0 + 10)
    # before the close, m1 was the active one; after, m2
    before, after = TemporalView(as_of=T0 + 5), TemporalView(as_of=T0 + 10)
    assert [m.id for m in store.find_active(A, "e", "c", before)] == ["m1"]
    assert [m.id for m in store.find_active(A, "e", "c", after)] == ["m2"]
    assert [h.memory.id for h in store.vector_candidates(A, vec(1, 0), 5, before)] == ["m1"]
    assert [h.memory.id for h in store.vector_candidates(A, vec(1, 0), 5, after)] == ["m2"]
    assert [t.id for t in store.text_pool(A, "v1", 5, before)] == ["m1"]
    assert store.text_pool(A, "v1", 5, after) == []
    history = TemporalView(as_of=T0 + 10, include_closed=True)
    assert [m.id for m in store.list_memories(A, MemoryFilter(), history, 10)] == ["m1", "m2"]
    superseded = store.list_memories(A, MemoryFilter(status="superseded"), history, 10)
    assert [m.id for m in superseded] == ["m1"]
    masked = TemporalView(as_of=T0 + 5, include_closed=True)
    assert store.list_memories(A, MemoryFilter(status="superseded"), masked, 10) == []


def test_list_filters_and_event_time_window(store: Store) -> None:
    setup(store, A)
    day = 86_400 * 10**6
    store.insert_memory(
        A,
        mem(
            A,
            "m1",
            "x one",
            entity="e1",
            category="c1",
            tags=("t1",),
            valid_from=T0 - 10 * day,
            valid_until=T0 - 5 * day,
        ),
        None,
    )
    store.insert_memory(A, mem(A, "m2", "x two", entity="e2", category="c1", tags=("t2",)), None)
    v = now()
    assert [m.id for m in store.list_memories(A, MemoryFilter(entity="e1"), v, 10)] == ["m1"]
    assert [m.id for m in store.list_memories(A, MemoryFilter(category="c1"), v, 10)] == [
        "m1",
        "m2",
    ]
    assert [m.id for m in store.list_memories(A, MemoryFilter(tags=("t2", "zz")), v, 10)] == ["m2"]
    h = content_hash("x two")
    assert [m.id for m in store.list_memories(A, MemoryFilter(content_hash=h), v, 10)] == ["m2"]
    window = TemporalView(as_of=T0 + 1, window=(T0 - 8 * day, T0 - 6 * day))
    assert [m.id for m in store.list_memories(A, MemoryFilter(), window, 10)] == ["m1"]
    assert [m.id for m in store.list_memories(A, MemoryFilter(), v, 1, offset=1)] == ["m2"]


def test_count_memories_counts_what_list_memories_pages_through(store: Store) -> None:
    setup(store, A)
    setup(store, B)
    day = 86_400 * 10**6
    store.insert_memory(
        A, mem(A, "m1", "one", entity="e1", category="c1", tags=("t1",), valid_until=T0 + 1), None
    )
    store.insert_memory(A, mem(A, "m2", "two", t=T0 + 10, entity="e1", category="c1"), None)
    store.close_memory(A, "m1", T0 + 10, "superseded", "m2")
    store.insert_memory(A, mem(A, "m3", "three", t=T0 + 20, entity="e2", tags=("t1",)), None)
    store.insert_memory(B, mem(B, "b1", "beta", t=T0 + 20, entity="e1"), None)
    views = [
        now(),
        TemporalView(as_of=T0 + 5),
        TemporalView(as_of=T0 + 30, include_closed=True),
        TemporalView(as_of=T0 + 30, window=(T0 - day, T0 + 2)),
    ]
    filters = [
        MemoryFilter(),
        MemoryFilter(entity="e1"),
        MemoryFilter(category="c1"),
        MemoryFilter(tags=("t1",)),
        MemoryFilter(status="superseded"),
        MemoryFilter(status="active"),
        MemoryFilter(entity="e1", status="active"),
    ]
    seen = set()
    for view in views:
        for f in filters:
            listed = store.list_memories(A, f, view, 100)
            assert store.count_memories(A, f, view) == len(listed), (view, f)
            seen.add(len(listed))
    assert seen >= {0, 1, 2}  # the cases differ, so a constant count would fail
    assert store.count_memories(Scope("acme", "other"), MemoryFilter(), now()) == 0
    assert store.count_memories(B, MemoryFilter(entity="e1"), now()) == 1


def test_vector_lane_orders_by_cosine_then_id(store: Store) -> None:
    setup(store, A)
    store.insert_memory(A, mem(A, "b", "b"), vec(1, 0))
    store.insert_memory(A, mem(A, "a", "a"), vec(1, 0))
    store.insert_memory(A, mem(A, "c", "c"), vec(0.5, 0.5))
    store.insert_memory(A, mem(A, "d", "d"), vec(0, 1))
    hits = store.vector_candidates(A, vec(1, 0), 3, now())
    assert [h.memory.id for h in hits] == ["a", "b", "c"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits[2].score == pytest.approx(np.sqrt(0.5), abs=1e-5)


def test_wrong_vector_dimension_is_refused_and_nothing_stored(store: Store) -> None:
    setup(store, A)
    with pytest.raises(ValidationError):
        store.insert_memory(A, mem(A, "m1", "x"), np.ones(DIM + 1, dtype=np.float32))
    assert store.get_memory(A, "m1") is None
    with pytest.raises(ValidationError):
        store.vector_candidates(A, np.ones(DIM + 3, dtype=np.float32), 3, now())


def test_text_lane_bm25_prefers_rarer_matching_terms(store: Store) -> None:
    setup(store, A)
    store.insert_memory(A, mem(A, "m1", "the deploy uses kubernetes clusters"), None)
    store.insert_memory(A, mem(A, "m2", "the lunch menu has pasta"), None)
    store.insert_memory(A, mem(A, "m3", "kubernetes kubernetes operator upgrade"), None)
    hits = store.text_pool(A, "Kubernetes upgrade?", 10, now())
    assert [t.id for t in hits] == ["m3", "m1"]
    assert hits[0].score > hits[1].score > 0
    assert store.text_pool(A, "!!!", 10, now()) == []


def test_entities_upsert_merges_aliases(store: Store) -> None:
    e = Entity(
        tenant="acme", namespace="ns1", key="alice smith", name="Alice Smith", aliases=("Alice",)
    )
    store.upsert_entity(A, e)
    store.upsert_entity(A, e.model_copy(update={"aliases": ("A. Smith",), "kind": "person"}))
    [got] = store.list_entities(A)
    assert set(got.aliases) == {"Alice", "A. Smith"} and got.kind == "person"
    assert store.list_entities(B) == []


def test_known_entities_follow_every_change_of_the_entities(store: Store) -> None:
    """What recall reads to name entities: the same entities as ``list_entities``, with an
    index that finds them, after each upsert, in each tenant alone, and after an erasure
    (a backend that keeps it between calls must let go of it on every change)."""
    ann = Entity(tenant="acme", namespace="ns1", key="ann lee", name="Ann Lee", aliases=("Annie",))
    assert store.known_entities(A).names.find("Ann Lee called") == []
    store.upsert_entity(A, ann)
    first = store.known_entities(A)
    assert [e.key for e in first.entities] == ["ann lee"]
    assert first.names.find("did annie call? ANN LEE did") == ["ann lee"]
    store.upsert_entity(A, ann.model_copy(update={"aliases": ("Nan",)}))
    assert store.known_entities(A).names.find("ask nan") == ["ann lee"]
    assert store.known_entities(B).entities == ()
    assert store.known_entities(B).names.find("Ann Lee") == []
    store.purge_collection(A, "entities")
    assert store.known_entities(A).entities == ()
    assert store.known_entities(A).names.find("Ann Lee") == []


def test_relations_and_hops_respect_view_and_tenant(store: Store) -> None:
    def rel(rid: str, s: str, t: str, scope: Scope = A, at: int = T0) -> Relation:
        return Relation(
            id=rid,
            tenant=scope.tenant,
            namespace="ns1",
            source=s,
            relation="knows",
            target=t,
            t_created=from_us(at),
        )

    store.add_relation(A, rel("r1", "alice", "bob"))
    store.add_relation(A, rel("r2", "bob", "carol"))
    store.add_relation(A, rel("r3", "carol", "dave"))
    store.add_relation(A, rel("r4", "alice", "eve", at=T0 + 100))
    store.add_relation(B, rel("r5", "alice", "mallory", scope=B))
    hops = store.hops(A, ["alice"], 2, TemporalView(as_of=T0 + 50))
    assert hops == {"alice": 0, "bob": 1, "carol": 2}
    hops_later = store.hops(A, ["alice"], 2, TemporalView(as_of=T0 + 100))
    assert hops_later["eve"] == 1 and "mallory" not in hops_later
    touching = store.relations_touching(A, ["bob"], now())
    assert sorted(r.id for r in touching) == ["r1", "r2"]


def test_episodes_roundtrip(store: Store) -> None:
    ep = Episode(
        id="ep1",
        tenant="acme",
        namespace="ns1",
        session_id="s1",
        agent_id="a1",
        user_text="I moved to Lisbon",
        assistant_text="Noted.",
        user_time=from_us(T0),
        assistant_time=from_us(T0 + 5),
        t_created=from_us(T0 + 6),
    )
    store.put_episode(A, ep)
    assert store.get_episode(A, "ep1") == ep
    assert store.get_episode(B, "ep1") is None
    assert store.list_episodes(A, 10) == [ep]


def test_audit_chain_storage(store: Store) -> None:
    assert store.last_audit(A) is None
    entry = AuditEntry(
        tenant="acme",
        seq=1,
        id="x1",
        ts=from_us(T0),
        agent_id="a",
        role="r",
        action="forget",
        target="m1",
        details={"why": "test"},
        prev_hash="0" * 64,
        hash="h1",
    )
    store.append_audit(A, entry)
    with pytest.raises(ConflictError):
        store.append_audit(A, entry.model_copy(update={"id": "x2"}))  # same seq: no fork
    assert store.last_audit(A) == entry
    assert store.read_audit(A, 10) == [entry]
    assert store.read_audit(B, 10) == []


def test_quotas_and_write_counts(store: Store) -> None:
    assert store.get_quota(A) is None
    store.set_quota(A, 5)
    assert store.get_quota(A) == 5
    assert store.add_writes(A, "2026-01-01", 2) == 2
    assert store.add_writes(A, "2026-01-01", 1) == 3
    assert store.count_writes(A, "2026-01-01") == 3
    assert store.count_writes(A, "2026-01-02") == 0
    assert store.count_writes(B, "2026-01-01") == 0


def test_hold_embedding_space_answers_for_the_recorded_space_only(store: Store) -> None:
    """What a write checks inside its transaction for the space it embedded with; a held
    space stays as it was (nothing but the check is visible) and no tenant sees another's."""
    setup(store, A)
    with store.transaction():
        assert store.hold_embedding_space(A, EmbeddingSpace("test", DIM)) is True
        assert store.hold_embedding_space(A, EmbeddingSpace("other", DIM)) is False
        assert store.hold_embedding_space(A, EmbeddingSpace("test", DIM + 1)) is False
        assert store.hold_embedding_space(B, EmbeddingSpace("test", DIM)) is False
    assert store.get_embedding_space(A) == EmbeddingSpace("test", DIM)
    assert store.get_embedding_space(B) is None


def test_transaction_rolls_back_everything(store: Store) -> None:
    setup(store, A)
    with pytest.raises(RuntimeError), store.transaction():
        store.insert_memory(A, mem(A, "m1", "to be rolled back"), vec(1, 0))
        raise RuntimeError("boom")
    assert store.get_memory(A, "m1") is None
    assert store.vector_candidates(A, vec(1, 0), 5, now()) == []
    assert store.text_pool(A, "rolled", 5, now()) == []


def test_purge_tenant_counts_and_leaves_others(store: Store) -> None:
    setup(store, A, B)
    for scope in (A, B):
        store.insert_memory(scope, mem(scope, f"{scope.tenant}-m", "shared words here"), vec(1, 0))
        store.upsert_entity(scope, Entity(tenant=scope.tenant, namespace="ns1", key="k", name="k"))
    counts = store.purge_tenant(A)
    assert counts["memories"] == 1 and counts["entities"] == 1 and counts["vectors"] == 1
    assert store.get_memory(A, "acme-m") is None
    assert store.vector_candidates(A, vec(1, 0), 5, now()) == []
    assert [h.memory.id for h in store.vector_candidates(B, vec(1, 0), 5, now())] == ["beta-m"]
    assert store.count_rows(B)["total"] == 1


def test_count_rows(store: Store) -> None:
    setup(store, A)
    store.insert_memory(A, mem(A, "m1", "one"), None)
    store.insert_memory(A, mem(A, "m2", "two"), None)
    store.close_memory(A, "m1", T0 + 1, "archived", None)
    counts = store.count_rows(A)
    assert (counts["total"], counts["active"], counts["archived"]) == (2, 1, 1)


def test_times_are_exact_microseconds(store: Store) -> None:
    setup(store, A)
    t = T0 + 123_457
    store.insert_memory(A, mem(A, "m1", "precise", t=t), None)
    got = store.get_memory(A, "m1")
    assert got is not None and to_us(got.t_created) == t and got.us("t_expired") == OPEN
    assert got.t_created - from_us(T0) == timedelta(microseconds=123_457)


def test_close_memory_closes_its_relations(store: Store) -> None:
    setup(store, A)
    store.insert_memory(A, mem(A, "m1", "Alice lives in Paris"), None)
    for rid, target, mid in (("r1", "paris", "m1"), ("r2", "acme", None)):
        store.add_relation(
            A,
            Relation(
                id=rid,
                tenant="acme",
                namespace="ns1",
                source="alice",
                relation="rel",
                target=target,
                memory_id=mid,
                t_created=from_us(T0),
            ),
        )
    store.close_memory(A, "m1", T0 + 10, "superseded", None)
    before, after = TemporalView(as_of=T0 + 9), TemporalView(as_of=T0 + 10)
    assert sorted(r.id for r in store.relations_touching(A, ["alice"], before)) == ["r1", "r2"]
    assert [r.id for r in store.relations_touching(A, ["alice"], after)] == ["r2"]
    assert store.hops(A, ["alice"], 1, after) == {"alice": 0, "acme": 1}


def test_relations_backed_keeps_relations_whose_memory_the_view_sees(store: Store) -> None:
    """The graph step's one read: relations touching the keys whose backing memory is a
    candidate or visible in the view and scope; the newest ``limit`` no candidate backs,
    and the keys any of them ends on. Another tenant's relations never count."""
    setup(store, A, B)
    store.insert_memory(A, mem(A, "m1", "Alice knows Bob"), None)
    store.insert_memory(A, mem(A, "m2", "Alice knows Cy", t=T0 + 5), None)
    store.insert_memory(A, mem(A, "m3", "Dee knows Alice"), None)
    store.insert_memory(B, mem(B, "m4", "Alice knows Eve"), None)

    def rel(rid: str, s: str, t: str, mid: str | None, at: int, scope: Scope = A) -> Relation:
        return Relation(
            id=rid,
            tenant=scope.tenant,
            namespace="ns1",
            source=s,
            relation="knows",
            target=t,
            memory_id=mid,
            t_created=from_us(at),
        )

    store.add_relation(A, rel("r1", "alice", "bob", "m1", T0))
    store.add_relation(A, rel("r2", "alice", "cy", "m2", T0 + 5))
    store.add_relation(A, rel("r3", "dee", "alice", "m3", T0 + 1))
    store.add_relation(A, rel("r4", "alice", "fay", None, T0 + 1))
    store.add_relation(A, rel("r5", "gil", "alice", "m4", T0 + 2))  # m4 is beta's memory
    store.add_relation(B, rel("r6", "alice", "eve", "m4", T0, scope=B))
    # a relation whose memory is closed while it stays open (a close older than schema 3)
    store.close_memory(A, "m3", T0 + 8, "superseded", None)
    store.add_relation(A, rel("r7", "hal", "alice", "m3", T0 + 3))

    later = TemporalView(as_of=T0 + 10)
    got = store.relations_backed(A, ["alice", "bob", "hal"], later, [], 10)
    assert [r.id for r in got.relations] == ["r2", "r4", "r1"]
    assert got.ends == {"alice", "bob"}
    # a replay before m2 and r2 were written, and before m3 was closed
    replay = store.relations_backed(A, ["alice", "hal"], TemporalView(as_of=T0 + 4), [], 10)
    assert [r.id for r in replay.relations] == ["r7", "r3", "r4", "r1"]
    assert replay.ends == {"alice", "hal"}
    # a candidate's relation is not returned, but its ends count; the limit counts the rest
    cand = store.relations_backed(A, ["bob", "alice"], later, ["m1"], 1)
    assert [r.id for r in cand.relations] == ["r2"]
    assert cand.ends == {"alice", "bob"}
    assert store.relations_backed(A, ["bob"], later, [], 0) == BackedRelations(
        (), frozenset({"bob"})
    )
    assert store.relations_backed(A, [], later, [], 5) == BackedRelations((), frozenset())
    assert store.relations_backed(Scope("acme", "ns2"), ["alice"], later, [], 5).ends == set()
    other = store.relations_backed(B, ["alice"], later, [], 5)
    assert ([r.id for r in other.relations], other.ends) == (["r6"], {"alice"})
    with pytest.raises(ValidationError):
        store.relations_backed(A, ["alice"], later, [], -1)


def test_delete_memories_removes_the_entities_only_the_deleted_rows_named(store: Store) -> None:
    """An entity's name is a word of the rows naming it (a person's name, most often): a
    row delete (retention, compaction) takes with it the entities no row or relation left
    in their namespace names; one still named (here by another row's relation) stays, and
    so does another tenant's of the same key."""
    setup(store, A, B)
    store.insert_memory(A, mem(A, "m1", "Zed Quill lives in Paris", entity="Zed Quill"), None)
    store.insert_memory(A, mem(A, "m2", "Yan knows Kim", entity="kim"), None)
    for rid, source, target, mid in (("r1", "zed quill", "yan", "m1"), ("r2", "yan", "kim", "m2")):
        relation = Relation(
            id=rid,
            tenant="acme",
            namespace="ns1",
            source=source,
            relation="knows",
            target=target,
            memory_id=mid,
            t_created=from_us(T0),
        )
        store.add_relation(A, relation)
    for scope in (A, B):
        for key in ("zed quill", "yan", "kim"):
            entity = Entity(tenant=scope.tenant, namespace="ns1", key=key, name=key.title())
            store.upsert_entity(scope, entity)

    assert store.delete_memories(A, ["m1"]) == 1

    assert sorted(e.key for e in store.list_entities(A)) == ["kim", "yan"]
    assert sorted(e.key for e in store.list_entities(B)) == ["kim", "yan", "zed quill"]
    assert store.relations_touching(A, ["zed quill"], now()) == []
    assert store.hops(A, ["yan"], 1, now()) == {"yan": 0, "kim": 1}


def test_memory_ids_matching_starts_ends_and_created_by(store: Store) -> None:
    setup(store, A, B)
    ids = ["aaaa-0001-ffff", "aaaa-0002-eeee", "bbbb-0003-ffff"]
    for i, mid in enumerate(ids):
        store.insert_memory(A, mem(A, mid, f"fact {i}", t=T0 + i * 10), vec(1, i))
    store.insert_memory(B, mem(B, "aaaa-0009-ffff", "theirs"), vec(1, 0))
    assert store.memory_ids_matching(A, "aaaa", 10) == ids[:2]
    assert store.memory_ids_matching(A, "ffff", 10) == [ids[0], ids[2]]
    assert store.memory_ids_matching(A, "aaaa", 1) == ids[:1]
    # a replay sees the rows created by its instant only
    assert store.memory_ids_matching(A, "aaaa", 10, T0 + 9) == ids[:1]
    assert store.memory_ids_matching(A, "ffff", 10, T0 + 20) == [ids[0], ids[2]]
    assert store.memory_ids_matching(A, "bbbb", 10, T0 + 19) == []


def test_memory_ids_matching_finds_ids_stored_in_any_case(store: Store) -> None:
    """An imported id may be an uppercase UUID; ``get`` lower-cases a short id, and a UUID's
    text is read case-insensitively: its start or end is found whatever its case."""
    setup(store, A)
    ids = ["AAAA-0001-FFFF", "aaaa-0002-eeee", "AaAa-0003-FfFf"]
    for i, mid in enumerate(ids):
        store.insert_memory(A, mem(A, mid, f"fact {i}", t=T0 + i * 10), vec(1, i))
    assert sorted(store.memory_ids_matching(A, "aaaa", 10)) == sorted(ids)
    assert sorted(store.memory_ids_matching(A, "ffff", 10)) == [ids[0], ids[2]]
    assert store.memory_ids_matching(A, "0001-ffff", 10) == [ids[0]]
    assert store.memory_ids_matching(A, "aaaa-0003", 10, T0 + 19) == []
