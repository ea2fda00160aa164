"""Adversarial finding: MCP over HTTP read a request body of any size into memory.

REST answers a body over its limit (1 MiB by default) with 413 before reading it whole;
the MCP endpoint had no limit, so one caller could make the server hold a body of
gigabytes (the SDK reads it whole before judging it). The MCP app now answers a body
over the limit with 413 ``payload_too_large`` too, by its declared length or while it
streams in, and stores nothing; a body within the limit is served as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from attack_support import AUTH, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.interfaces.mcp_http import create_mcp_app

HEADERS = {
    **AUTH,
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-06-18",
}
LIMIT = 1_048_576  # REST's default, which MCP now shares


def _call(content: str) -> bytes:
    message = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
               "params": {"name": "memory_add", "arguments": {"content": content}}}  # fmt: skip
    return json.dumps(message).encode()


def test_a_body_over_the_limit_is_refused_with_413(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    before = stored(mem)
    app = create_mcp_app(mem, acme_ring())
    big = _call("Ann likes " + "x" * LIMIT)

    def streamed() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        for start in range(0, len(big), 65_536):
            yield big[start : start + 65_536]

    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        declared = client.post("/mcp", content=big, headers=HEADERS)
        assert declared.status_code == 413, declared.text
        assert declared.json()["code"] == "payload_too_large"
        chunked = client.post("/mcp", content=streamed(), headers=HEADERS)
        assert chunked.status_code == 413, chunked.text
        assert chunked.json()["code"] == "payload_too_large"
        assert stored(mem) == before
        small = client.post("/mcp", content=_call("Ann likes mint"), headers=HEADERS)
        assert small.status_code == 200 and "Ann likes mint" in small.text, small.text
    mem.close()
