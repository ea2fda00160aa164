"""What a model sees of the MCP tools, through the SDK's stdio client against the real process.

Every input field carries a description (and bounds where it has them), each tool says
whether it is read-only, destructive or idempotent, the server reports its version, the
time filters reach AgentMemory, memory_recall_pack returns its Chain-of-Note prompt, and a
missing or malformed argument is answered with a sentence naming the field.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from interface_support import PYTHON, cli_env
from mcp import ClientSession, StdioServerParameters, stdio_client

import attestor_arango

READ_ONLY = {
    "memory_get",
    "memory_recall",
    "memory_search",
    "memory_timeline",
    "memory_stats",
    "memory_health",
    "memory_recall_pack",
}


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def body_of(result: Any) -> dict[str, Any]:
    text = text_of(result)
    data = json.loads(text[text.index("{") :])
    assert isinstance(data, dict)
    return data


async def _tools_session(home: Path) -> None:
    params = StdioServerParameters(
        command=PYTHON,
        args=["-m", "attestor_arango.interfaces.cli.main", "mcp"],
        env=cli_env(home),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        init = await s.initialize()
        assert init.server_info.version == attestor_arango.__version__

        tools = {t.name: t for t in (await s.list_tools()).tools}
        for name, tool in tools.items():
            assert tool.description and len(tool.description) > 30, name
            ann = tool.annotations
            assert ann is not None, name
            assert ann.read_only_hint is (name in READ_ONLY), name
            if name not in READ_ONLY:
                assert ann.destructive_hint is (name == "memory_forget"), name
            for field, schema in tool.input_schema.get("properties", {}).items():
                assert schema.get("description"), f"{name}.{field} has no description"
        props = tools["memory_search"].input_schema["properties"]
        assert {"namespace", "time_window", "as_of", "status", "tags"} <= set(props)
        assert props["limit"]["maximum"] == 1000 and props["limit"]["minimum"] == 1
        assert "time_window" in tools["memory_recall"].input_schema["properties"]

        old = body_of(
            await s.call_tool(
                "memory_add",
                {
                    "content": "Bob worked in Rome",
                    "entity": "Bob",
                    "category": "job",
                    "valid_from": "2020-01-01T00:00:00Z",
                    "valid_until": "2021-01-01T00:00:00Z",
                },
            )
        )
        new = body_of(
            await s.call_tool(
                "memory_add",
                {
                    "content": "Bob works in Oslo",
                    "entity": "Bob",
                    "category": "place",
                    "valid_from": "2024-01-01T00:00:00Z",
                },
            )
        )
        window = ["2020-06-01T00:00:00Z", "2020-07-01T00:00:00Z"]
        recalled = body_of(
            await s.call_tool(
                "memory_recall", {"query": "where did Bob work", "time_window": window}
            )
        )
        assert [r["memory"]["id"] for r in recalled["results"]] == [old["id"]]
        searched = body_of(
            await s.call_tool("memory_search", {"query": "Bob", "time_window": window})
        )
        assert [m["id"] for m in searched["memories"]] == [old["id"]]
        everything = body_of(await s.call_tool("memory_search", {"query": "Bob"}))
        assert {m["id"] for m in everything["memories"]} == {old["id"], new["id"]}
        elsewhere = body_of(
            await s.call_tool("memory_search", {"query": "Bob", "namespace": "archive"})
        )
        assert elsewhere["memories"] == []

        pack = body_of(await s.call_tool("memory_recall_pack", {"query": "where does Bob work"}))
        assert set(pack) == {"pack", "prompt"}
        assert pack["prompt"].startswith("You answer a question using only the memories below.")
        assert "Question: where does Bob work" in pack["prompt"]
        assert new["id"] in json.dumps(pack["pack"])

        missing = await s.call_tool("memory_add", {"entity": "Bob"})
        assert missing.is_error
        err = body_of(missing)
        assert err["code"] == "invalid_input" and err["details"]["fields"] == ["content"]
        assert err["message"].startswith("memory_add needs the argument 'content': The fact")
        assert "pydantic" not in text_of(missing) and "validation error" not in text_of(missing)
        bad = body_of(await s.call_tool("memory_search", {"query": "Bob", "limit": 0}))
        assert bad["code"] == "invalid_input" and "'limit' is not valid" in bad["message"]
        odd = body_of(await s.call_tool("memory_recall", {"query": "x", "time_window": ["x"]}))
        assert odd["code"] == "invalid_input" and "time_window" in odd["message"]


def test_tools_read_well(tmp_path: Path) -> None:
    asyncio.run(_tools_session(tmp_path))
