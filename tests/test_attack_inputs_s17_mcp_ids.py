"""Adversarial finding: MCP stdio took a request whose id is no JSON-RPC id (``true``, a
fraction, an object, an array, null) for a notification and never answered it, so the
client waited for ever. Such a line is now answered at once with an invalid-request
error (id null, as JSON-RPC says when the id cannot be read) saying what an id may be;
a string or an integer id, and a notification without id, still pass to the SDK."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
import pytest
from attack_support import AUTH, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.interfaces.mcp_http import create_mcp_app
from attestor_arango.interfaces.mcp_stdio import screen

BAD_IDS = ["true", "false", "null", "1.5", "2.0", '{"a": 1}', "[1]", "[]", "{}", "1e3"]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_a_request_with_no_json_rpc_id_is_answered(bad: str) -> None:
    line = f'{{"jsonrpc": "2.0", "id": {bad}, "method": "tools/list"}}'
    answer = screen(line)
    assert isinstance(answer, types.JSONRPCError), answer
    assert answer.id is None
    assert answer.error.code == types.INVALID_REQUEST
    assert "string or an integer" in answer.error.message
    json.dumps(answer.model_dump(by_alias=True, exclude_none=True))  # the answer is sendable


@pytest.mark.parametrize("good", ["7", '"abc"', "-3", '""'])
def test_string_and_integer_ids_and_notifications_pass(good: str) -> None:
    assert screen(f'{{"jsonrpc": "2.0", "id": {good}, "method": "tools/list"}}') is None
    assert screen('{"jsonrpc": "2.0", "method": "notifications/initialized"}') is None


HTTP_HEADERS = {
    **AUTH,
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-06-18",
}


def test_mcp_over_http_refuses_the_same_ids_with_the_same_error(tmp_path: Path) -> None:
    """The HTTP transport screens each body with the same ``screen`` (``mcp_http.Screen``):
    a bad id is answered 400 with stdio's error, nothing is stored, good ids are served."""
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    with TestClient(create_mcp_app(mem, acme_ring()), base_url="http://127.0.0.1:8000") as client:
        for bad in BAD_IDS:
            line = f'{{"jsonrpc": "2.0", "id": {bad}, "method": "tools/call", "params": ' + (
                '{"name": "memory_add", "arguments": {"content": "Ann likes mint"}}}'
            )
            answer = client.post("/mcp", content=line, headers=HTTP_HEADERS)
            assert answer.status_code == 400, (bad, answer.text)
            expected = screen(line)
            assert expected is not None
            assert answer.json() == expected.model_dump(
                mode="json", by_alias=True, exclude_none=True
            )
        assert stored(mem) == before
        good = '{"jsonrpc": "2.0", "id": "7", "method": "tools/list"}'
        served = client.post("/mcp", content=good, headers=HTTP_HEADERS)
        assert served.status_code == 200 and served.json()["id"] == "7", served.text
    mem.close()
