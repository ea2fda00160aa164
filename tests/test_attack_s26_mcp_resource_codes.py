"""Adversarial finding (session 26): an MCP resource read the caller got wrong was answered
as a server failure. ``resources/read`` of ``memory://memories/<an id that does not
exist>``, or of the timeline of a name with a control character or over 256 characters,
came back as JSON-RPC -32603 "internal error" around the typed error's JSON, while the
same mistake in a prompt is -32602 (invalid params) and an unknown resource URI is -32602
too: a client that retries or reports server faults on -32603 took its own typo for an
outage.

A typed error a caller caused (HTTP status below 500) is now -32602 in a resource as in
a prompt, its message still the JSON ``{code, message, details}``; nothing is stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
from attack_support import AUTH, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.interfaces.mcp_http import create_mcp_app

HTTP_HEADERS = {
    **AUTH,
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-06-18",
}
CASES = [
    ("memory://memories/no-such-memory", "not_found"),
    ("memory://entities/ann%01/timeline", "invalid_input"),
    ("memory://entities/" + "x" * 300 + "/timeline", "invalid_input"),
]


def _read(client: TestClient, n: int, uri: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": n, "method": "resources/read", "params": {"uri": uri}}
    answer = client.post("/mcp", json=body, headers=HTTP_HEADERS)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_a_resource_read_the_caller_got_wrong_is_invalid_params(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    with TestClient(create_mcp_app(mem, acme_ring()), base_url="http://127.0.0.1:8000") as client:
        for n, (uri, code) in enumerate(CASES):
            error = _read(client, n, uri).get("error")
            assert error is not None, uri
            assert error["code"] == types.INVALID_PARAMS, (uri, error)
            assert json.loads(error["message"])["code"] == code, (uri, error)
        listing = _read(client, 9, "memory://memories")
        assert "result" in listing, listing
    assert stored(mem) == before
    mem.close()
