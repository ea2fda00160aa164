"""Adversarial finding: MCP tools converted an argument of the wrong JSON type.

The SDK validates tool arguments laxly and first reads a text value as JSON when the
field is not text: ``limit: "5"`` and ``limit: 5.0`` searched 5 rows, ``confidence:
"0.5"`` stored 0.5, ``metadata: '{"a": 1}'`` stored an object and ``tags: '["a"]'``
filtered by a list. REST refuses each (a JSON body is read strictly); MCP now does too,
with an error result naming the argument and the type it needs, and nothing stored.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from attack_support import CTX, seeded, stored
from mcp.server.mcpserver.exceptions import ToolError

from attestor_arango.interfaces.mcp import build_server

CASES: dict[str, tuple[str, dict[str, Any], str]] = {
    "search limit as text": ("memory_search", {"query": "tea", "limit": "5"}, "'limit'"),
    "search limit as a float": ("memory_search", {"query": "tea", "limit": 5.0}, "'limit'"),
    "search tags as JSON text": ("memory_search", {"query": "tea", "tags": '["a"]'}, "'tags'"),
    "add confidence as text": (
        "memory_add", {"content": "Ann likes mint", "confidence": "0.5"}, "'confidence'"
    ),
    "add metadata as JSON text": (
        "memory_add", {"content": "Ann likes mint", "metadata": '{"a": 1}'}, "'metadata'"
    ),
    "add content as a list": ("memory_add", {"content": ["Ann likes mint"]}, "'content'"),
    "recall budget as text": (
        "memory_recall", {"query": "tea", "token_budget": "100"}, "'token_budget'"
    ),
    "stats with an argument": ("memory_stats", {"verbose": True}, "takes none"),
}  # fmt: skip


def _call(server: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        with pytest.raises(ToolError) as refused:
            await server.call_tool(tool, arguments)
        text = str(refused.value)
        return dict(json.loads(text[text.index("{") :]))

    return asyncio.run(run())


@pytest.mark.parametrize("case", list(CASES))
def test_an_argument_of_the_wrong_json_type_is_refused(tmp_path: Path, case: str) -> None:
    mem, _, _ = seeded(tmp_path)
    server = build_server(mem, context=CTX)
    tool, arguments, named = CASES[case]
    before = stored(mem)
    error = _call(server, tool, arguments)
    assert error["code"] == "invalid_input"
    assert named in error["message"]
    assert stored(mem) == before
    mem.close()


def test_arguments_of_the_right_type_still_work(tmp_path: Path) -> None:
    mem, ours, _ = seeded(tmp_path)
    server = build_server(mem, context=CTX)

    async def run() -> tuple[Any, Any]:
        found = await server.call_tool("memory_search", {"query": "tea", "limit": 5})
        added = await server.call_tool(
            "memory_add", {"content": "Ann likes mint", "confidence": 1, "metadata": None}
        )
        return found, added

    found, added = asyncio.run(run())
    assert [m["id"] for m in found.structured_content["memories"]] == [ours]
    assert json.loads(added.content[0].text)["confidence"] == 1.0
    mem.close()
