"""Adversarial finding: a JSON object that gives a key twice was read as its last value.

``{"limit": 1, "limit": 1000}`` meant 1000 to us and may mean 1 to a proxy or a log
reader in front of us; ``{"content": "a", "content": "b"}`` stored "b". Which value a
request means was left to the parser. A repeated key is now refused, with a message
naming it, wherever we parse the JSON ourselves: a REST body (422 ``invalid_input``),
the CLI's ``--metadata`` and hook events, and an MCP stdio line (a JSON-RPC error before
the SDK, which keeps the last value, reads it) and an MCP HTTP body (the same error,
400). Nothing is stored.
"""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import mcp_types as types
import pytest
from attack_support import AUTH, acme_ring, seeded, stored
from interface_support import PYTHON, cli_env
from starlette.testclient import TestClient

from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.cli.hooks import run_hook
from attestor_arango.interfaces.mcp_http import create_mcp_app
from attestor_arango.interfaces.mcp_stdio import screen

BODIES = {
    "top-level limit": ("/v1/memories/list", '{"limit": 1, "limit": 1000}', "limit"),
    "content twice": ("/v1/memories", '{"content": "a fact", "content": "b fact"}', "content"),
    "inside metadata": (
        "/v1/memories",
        '{"content": "Ann likes mint", "metadata": {"src": "a", "src": "b"}}',
        "src",
    ),
    "inside a turn": (
        "/v1/ingest",
        '{"turn": {"role": "user", "content": "hi", "content": "bye"}}',
        "content",
    ),
}


@pytest.mark.parametrize("case", list(BODIES))
def test_rest_refuses_a_body_that_gives_a_key_twice(tmp_path: Path, case: str) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    path, body, key = BODIES[case]
    before = stored(mem)
    answer = client.post(
        path, content=body.encode(), headers={**AUTH, "content-type": "application/json"}
    )
    assert answer.status_code == 422, answer.text
    error = answer.json()
    assert error["code"] == "invalid_input"
    assert f"'{key}' twice" in error["message"]
    assert stored(mem) == before
    mem.close()


def test_the_cli_refuses_metadata_that_gives_a_key_twice(tmp_path: Path) -> None:
    done = subprocess.run(
        [PYTHON, "-m", "attestor_arango.interfaces.cli.main", "add", "Ann likes mint",
         "--metadata", '{"src": "a", "src": "b"}', "--json"],
        env=cli_env(tmp_path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    error = json.loads(done.stderr)["error"]
    assert error["code"] == "invalid_input" and "'src' twice" in error["message"]
    listed = subprocess.run(
        [PYTHON, "-m", "attestor_arango.interfaces.cli.main", "list", "--json"],
        env=cli_env(tmp_path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0 and json.loads(listed.stdout) == []


def test_a_hook_event_that_gives_a_key_twice_is_refused(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    before = stored(mem)
    event = json.dumps({"tool_name": "Write", "tool_input": {"file_path": "/a"}})
    event = event[:-1] + ', "tool_input": {"file_path": "/b"}}'  # tool_input given twice
    stdout, stderr = io.StringIO(), io.StringIO()
    code = run_hook("post-tool-use", mem, io.StringIO(event), stdout, stderr)
    assert code == 1 and stdout.getvalue() == ""
    assert "'tool_input' twice" in stderr.getvalue()
    assert stored(mem) == before
    mem.close()


def test_an_mcp_stdio_line_that_gives_a_key_twice_is_answered_with_an_error() -> None:
    call = (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "memory_add",'
        ' "arguments": {"content": "a fact", "content": "b fact"}}}'
    )
    answer = screen(call)
    assert isinstance(answer, types.JSONRPCError)
    assert answer.id == 7 and answer.error.code == types.INVALID_PARAMS
    assert "'content' twice" in answer.error.message
    # the same call with each key once passes to the SDK untouched
    assert screen(call.replace(', "content": "b fact"', "")) is None


def test_mcp_over_http_refuses_a_body_that_gives_a_key_twice(tmp_path: Path) -> None:
    mem, ours, _ = seeded(tmp_path)
    headers = {
        **AUTH,
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-06-18",
    }
    call = (
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_add",'
        ' "arguments": {"content": "Ann likes mint", "content": "Ann likes rum"}}}'
    )
    before = stored(mem)
    app = create_mcp_app(mem, acme_ring())
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:  # loopback Host
        refused = client.post("/mcp", content=call, headers=headers)
        assert refused.status_code == 400, refused.text
        error = refused.json()
        assert error["id"] == 2 and "'content' twice" in error["error"]["message"]
        assert stored(mem) == before
        once = call.replace(', "content": "Ann likes rum"', "").replace("memory_add", "memory_get")
        once = once.replace('"content": "Ann likes mint"', f'"memory_id": "{ours}"')
        answer = client.post("/mcp", content=once, headers=headers)  # passes to the SDK
        assert answer.status_code == 200 and ours in answer.text, answer.text
    mem.close()
