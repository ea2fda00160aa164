"""The LangGraph store adapter against the real langgraph package.

LangGraph ships no conformance suite for stores, so the adapter is run side by side
with LangGraph's own InMemoryStore on the same operations and must answer the same;
then what only this store does (versions kept, tenants apart, recall ranking), and a
minimal compiled LangGraph graph whose nodes read and write through it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore, InvalidNamespaceError
from langgraph.store.memory import InMemoryStore

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import AccessDenied
from attestor_arango.interfaces.langgraph import AttestorStore
from attestor_arango.memory import AgentMemory

CLOCK = ManualClock()
ORCH = AgentContext(agent_id="graph", role="orchestrator", tenant="acme", namespace="lg")
ALICE = AgentContext(
    agent_id="graph", role="orchestrator", tenant="acme", namespace="lg/users/alice"
)


@pytest.fixture
def memory(tmp_path: Path) -> Any:
    with AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=CLOCK) as mem:
        yield mem


def view(items: list[Any]) -> list[tuple[Any, ...]]:
    return sorted((i.namespace, i.key, repr(sorted(i.value.items()))) for i in items)


def apply(store: BaseStore) -> dict[str, Any]:
    store.put(("users", "alice"), "prefs", {"food": "pizza", "level": 3})
    store.put(("users", "alice"), "city", {"text": "Alice lives in Lyon", "level": 1})
    store.put(("users", "bob"), "prefs", {"food": "sushi", "level": 5})
    store.put(("docs",), "readme", {"text": "install with pip", "level": 2})
    store.put(("users", "alice"), "prefs", {"food": "pasta", "level": 4})  # overwrite
    store.put(("users", "Alice"), "Prefs", {"food": "case apart", "level": 0})
    store.delete(("users", "bob"), "prefs")
    store.delete(("users", "bob"), "never-there")
    got = store.get(("users", "alice"), "prefs")

    def held(names: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        """Namespaces holding an item. (InMemoryStore also keeps namespaces emptied by a
        delete or merely read by a get; this store lists only those with items.)"""
        return [ns for ns in names if store.search(ns, limit=1)]

    return {
        "get": (got.namespace, got.key, got.value) if got else None,
        "gone": store.get(("users", "bob"), "prefs"),
        "case": store.get(("users", "Alice"), "Prefs").value,  # type: ignore[union-attr]
        "missing": store.get(("users", "carol"), "prefs"),
        "all": view(store.search((), limit=100)),
        "users": view(store.search(("users",), limit=100)),
        "alice": view(store.search(("users", "alice"), limit=100)),
        "eq": view(store.search(("users",), filter={"food": "pasta"})),
        "gt": view(store.search((), filter={"level": {"$gt": 1}})),
        "range": view(store.search((), filter={"level": {"$gte": 1, "$lt": 4}})),
        "page": len(store.search((), limit=2, offset=1)),
        "ns": held(store.list_namespaces()),
        "ns_prefix": held(store.list_namespaces(prefix=("users",))),
        "ns_suffix": held(store.list_namespaces(suffix=("alice",))),
        "ns_wild": held(store.list_namespaces(prefix=("users", "*"))),
        "ns_depth": held(store.list_namespaces(max_depth=1)),
        "ns_page": held(store.list_namespaces(limit=1, offset=1)),
    }


def test_same_answers_as_langgraphs_own_store(memory: Any) -> None:
    ours = apply(AttestorStore(memory, ORCH))
    reference = apply(InMemoryStore())
    assert ours == reference
    assert ours["get"] == (("users", "alice"), "prefs", {"food": "pasta", "level": 4})
    assert ours["ns"] == [("docs",), ("users", "Alice"), ("users", "alice")]
    store = AttestorStore(memory, ORCH)  # nothing emptied is listed, unfiltered
    assert store.list_namespaces() == ours["ns"]
    assert store.list_namespaces(prefix=("users",)) == ours["ns_prefix"]


def test_overwrites_are_versions_and_tenants_stay_apart(memory: Any) -> None:
    store = AttestorStore(memory, ORCH)
    store.put(("users", "alice"), "city", {"text": "Alice lives in Paris"})
    [before] = memory.list(entity="city", context=ALICE)
    CLOCK.advance(seconds=10)
    store.put(("users", "alice"), "city", {"text": "Alice lives in Lyon"})
    first = store.get(("users", "alice"), "city")
    assert first is not None and first.value == {"text": "Alice lives in Lyon"}
    assert first.created_at < first.updated_at  # created at the first put
    history = memory.timeline("city", context=ALICE)
    assert [m.metadata["langgraph"]["value"]["text"] for m in history] == [
        "Alice lives in Paris",
        "Alice lives in Lyon",
    ]
    past = AttestorStore(memory, ORCH, as_of=before.t_created)
    assert past.get(("users", "alice"), "city").value == {"text": "Alice lives in Paris"}  # type: ignore[union-attr]

    other = AttestorStore(memory, AgentContext(agent_id="g", role="orchestrator", tenant="beta"))
    assert other.get(("users", "alice"), "city") is None
    assert other.search(()) == [] and other.list_namespaces() == []

    reader = AttestorStore(
        memory, AgentContext(agent_id="r", role="reviewer", tenant="acme", namespace="lg")
    )
    with pytest.raises(AccessDenied):
        reader.put(("users", "alice"), "city", {"text": "nope"})
    with pytest.raises(InvalidNamespaceError):
        store.put(("a/b",), "k", {"x": 1})


def test_query_search_is_recall(memory: Any) -> None:
    store = AttestorStore(memory, ORCH)
    store.put(("notes",), "n1", {"text": "The deploy runs on Fridays"})
    store.put(("notes",), "n2", {"text": "Alice prefers green tea"})
    store.put(("notes",), "n3", {"text": "Bob owns the billing service"})
    hits = store.search(("notes",), query="what does Alice drink? tea")
    assert hits[0].key == "n2" and hits[0].score is not None and hits[0].score > 0
    again = store.search(("notes",), query="what does Alice drink? tea")
    assert [(h.key, h.score) for h in again] == [(h.key, h.score) for h in hits]  # deterministic

    async def both() -> Any:
        await store.aput(("notes",), "n4", {"text": "async works"})
        return await store.aget(("notes",), "n4")

    assert asyncio.run(both()).value == {"text": "async works"}


class State(TypedDict):
    user: str
    fact: str
    recalled: list[str]


def remember(state: State, runtime: Runtime[None]) -> dict[str, Any]:
    assert runtime.store is not None
    runtime.store.put(("users", state["user"]), "fact", {"text": state["fact"]})
    return {}


def recall(state: State, runtime: Runtime[None]) -> dict[str, Any]:
    assert runtime.store is not None
    hits = runtime.store.search(("users", state["user"]), query="where does she live")
    return {"recalled": [h.value["text"] for h in hits]}


def test_a_langgraph_graph_uses_the_store(memory: Any) -> None:
    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    app = graph.compile(store=AttestorStore(memory, ORCH))
    out = app.invoke({"user": "alice", "fact": "Alice lives in Lyon", "recalled": []})
    assert out["recalled"] == ["Alice lives in Lyon"]
    stored = memory.list(context=ALICE)
    assert [m.content for m in stored] == ["Alice lives in Lyon"]
    assert stored[0].provenance.agent_id == "graph"  # governed: provenance, audit, tenant


def test_unranked_search_pages_newest_first_past_a_hundred(memory: Any) -> None:
    store = AttestorStore(memory, ORCH)
    for i in range(130):
        CLOCK.advance(seconds=1)
        store.put(("bulk",), f"k{i:03d}", {"n": i})
    newest = store.search(("bulk",), limit=3)
    assert [h.key for h in newest] == ["k129", "k128", "k127"]
    oldest = store.search(("bulk",), limit=10, offset=125)
    assert [h.key for h in oldest] == ["k004", "k003", "k002", "k001", "k000"]
    assert len(store.search(("bulk",), limit=1000)) == 130
