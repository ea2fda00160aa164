"""The entities recall names, kept with their name index by the embedded store.

Every recall looks for the tenant's entity names in the query. It read and decoded
every entity of the scope and rebuilt and sorted their forms on each call: with 2,000
entities a recall took ~60 ms instead of ~12. The store now keeps them per tenant and
namespace until the entities change; these tests pin when it must let go (counted
reads, never timings).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentMemory
from attestor_arango.clock import ManualClock, from_us
from attestor_arango.context import AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.models import Entity, Memory, Provenance, Relation, content_hash
from attestor_arango.scope import Scope
from attestor_arango.store.embedded import caches as caches_module
from attestor_arango.store.embedded import graph as graph_module
from attestor_arango.store.embedded.graph import EmbeddedGraph
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.text.entity_names import EntityNames, name_words

T0 = 1_767_225_600_000_000
A = Scope("acme", "ns1")


def entity(name: str, tenant: str = "acme", namespace: str = "ns1", *aliases: str) -> Entity:
    return Entity(
        tenant=tenant, namespace=namespace, key=name.lower(), name=name, aliases=tuple(aliases)
    )


@pytest.fixture()
def store(tmp_path: Path) -> SQLiteStore:
    return SQLiteStore(tmp_path / "m.db")


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[Scope]:
    reads: list[Scope] = []
    real = EmbeddedGraph.list_entities

    def counted(self: EmbeddedGraph, scope: Scope) -> list[Entity]:
        reads.append(scope)
        return real(self, scope)

    monkeypatch.setattr(EmbeddedGraph, "list_entities", counted)
    return reads


def _knows(tenant: str, rid: str, source: str, target: str, at: int) -> Relation:
    return Relation(
        id=rid,
        tenant=tenant,
        namespace="ns1",
        source=source,
        relation="knows",
        target=target,
        t_created=from_us(at),
    )


def _count_decodes(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every relation the embedded graph decodes from a row, in order."""
    built: list[object] = []
    real = graph_module.relation_from_doc
    monkeypatch.setattr(graph_module, "relation_from_doc", lambda d: built.append(d) or real(d))
    return built


def test_recalls_read_the_entities_once_until_one_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock(T0)
    mem = AgentMemory(
        tmp_path / "m.db", embedder=HashingEmbedder(), clock=clock, ids=SeededIdSource(3)
    )
    ctx = AgentContext(agent_id="a", tenant="acme", namespace="ns1")
    for i in range(30):
        clock.advance(seconds=1)
        mem.add(f"Person{i} likes tea number {i}", entity=f"Person{i}", context=ctx)
    reads = _count_reads(monkeypatch)
    answers = [mem.recall(f"what does person{i} like", context=ctx) for i in range(10)]
    assert len(reads) == 1
    assert all(r.query_entities == (f"person{i}",) for i, r in enumerate(answers))
    clock.advance(seconds=1)
    mem.add("Zed Quill likes coffee", entity="Zed Quill", context=ctx)
    assert mem.recall("what does zed quill like", context=ctx).query_entities == ("zed quill",)
    assert len(reads) == 2


def test_an_open_transaction_reads_its_own_entities_and_a_rollback_leaves_none(
    store: SQLiteStore,
) -> None:
    store.upsert_entity(A, entity("Ann"))
    assert store.known_entities(A).names.find("ann") == ["ann"]
    with pytest.raises(RuntimeError), store.transaction():
        store.upsert_entity(A, entity("Bob"))
        assert store.known_entities(A).names.find("ann and bob") == ["ann", "bob"]
        raise RuntimeError("roll back")
    assert store.known_entities(A).names.find("ann and bob") == ["ann"]
    with store.transaction():
        store.upsert_entity(A, entity("Cy"))
        assert store.known_entities(A).names.find("ann and cy") == ["ann", "cy"]
    assert store.known_entities(A).names.find("ann and cy") == ["ann", "cy"]


