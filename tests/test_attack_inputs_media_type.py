"""Adversarial finding: a keyed REST server read any body as JSON, whatever it was declared.

``Content-Type: text/plain`` (what an HTML form or a cross-site ``fetch`` may send without
a preflight) and ``application/x-www-form-urlencoded`` (what ``curl -d`` sends) were parsed
as JSON and acted on: a body that was never declared JSON stored a memory. Only the
no-key (loopback) server refused them. Every server now answers such a body with 415
``unsupported_media_type`` and stores nothing; a body without a Content-Type, or with
``application/json`` and its parameters, is read as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import AUTH, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.interfaces.api.app import create_app

BODY = b'{"content": "Ann likes mint"}'


@pytest.mark.parametrize(
    "declared",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
     "application/xml", "text/json"],
)  # fmt: skip
def test_a_body_declared_as_something_else_than_json_is_refused(
    tmp_path: Path, declared: str
) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    before = stored(mem)
    answer = client.post("/v1/memories", content=BODY, headers={**AUTH, "content-type": declared})
    assert answer.status_code == 415, answer.text
    error = answer.json()
    assert error["code"] == "unsupported_media_type" and "application/json" in error["message"]
    assert stored(mem) == before
    mem.close()


@pytest.mark.parametrize("declared", [None, "application/json", "Application/JSON; charset=utf-8"])
def test_a_json_body_or_an_undeclared_one_is_read(tmp_path: Path, declared: str | None) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    headers = dict(AUTH) if declared is None else {**AUTH, "content-type": declared}
    answer = client.post("/v1/memories", content=BODY, headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.json()["content"] == "Ann likes mint"
    mem.close()
