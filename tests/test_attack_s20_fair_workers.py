"""Session 20 attack battery: one tenant's calls held every REST worker.

The service runs at most ``ApiSettings.workers`` memory calls at once, in one queue for
all tenants. Tenant A sending as many slow calls as there are workers (recalls of a long
query, a slow embedder, a large export) took them all, and tenant B's recall waited in
that queue until its request timed out (504): what B was answered depended on what A
did. Now one tenant holds at most ``tenant_workers`` of them (half by default), so the
rest are free for the other tenants.

A's recalls are held inside the embedder (a gate the test opens); nothing is timed: the
test asserts only what B is answered while they are held.
"""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import httpx
import numpy as np
import pytest
from interface_support import role_key, running_server

from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import ApiSettings
from attestor_arango.interfaces.api.auth import KeyRing
from attestor_arango.interfaces.api.fairness import TenantSlots
from attestor_arango.memory import AgentMemory

HELD = "held question"


class GatedEmbedder(HashingEmbedder):
    """Holds every embedding of ``HELD`` until ``gate`` opens; counts the calls held."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.gate = threading.Event()
        self.held = threading.Semaphore(0)

    def embed(self, texts: list[str]) -> np.ndarray:
        if HELD in texts:
            self.held.release()
            self.gate.wait(120)
        return super().embed(texts)


def _headers(plain: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {plain}", "X-Agent-Id": "orchestrator-1"}


def test_a_tenant_holding_its_workers_leaves_others_served(tmp_path: Path) -> None:
    embedder = GatedEmbedder(64)
    mem = AgentMemory(tmp_path / "m.db", embedder=embedder)
    plain_a, key_a = role_key("orchestrator", "acme")
    plain_b, key_b = role_key("orchestrator", "beta")
    settings = ApiSettings(workers=2, request_timeout_s=15.0, cancel_grace_s=0.5)
    answers: list[int] = []
    with running_server(mem, KeyRing([key_a, key_b]), settings) as url:
        added = httpx.post(
            f"{url}/v1/memories", json={"content": "Bea likes rye"}, headers=_headers(plain_b)
        )
        assert added.status_code == 200, added.text

        def held_recall() -> None:
            answer = httpx.post(
                f"{url}/v1/recall", json={"query": HELD}, headers=_headers(plain_a), timeout=60
            )
            answers.append(answer.status_code)

        flood = [threading.Thread(target=held_recall) for _ in range(4)]
        try:
            for thread in flood:
                thread.start()
            assert embedder.held.acquire(timeout=60)  # A's first recall holds a worker
            recall = httpx.post(
                f"{url}/v1/recall", json={"query": "rye"}, headers=_headers(plain_b), timeout=60
            )
            assert recall.status_code == 200, recall.text
            assert [r["memory"]["content"] for r in recall.json()["results"]] == ["Bea likes rye"]
        finally:
            embedder.gate.set()
            for thread in flood:
                thread.join(60)
    mem.close()
    assert sorted(answers) == [200] * 4  # A's own calls are served too, one after another


@pytest.mark.parametrize("workers,expected", [(1, 1), (2, 1), (8, 4), (9, 4)])
def test_each_tenant_may_hold_half_the_workers_by_default(workers: int, expected: int) -> None:
    assert ApiSettings(workers=workers).per_tenant() == expected
    assert ApiSettings(workers=workers, tenant_workers=workers).per_tenant() == workers


def test_a_tenants_slots_go_with_its_last_call() -> None:
    async def main() -> None:
        slots = TenantSlots(1)
        async with slots.hold("acme"), slots.hold("beta"):
            assert slots.tenants() == 2
        assert slots.tenants() == 0  # a tenant named once keeps nothing

    anyio.run(main)


def test_a_tenant_share_of_no_worker_is_refused() -> None:
    with pytest.raises(ValidationError, match="tenant_workers"):
        ApiSettings(tenant_workers=0)
