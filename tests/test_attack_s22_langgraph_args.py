"""The LangGraph store checks the arguments it slices and reads with: ``search`` and
``list_namespaces`` took ``limit``/``offset``/``max_depth`` unchecked (limit=-1 returned
all but the last item, offset=-1 the last one, max_depth=0 a namespace ``()``, a text or
a float raised a raw TypeError), a ``filter`` that is no mapping raised AttributeError,
a ``value`` that is no mapping raised TypeError/ValueError (or, as pairs, was stored
as a dict), a prefix given as text searched its letters and a query that is no text was
called empty. Each is now refused with the library's ValidationError naming the
argument, and nothing is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langgraph")

from attack_support import stored

from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.langgraph import AttestorStore
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="o", role="orchestrator", tenant="a", namespace="n")
NS = ("users", "u1")


@pytest.fixture
def store(tmp_path: Path) -> AttestorStore:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), context=CTX)
    lg = AttestorStore(mem)
    for n in range(5):
        lg.put(NS, f"k{n}", {"text": f"likes tea {n}", "n": n})
    return lg


BAD_LIMITS = [0, -1, -3, 10_001, "abc", True, 2.5, None]
BAD_OFFSETS = [-1, -3, "abc", True, 2.5, None]


@pytest.mark.parametrize("limit", BAD_LIMITS)
def test_search_and_list_namespaces_refuse_a_bad_limit(store: AttestorStore, limit: object) -> None:
    with pytest.raises(ValidationError, match=r"^limit must be"):
        store.search(("users",), limit=limit)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"^limit must be"):
        store.list_namespaces(limit=limit)  # type: ignore[arg-type]


@pytest.mark.parametrize("offset", BAD_OFFSETS)
def test_search_and_list_namespaces_refuse_a_bad_offset(
    store: AttestorStore, offset: object
) -> None:
    with pytest.raises(ValidationError, match=r"^offset must be"):
        store.search(("users",), offset=offset)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"^offset must be"):
        store.list_namespaces(offset=offset)  # type: ignore[arg-type]


@pytest.mark.parametrize("depth", [0, -1, "abc", 2.5, True])
def test_list_namespaces_refuses_a_bad_max_depth(store: AttestorStore, depth: object) -> None:
    with pytest.raises(ValidationError, match=r"^max_depth must be"):
        store.list_namespaces(max_depth=depth)  # type: ignore[arg-type]


@pytest.mark.parametrize("given", ["abc", [1], 5])
def test_search_refuses_a_filter_that_is_no_mapping(store: AttestorStore, given: object) -> None:
    with pytest.raises(ValidationError, match="filter"):
        store.search(("users",), filter=given)  # type: ignore[arg-type]


def test_search_refuses_a_prefix_given_as_text(store: AttestorStore) -> None:
    with pytest.raises(ValidationError, match="namespace_prefix"):
        store.search("users")  # type: ignore[arg-type]


@pytest.mark.parametrize("query", [5, ["a"], {"q": 1}])
def test_search_refuses_a_query_that_is_no_text(store: AttestorStore, query: object) -> None:
    with pytest.raises(ValidationError, match=r"^query must be"):
        store.search(("users",), query=query)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["abc", [1, 2], 5, [("a", 1)]])
def test_put_refuses_a_value_that_is_no_mapping(store: AttestorStore, value: object) -> None:
    before = stored(store.memory)
    with pytest.raises(ValidationError, match="value"):
        store.put(NS, "kx", value)  # type: ignore[arg-type]
    assert stored(store.memory) == before


def test_good_arguments_still_page(store: AttestorStore) -> None:
    everything = store.search(("users",), limit=10_000)
    assert len(everything) == 5
    assert store.search(("users",), limit=2, offset=1) == everything[1:3]
    assert store.search(("users",), offset=10**30) == []
    assert store.list_namespaces(limit=1, offset=0, max_depth=1) == [("users",)]
    assert len(store.search(["users"], filter={"n": {"$gte": 3}}, limit=5)) == 2  # a list too


@pytest.mark.parametrize("key", ["k" * 257, "x\x1b[31m", "a\u202eb", "a\x00b", "a\ud800"])
def test_a_key_no_memory_can_hold_is_refused_naming_the_key(store: AttestorStore, key: str) -> None:
    # before: "entity is longer than 256 characters" / "entity holds the control
    # character": a field the caller never named
    before = stored(store.memory)
    with pytest.raises(ValidationError, match="LangGraph key"):
        store.put(NS, key, {"text": "x"})
    with pytest.raises(ValidationError, match="LangGraph key"):
        store.get(NS, key)
    assert stored(store.memory) == before
    assert store.get(NS, "k" * 256) is None  # the longest key still reads
