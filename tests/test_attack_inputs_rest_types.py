"""Adversarial finding: a REST body's JSON types were coerced, not checked.

Pydantic's lax mode read ``"limit": "5"`` and ``"limit": 5.0`` as 5, ``"confidence":
"0.5"`` as 0.5, ``"token_budget": "100"`` as 100 and ``"dry_run": "true"`` as True. A
client that sends the wrong JSON type has a bug, and a JSON API that guesses hides it
(``"false"`` is a non-empty string). A body is now read strictly: each refusal is a 422
``invalid_input`` whose message names the field, and nothing is stored. A query string
(GET) is text by nature and is still parsed (``?limit=5``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.interfaces.api.app import create_app

CASES: dict[str, tuple[str, str, dict[str, Any], str]] = {
    "list limit as text": ("POST", "/v1/memories/list", {"limit": "5"}, "limit"),
    "list limit as a float": ("POST", "/v1/memories/list", {"limit": 5.0}, "limit"),
    "list offset as text": ("POST", "/v1/memories/list", {"offset": "0"}, "offset"),
    "search limit as text": ("POST", "/v1/search", {"query": "tea", "limit": "3"}, "limit"),
    "add confidence as text": (
        "POST", "/v1/memories", {"content": "Ann likes mint", "confidence": "0.5"}, "confidence"
    ),
    "add content as a number": ("POST", "/v1/memories", {"content": 5}, "content"),
    "recall budget as text": (
        "POST", "/v1/recall", {"query": "tea", "token_budget": "100"}, "token_budget"
    ),
    "compact dry_run as text": (
        "POST", "/v1/governance/compact", {"older_than": "1d", "dry_run": "true"}, "dry_run"
    ),
    "compact dry_run as 0": (
        "POST", "/v1/governance/compact", {"older_than": "1d", "dry_run": 0}, "dry_run"
    ),
    "reflect store as text": ("POST", "/v1/reflect", {"store": "false"}, "store"),
    "tags of numbers": ("POST", "/v1/memories/list", {"tags": [1]}, "tags"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_a_body_of_the_wrong_json_type_is_refused_naming_the_field(
    tmp_path: Path, case: str
) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    method, path, body, field = CASES[case]
    before = stored(mem)
    answer = client.request(method, path, json=body, headers=AUTH)
    assert answer.status_code == 422, answer.text
    error = answer.json()
    assert error["code"] == "invalid_input"
    assert f"{field}:" in error["message"]
    assert stored(mem) == before
    mem.close()


def test_an_update_with_a_confidence_as_text_stores_no_new_version(tmp_path: Path) -> None:
    mem, ours, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    before = stored(mem)
    answer = client.patch(f"/v1/memories/{ours}", json={"confidence": "1"}, headers=AUTH)
    assert answer.status_code == 422, answer.text
    assert "confidence:" in answer.json()["message"]
    assert stored(mem) == before
    assert mem.get(ours, context=CTX).confidence == 1.0
    mem.close()


def test_right_types_and_query_strings_still_work(tmp_path: Path) -> None:
    mem, ours, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    listed = client.post("/v1/memories/list", json={"limit": 5, "offset": 0}, headers=AUTH)
    assert listed.status_code == 200 and [m["id"] for m in listed.json()] == [ours]
    added = client.post(
        "/v1/memories",
        json={"content": "Ann likes mint", "confidence": 1, "valid_from": 1_700_000_000},
        headers=AUTH,
    )  # an integer is a number; a time may be epoch seconds, as the library takes it
    assert added.status_code == 200, added.text
    assert added.json()["confidence"] == 1.0
    window = client.post(
        "/v1/memories/list",
        json={"time_window": ["2020-01-01T00:00:00Z", 2_000_000_000]},
        headers=AUTH,
    )
    assert window.status_code == 200, window.text
    dry = client.post("/v1/governance/compact", json={"older_than": "1d", "dry_run": True},
                      headers=AUTH)  # fmt: skip
    assert dry.status_code == 200, dry.text
    audit = client.get("/v1/audit", params={"limit": "2"}, headers=AUTH)  # text, parsed
    assert audit.status_code == 200 and len(audit.json()) == 2
    moment = str(mem.get(ours, context=CTX).t_created.timestamp())  # epoch seconds as text
    got = client.get(f"/v1/memories/{ours}", params={"as_of": moment}, headers=AUTH)
    assert got.status_code == 200 and got.json()["id"] == ours, got.text
    mem.close()
