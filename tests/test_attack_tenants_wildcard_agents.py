"""A wildcard key (``agent_ids: ["*"]``) with ``max_writes_per_agent`` cannot write without
end by naming a fresh agent per request, and the ring's counters stay bounded.

Before: every invented ``X-Agent-Id`` got a fresh counter (so the key's writes had no
ceiling at all) and one more entry in ``KeyRing._usage`` forever (memory exhaustion by
a header). Now a key with a write limit acts as at most ``max_agents`` distinct agents;
the next new agent is refused 429 ``quota_exceeded`` and nothing is written for it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from attack_support import stored
from starlette.testclient import TestClient

from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import QuotaExceededError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import (
    DEFAULT_MAX_AGENTS,
    ApiKey,
    KeyRing,
    hash_key,
    load_keys,
)
from attestor_arango.interfaces.api.errors import AuthenticationError
from attestor_arango.memory import AgentMemory


def _wildcard(**extra: object) -> ApiKey:
    return ApiKey(id="w", sha256=hash_key("wild"), tenant="acme", roles=("executor",),
                  agent_ids=("*",), max_writes_per_agent=1, **extra)  # type: ignore[arg-type]  # fmt: skip


def test_invented_agents_cannot_multiply_a_wildcard_keys_writes(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    client = TestClient(create_app(mem, KeyRing([_wildcard(max_agents=3)])),
                        raise_server_exceptions=False)  # fmt: skip
    ok = 0
    for n in range(6):
        r = client.post("/v1/memories", json={"content": f"fact {n}"},
                        headers={"x-api-key": "wild", "x-agent-id": f"bot-{n}"})  # fmt: skip
        if r.status_code == 200:
            ok += 1
        else:
            assert r.status_code == 429, r.text
            assert r.json()["code"] == "quota_exceeded"
    assert ok == 3  # max_agents * max_writes_per_agent
    before = stored(mem, with_audit=False)
    # a known agent is still refused by its own limit, a new one by the agent cap
    for agent in ("bot-0", "bot-99"):
        r = client.post("/v1/memories", json={"content": "again"},
                        headers={"x-api-key": "wild", "x-agent-id": agent})  # fmt: skip
        assert r.status_code == 429, r.text
    assert stored(mem, with_audit=False) == before
    mem.close()


def test_the_counter_table_stays_bounded() -> None:
    key = _wildcard()
    ring = KeyRing([key])
    refused = 0
    for n in range(DEFAULT_MAX_AGENTS + 50):
        try:
            ring.context(key, {"x-agent-id": f"a{n}"})
        except QuotaExceededError:
            refused += 1
    assert refused == 50
    assert sum(len(agents) for agents in ring._usage.values()) == DEFAULT_MAX_AGENTS
    # the agents it already counts keep working (and keep their counters)
    assert (
        ring.context(key, {"x-agent-id": "a0"}).usage
        is ring.context(key, {"x-agent-id": "a0"}).usage
    )


def test_a_key_without_a_write_limit_keeps_no_counters() -> None:
    key = ApiKey(id="u", sha256=hash_key("u"), tenant="acme", roles=("executor",),
                 agent_ids=("*",))  # fmt: skip
    ring = KeyRing([key])
    for n in range(DEFAULT_MAX_AGENTS + 10):
        ring.context(key, {"x-agent-id": f"a{n}"})
    assert ring._usage == {}


def test_a_removed_keys_counters_go_with_it(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    entry = {"id": "w", "sha256": hash_key("wild"), "tenant": "acme", "roles": ["executor"],
             "agent_ids": ["*"], "max_writes_per_agent": 1, "max_agents": 2}  # fmt: skip
    path.write_text(json.dumps([entry]))
    ring = load_keys(path)
    key = ring.authenticate("wild")
    ring.context(key, {"x-agent-id": "a"})
    ring.context(key, {"x-agent-id": "b"})
    with pytest.raises(QuotaExceededError):
        ring.context(key, {"x-agent-id": "c"})
    path.write_text("[]  ")
    with pytest.raises(AuthenticationError):
        ring.authenticate("wild")
    assert ring._usage == {}
