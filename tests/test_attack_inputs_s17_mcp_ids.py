"""Adversarial finding: MCP stdio took a request whose id is no JSON-RPC id (``true``, a
fraction, an object, an array, null) for a notification and never answered it, so the
client waited for ever. Such a line is now answered at once with an invalid-request
error (id null, as JSON-RPC says when the id cannot be read) saying what an id may be;
a string or an integer id, and a notification without id, still pass to the SDK."""

from __future__ import annotations

import json

import mcp_types as types
import pytest

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
