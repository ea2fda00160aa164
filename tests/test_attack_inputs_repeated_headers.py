"""Adversarial finding: a header that picks who the caller acts as was read as its first.

``X-Read-Only: false`` followed by ``X-Read-Only: true`` wrote (we read the first; a
proxy or log reader in front of us may read the last), and two ``X-Namespace`` headers
acted in the first while the Evidence Board, which copies the headers into a dict, read
the last. As with a JSON key given twice, which one a request means was left to the
reader. A narrowing header (tenant, role, agent, namespace, session, read-only, trail,
budget) sent twice is now refused with a 422 naming it, over REST, MCP over HTTP and the
board, and nothing is stored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from attack_support import acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.mcp_http import create_mcp_app

KEY = ("authorization", "Bearer secret")
TWICE = {
    "x-read-only": ("false", "true"),
    "x-namespace": ("inbox", "inbox"),
    "x-tenant": ("acme", "beta"),
    "x-agent-id": ("orch", "orch"),
    "x-token-budget": ("100", "5"),
}


@pytest.mark.parametrize("name", list(TWICE))
def test_rest_refuses_a_narrowing_header_sent_twice(tmp_path: Path, name: str) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    before = stored(mem)
    headers = [KEY, *((name, value) for value in TWICE[name])]
    answer = client.post("/v1/memories", json={"content": "Ann likes gin"}, headers=headers)
    assert answer.status_code == 422, answer.text
    assert answer.json()["message"] == f"the header {name} is given 2 times; send it once"
    assert stored(mem) == before
    once = client.post(
        "/v1/memories", json={"content": "Ann likes gin"}, headers=[KEY, (name, TWICE[name][0])]
    )
    assert once.status_code in (200, 403), once.text  # beta's tenant: refused by the key
    mem.close()


def test_mcp_over_http_refuses_a_read_only_switch_sent_twice(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    arguments = {"content": "Ann likes gin"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "memory_add", "arguments": arguments}}  # fmt: skip
    headers = [
        KEY,
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", "2025-06-18"),
        ("x-read-only", "false"),
        ("x-read-only", "true"),
    ]
    before = stored(mem)
    with TestClient(create_mcp_app(mem, acme_ring()), base_url="http://127.0.0.1:8000") as client:
        answer = client.post("/mcp", content=json.dumps(call), headers=headers)
        assert answer.status_code == 422, answer.text
        assert "x-read-only is given 2 times" in answer.json()["message"]
    assert stored(mem) == before
    mem.close()


def test_the_board_refuses_a_namespace_sent_twice(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    headers = [KEY, ("x-namespace", "inbox"), ("x-namespace", "other")]
    answer = client.get("/ui/memories", headers=headers)
    assert answer.status_code == 422, answer.text[:300]
    assert "x-namespace is given 2 times" in answer.text
    assert client.get("/ui/memories", headers=[KEY]).status_code == 200
    mem.close()
