"""Session 25 attack: a key granting any agent could not open the Evidence Board.

A key whose ``agent_ids`` is ``["*"]`` names no agent of its own, so a request must say
which agent acts (``X-Agent-Id``; ``*`` itself is refused). A browser following a board
link sends no such header, so every board page answered 422 "send an agent id in
x-agent-id", an instruction a browser user cannot follow: the board was closed to such
keys. The board now reads as the agent ``evidence-board`` when the key names any agent
and the request names none (it only reads: the context is read-only); an agent named in
``X-Agent-Id`` still acts as itself, and a key naming its agents is unchanged.
"""

from __future__ import annotations

import base64
from pathlib import Path

from attack_support import CTX, seeded
from starlette.testclient import TestClient

from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key

BASIC = {"Authorization": "Basic " + base64.b64encode(b"anyone:secret").decode()}
PAGES = ("/ui/memories", "/ui/timeline?entity=ann", "/ui/recall?q=tea", "/ui/audit")


def _client(tmp_path: Path, agents: tuple[str, ...]) -> TestClient:
    mem, _, _ = seeded(tmp_path / "m.db")
    key = ApiKey(id="k", sha256=hash_key("secret"), tenant="acme",
                 roles=("orchestrator", "reviewer"), agent_ids=agents)  # fmt: skip
    return TestClient(create_app(mem, KeyRing([key])), raise_server_exceptions=False)


def test_a_wildcard_key_opens_every_board_page(tmp_path: Path) -> None:
    client = _client(tmp_path, ("*",))
    for page in PAGES:
        r = client.get(page, headers=BASIC)
        assert r.status_code == 200, (page, r.text[-600:])
    assert "Ann likes green tea" in client.get("/ui/memories", headers=BASIC).text


def test_the_board_still_acts_as_a_named_agent(tmp_path: Path) -> None:
    client = _client(tmp_path, ("*",))
    r = client.get("/ui/memories", headers={**BASIC, "X-Agent-Id": "*"})
    assert r.status_code == 422
    named = _client(tmp_path / "named", ("reviewer-1",))
    assert named.get("/ui/memories", headers=BASIC).status_code == 200
    r = named.get("/ui/memories", headers={**BASIC, "X-Agent-Id": CTX.agent_id})
    assert r.status_code == 403
