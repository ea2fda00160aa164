"""Session 25 attack: refusals of agent and session names said the wrong thing.

Every bad agent id, trail entry or session id got one text, "must be at most 128
printable characters; use a short id": for a two-character id holding a control
character that reads as if it were too long, and a long name sent in ``X-Agent-Trail``
was refused as a ``parent_agent_id``, a field the caller never sent. The refusal now says
which rule the name broke (its length, or the character it may not hold) and names the
field the caller sent; nothing is stored either way.
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
CASES = {
    "agent id with a control character": ({"X-Agent-Id": "a\x01b"}, "agent_id", "U+0001"),
    "long agent id": ({"X-Agent-Id": "a" * 200}, "agent_id", "200 characters"),
    "session with a control character": ({"X-Session-Id": "s\x7f"}, "session_id", "U+007F"),
    "long trail entry": ({"X-Agent-Trail": "b" * 200}, "agent_trail entry", "200 characters"),
}


@pytest.mark.parametrize(("headers", "field", "says"), CASES.values(), ids=CASES.keys())
def test_the_refusal_names_the_rule_and_the_field_sent(
    tmp_path: Path, headers: dict, field: str, says: str
) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, RING), raise_server_exceptions=False)
    before = stored(mem)
    sent = {"X-Agent-Id": "bot", **headers}
    raw = [(b"authorization", b"Bearer secret")]
    raw += [(k.lower().encode(), v.encode()) for k, v in sent.items()]
    r = client.post("/v1/memories", json={"content": "Ann likes tea"}, headers=raw)
    assert r.status_code == 422, r.text
    message = r.json()["message"]
    assert message.startswith(field + " "), message
    assert says in message, message
    assert stored(mem) == before
