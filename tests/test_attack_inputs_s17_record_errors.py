"""Adversarial finding: a malformed turn, round, API key entry, retention policy or
export row was refused with pydantic's whole text: every field's input echoed back (a
64,000-character turn, a key's hash) and a documentation link per problem
("For further information visit https://errors.pydantic.dev/..."), which tells a caller
nothing. Now the message names each problem as ``field: what is wrong`` and echoes no
input; nothing is stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.errors import ValidationError
from attestor_arango.governance.retention import load_policies
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import parse_keys

SECRETISH = "S3CRET-looking-input-" + "x" * 300


def _clean(message: str) -> None:
    assert "errors.pydantic.dev" not in message
    assert "input_value" not in message and SECRETISH not in message
    assert len(message) < 1000


def test_a_malformed_turn_over_rest_names_the_field_not_the_input(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    before = stored(mem)
    body = {"turns": [{"speaker": "user", "content": SECRETISH}]}
    answer = client.post("/v1/turns", json=body, headers=AUTH)
    assert answer.status_code == 422, answer.text
    message = answer.json()["message"]
    _clean(message)
    assert "text: Field required" in message and "content: Extra inputs" in message
    assert stored(mem) == before
    mem.close()


def test_a_malformed_round_names_the_field(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    with pytest.raises(ValidationError) as info:
        mem.ingest_round({"user": "hi", "bogus": SECRETISH}, context=CTX)
    _clean(info.value.message)
    assert "bogus" in info.value.message
    assert stored(mem) == before
    mem.close()


def test_a_bad_key_entry_does_not_echo_the_entry() -> None:
    with pytest.raises(ValidationError) as info:
        parse_keys([{"id": "k", "sha256": SECRETISH, "tenant": 5}], source="keys.yaml")
    _clean(info.value.message)
    assert "invalid API key entry" in info.value.message


def test_a_bad_retention_policy_names_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        load_policies([{"name": "p", "bogus": SECRETISH}])
    _clean(info.value.message)
