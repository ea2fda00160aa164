"""``ingest_round`` follows the memory's configuration: an ``llm`` setting changed after
the first round (in place, or a new value) is used by the next round, and a backend set
explicitly (``mem.ingest_backends``) still wins over the configuration.

The LLM here is an Ollama address where nothing listens (port 9 on this host): the
round then falls back to the rules with a warning that names the address, which tells
which backend ran without any network beyond the loopback."""

from __future__ import annotations

from pathlib import Path

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.ingest.pipeline import Backends
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="a", role="orchestrator", tenant="t")
NOWHERE = {"provider": "ollama", "model": "m", "base_url": "http://127.0.0.1:9", "retries": 1}


def _memory(tmp_path: Path, llm: dict[str, object]) -> AgentMemory:
    config = Config(path=str(tmp_path / "m.db"), llm=llm)
    return AgentMemory(
        config=config, embedder=HashingEmbedder(64), clock=ManualClock(), ids=SeededIdSource(5)
    )


def _asked_the_llm(mem: AgentMemory, text: str) -> bool:
    result = mem.ingest_round({"user": text, "assistant": "Noted."}, context=CTX)
    return any("127.0.0.1:9" in w for w in result.warnings)


def test_a_configured_llm_removed_later_is_no_longer_asked(tmp_path: Path) -> None:
    mem = _memory(tmp_path, dict(NOWHERE))
    assert _asked_the_llm(mem, "I live in Paris")
    mem.config.llm = {}
    assert not _asked_the_llm(mem, "I live in Lyon")


def test_an_llm_configured_later_is_asked(tmp_path: Path) -> None:
    mem = _memory(tmp_path, {})
    assert not _asked_the_llm(mem, "I live in Paris")
    mem.config.llm = dict(NOWHERE)
    assert _asked_the_llm(mem, "I live in Lyon")


def test_a_setting_changed_in_place_is_followed_and_unchanged_ones_reuse_the_backend(
    tmp_path: Path,
) -> None:
    mem = _memory(tmp_path, dict(NOWHERE))
    assert _asked_the_llm(mem, "I live in Paris")
    built = mem._configured.of(mem.config)
    assert mem._configured.of(mem.config) is built  # same settings: the same provider
    mem.config.llm["provider"] = "none"
    assert not _asked_the_llm(mem, "I live in Lyon")


def test_backends_set_explicitly_win_over_the_config(tmp_path: Path) -> None:
    mem = _memory(tmp_path, dict(NOWHERE))
    mem.ingest_backends = Backends.rules()
    assert not _asked_the_llm(mem, "I live in Paris")
    mem.ingest_backends = None
    assert _asked_the_llm(mem, "I live in Lyon")
