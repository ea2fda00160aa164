"""MCP over streamable HTTP: the SDK's HTTP client against `attestor-arango mcp --transport http`.

A real server subprocess with an API key file of two tenants: no key is refused
(401, and the client cannot open a session), each key acts as its own tenant, and
narrowing headers work as they do for REST (a namespace the key does not grant is
refused).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from interface_support import PYTHON, cli_env, cli_server
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from attestor_arango.interfaces.api.auth import hash_key

KEYS = {
    "acme": "key-acme-orchestrator",
    "beta": "key-beta-orchestrator",
    "acme-team": "key-acme-team-only",
}


def write_keys(path: Path) -> None:
    entries = [
        {
            "id": "acme",
            "sha256": hash_key(KEYS["acme"]),
            "tenant": "acme",
            "roles": ["orchestrator"],
            "agent_ids": ["lead"],
        },
        {
            "id": "beta",
            "sha256": hash_key(KEYS["beta"]),
            "tenant": "beta",
            "roles": ["orchestrator"],
            "agent_ids": ["lead"],
        },
        {
            "id": "acme-team",
            "sha256": hash_key(KEYS["acme-team"]),
            "tenant": "acme",
            "roles": ["orchestrator"],
            "agent_ids": ["lead"],
            "namespaces": ["team"],
        },
    ]
    path.write_text(yaml.safe_dump({"keys": entries}), encoding="utf-8")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("mcp-http")
    keys = home / "keys.yaml"
    write_keys(keys)
    args = ("mcp", "--transport", "http", "--host", "127.0.0.1", "--keys", str(keys))
    with cli_server(home, *args) as run:
        yield run.base


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def session_call(
    base: str, key: str | None, calls: list[tuple[str, dict[str, Any]]], **headers: str
) -> list[Any]:
    """Open an SDK session with ``key`` and run the tool calls; results in order."""
    sent = dict(headers)
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    client = create_mcp_http_client(headers=sent)
    async with (
        client,
        streamable_http_client(base + "/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return [await session.call_tool(name, args) for name, args in calls]


def ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    data = json.loads(text_of(result))
    assert isinstance(data, dict)
    return data


def test_no_key_is_refused(server: str) -> None:
    raw = httpx.post(
        server + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert raw.status_code == 401
    assert raw.json()["code"] == "unauthenticated"
    wrong = httpx.post(server + "/mcp", json={}, headers={"X-API-Key": "not-a-key"})
    assert wrong.status_code == 401
    with pytest.raises(ExceptionGroup) as refused:  # the SDK client cannot even initialise
        asyncio.run(session_call(server, None, [("memory_stats", {})]))
    assert refused.group_contains(MCPError)


def test_keys_act_as_their_own_tenant(server: str) -> None:
    [added] = asyncio.run(
        session_call(
            server,
            KEYS["acme"],
            [("memory_add", {"content": "Alice lives in Lyon", "entity": "Alice"})],
        )
    )
    memory = ok(added)
    assert memory["tenant"] == "acme" and memory["provenance"]["agent_id"] == "lead"

    got, found, recalled = asyncio.run(
        session_call(
            server,
            KEYS["beta"],
            [
                ("memory_get", {"memory_id": memory["id"]}),
                ("memory_search", {"query": "Lyon"}),
                ("memory_recall", {"query": "where does Alice live"}),
            ],
        )
    )
    assert got.is_error and "not_found" in text_of(got)
    assert ok(found)["memories"] == []
    assert ok(recalled)["results"] == []

    [mine] = asyncio.run(session_call(server, KEYS["acme"], [("memory_search", {"query": "Lyon"})]))
    assert [m["id"] for m in ok(mine)["memories"]] == [memory["id"]]


def test_narrowing_headers_and_namespaces(server: str) -> None:
    # a header naming another tenant is refused before the MCP layer
    raw = httpx.post(
        server + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {KEYS['acme']}", "X-Tenant": "beta"},
    )
    assert raw.status_code == 403 and raw.json()["code"] == "permission_denied"

    # a key limited to namespace 'team' writes there, and cannot search 'inbox'
    added, other, own = asyncio.run(
        session_call(
            server,
            KEYS["acme-team"],
            [
                ("memory_add", {"content": "The team ships on Friday", "entity": "release"}),
                ("memory_search", {"query": "Friday", "namespace": "inbox"}),
                ("memory_search", {"query": "Friday"}),
            ],
        )
    )
    assert ok(added)["namespace"] == "team"
    assert other.is_error and "permission_denied" in text_of(other)
    assert len(ok(own)["memories"]) == 1

    # the unrestricted acme key reads namespace 'team' by the namespace argument
    [seen] = asyncio.run(
        session_call(
            server, KEYS["acme"], [("memory_search", {"query": "Friday", "namespace": "team"})]
        )
    )
    assert [m["namespace"] for m in ok(seen)["memories"]] == ["team"]


def test_http_without_keys_or_off_loopback_is_refused(tmp_path: Path) -> None:
    base = [PYTHON, "-m", "attestor_arango.interfaces.cli.main", "mcp", "--transport", "http"]
    env = cli_env(tmp_path)
    no_keys = subprocess.run(base, env=env, capture_output=True, text=True, timeout=60)
    assert no_keys.returncode != 0 and "--keys" in no_keys.stderr
    wide = subprocess.run(
        [*base, "--no-auth", "--host", "0.0.0.0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wide.returncode != 0 and "loopback" in wide.stderr
