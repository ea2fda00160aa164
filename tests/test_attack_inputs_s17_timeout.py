"""Adversarial finding: ``add_turns`` with 5000 turns over REST hit the request timeout
(504) and then committed: the worker thread went on after the client was told the call
failed, so a retry stored every turn twice. Now the timeout raises the call's cancel flag
(``cancel.py``), the store checks it right before every commit (session 18; the writer
also stops early at the next turn), and the service waits a short grace for the call to
stop: the answer is a 504
``cancelled`` ("nothing was stored") and the store is byte for byte as before.

The turns here are slowed by an embedder that sleeps, so the call outlasts a 0.2 s
timeout on any machine (no timing is asserted, only what was stored).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from attack_support import AUTH, CTX, acme_ring, stored
from starlette.testclient import TestClient

from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.api.app import ApiSettings, create_app
from attestor_arango.memory import AgentMemory


class SlowEmbedder(HashingEmbedder):
    """Sleeps per text once ``slow`` is set (the seed rows are written fast)."""

    slow = False

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.slow:
            time.sleep(0.01 * len(texts))
        return super().embed(texts)


def test_turns_that_outlast_the_timeout_store_nothing(tmp_path: Path) -> None:
    embedder = SlowEmbedder(64)
    mem = AgentMemory(tmp_path / "m.db", embedder=embedder)
    mem.add("Ann likes green tea", entity="ann", category="drink", context=CTX)
    embedder.slow = True
    settings = ApiSettings(request_timeout_s=0.2, cancel_grace_s=30.0)
    client = TestClient(create_app(mem, acme_ring(), settings), raise_server_exceptions=False)
    before = stored(mem)
    turns = [{"speaker": "user", "text": f"turn {i} about tea"} for i in range(300)]
    answer = client.post("/v1/turns", json={"turns": turns}, headers=AUTH)
    assert answer.status_code == 504, answer.text
    error = answer.json()
    assert error["code"] == "cancelled"
    assert "nothing" in error["message"] and "fewer turns" in error["message"]
    assert stored(mem) == before
    assert len(mem.list(limit=100, context=CTX)) == 1
    mem.close()


def test_a_call_that_finishes_in_time_is_unchanged(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    turns = [{"speaker": "user", "text": f"turn {i} about tea"} for i in range(20)]
    answer = client.post("/v1/turns", json={"turns": turns}, headers=AUTH)
    assert answer.status_code == 200, answer.text
    assert len(answer.json()) == 20
    assert len(mem.list(limit=100, context=CTX)) == 20
    mem.close()
