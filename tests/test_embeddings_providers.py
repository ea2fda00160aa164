"""Ollama and OpenAI-compatible embedders against a real HTTP peer on 127.0.0.1.

The peer is a small http.server speaking both APIs' JSON shapes (``/api/embed``,
``/api/tags``, ``/v1/embeddings``); our clients go through real sockets, real
JSON and real timeouts. Its vectors are deterministic, deliberately
un-normalised functions of the text, so tests can check order and normalisation.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from attestor_arango.config import Config, load_config
from attestor_arango.embeddings import (
    Embedder,
    HashingEmbedder,
    OllamaEmbedder,
    OpenAICompatEmbedder,
    chain,
    make_embedder,
)
from attestor_arango.embeddings.chain import ollama_has_model
from attestor_arango.errors import EmbedderUnavailable, EmbeddingMismatchError, ValidationError


def peer_vector(text: str, dim: int) -> list[float]:
    """What the peer answers for ``text``: a hashing vector scaled to length 3 plus an offset."""
    base = HashingEmbedder(dim).embed([text])[0] * 3.0
    base[0] += 1.0
    return [float(x) for x in base]


def expected(texts: list[str], dim: int) -> np.ndarray:
    rows = np.array([peer_vector(t, dim) for t in texts], dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@dataclass
class Plan:
    """One scripted answer: an HTTP status with a JSON error, or a delay before answering."""

    status: int = 200
    error: str = ""
    delay: float = 0.0
    retry_after: str | None = None


@dataclass
class Peer:
    url: str
    dim: int = 8
    models: list[str] = field(default_factory=lambda: ["bge-m3:latest"])
    api_key: str | None = None
    plans: list[Plan] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    peer: Peer  # set on a subclass per server

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: Any, retry_after: str | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            if retry_after is not None:
                self.send_header("Retry-After", retry_after)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and hung up: expected in timeout tests

    def do_GET(self) -> None:
        self.peer.requests.append({"path": self.path, "body": None, "headers": dict(self.headers)})
        if self.path == "/api/tags":
            models = [{"name": m, "model": m} for m in self.peer.models]
            self._send(200, {"models": models})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.peer.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
        plan = self.peer.plans.pop(0) if self.peer.plans else Plan()
        if plan.delay:
            time.sleep(plan.delay)
        if self.path == "/api/embed":
            self._ollama(body, plan)
        elif self.path == "/v1/embeddings":
            self._openai(body, plan)
        else:
            self._send(404, {"error": f"no route {self.path}"})

    def _ollama(self, body: dict[str, Any], plan: Plan) -> None:
        if plan.status != 200:
            self._send(plan.status, {"error": plan.error})
            return
        model = body.get("model", "")
        if model not in self.peer.models and f"{model}:latest" not in self.peer.models:
            self._send(404, {"error": f'model "{model}" not found, try pulling it first'})
            return
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = [peer_vector(t, self.peer.dim) for t in texts]
        self._send(200, {"model": model, "embeddings": vectors})

    def _openai(self, body: dict[str, Any], plan: Plan) -> None:
        if self.peer.api_key and self.headers.get("Authorization") != f"Bearer {self.peer.api_key}":
            self._send(401, {"error": {"message": "Incorrect API key provided", "type": "auth"}})
            return
        if plan.status != 200:
            error = {"error": {"message": plan.error, "type": "server"}}
            self._send(plan.status, error, plan.retry_after)
            return
        dim = int(body.get("dimensions") or self.peer.dim)
        items = [
            {"object": "embedding", "index": i, "embedding": peer_vector(t, dim)}
            for i, t in enumerate(body["input"])
        ]
        items.reverse()  # servers may answer out of order; the index is authoritative
        self._send(200, {"object": "list", "data": items, "model": body["model"], "usage": {}})


@pytest.fixture(autouse=True)
def patient_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded CI machine may take longer than the production 0.5 s probe to answer."""
    monkeypatch.setattr(chain, "PROBE_TIMEOUT_S", 5.0)


