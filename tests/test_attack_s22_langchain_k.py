"""The LangChain retriever's per-call ``k`` (``invoke(query, k=...)``) is bounded like its
field (1..1000) and refused with the library's typed ValidationError naming ``k``."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.langchain import AttestorRetriever
from attestor_arango.memory import AgentMemory
from attestor_arango.validation import check_limit

CTX = AgentContext(agent_id="chain", role="orchestrator", tenant="acme", namespace="docs")


@pytest.fixture
def retriever(tmp_path: Path) -> AttestorRetriever:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    for n in range(3):
        mem.add(f"Alice fact number {n}", entity="alice", category=f"c{n}", context=CTX)
    return AttestorRetriever(memory=mem, context=CTX)


@pytest.mark.parametrize("k", [0, -1, 1001, 10**9, "abc", "2", True, False, 2.5, 2.0, [2]])
def test_a_bad_k_per_call_is_a_typed_error_naming_k(
    retriever: AttestorRetriever, k: object
) -> None:
    with pytest.raises(ValidationError, match=r"^k must be an integer from 1 to 1000"):
        retriever.invoke("Alice", k=k)


def test_a_bad_k_set_after_construction_is_refused_too(retriever: AttestorRetriever) -> None:
    retriever.k = 0
    with pytest.raises(ValidationError, match=r"^k must be"):
        retriever.invoke("Alice")


def test_good_k_still_cuts_the_results(retriever: AttestorRetriever) -> None:
    assert len(retriever.invoke("Alice", k=1)) == 1
    assert len(retriever.invoke("Alice", k=1000)) == 3
    assert len(retriever.invoke("Alice")) == 3  # the field's default, 4
    assert len(retriever.invoke("Alice", k=None)) == 3  # None: the field's k


def test_check_limit_names_the_parameter() -> None:
    with pytest.raises(ValidationError, match=r"^limit must be an integer from 1 to 10000$"):
        check_limit(0)
    with pytest.raises(ValidationError, match=r"^k must be an integer from 1 to 7$"):
        check_limit(8, maximum=7, name="k")
