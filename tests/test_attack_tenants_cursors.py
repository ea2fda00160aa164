"""A ``list_page`` cursor is its caller's: replayed by another tenant, or in another
namespace of the same tenant, it is refused (422 ``invalid_input`` over REST) as a foreign
cursor, as the docstring always promised. Before, it was accepted and paged the replayer's own rows
from the first caller's offset and moment (pinned to a time the replayer never chose).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.memory import AgentMemory

A = AgentContext(agent_id="a", role="orchestrator", tenant="acme", namespace="alpha")
B = AgentContext(agent_id="a", role="orchestrator", tenant="acme", namespace="beta")
Z = AgentContext(agent_id="a", role="orchestrator", tenant="zeta", namespace="alpha")


def _mem(tmp_path: Path) -> AgentMemory:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    for n in range(4):
        for ctx in (A, B, Z):
            mem.add(f"fact {n} of {ctx.tenant}/{ctx.namespace}", context=ctx)
    return mem


def test_a_cursor_replayed_in_another_scope_is_refused(tmp_path: Path) -> None:
    mem = _mem(tmp_path)
    first = mem.list_page(limit=2, context=A)
    assert first.next_cursor is not None
    for other in (B, Z):
        with pytest.raises(ValidationError, match="another tenant or namespace"):
            mem.list_page(limit=2, cursor=first.next_cursor, context=other)
    # the owner still pages on
    second = mem.list_page(limit=2, cursor=first.next_cursor, context=A)
    assert [m.content for m in second.memories] == ["fact 2 of acme/alpha", "fact 3 of acme/alpha"]
    mem.close()


def test_rest_refuses_a_cursor_of_another_keys_tenant(tmp_path: Path) -> None:
    mem = _mem(tmp_path)
    keys = [ApiKey(id=t, sha256=hash_key(t), tenant=t, roles=("orchestrator",),
                   agent_ids=("a",), namespaces=("alpha",)) for t in ("acme", "zeta")]  # fmt: skip
    client = TestClient(create_app(mem, KeyRing(keys)), raise_server_exceptions=False)
    r = client.post("/v1/memories/page", json={"limit": 2}, headers={"x-api-key": "acme"})
    assert r.status_code == 200, r.text
    cursor = r.json()["next_cursor"]
    r = client.post("/v1/memories/page", json={"limit": 2, "cursor": cursor},
                    headers={"x-api-key": "zeta"})  # fmt: skip
    assert r.status_code == 422 and r.json()["code"] == "invalid_input", r.text
    mem.close()
