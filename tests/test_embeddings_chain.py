"""make_embedder: explicit choices and the ``auto`` order, without any HTTP peer.

(Selection with a live Ollama/OpenAI-compatible peer is in test_embeddings_providers.py.)
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from attestor_arango.config import Config, load_config
from attestor_arango.embeddings import (
    HashingEmbedder,
    LocalMiniLMEmbedder,
    make_embedder,
)
from attestor_arango.embeddings.local import ENV_MODEL_PATH
from attestor_arango.errors import EmbedderUnavailable


def closed_port_url() -> str:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()
    return f"http://127.0.0.1:{port}"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (ENV_MODEL_PATH, "ATTESTOR_DISABLE_LOCAL_EMBED", "ATTESTOR_EMBEDDER"):
        monkeypatch.delenv(name, raising=False)


def test_hashing_choice_honours_dimension() -> None:
    emb = make_embedder(Config(embedder="hashing", embedder_dimension=64))
    assert isinstance(emb, HashingEmbedder)
    assert emb.dimension == 64 and emb.name == "hashing-v1-64"
    assert emb.embed(["x"]).shape == (1, 64)


def test_explicit_openai_without_base_url_says_what_to_set() -> None:
    with pytest.raises(EmbedderUnavailable, match="ATTESTOR_OPENAI_BASE_URL"):
        make_embedder(Config(embedder="openai"))


def test_explicit_local_with_bad_path_raises_not_falls_back(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="local_model_path"):
        make_embedder(Config(embedder="local", local_model_path=str(tmp_path / "missing")))


def test_auto_without_any_model_is_hashing(tmp_path: Path) -> None:
    # Ollama down, no OpenAI endpoint, and the local model path is an empty directory
    cfg = Config(embedder="auto", ollama_url=closed_port_url(), local_model_path=str(tmp_path))
    emb = make_embedder(cfg)
    assert isinstance(emb, HashingEmbedder)


def test_auto_uses_local_minilm_when_ollama_is_down() -> None:
    emb = make_embedder(Config(embedder="auto", ollama_url=closed_port_url()))
    assert isinstance(emb, LocalMiniLMEmbedder)
    assert emb.name == "minilm-l6-v2-int8-onnx" and emb.dimension == 384


def test_explicit_local_from_environment_config(tmp_path: Path) -> None:
    cfg = load_config(env={"ATTESTOR_EMBEDDER": "local"})
    emb = make_embedder(cfg)
    assert isinstance(emb, LocalMiniLMEmbedder)
    out = emb.embed(["hello"])
    assert out.shape == (1, 384)
    assert np.isclose(np.linalg.norm(out), 1.0, atol=1e-5)


def test_auto_with_probe_disabled_never_contacts_ollama(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hits: list[str] = []

    class Recorder(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        env = {"ATTESTOR_DISABLE_LOCAL_EMBED": "1"}
        switched = load_config(env=env, ollama_url=url, local_model_path=str(tmp_path))
        assert switched.skip_ollama_probe
        make_embedder(switched)
        assert hits == []
        make_embedder(Config(embedder="auto", ollama_url=url, local_model_path=str(tmp_path)))
        assert hits == ["/api/tags"]  # the control: without the switch it does probe
    finally:
        server.shutdown()
        server.server_close()
