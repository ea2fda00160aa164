"""Session 25 attack: agent and session names outside ASCII were garbled over HTTP.

HTTP hands header values over as bytes; Starlette decodes them as Latin-1, so an agent
host sending ``X-Agent-Id: José`` in UTF-8 (as HTTP clients and MCP hosts do) was read
as ``JosÃ©``. An agent listed as ``José`` in the key file could never act as itself
(403 "this key may not act as agent 'JosÃ©'"), and a session named ``sesión`` was stored
as ``sesiÃ³n`` on every memory written in it, a name no other surface would ever match.
The narrowing headers (agent, trail, session...) are now read as UTF-8, the way the key
file and every JSON body are; bytes that are not UTF-8 keep their Latin-1 reading.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from starlette.testclient import TestClient

from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.memory import AgentMemory

RING = KeyRing(
    [
        ApiKey(
            id="k",
            sha256=hash_key("secret"),
            tenant="acme",
            roles=("orchestrator",),
            agent_ids=("José", "田中", "bot"),
        )
    ]
)


def _client(tmp_path: Path) -> tuple[AgentMemory, TestClient]:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    return mem, TestClient(create_app(mem, RING), raise_server_exceptions=False)


def _post(client: TestClient, content: str, **headers: str) -> dict:
    raw = [(b"authorization", b"Bearer secret")]
    raw += [
        (name.replace("_", "-").encode(), value.encode("utf-8")) for name, value in headers.items()
    ]
    answer = client.post("/v1/memories", json={"content": content}, headers=raw)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_an_agent_named_outside_ascii_acts_as_itself(tmp_path: Path) -> None:
    mem, client = _client(tmp_path)

    made = _post(client, "Ann likes tea", x_agent_id="José")
    other = _post(client, "Ann likes coffee", x_agent_id="bot", x_agent_trail="田中")

    assert made["provenance"]["agent_id"] == "José"
    assert other["provenance"]["agent_trail"] == ["田中", "bot"]
    assert other["provenance"]["parent_agent_id"] == "田中"
    mem.close()


def test_a_session_named_outside_ascii_is_stored_as_sent(tmp_path: Path) -> None:
    mem, client = _client(tmp_path)

    made = _post(client, "Ann likes tea", x_agent_id="bot", x_session_id="sesión-1")

    assert made["provenance"]["session_id"] == "sesión-1"
    db = sqlite3.connect(tmp_path / "m.db")
    try:
        held = repr(db.execute("SELECT * FROM memories").fetchall())
    finally:
        db.close()
    assert "sesiÃ" not in held and "sesión-1" in held
    mem.close()


def test_header_bytes_that_are_not_utf8_keep_their_latin1_reading() -> None:
    """Starlette hands over b"caf\\xe9" (Latin-1, not UTF-8) as "caf\\xe9": kept as sent."""
    key = RING.authenticate("secret")
    headers = {"x-agent-id": "bot", "x-session-id": "caf\xe9"}

    assert RING.context(key, headers).session_id == "café"
    utf8 = {"x-agent-id": "José".encode().decode("latin-1")}
    assert RING.context(key, utf8).agent_id == "José"
