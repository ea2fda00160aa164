"""The in-process all-MiniLM-L6-v2 (int8 ONNX) embedder: real vectors from the real model."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from attestor_arango.config import load_config
from attestor_arango.embeddings import Embedder
from attestor_arango.embeddings.local import (
    ENV_MODEL_PATH,
    MINILM_INT8_NAME,
    LocalMiniLMEmbedder,
    directory_model_files,
    local_available,
    packaged_model_files,
    resolve_model_files,
)
from attestor_arango.errors import EmbedderUnavailable

# The model is part of the plain install: these tests fail, never skip, without it.


@pytest.fixture(scope="module")
def minilm() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder()


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


def test_shape_dtype_normalisation_and_name(minilm: LocalMiniLMEmbedder) -> None:
    out = minilm.embed(["The cat sat on the mat.", "Quarterly revenue grew by 4%.", ""])
    assert out.shape == (3, 384)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert minilm.dimension == 384
    assert minilm.name == MINILM_INT8_NAME == "minilm-l6-v2-int8-onnx"
    assert isinstance(minilm, Embedder)
    assert minilm.embed([]).shape == (0, 384)


def test_deterministic_and_independent_of_batching(minilm: LocalMiniLMEmbedder) -> None:
    texts = [
        "short",
        "a considerably longer sentence that forces padding of the shorter ones in its batch",
        "Alice moved to Berlin in 2021.",
    ]
    first = minilm.embed(texts)
    again = minilm.embed(texts)
    assert np.array_equal(first, again)
    singles = np.vstack([minilm.embed([t]) for t in texts])
    np.testing.assert_allclose(first, singles, atol=1e-5)


def test_concurrent_callers_get_the_same_vectors(minilm: LocalMiniLMEmbedder) -> None:
    texts = [f"memory number {i} about project {i % 3}" for i in range(12)]
    sequential = minilm.embed(texts)
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda t: minilm.embed([t])[0], texts))
    np.testing.assert_allclose(np.vstack(parallel), sequential, atol=1e-5)


def test_semantically_close_sentences_score_higher(minilm: LocalMiniLMEmbedder) -> None:
    pairs = [
        ("A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse."),
        ("The user prefers dark mode.", "She likes the dark theme in her editor.", "It rained."),
        ("Bob is allergic to peanuts.", "Bob cannot eat nuts.", "Bob bought a new car."),
        ("How do I reset my password?", "I forgot my login password", "Best pizza in Rome"),
    ]
    for anchor, close, far in pairs:
        vecs = minilm.embed([anchor, close, far])
        near, away = cos(vecs[0], vecs[1]), cos(vecs[0], vecs[2])
        assert near > away + 0.15, (anchor, near, away)
    # the hashing fallback shares no words between these two; MiniLM knows they are close
    syn = minilm.embed(["automobile", "car", "banana"])
    assert cos(syn[0], syn[1]) > cos(syn[0], syn[2])


def test_mean_pooling_matches_the_published_fp32_similarity(minilm: LocalMiniLMEmbedder) -> None:
    # sentence-transformers reports 0.7553 for this pair with all-MiniLM-L6-v2 (fp32, mean
    # pooling). int8 weights stay within 0.02 of it; CLS or max pooling land above 0.8.
    a, b = minilm.embed(["A man is eating food.", "A man is eating a piece of bread."])
    assert abs(cos(a, b) - 0.7553) < 0.02


def test_truncates_at_256_tokens_not_128(minilm: LocalMiniLMEmbedder) -> None:
    head = "apple " * 200
    # tokens 201+ are inside the 256 window: they must change the vector
    a, b = minilm.embed([head + "zebra giraffe", head + "quantum physics"])
    assert not np.allclose(a, b, atol=1e-4)
    # beyond 256 tokens nothing counts any more
    longer = "apple " * 300
    c, d = minilm.embed([longer + "zebra", longer + "quantum physics lecture"])
    np.testing.assert_allclose(c, d, atol=1e-6)


def test_loads_from_a_local_directory(tmp_path: Path, minilm: LocalMiniLMEmbedder) -> None:
    shutil.copy(minilm.files.onnx, tmp_path / "model.onnx")
    shutil.copy(minilm.files.tokenizer, tmp_path / "tokenizer.json")
    from_dir = LocalMiniLMEmbedder(tmp_path)
    assert from_dir.files.onnx == tmp_path / "model.onnx"
    assert from_dir.name == minilm.name  # same file, same space
    texts = ["same model, other place"]
    np.testing.assert_allclose(from_dir.embed(texts), minilm.embed(texts), atol=1e-6)


def test_env_variable_points_at_the_directory(
    tmp_path: Path, minilm: LocalMiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "onnx").mkdir()
    shutil.copy(minilm.files.onnx, tmp_path / "onnx" / "model.onnx")
    shutil.copy(minilm.files.tokenizer, tmp_path / "tokenizer.json")
    monkeypatch.setenv(ENV_MODEL_PATH, str(tmp_path))
    files = resolve_model_files(load_config().local_model_path)
    assert files.onnx == tmp_path / "onnx" / "model.onnx"
    assert files.tokenizer == tmp_path / "tokenizer.json"


def test_vocab_txt_gives_the_same_tokens_as_tokenizer_json(
    tmp_path: Path, minilm: LocalMiniLMEmbedder
) -> None:
    vocab = json.loads(minilm.files.tokenizer.read_text(encoding="utf-8"))["model"]["vocab"]
    words = sorted(vocab, key=lambda w: vocab[w])
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    shutil.copy(minilm.files.onnx, tmp_path / "model.onnx")
    from_vocab = LocalMiniLMEmbedder(tmp_path)
    assert from_vocab.files.tokenizer.name == "vocab.txt"
    texts = ["Tokenisation from a BERT vocab.txt, with CAPITALS and punctuation!"]
    np.testing.assert_allclose(from_vocab.embed(texts), minilm.embed(texts), atol=1e-5)


def test_packaged_files_are_found() -> None:
    files = packaged_model_files()
    assert files is not None
    assert files.onnx.name == "model.onnx" and files.tokenizer.name == "tokenizer.json"


def test_missing_directory_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="not a directory"):
        directory_model_files(tmp_path / "nope")


def test_directory_without_tokenizer_names_the_missing_file(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"\x00")
    with pytest.raises(EmbedderUnavailable, match=r"tokenizer\.json") as info:
        directory_model_files(tmp_path)
    assert "pip install --force-reinstall attestor-arango" in info.value.message
    assert local_available(tmp_path) is False


def test_unloadable_onnx_file_is_a_typed_error(tmp_path: Path) -> None:
    files = packaged_model_files()
    assert files is not None
    shutil.copy(files.tokenizer, tmp_path / "tokenizer.json")
    (tmp_path / "model.onnx").write_bytes(b"this is not an onnx graph")
    with pytest.raises(EmbedderUnavailable, match="onnxruntime cannot load"):
        LocalMiniLMEmbedder(tmp_path)
