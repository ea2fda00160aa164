"""Adversarial finding: a memory tagged as a session's turn broke that session's turns.

``add_turns`` links each turn to the session's latest stored turn, found by the turn and
session tags and read from its ``metadata["turn"]["index"]``. Any writer of the tenant
can ``add`` a memory with those tags (they are plain tags) and any metadata: every later
``add_turns`` of the session then raised a bare KeyError, TypeError or ValueError (a 500
over REST), so one stray or hostile record stopped a conversation from being stored.
A record whose turn metadata is not a turn's (no index, not a whole number, a mapping
that is not one) is now not taken for the session's last turn: the turns are stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attack_support import AUTH, acme_ring, seeded
from starlette.testclient import TestClient

from attestor_arango import AgentContext
from attestor_arango.ingest.conversation import session_tag
from attestor_arango.interfaces.api import spec
from attestor_arango.interfaces.api.app import create_app

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="inbox",
                   session_id="s")  # fmt: skip
FORGED: list[dict[str, Any]] = [
    {},
    {"turn": "x"},
    {"turn": []},
    {"turn": {"index": "x"}},
    {"turn": {"index": None}},
    {"turn": {"index": [1]}},
    {"turn": {"index": True}},
    {"turn": {"index": -3}},
    {"turn": {"index": 1e300}},
    {"turn": {"index": 2**63 - 1}},
    {"turn": {"text": 5, "speaker": [1]}},
]


@pytest.mark.parametrize("metadata", FORGED, ids=[repr(m) for m in FORGED])
def test_a_record_tagged_as_a_turn_does_not_stop_the_sessions_turns(
    tmp_path: Path, metadata: dict[str, Any]
) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    tags = ["turn", "verbatim", session_tag("s")]
    mem.add("Ann said hello", entity="ann", tags=tags, metadata=metadata, context=CTX)
    first, second = mem.add_turns(
        [{"speaker": "bob", "text": "hi there"}, {"speaker": "ann", "text": "hello Bob"}],
        context=CTX,
    )
    assert first.metadata["turn"]["index"] == 0 and first.metadata["turn"]["replies_to"] is None
    assert second.metadata["turn"]["index"] == 1
    assert second.metadata["turn"]["replies_to"] == first.id
    mem.close()


def test_over_rest_the_turns_are_stored_not_a_500(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    headers = {**AUTH, spec.H_SESSION: "s"}
    forged = {"content": "Ann said hello", "tags": ["turn", session_tag("s")],
              "metadata": {"turn": "x"}}  # fmt: skip
    assert client.post("/v1/memories", json=forged, headers=headers).status_code == 200
    turns = {"turns": [{"speaker": "bob", "text": "hi", "session_id": "s"}]}
    answer = client.post("/v1/turns", json=turns, headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.json()[0]["metadata"]["turn"]["index"] == 0
    mem.close()
