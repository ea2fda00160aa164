"""Attack battery: an LLM or embedding server whose answer nests JSON 100,000 deep.

An extraction model's answer is steered by the text it reads (a user's turn can ask it to
answer anything), and the endpoints are remote servers. Their JSON was read catching
``ValueError`` only, so a deeply nested answer raised the reader's bare ``RecursionError``:
out of ``ingest_round`` through the extractor, out of the resolver's decision, out of the
OpenAI-compatible LLM provider and embedder. Each now reads it as it reads any answer
that is not its JSON: the extractor falls back to the rules, the resolver to ADD, the
provider raises ``LLMError``, the embedder ``EmbedderUnavailable``.
"""

from __future__ import annotations

import httpx
import pytest

from attestor_arango.clock import from_us, parse_time
from attestor_arango.embeddings.openai import OpenAICompatEmbedder
from attestor_arango.errors import EmbedderUnavailable
from attestor_arango.ingest import Action, LLMExtractor, LLMResolver, RuleExtractor
from attestor_arango.llm.base import LLMError, RetryPolicy
from attestor_arango.llm.openai_compat import OpenAICompatProvider
from attestor_arango.models import Memory, Provenance, content_hash
from tests.support.scripted_llm import ScriptedProvider

ANCHOR = parse_time("2026-03-01T12:00:00Z")
DEPTH = 100_000
DEEP_OBJECT = '{"facts": ' + "[" * DEPTH + "]" * DEPTH + "}"
DEEP_DECISION = '{"action": ' + "[" * DEPTH + "]" * DEPTH + "}"


def test_a_deeply_nested_extraction_answer_falls_back_to_the_rules() -> None:
    text = "I live in Lisbon these days."
    found, warnings = LLMExtractor(ScriptedProvider([DEEP_OBJECT])).extract(
        text, speaker="user", subject="Ana", anchor_us=ANCHOR
    )
    rules, _ = RuleExtractor().extract(text, speaker="user", subject="Ana", anchor_us=ANCHOR)
    assert [f.text for f in found] == [f.text for f in rules]
    assert any("fell back to rules" in w for w in warnings)


def test_a_deeply_nested_decision_becomes_add_never_an_error() -> None:
    [fact], _ = RuleExtractor().extract(
        "I moved to Berlin.", speaker="user", subject="user", anchor_us=ANCHOR
    )
    old = Memory(
        id="m0",
        tenant="t",
        namespace="n",
        content="I live in Paris.",
        entity="user",
        valid_from=from_us(parse_time("2026-02-01T00:00:00Z")),
        t_created=from_us(parse_time("2026-02-01T00:00:00Z")),
        provenance=Provenance(agent_id="a", role="executor"),
        content_hash=content_hash("I live in Paris."),
    )
    decision = LLMResolver(ScriptedProvider([DEEP_DECISION])).decide(fact, [old], "e")
    assert decision.action is Action.ADD and decision.target_id is None
    assert decision.decided_by == "fallback"


def _deep(request: httpx.Request) -> httpx.Response:
    body = b'{"choices": ' + b"[" * DEPTH + b"]" * DEPTH + b"}"
    return httpx.Response(200, content=body, headers={"content-type": "application/json"})


def test_a_deeply_nested_chat_answer_is_an_llm_error() -> None:
    provider = OpenAICompatProvider(
        "m",
        base_url="http://llm.test/v1",
        retry=RetryPolicy(attempts=1),
        transport=httpx.MockTransport(_deep),
    )
    with pytest.raises(LLMError):
        provider.complete("hello", json_mode=True)


@pytest.mark.parametrize("status", [200, 400, 500])
def test_a_deeply_nested_embedding_answer_is_embedder_unavailable(status: int) -> None:
    def deep(request: httpx.Request) -> httpx.Response:
        body = b'{"data": ' + b"[" * DEPTH + b"]" * DEPTH + b"}"
        return httpx.Response(status, content=body, headers={"content-type": "application/json"})

    embedder = OpenAICompatEmbedder(
        "http://emb.test/v1", max_retries=0, dimension=8, sleep=lambda s: None
    )
    embedder._client = httpx.Client(base_url=embedder.base_url, transport=httpx.MockTransport(deep))
    with pytest.raises(EmbedderUnavailable):
        embedder.embed(["hello"])


def _ollama_answer(status: int, body: bytes) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers={"content-type": "application/json"})

    return httpx.MockTransport(handle)


OLLAMA_BODIES = {
    "deep-200": (200, b'{"response": ' + b"[" * DEPTH + b"]" * DEPTH + b"}"),
    "deep-400": (400, b"[" * DEPTH + b"]" * DEPTH),
    "wrong-type": (200, b'{"response": 5, "embeddings": "x"}'),
}


@pytest.mark.parametrize("body", sorted(OLLAMA_BODIES))
def test_an_ollama_answer_that_is_not_its_json_is_a_typed_error(body: str) -> None:
    """Through the ollama library (its own JSON reading and pydantic models): a deep body
    raised RecursionError, a field of the wrong type pydantic's ValidationError."""
    pytest.importorskip("ollama")
    from attestor_arango.embeddings.ollama import OllamaEmbedder
    from attestor_arango.llm.ollama import OllamaProvider

    status, content = OLLAMA_BODIES[body]
    provider = OllamaProvider("m", host="http://ollama.test", retry=RetryPolicy(attempts=1))
    provider._client._client = httpx.Client(
        base_url="http://ollama.test", transport=_ollama_answer(status, content)
    )
    with pytest.raises(LLMError):
        provider.complete("hello", json_mode=True)
    embedder = OllamaEmbedder()
    embedder._client._client = httpx.Client(
        base_url="http://ollama.test", transport=_ollama_answer(status, content)
    )
    with pytest.raises(EmbedderUnavailable):
        embedder.embed(["hello"])


def test_a_deeply_nested_model_list_means_the_model_is_not_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The embedder chain asks Ollama's ``/api/tags`` whether a model is pulled: an answer
    nested too deeply is a server that is not (usable) Ollama, False, not a RecursionError."""
    from attestor_arango.embeddings import chain

    body = b'{"models": ' + b"[" * DEPTH + b"]" * DEPTH + b"}"
    answer = httpx.Response(200, content=body, headers={"content-type": "application/json"})
    monkeypatch.setattr(chain.httpx, "get", lambda *a, **k: answer)
    assert chain.ollama_has_model("http://ollama.test", "bge-m3") is False
