"""An update that changes nothing writes nothing, on every interface.

Before, ``update`` with the memory's own content (or its own entity, tags, confidence...)
closed the current version, wrote an identical new one and appended an audit entry:
version churn, a write counted against the agent's and the tenant's quotas, and a
"superseded" row that never differed. Now, as a repeated ``add`` returns the memory it
repeats, the current version is returned and the stored bytes (audit chain included) are
the same before and after. A real change still writes a new version.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from attack_support import stored
from starlette.testclient import TestClient
from test_cli_commands import ok_json

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ConflictError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="o", role="orchestrator", tenant="acme", namespace="inbox")


def _seeded(tmp_path: Path) -> tuple[AgentMemory, str]:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    fact = mem.add("Ann likes green tea", entity="ann", category="drink", tags=["pref"],
                   confidence=0.8, metadata={"src": "chat"}, context=CTX)  # fmt: skip
    return mem, fact.id


def test_python_api_same_fields_write_nothing(tmp_path: Path) -> None:
    mem, fact = _seeded(tmp_path)
    capped = replace(CTX, max_writes_per_agent=0)  # a no-op is not a write
    before = stored(mem)
    for same in (
        {},
        {"content": "Ann likes green tea"},
        {"entity": "ann", "category": "drink", "tags": ["pref"], "confidence": 0.8},
        {"metadata": {"src": "chat"}},
    ):
        got = mem.update(fact, **same, context=capped)  # type: ignore[arg-type]
        assert got.id == fact and got.is_active, same
        assert stored(mem) == before, same
    assert mem.stats(context=CTX).total == 1
    new = mem.update(fact, content="Ann likes mint tea", context=CTX)
    assert new.id != fact and new.supersedes == fact
    mem.close()


def test_rest_patch_with_no_change_writes_nothing(tmp_path: Path) -> None:
    mem, fact = _seeded(tmp_path)
    key = ApiKey(id="k", sha256=hash_key("k"), tenant="acme", roles=("orchestrator",),
                 agent_ids=("o",))  # fmt: skip
    client = TestClient(create_app(mem, KeyRing([key])), raise_server_exceptions=False)
    before = stored(mem)
    r = client.patch(f"/v1/memories/{fact}", json={"content": "Ann likes green tea"},
                     headers={"x-api-key": "k"})  # fmt: skip
    assert r.status_code == 200, r.text
    assert r.json()["id"] == fact and r.json()["status"] == "active"
    assert stored(mem) == before
    mem.close()


def test_cli_update_with_no_change_writes_nothing(tmp_path: Path) -> None:
    first = ok_json(tmp_path, "add", "Ann likes green tea", "--entity", "ann")
    mem = AgentMemory(tmp_path / "memory.db", embedder=HashingEmbedder(64))
    before = stored(mem)
    mem.close()
    got = ok_json(tmp_path, "update", first["id"], "--content", "Ann likes green tea")
    assert got["id"] == first["id"]
    mem = AgentMemory(tmp_path / "memory.db", embedder=HashingEmbedder(64))
    assert stored(mem) == before
    mem.close()


def test_a_no_op_update_never_hands_back_a_version_another_writer_closed(
    tmp_path: Path,
) -> None:
    """Two servers on one store, the second's clock a second ahead: it supersedes the fact,
    then the first is asked for a no-op update of it. The first used to read the row as
    of its own "now", before the close, so the closed version came back as current (and
    active); the row is now read as stored, inside the transaction: a conflict naming the
    current version."""
    first_clock, second_clock = ManualClock(), ManualClock()
    first = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=first_clock)
    second = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=second_clock)
    fact = first.add("Ann likes green tea", entity="ann", category="drink", context=CTX).id
    second_clock.advance(seconds=1)
    newer = second.update(fact, content="Ann likes mint tea", context=CTX)
    before = stored(first)
    with pytest.raises(ConflictError, match=newer.id):
        first.update(fact, content="Ann likes green tea", context=CTX)
    assert stored(first) == before
    assert [m.id for m in second.list(context=CTX)] == [newer.id]
    first.close()
    second.close()
