"""Session 27 sweep: every REST route and every MCP tool, each argument given hostile values.

Derived from the route table (``spec.ROUTES``, with ``AgentMemory``'s signature of each
operation) and from the MCP server's tool list, so a route or tool added later is swept too.
Each argument in turn gets a value of the wrong type, a huge one, one holding NUL, one nested
150 deep: the answer is a 2xx (a value the argument accepts) or a 4xx with a message, never a
5xx; an MCP tool answers or raises its error result (``ToolError`` with a code), never an
internal error; and a refusal stores nothing (a refused permission may add its audit entry).
The sweep that found the retention policy name hole (its own test) passes otherwise.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from mcp.server.mcpserver.exceptions import ToolError
from starlette.testclient import TestClient

from attestor_arango.interfaces.api.app import ApiSettings, create_app
from attestor_arango.interfaces.api.spec import ROUTES, Route
from attestor_arango.interfaces.mcp import build_server
from attestor_arango.memory import AgentMemory


def _deep(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = {"a": value}
    return value


HOSTILE: dict[str, Any] = {
    "huge text": "x" * 50_000,
    "NUL": "a\x00b",
    "huge integer": 10**30,
    "boolean": True,
    "list": ["a", 1],
    "150 deep": _deep(150),
}
BASE: dict[str, Any] = {
    "content": "Ann likes mint",
    "query": "tea",
    "entity": "ann",
    "user": "acme",
    "turn": {"user": "I live in Oslo."},
    "turns": [{"user": "hi"}],
    "older_than": "1d",
    "daily_writes": 5,
    "policies": [{"name": "p", "older_than": "1d", "action": "archive"}],
}


def _arguments(op: str) -> list[tuple[str, bool]]:
    """The operation's arguments (name, required), as the route passes them."""
    out = []
    for name, p in inspect.signature(getattr(AgentMemory, op)).parameters.items():
        if name not in ("self", "context") and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            out.append((name, p.default is inspect.Parameter.empty))
    return out


@pytest.mark.parametrize("route", ROUTES, ids=[r.op for r in ROUTES])
def test_every_rest_argument_answers_hostile_values_with_a_2xx_or_a_4xx(
    tmp_path: Path, route: Route
) -> None:
    mem, ours, _ = seeded(tmp_path)
    settings = ApiSettings(max_body_bytes=4_000_000)
    client = TestClient(create_app(mem, acme_ring(), settings), raise_server_exceptions=False)
    path = route.full_path
    for name in route.path_params:
        path = path.replace("{" + name + "}", ours if name == "memory_id" else "x")
    arguments = [(n, r) for n, r in _arguments(route.op) if n not in route.path_params]
    for name, _required in arguments:
        for label, value in HOSTILE.items():
            if route.query and not isinstance(value, str | int):
                continue  # a query string carries text only
            body = {n: BASE[n] for n, required in arguments if required and n in BASE}
            body[name] = value
            before, rows = stored(mem), stored(mem, with_audit=False)
            if route.query:
                answer = client.request(route.method, path, params={name: str(value)}, headers=AUTH)
            else:
                answer = client.request(route.method, path, json=body, headers=AUTH)
            status, said = answer.status_code, f"{route.op} {name}={label}"
            assert status < 500, (said, answer.text[:300])
            if status >= 400:
                assert answer.json()["message"], said
                assert (
                    (stored(mem, with_audit=False) == rows)
                    if status == 403
                    else (stored(mem) == before)
                ), said
    mem.close()


def test_every_mcp_argument_answers_hostile_values_with_a_result_or_an_error_result(
    tmp_path: Path,
) -> None:
    mem, ours, _ = seeded(tmp_path)
    server = build_server(mem, context=CTX)
    tools = asyncio.run(server.list_tools())
    assert tools
    for tool in tools:
        schema = tool.input_schema
        required = schema.get("required", [])
        for name in schema.get("properties", {}):
            for label, value in HOSTILE.items():
                arguments = {n: ours if n == "memory_id" else BASE.get(n) for n in required}
                arguments = {k: v for k, v in arguments.items() if v is not None}
                arguments[name] = value
                before = stored(mem)

                async def call(tool_name: str, args: dict[str, Any]) -> str | None:
                    try:
                        await server.call_tool(tool_name, args)
                    except ToolError as refused:
                        return str(refused)
                    return None

                text = asyncio.run(call(tool.name, arguments))
                if text is None:
                    continue
                said = f"{tool.name} {name}={label}"
                error = json.loads(text[text.index("{") :])
                assert error["code"] not in ("internal", "internal_error"), (said, text[:300])
                assert error["message"] and "Traceback" not in text, said
                assert stored(mem) == before, said
    mem.close()
