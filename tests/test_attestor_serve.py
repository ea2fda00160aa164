"""Attestor's ``attestor serve <path>`` (the reference README's positional-path variant of
``mcp``): the same MCP stdio server, on the store at PATH, through the SDK's stdio client.
Missing before session 14 (``serve`` was an unknown command, exit 2)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from interface_support import PYTHON, cli_env
from mcp import ClientSession, StdioServerParameters, stdio_client

from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory


async def _add_over_serve(home: Path, store: Path) -> str:
    params = StdioServerParameters(
        command=PYTHON,
        args=["-m", "attestor_arango.interfaces.cli.main", "serve", str(store)],
        env=cli_env(home),  # ATTESTOR_PATH names another store: the PATH argument wins
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        names = {t.name for t in (await s.list_tools()).tools}
        assert {"memory_add", "memory_recall", "memory_forget"} <= names
        result = await s.call_tool("memory_add", {"content": "Served from the PATH store"})
        assert not result.is_error
        added = json.loads("".join(getattr(b, "text", "") for b in result.content))
        return str(added["id"])


def test_serve_path_runs_the_mcp_server_on_that_store(tmp_path: Path) -> None:
    store = tmp_path / "attestor-home"
    added = asyncio.run(_add_over_serve(tmp_path, store))
    assert not (tmp_path / "memory.db").exists()  # the environment's store was not used
    with AgentMemory(store, embedder=HashingEmbedder()) as mem:
        found = mem.get(added, context=AgentContext())
    assert found.content == "Served from the PATH store"
