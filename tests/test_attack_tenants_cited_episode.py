"""A memory's evidence is an episode of its own scope: ``add`` refuses a
``source_episode_id`` of another tenant, of another namespace, or of no episode at all
(``NotFoundError``, 404 over REST) and stores nothing. Before, any id was accepted, so a
fact of tenant acme could cite tenant zeta's conversation round as its evidence.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import stored
from starlette.testclient import TestClient

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import NotFoundError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.memory import AgentMemory

A = AgentContext(agent_id="a", role="orchestrator", tenant="acme", namespace="alpha")
B = AgentContext(agent_id="a", role="orchestrator", tenant="acme", namespace="beta")
Z = AgentContext(agent_id="a", role="orchestrator", tenant="zeta", namespace="alpha")


def _mem(tmp_path: Path) -> tuple[AgentMemory, str, str]:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    theirs = mem.ingest_round({"user": "I live in Lisbon."}, context=Z).episode
    ours = mem.ingest_round({"user": "I live in Oslo."}, context=A).episode
    return mem, str(getattr(ours, "id", ours)), str(getattr(theirs, "id", theirs))


def test_add_cites_only_an_episode_of_its_scope(tmp_path: Path) -> None:
    mem, ours, theirs = _mem(tmp_path)
    before = stored(mem)
    for ctx, episode in ((A, theirs), (B, ours), (A, "no-such-episode")):
        with pytest.raises(NotFoundError, match="not found in this scope"):
            mem.add("Ann lives in Oslo", source_episode_id=episode, context=ctx)
        assert stored(mem) == before, (ctx.namespace, episode)
    cited = mem.add("Ann lives in Oslo", source_episode_id=ours, context=A)
    assert cited.provenance.source_episode_id == ours
    mem.close()


def test_rest_add_citing_another_tenants_episode_is_404(tmp_path: Path) -> None:
    mem, _, theirs = _mem(tmp_path)
    key = ApiKey(id="k", sha256=hash_key("k"), tenant="acme", roles=("orchestrator",),
                 agent_ids=("a",), namespaces=("alpha",))  # fmt: skip
    client = TestClient(create_app(mem, KeyRing([key])), raise_server_exceptions=False)
    before = stored(mem)
    r = client.post("/v1/memories", json={"content": "Ann lives in Oslo",
                    "source_episode_id": theirs}, headers={"x-api-key": "k"})  # fmt: skip
    assert r.status_code == 404 and r.json()["code"] == "not_found", r.text
    assert stored(mem) == before
    mem.close()
