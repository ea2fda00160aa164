"""The LangChain retriever adapter against the real langchain-core package.

LangChain's own standard suite for retrievers (langchain-tests) runs on it, then a
chain (prompt | retriever-filled context | a runnable model stand-in) answers from
recalled memories, and the retriever keeps the context's tenant and time views.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_tests.integration_tests import RetrieversIntegrationTests

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.langchain import AttestorRetriever
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="chain", role="orchestrator", tenant="acme", namespace="docs")
FACTS = [
    ("Alice leads the platform team", "team"),
    ("Alice moved to Lyon in 2024", "city"),
    ("Alice's manager is Dana", "manager"),
    ("Alice prefers async standups", "meetings"),
    ("Bob owns billing", "billing"),
]
SHARED: dict[str, Any] = {}


@pytest.fixture(scope="module", autouse=True)
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgentMemory]:
    clock = ManualClock()
    path = tmp_path_factory.mktemp("lc") / "m.db"
    with AgentMemory(path, embedder=HashingEmbedder(64), clock=clock) as mem:
        for text, entity in FACTS:
            mem.add(text, entity=entity, category="fact", context=CTX)
        SHARED["memory"], SHARED["clock"] = mem, clock
        yield mem


# the suite's one async test needs pytest-asyncio's mark; its sync tests only warn about it
@pytest.mark.asyncio
@pytest.mark.filterwarnings("ignore:The test <Function:pytest.PytestWarning")
class TestAttestorRetrieverStandard(RetrieversIntegrationTests):
    """LangChain's standard retriever tests (k in the constructor and in invoke, sync
    and async invoke return Documents)."""

    @property
    def retriever_constructor(self) -> type[AttestorRetriever]:
        return AttestorRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": SHARED["memory"], "context": CTX}

    @property
    def retriever_query_example(self) -> str:
        return "what do we know about Alice"


def test_documents_carry_citations(seeded: AgentMemory) -> None:
    docs = AttestorRetriever(memory=seeded, context=CTX, k=2).invoke("when did Alice move to Lyon")
    assert docs[0].page_content == "Alice moved to Lyon in 2024"
    assert docs[0].metadata["entity"] == "city" and docs[0].id == docs[0].metadata["id"]
    assert docs[0].metadata["score"] >= docs[1].metadata["score"]
    assert seeded.get(docs[0].id, context=CTX).content == docs[0].page_content


def test_tenant_and_time_views(seeded: AgentMemory) -> None:
    other = AgentContext(agent_id="x", role="orchestrator", tenant="beta", namespace="docs")
    assert AttestorRetriever(memory=seeded, context=other).invoke("Alice") == []
    before = "2025-01-01T00:00:00Z"  # before anything was recorded (ManualClock starts 2026)
    assert AttestorRetriever(memory=seeded, context=CTX, as_of=before).invoke("Alice") == []
    with pytest.raises(ValidationError):
        AttestorRetriever(memory=seeded, context=CTX).invoke("   ")


def test_retriever_in_a_chain(seeded: AgentMemory) -> None:
    retriever = AttestorRetriever(memory=seeded, context=CTX, k=1)

    def notes(docs: list[Document]) -> str:
        return "\n".join(f"[{d.metadata['id']}] {d.page_content}" for d in docs)

    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from these notes only:\n{notes}"), ("human", "{question}")]
    )
    # a deterministic stand-in for a chat model: it answers with the first cited note
    model = RunnableLambda(lambda value: value.to_messages()[0].content.splitlines()[1])
    chain = {"notes": retriever | notes, "question": RunnablePassthrough()} | prompt | model
    answer = chain.invoke("who is Alice's manager")
    assert answer.endswith("Alice's manager is Dana")
    cited = answer[1 : answer.index("]")]
    assert seeded.get(cited, context=CTX).entity == "manager"
