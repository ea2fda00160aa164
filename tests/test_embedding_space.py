"""Issue 18 item 2: recall never scores query vectors against another embedder's vectors.

A tenant filled under one embedder and then opened with another runs text-only and says
why in ``errors``; the fix it names is ``reembed``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from interface_support import PYTHON, cli_env

from attestor_arango.config import Config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory


def _fill(path: Path) -> None:
    with AgentMemory(config=Config(path=str(path), embedder="hashing")) as mem:
        mem.add("Alice is the engineering manager", entity="alice", category="role")
        mem.add("Bob is allergic to peanuts", entity="bob", category="diet")


def test_recall_under_another_embedder_is_text_only_and_says_so(tmp_path: Path) -> None:
    _fill(tmp_path)
    with AgentMemory(config=Config(path=str(tmp_path)), embedder=HashingEmbedder(128)) as mem:
        response = mem.recall("Alice engineering manager")
    message = response.errors["embedding_space"]
    assert "hashing-v1-384" in message and "hashing-v1-128" in message
    assert "reembed" in message
    assert response.results, "the text lanes still answer"
    for result in response.results:
        assert "vector" not in result.breakdown.lanes
        assert result.breakdown.vector_rank is None


def test_same_dimension_other_model_is_refused_too(tmp_path: Path) -> None:
    _fill(tmp_path)
    with AgentMemory(config=Config(path=str(tmp_path), embedder="local")) as mem:
        assert mem.embedder.dimension == 384  # same width as hashing-v1-384: cosines would run
        response = mem.recall("who runs engineering?")
    assert "minilm-l6-v2-int8-onnx" in response.errors["embedding_space"]


def test_the_cli_recall_reports_the_mismatch(tmp_path: Path) -> None:
    _fill(tmp_path / "store")
    env = cli_env(tmp_path, ATTESTOR_PATH=str(tmp_path / "store"), ATTESTOR_EMBEDDER="local")
    done = subprocess.run(
        [PYTHON, "-m", "attestor_arango.interfaces.cli.main", "recall", "Alice", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert "reembed" in json.loads(done.stdout)["errors"]["embedding_space"]
