"""Adversarial finding: a refused REST body was answered with one error per problem.

A 1 MB body holding 100,000 tags that are numbers, or 80,000 unknown keys, was answered
with every one of pydantic's errors, in the message and in ``details.errors``: ~20 MB
and ~10 MB of 422 for 1 MB sent (3.4 s and 0.9 s here), a cheap way to make a server
write. The answer now names the first ``MAX_ERRORS`` problems (what to fix first) and
says how many there were (``details.error_count``); a request with few problems is
answered as before. MCP named every unknown argument of a call (80,000 keys: ~0.8 MB);
it names the first 20 and counts the rest.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from mcp.server.mcpserver.exceptions import ToolError
from starlette.testclient import TestClient

from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.codec import MAX_ERRORS
from attestor_arango.interfaces.mcp import build_server

BODIES = {
    "100,000 tags that are numbers": ("/v1/memories", {"content": "x", "tags": [1] * 100_000}),
    "80,000 unknown keys": ("/v1/memories/list", {f"k{i}": 0 for i in range(80_000)}),
}


@pytest.mark.parametrize("case", list(BODIES))
def test_a_body_with_many_problems_gets_a_short_answer(tmp_path: Path, case: str) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    path, body = BODIES[case]
    before = stored(mem)
    answer = client.post(
        path, content=json.dumps(body), headers={**AUTH, "content-type": "application/json"}
    )
    assert answer.status_code == 422, answer.text[:300]
    assert len(answer.content) < 20_000, len(answer.content)
    error = answer.json()
    assert error["details"]["error_count"] > MAX_ERRORS
    assert len(error["details"]["errors"]) == MAX_ERRORS
    assert error["message"].endswith(
        f"and {error['details']['error_count'] - MAX_ERRORS} more problems"
    )
    assert stored(mem) == before
    mem.close()


def test_a_body_with_few_problems_is_told_each(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    body = {"query": 1, "token_budget": "x"}
    answer = client.post("/v1/recall", json=body, headers=AUTH)
    assert answer.status_code == 422, answer.text
    error = answer.json()
    assert error["details"]["error_count"] == len(error["details"]["errors"]) == 2
    assert "query:" in error["message"] and "token_budget:" in error["message"]
    assert "more problems" not in error["message"]
    mem.close()


def test_an_mcp_call_with_many_unknown_arguments_gets_a_short_answer(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    server = build_server(mem, context=CTX)
    arguments = {"content": "x", **{f"k{i:05d}": 0 for i in range(80_000)}}
    before = stored(mem)
    with pytest.raises(ToolError) as refused:
        asyncio.run(server.call_tool("memory_add", arguments))
    text = str(refused.value)
    assert len(text) < 5_000, len(text)
    assert "'k00000', 'k00001'" in text and "and 79980 more" in text
    assert stored(mem) == before
    mem.close()