def test_another_connections_entity_is_seen(tmp_path: Path) -> None:
    one, two = SQLiteStore(tmp_path / "m.db"), SQLiteStore(tmp_path / "m.db")
    one.upsert_entity(A, entity("Ann"))
    assert two.known_entities(A).names.find("ann or dee") == ["ann"]
    one.upsert_entity(A, entity("Dee"))
    assert two.known_entities(A).names.find("ann or dee") == ["ann", "dee"]
    one.purge_tenant(A)
    assert two.known_entities(A).entities == ()


def test_each_namespace_and_tenant_is_kept_apart(store: SQLiteStore) -> None:
    store.upsert_entity(A, entity("Ann"))
    store.upsert_entity(Scope("acme", "ns2"), entity("Bob", "acme", "ns2"))
    store.upsert_entity(Scope("beta", "ns1"), entity("Cy", "beta"))
    query = "ann bob cy"
    assert store.known_entities(A).names.find(query) == ["ann"]
    assert store.known_entities(Scope("acme", "ns2")).names.find(query) == ["bob"]
    assert store.known_entities(Scope("acme")).names.find(query) == ["ann", "bob"]
    assert store.known_entities(Scope("beta", "ns1")).names.find(query) == ["cy"]


def test_erasing_the_rows_that_named_an_entity_lets_its_name_go(store: SQLiteStore) -> None:
    """An erased subject's name is no longer found by a recall: the kept index goes with
    the rows (the ``drop`` an erasure queues)."""
    text = "Zed Quill lives in Oslo"
    row = Memory(
        id="m1",
        tenant="acme",
        namespace="ns1",
        content=text,
        entity="Zed Quill",
        valid_from=from_us(T0),
        t_created=from_us(T0),
        provenance=Provenance(agent_id="a1", role="planner", agent_trail=("a1",)),
        content_hash=content_hash(text),
    )
    store.insert_memory(A, row, None)
    store.upsert_entity(A, entity("Zed Quill"))
    assert store.known_entities(A).names.find("where is zed quill") == ["zed quill"]
    assert store.delete_memories(A, ["m1"]) == 1
    assert store.known_entities(A).entities == ()
    assert store.known_entities(A).names.find("where is zed quill") == []


