"""Session 27 attack: one ``add_turns`` call held every other tenant's writes for seconds.

``add_turns`` stores its turns in one transaction (a turn refused part-way stores none),
and its cap was a hard-coded 10,000 turns, undocumented and not configurable. Measured
(scratch turns_block.py, HashingEmbedder, load ~3.5 on 2 cores): 4,000 turns took 9.9 s, and
another tenant's single ``add`` begun meanwhile waited 9.5 s for it; 1,000 turns took 2.3 s.
The cap is now ``max_turns_per_call`` (config, ``ATTESTOR_MAX_TURNS_PER_CALL``; default
1,000): more turns in one call are a ``ValidationError`` naming the setting (422 on REST),
checked before anything is parsed or written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import AUTH, CTX, acme_ring, stored
from starlette.testclient import TestClient

from attestor_arango.config import Config, load_config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.memory import AgentMemory


def _turns(n: int) -> list[dict[str, str]]:
    return [{"speaker": "ann" if i % 2 else "bob", "text": f"turn {i}"} for i in range(n)]


def _memory(tmp_path: Path, **settings: int) -> AgentMemory:
    config = Config(path=str(tmp_path / "m.db"), **settings)
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64))
    mem.add("Ann likes green tea", context=CTX)
    return mem


def test_more_turns_than_the_configured_cap_are_refused_and_nothing_is_stored(
    tmp_path: Path,
) -> None:
    mem = _memory(tmp_path, max_turns_per_call=5)
    before = stored(mem)
    with pytest.raises(ValidationError, match="max_turns_per_call"):
        mem.add_turns(_turns(6), context=CTX)
    assert stored(mem) == before
    assert len(mem.add_turns(_turns(5), context=CTX)) == 5  # the cap itself is allowed
    mem.close()


def test_the_default_cap_is_a_thousand_turns(tmp_path: Path) -> None:
    assert Config().max_turns_per_call == 1_000
    mem = _memory(tmp_path)
    before = stored(mem)
    with pytest.raises(ValidationError, match="at most 1000 turns"):
        mem.add_turns(_turns(1_001), context=CTX)
    assert stored(mem) == before
    mem.close()


def test_the_cap_is_read_from_the_environment(tmp_path: Path) -> None:
    config = load_config(env={"ATTESTOR_MAX_TURNS_PER_CALL": "7"})
    assert config.max_turns_per_call == 7
    with pytest.raises(ValueError):
        Config(max_turns_per_call=0)


def test_rest_answers_422_for_too_many_turns_and_stores_nothing(tmp_path: Path) -> None:
    mem = _memory(tmp_path, max_turns_per_call=3)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    before = stored(mem)
    answer = client.post("/v1/turns", json={"turns": _turns(4)}, headers=AUTH)
    assert answer.status_code == 422, answer.text
    assert "max_turns_per_call" in answer.json()["message"]
    assert stored(mem) == before
    assert client.post("/v1/turns", json={"turns": _turns(3)}, headers=AUTH).status_code == 200
    mem.close()
