"""Session 25 attack: ``X-Agent-Trail: *`` was taken as an agent's name.

``X-Agent-Id: *`` is refused ("'*' is not an agent id": in a key file ``*`` means any
agent), but the same ``*`` in ``X-Agent-Trail`` passed a wildcard key's check and was
stored as the memory's parent agent and as a hand-off in its trail, provenance naming no
agent at all. A trail entry of ``*`` is now refused the same way, and nothing is stored.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import seeded, stored
from starlette.testclient import TestClient

from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key

RING = KeyRing(
    [ApiKey(id="k", sha256=hash_key("secret"), tenant="acme", roles=("orchestrator",),
            agent_ids=("*",))]
)  # fmt: skip


@pytest.mark.parametrize("trail", ["*", "planner,*", " * ,planner"])
def test_a_wildcard_trail_entry_is_refused(tmp_path: Path, trail: str) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, RING), raise_server_exceptions=False)
    before = stored(mem)
    headers = {"Authorization": "Bearer secret", "X-Agent-Id": "bot", "X-Agent-Trail": trail}
    r = client.post("/v1/memories", json={"content": "Ann likes tea"}, headers=headers)
    assert r.status_code == 422, r.text
    assert "'*' is not an agent id" in r.json()["message"]
    assert stored(mem) == before


def test_named_trail_entries_still_pass_a_wildcard_key(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, RING), raise_server_exceptions=False)
    headers = {"Authorization": "Bearer secret", "X-Agent-Id": "bot", "X-Agent-Trail": "planner"}
    r = client.post("/v1/memories", json={"content": "Ann likes tea"}, headers=headers)
    assert r.status_code == 200, r.text
    assert r.json()["provenance"]["agent_trail"] == ["planner", "bot"]