@pytest.fixture
def peer() -> Iterator[Peer]:
    state = Peer(url="")
    handler = type("PeerHandler", (_Handler,), {"peer": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


def closed_port_url() -> str:
    """A 127.0.0.1 URL where nothing listens (bound, then released)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()
    return f"http://127.0.0.1:{port}"


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


# -- Ollama ---------------------------------------------------------------------------------


def test_ollama_embeds_normalised_in_order_and_learns_dimension(peer: Peer) -> None:
    emb = OllamaEmbedder(base_url=peer.url)
    texts = ["alpha beta", "gamma", "the third text"]
    out = emb.embed(texts)
    assert out.dtype == np.float32
    assert out.shape == (3, peer.dim)
    assert emb.dimension == peer.dim
    np.testing.assert_allclose(out, expected(texts, peer.dim), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    assert emb.name == "ollama:bge-m3"
    assert isinstance(emb, Embedder)
    assert peer.requests[0]["body"]["model"] == "bge-m3"


def test_ollama_latest_tag_names_the_same_space(peer: Peer) -> None:
    plain = OllamaEmbedder("bge-m3", base_url=peer.url)
    tagged = OllamaEmbedder("bge-m3:latest", base_url=peer.url)
    assert plain.name == tagged.name == "ollama:bge-m3"
    assert OllamaEmbedder("bge-m3:567m", base_url=peer.url).name == "ollama:bge-m3:567m"


def test_ollama_dimension_probe_before_any_embed(peer: Peer) -> None:
    peer.dim = 12
    emb = OllamaEmbedder(base_url=peer.url)
    assert peer.requests == []
    assert emb.dimension == 12
    assert len(peer.requests) == 1
    assert emb.embed([]).shape == (0, 12)
    assert len(peer.requests) == 1  # the dimension is cached


def test_ollama_batches(peer: Peer) -> None:
    emb = OllamaEmbedder(base_url=peer.url, batch_size=4)
    texts = [f"text number {i}" for i in range(10)]
    out = emb.embed(texts)
    assert [len(r["body"]["input"]) for r in peer.requests] == [4, 4, 2]
    np.testing.assert_allclose(out, expected(texts, peer.dim), atol=1e-6)


def test_ollama_missing_model_says_pull(peer: Peer) -> None:
    emb = OllamaEmbedder("nomic-embed-text", base_url=peer.url)
    with pytest.raises(EmbedderUnavailable, match="ollama pull nomic-embed-text"):
        emb.embed(["x"])


def test_ollama_server_error_is_typed(peer: Peer) -> None:
    peer.plans = [Plan(status=500, error="out of memory")]
    emb = OllamaEmbedder(base_url=peer.url)
    with pytest.raises(EmbedderUnavailable, match="out of memory") as info:
        emb.embed(["x"])
    assert info.value.details["status"] == 500


def test_ollama_timeout_is_typed(peer: Peer) -> None:
    peer.plans = [Plan(delay=3.0)]
    emb = OllamaEmbedder(base_url=peer.url, timeout=0.5)
    with pytest.raises(EmbedderUnavailable, match="did not answer within"):
        emb.embed(["x"])


def test_ollama_connection_refused_is_typed() -> None:
    emb = OllamaEmbedder(base_url=closed_port_url(), timeout=1.0)
    with pytest.raises(EmbedderUnavailable, match="ollama serve"):
        emb.embed(["x"])


def test_ollama_configured_dimension_is_checked(peer: Peer) -> None:
    emb = OllamaEmbedder(base_url=peer.url, dimension=1024)
    with pytest.raises(EmbeddingMismatchError, match="embedder_dimension is 1024"):
        emb.embed(["x"])


def test_ollama_rejects_non_string_input(peer: Peer) -> None:
    emb = OllamaEmbedder(base_url=peer.url)
    with pytest.raises(ValidationError):
        emb.embed(["ok", 3])  # type: ignore[list-item]
    assert peer.requests == []


# -- OpenAI-compatible ----------------------------------------------------------------------


def test_openai_embeds_sorted_by_index_and_normalised(peer: Peer) -> None:
    emb = OpenAICompatEmbedder(f"{peer.url}/v1", model="m1")
    texts = ["one", "two", "three", "four"]
    out = emb.embed(texts)
    assert out.shape == (4, peer.dim) and out.dtype == np.float32
    np.testing.assert_allclose(out, expected(texts, peer.dim), atol=1e-6)
    assert emb.name == "openai:m1"
    assert emb.dimension == peer.dim
    assert "Authorization" not in peer.requests[0]["headers"]


def test_openai_batches(peer: Peer) -> None:
    emb = OpenAICompatEmbedder(f"{peer.url}/v1", model="m1", batch_size=3)
    texts = [f"t{i}" for i in range(7)]
    out = emb.embed(texts)
    assert [len(r["body"]["input"]) for r in peer.requests] == [3, 3, 1]
    np.testing.assert_allclose(out, expected(texts, peer.dim), atol=1e-6)


def test_openai_sends_key_and_bad_key_is_a_clear_error(peer: Peer) -> None:
    peer.api_key = "sk-good"
    good = OpenAICompatEmbedder(f"{peer.url}/v1", model="m1", api_key="sk-good")
    assert good.embed(["a"]).shape == (1, peer.dim)
    sleeps = Sleeps()
    bad = OpenAICompatEmbedder(f"{peer.url}/v1", model="m1", api_key="sk-bad", sleep=sleeps)
    before = len(peer.requests)
    with pytest.raises(EmbedderUnavailable, match="openai_api_key") as info:
        bad.embed(["a"])
    assert info.value.details["status"] == 401
    assert len(peer.requests) == before + 1  # 4xx is not retried
    assert sleeps.calls == []


def test_openai_4xx_carries_server_message_without_retry(peer: Peer) -> None:
    peer.plans = [Plan(status=400, error="input too long")]
    emb = OpenAICompatEmbedder(f"{peer.url}/v1", model="m1", sleep=Sleeps())
    with pytest.raises(EmbedderUnavailable, match="input too long"):
        emb.embed(["a"])
    assert len(peer.requests) == 1


def test_openai_wrong_base_url_404_explains(peer: Peer) -> None:
    emb = OpenAICompatEmbedder(peer.url, model="m1")  # forgot /v1
    with pytest.raises(EmbedderUnavailable, match="/v1"):
        emb.embed(["a"])


def test_openai_retries_5xx_with_backoff_then_succeeds(peer: Peer) -> None:
    peer.plans = [Plan(status=503, error="busy"), Plan(status=502, error="gateway")]
    sleeps = Sleeps()
    emb = OpenAICompatEmbedder(f"{peer.url}/v1", model="m1", sleep=sleeps, backoff_s=0.5)
    out = emb.embed(["x", "y"])
    np.testing.assert_allclose(out, expected(["x", "y"], peer.dim), atol=1e-6)
    assert len(peer.requests) == 3
    assert sleeps.calls == [0.5, 1.0]


def test_openai_gives_up_after_max_retries(peer: Peer) -> None:
    peer.plans = [Plan(status=500, error="boom")] * 5
    sleeps = Sleeps()
    emb = OpenAICompatEmbedder(f"{peer.url}/v1", model="m1", sleep=sleeps, max_retries=2)
    with pytest.raises(EmbedderUnavailable, match="failed 3 times, last: HTTP 500: boom"):
        emb.embed(["x"])
    assert len(peer.requests) == 3
    assert sleeps.calls == [0.5, 1.0]


def test_openai_retries_429(peer: Peer) -> None:
    peer.plans = [Plan(status=429, error="slow down")]
    emb = OpenAICompatEmbedder(f"{peer.url}/v1", model="m1", sleep=Sleeps())
    assert emb.embed(["x"]).shape == (1, peer.dim)
    assert len(peer.requests) == 2


def test_openai_honours_retry_after_on_429(peer: Peer) -> None:
    peer.plans = [Plan(status=429, error="rate limited", retry_after="2")]
    sleeps = Sleeps()
    emb = OpenAICompatEmbedder(f"{peer.url}/v1", model="m1", sleep=sleeps, backoff_s=0.5)
    assert emb.embed(["x"]).shape == (1, peer.dim)
    assert sleeps.calls == [2.0]


def test_openai_timeout_is_retried(peer: Peer) -> None:
    peer.plans = [Plan(delay=3.0)]
    sleeps = Sleeps()
    emb = OpenAICompatEmbedder(f"{peer.url}/v1", model="m1", timeout=1.0, sleep=sleeps)
    out = emb.embed(["x"])
    np.testing.assert_allclose(out, expected(["x"], peer.dim), atol=1e-6)
    assert len(sleeps.calls) == 1


def test_openai_timeouts_exhaust_retries(peer: Peer) -> None:
    peer.plans = [Plan(delay=3.0)] * 2
    emb = OpenAICompatEmbedder(
        f"{peer.url}/v1", model="m1", timeout=0.5, max_retries=1, sleep=Sleeps()
    )
    with pytest.raises(EmbedderUnavailable, match="timed out"):
        emb.embed(["x"])


def test_openai_dimensions_requested_and_checked(peer: Peer) -> None:
    emb = OpenAICompatEmbedder(f"{peer.url}/v1", model="m1", dimension=16)
    assert emb.embed(["x"]).shape == (1, 16)
    assert peer.requests[0]["body"]["dimensions"] == 16
    assert emb.name == "openai:m1@16"


def test_openai_requires_base_url() -> None:
    with pytest.raises(EmbedderUnavailable, match="openai_base_url"):
        OpenAICompatEmbedder("", model="m1")


# -- chain against the peer -----------------------------------------------------------------


def test_probe_distinguishes_down_missing_and_ready(peer: Peer) -> None:
    assert ollama_has_model(peer.url, "bge-m3") is True
    assert ollama_has_model(peer.url, "bge-m3:latest") is True
    assert ollama_has_model(peer.url, "other") is False
    assert ollama_has_model(closed_port_url(), "bge-m3") is None


def test_explicit_ollama_from_config(peer: Peer) -> None:
    emb = make_embedder(Config(embedder="ollama", ollama_url=peer.url))
    assert isinstance(emb, OllamaEmbedder)
    assert emb.embed(["q"]).shape == (1, peer.dim)


def test_explicit_ollama_without_model_raises(peer: Peer) -> None:
    with pytest.raises(EmbedderUnavailable, match="ollama pull e5"):
        make_embedder(Config(embedder="ollama", ollama_url=peer.url, embedder_model="e5"))


def test_explicit_ollama_down_raises() -> None:
    with pytest.raises(EmbedderUnavailable, match="no Ollama answers"):
        make_embedder(Config(embedder="ollama", ollama_url=closed_port_url()))


def test_auto_prefers_ollama_when_it_has_the_model(
    peer: Peer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ATTESTOR_DISABLE_LOCAL_EMBED", raising=False)
    emb = make_embedder(Config(embedder="auto", ollama_url=peer.url, openai_base_url=peer.url))
    assert isinstance(emb, OllamaEmbedder)


def test_auto_skips_ollama_probe_when_disabled(peer: Peer) -> None:
    config = load_config(
        env={"ATTESTOR_DISABLE_LOCAL_EMBED": "1"},
        embedder="auto",
        ollama_url=peer.url,
        openai_base_url=f"{peer.url}/v1",
    )
    emb = make_embedder(config)
    assert isinstance(emb, OpenAICompatEmbedder)
    assert peer.requests == []  # not even probed: the GET /api/tags would be recorded


def test_auto_falls_to_openai_when_ollama_lacks_model(
    peer: Peer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ATTESTOR_DISABLE_LOCAL_EMBED", raising=False)
    peer.models = ["llama3:latest"]
    emb = make_embedder(
        Config(embedder="auto", ollama_url=peer.url, openai_base_url=f"{peer.url}/v1")
    )
    assert isinstance(emb, OpenAICompatEmbedder)
    assert emb.embed(["q"]).shape == (1, peer.dim)


def test_explicit_openai_uses_key_and_model(peer: Peer) -> None:
    peer.api_key = "sk-1"
    cfg = Config(
        embedder="openai",
        openai_base_url=f"{peer.url}/v1",
        openai_api_key="sk-1",
        embedder_model="my-embed",
    )
    emb = make_embedder(cfg)
    assert emb.name == "openai:my-embed"
    assert emb.embed(["q"]).shape == (1, peer.dim)
    assert peer.requests[0]["body"]["model"] == "my-embed"