def test_past_the_bound_the_least_recently_read_tenants_let_go(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(caches_module, "ENTITY_ROWS", 4)
    for tenant in ("t1", "t2", "t3"):
        scope = Scope(tenant, "ns1")
        for name in ("Ann", "Bob"):
            store.upsert_entity(scope, entity(name, tenant))
        assert len(store.known_entities(scope).entities) == 2
    held = sorted(k[1] for k in store.caches.state if k[0] == "entities")
    assert held == ["t2", "t3"]
    reads = []
    real = store.graph.list_entities

    def counted(scope: Scope) -> list[Entity]:
        reads.append(scope.tenant)
        return real(scope)

    store.graph.list_entities = counted  # type: ignore[method-assign]
    assert store.known_entities(Scope("t1", "ns1")).names.find("bob") == ["bob"]
    assert reads == ["t1"]  # read again, and t2 (least recent) let go for it
    assert sorted(k[1] for k in store.caches.state if k[0] == "entities") == ["t1", "t3"]


def test_a_kept_read_outside_a_transaction_counts_as_the_tenants_latest(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every recall reads the kept entities: outside a write transaction it takes them
    without the ``holder`` bookkeeping (no queued value can come first), yet still marks
    the tenant as just read, so the bound lets go of another tenant."""
    monkeypatch.setattr(caches_module, "ENTITY_ROWS", 4)
    one, two = Scope("t1", "ns1"), Scope("t2", "ns1")
    for scope in (one, two):
        for name in ("Ann", "Bob"):
            store.upsert_entity(scope, entity(name, scope.tenant))
        assert len(store.known_entities(scope).entities) == 2
    holders = []
    real = caches_module.TenantCaches.holder

    def counted(self: caches_module.TenantCaches, kind: str, tenant: str) -> dict[str, object]:
        holders.append((kind, tenant))
        return real(self, kind, tenant)

    monkeypatch.setattr(caches_module.TenantCaches, "holder", counted)
    assert store.known_entities(one).names.find("ann") == ["ann"]  # kept: t1 now the latest
    assert holders == []
    three = Scope("t3", "ns1")
    store.upsert_entity(three, entity("Cy", "t3"))
    store.upsert_entity(three, entity("Dee", "t3"))
    assert store.known_entities(three).names.find("cy") == ["cy"]
    assert sorted(k[1] for k in store.caches.state if k[0] == "entities") == ["t1", "t3"]


def test_no_names_find_nothing_without_reading_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scope with no entities (most recalls' case) has no name to look for: the text is
    not split into words at all."""
    from attestor_arango.text import entity_names

    split: list[str] = []
    real = entity_names.name_words
    monkeypatch.setattr(entity_names, "name_words", lambda t: split.append(t) or real(t))
    assert EntityNames([]).find("where does Ann Lee live") == []
    assert EntityNames([("k", ("",))]).find("where does Ann Lee live") == []
    assert split == [""]  # the one-letter-less form, while the index was built
    assert EntityNames([("ann", ("Ann",))]).find("where does Ann live") == ["ann"]


def _every_form(named: list[tuple[str, tuple[str, ...]]], text: str) -> list[str]:
    """The matching as a pass over every form at every place (the rule the index keeps)."""
    words = name_words(text)
    forms = sorted(
        {
            (name_words(s), key)
            for key, surfaces in named
            for s in surfaces
            if name_words(s) and len("".join(name_words(s))) >= 2
        },
        key=lambda f: (-len(f[0]), f[0], f[1]),
    )
    used = [False] * len(words)
    found: set[str] = set()
    for form, key in forms:
        n = len(form)
        for start in range(len(words) - n + 1):
            if words[start : start + n] == form and not any(used[start : start + n]):
                found.add(key)
                used[start : start + n] = [True] * n
    return sorted(found)


def test_the_index_finds_what_a_pass_over_every_form_finds() -> None:
    """Shared forms, nested names, one-letter names and NFKC spellings included."""
    rng = random.Random(19)
    vocab = ["new", "york", "city", "ann", "lee", "a", "ｌｅｅ", "café", "cafe\u0301", "b2"]
    for _ in range(200):
        named = [
            (
                f"k{i}",
                tuple(" ".join(rng.choices(vocab, k=rng.randint(1, 3))) for _ in range(2)),
            )
            for i in range(rng.randint(0, 8))
        ]
        index = EntityNames(named)
        for _ in range(5):
            text = " ".join(rng.choices(vocab, k=rng.randint(0, 12)))
            assert index.find(text) == _every_form(named, text), (named, text)


def test_a_walk_over_the_graph_builds_no_relation(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hops`` needs the two ends of each edge: it read and built every relation touching
    its frontier (a hub entity's ~1,500 a recall), now it reads the ends only."""
    from attestor_arango.scope import TemporalView

    for i, (a, b) in enumerate([("ann", "bob"), ("bob", "cy"), ("cy", "dee"), ("eve", "ann")]):
        store.add_relation(A, _knows("acme", f"r{i}", a, b, T0 + i))
    built = _count_decodes(monkeypatch)
    view = TemporalView(as_of=T0 + 10)
    assert store.hops(A, ["ann"], 2, view) == {"ann": 0, "bob": 1, "eve": 1, "cy": 2}
    assert store.hops(A, ["ann"], 2, TemporalView(as_of=T0 + 1)) == {"ann": 0, "bob": 1, "cy": 2}
    assert store.hops(Scope("beta", "ns1"), ["ann"], 2, view) == {"ann": 0}
    assert built == []


def test_naming_a_known_entity_again_keeps_the_kept_names(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every add naming an entity upserts it; when that changes nothing (same name, no new
    alias or kind) the row is not written and the kept names stay: an agent that adds about
    a known entity and then recalls no longer pays for reading every entity again."""
    store.upsert_entity(A, entity("Ann", "acme", "ns1", "Annie"))
    store.upsert_entity(A, entity("Bob"))
    reads = _count_reads(monkeypatch)
    assert store.known_entities(A).names.find("annie and bob") == ["ann", "bob"]
    store.upsert_entity(A, entity("Ann"))
    store.upsert_entity(A, entity("Ann", "acme", "ns1", "Annie"))
    store.upsert_entity(A, entity("ANN"))  # the first name is kept
    assert store.known_entities(A).names.find("annie and bob") == ["ann", "bob"]
    assert len(reads) == 1
    store.upsert_entity(A, entity("Ann", "acme", "ns1", "Nan"))  # a new alias: read again
    assert store.known_entities(A).names.find("nan") == ["ann"]
    store.upsert_entity(A, entity("Bob").model_copy(update={"kind": "person"}))
    assert [e.kind for e in store.known_entities(A).entities] == [None, "person"]
    assert len(reads) == 3
    [ann] = [e for e in store.list_entities(A) if e.key == "ann"]
    assert (ann.name, sorted(ann.aliases)) == ("Ann", ["Annie", "Nan"])


def test_relations_are_decoded_once_and_again_after_a_close_or_an_erasure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read of the relations touching an entity every conversation names (ingest's speaker
    links, an export; recall's graph step until issue 21) built its hundreds of relations on
    every call; a relation row changes only when it is closed, so its decoded form is reused
    until then. A purge lets every kept entity and relation go (the residue the purge
    report reads says so)."""
    from attestor_arango.scope import TemporalView

    clock = ManualClock(T0)
    mem = AgentMemory(
        tmp_path / "m.db", embedder=HashingEmbedder(), clock=clock, ids=SeededIdSource(6)
    )
    ctx = AgentContext(agent_id="a", tenant="acme", namespace="ns1")
    for r, city in enumerate(["Oslo", "Leeds", "Porto"]):
        clock.advance(seconds=60)
        text = f"I like tea{r}. I like jam{r}. I moved to {city}."
        mem.ingest_round({"user": text, "user_name": "Caroline"}, context=ctx)
    built = _count_decodes(monkeypatch)

    def touching() -> list[Relation]:
        view = TemporalView(as_of=clock.now_us())
        return mem.store.relations_touching(ctx.scope, ["caroline"], view)

    first = touching()
    decoded = len(built)
    assert decoded >= 4  # the premise: the hub's relations were read
    assert touching() == first
    assert len(built) == decoded  # nothing decoded again
    clock.advance(seconds=60)
    mem.ingest_round({"user": "I moved to Lyon.", "user_name": "Caroline"}, context=ctx)
    built.clear()
    touching()
    assert 0 < len(built) <= 3  # only rows the round wrote or closed
    later = mem.recall("Where did Caroline move?", context=ctx)
    assert "Lyon" in later.results[0].memory.content
    assert mem.store.tenant_residue(Scope("acme"))["graph_cache"] > 0
    orchestrator = AgentContext(
        agent_id="o", role=AgentRole.ORCHESTRATOR, tenant="acme", namespace="ns1"
    )
    mem.purge_user("acme", "erasure request", context=orchestrator)
    assert mem.store.tenant_residue(Scope("acme"))["graph_cache"] == 0


def test_relations_kept_over_all_tenants_stay_under_the_bound(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decoded relations are bounded over all tenants, not per tenant (a thousand
    tenants of 20,000 relations each would have held gigabytes): past the bound the least
    recently read tenants' go, and are decoded again when next read."""
    from attestor_arango.scope import TemporalView

    monkeypatch.setattr(graph_module, "RELATION_ROWS", 5)
    tenants = ("t1", "t2", "t3")
    for tenant in tenants:
        for i, target in enumerate(("bob", "cy")):
            store.add_relation(
                Scope(tenant, "ns1"), _knows(tenant, f"{tenant}-r{i}", "ann", target, T0 + i)
            )
    built = _count_decodes(monkeypatch)
    view = TemporalView(as_of=T0 + 10)

    def held() -> dict[str, int]:
        return {k[1]: len(v) for k, v in store.caches.state.items() if k[0] == "relations" and v}

    for tenant in tenants:
        assert len(store.relations_touching(Scope(tenant, "ns1"), ["ann"], view)) == 2
    assert held() == {"t2": 2, "t3": 2}  # t1, least recently read, let go for t3
    assert len(built) == 6
    store.relations_touching(Scope("t3", "ns1"), ["ann"], view)
    assert len(built) == 6  # t3's kept ones reused
    store.relations_touching(Scope("t1", "ns1"), ["ann"], view)
    assert len(built) == 8 and held() == {"t3": 2, "t1": 2}
