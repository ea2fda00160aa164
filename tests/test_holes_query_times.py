"""A time given as epoch seconds means the same on every surface: the library, a JSON body,
the CLI and a GET route's query string (where every value arrives as text).

Found by the session 14 red team: ``MemoryClient.get(id, as_of=<epoch seconds>)`` (and
``GET /v1/memories/{id}?as_of=1767225610``) answered 422 "not an ISO-8601 timestamp",
while ``AgentMemory.get`` with the same number replayed the memory as it was then.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from interface_support import keyring, running_server

from attestor_arango.clock import ManualClock, to_us
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.ids import SeededIdSource
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory

ORCH = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="acme")


def test_epoch_seconds_replay_the_same_over_a_get_route(tmp_path: Path) -> None:
    clock = ManualClock()
    mem = AgentMemory(
        tmp_path / "memory.db", embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(4)
    )
    first = mem.add("Alice lives in Paris", entity="alice", category="city", context=ORCH)
    clock.advance(seconds=10)
    mem.add("Alice lives in Lyon", entity="alice", category="city", context=ORCH)
    clock.advance(seconds=10)
    whole = to_us(first.t_created) // 1_000_000 + 1  # a second after it was written
    moments: list[int | float] = [whole, whole + 0.5]
    local = [mem.get(first.id, as_of=at, context=ORCH) for at in moments]
    ring, plain = keyring()
    with (
        running_server(mem, ring) as url,
        MemoryClient(url, plain["acme-orchestrator"], context=ORCH) as client,
        httpx.Client(base_url=url, headers={"x-api-key": plain["acme-orchestrator"]}) as raw,
    ):
        remote = [client.get(first.id, as_of=at) for at in moments]
        text = raw.get(f"/v1/memories/{first.id}", params={"as_of": f" {whole} "})
        window = raw.get(
            f"/v1/memories/{first.id}",
            params={"time_window": [str(whole - 100), str(whole + 100)]},
        )
        with pytest.raises(ValidationError):
            client.get(first.id, as_of="yesterday")  # other text is still read as ISO-8601
    mem.close()
    assert [m.status.value for m in local] == ["active", "active"]
    assert [m.model_dump() for m in remote] == [m.model_dump() for m in local]
    assert text.status_code == 200 and text.json()["status"] == "active", text.text
    assert window.status_code == 200, window.text
