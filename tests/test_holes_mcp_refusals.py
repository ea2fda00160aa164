"""Every MCP tool of a keyed server refuses a call without a key the same way: an error
result whose text carries the JSON ``{code, message, details}`` a model can read.

Found by the session 14 red team: ``memory_health`` checked the key outside the wrapper
that turns a typed error into that JSON, so its refusal read only "Error executing tool
memory_health", with no code and no word on what to send.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from interface_support import keyring
from mcp.server.mcpserver.exceptions import ToolError

from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.mcp import build_server
from attestor_arango.memory import AgentMemory

ARGUMENTS: dict[str, dict[str, Any]] = {
    "memory_add": {"content": "a fact"},
    "memory_get": {"memory_id": "0000"},
    "memory_recall": {"query": "anything"},
    "memory_recall_pack": {"query": "anything"},
    "memory_search": {"query": "anything"},
    "memory_forget": {"memory_id": "0000"},
    "memory_timeline": {"entity": "alice"},
    "memory_stats": {},
    "memory_health": {},
}


def _refusals(path: Path) -> dict[str, dict[str, Any]]:
    memory = AgentMemory(path / "memory.db", embedder=HashingEmbedder(64))
    server = build_server(memory, keys=keyring()[0])

    async def run() -> dict[str, dict[str, Any]]:
        names = sorted(t.name for t in await server.list_tools())
        assert names == sorted(ARGUMENTS)  # a new tool needs its row above
        found: dict[str, dict[str, Any]] = {}
        for name in names:
            with pytest.raises(ToolError) as refused:
                await server.call_tool(name, ARGUMENTS[name])
            text = str(refused.value)
            assert "{" in text, f"{name}: {text!r} carries no JSON"
            found[name] = json.loads(text[text.index("{") :])
        return found

    try:
        return asyncio.run(run())
    finally:
        memory.close()


def test_every_tool_refuses_a_keyless_call_with_a_readable_code(tmp_path: Path) -> None:
    refusals = _refusals(tmp_path)
    assert {name: body["code"] for name, body in refusals.items()} == dict.fromkeys(
        ARGUMENTS, "unauthenticated"
    )
    assert all("API key" in body["message"] for body in refusals.values())
