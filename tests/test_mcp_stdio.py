"""MCP server through the SDK's stdio client against the real `attestor-arango mcp` process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from interface_support import PYTHON, cli_env
from mcp import ClientSession, StdioServerParameters, stdio_client

TOOLS = {
    "memory_add",
    "memory_get",
    "memory_recall",
    "memory_search",
    "memory_forget",
    "memory_timeline",
    "memory_stats",
    "memory_health",
    "memory_recall_pack",
}


def params(home: Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=PYTHON,
        args=["-m", "attestor_arango.interfaces.cli.main", "mcp"],
        env=cli_env(home, **env),
    )


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {text_of(result)}"
    data = json.loads(text_of(result))
    assert isinstance(data, dict)
    return data


async def error_of(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed"
    return text_of(result)


def code_of(text: str) -> str:
    """The error code in a tool error's text (the SDK prefixes the tool name)."""
    body = json.loads(text[text.index("{") :])
    assert set(body) == {"code", "message", "details"}
    return str(body["code"])


async def _solo_session(home: Path) -> None:
    async with stdio_client(params(home)) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        listed = await s.list_tools()
        assert {t.name for t in listed.tools} == TOOLS

        first = await call(
            s,
            "memory_add",
            content="Alice lives in Paris",
            entity="Alice",
            category="city",
            tags=["geo"],
        )
        assert first["tenant"] == "local" and first["provenance"]["agent_id"] == "solo"
        second = await call(
            s, "memory_add", content="Alice lives in Lyon", entity="Alice", category="city"
        )
        assert second["supersedes"] == first["id"]
        got = await call(s, "memory_get", memory_id=first["id"])
        assert got["status"] == "superseded" and got["superseded_by"] == second["id"]
        old = await call(s, "memory_get", memory_id=first["id"], as_of=second["t_created"])
        assert old["id"] == first["id"]
        timeline = await call(s, "memory_timeline", entity="Alice")
        assert [m["id"] for m in timeline["memories"]] == [first["id"], second["id"]]
        recall = await call(s, "memory_recall", query="where does Alice live")
        assert recall["results"][0]["memory"]["id"] == second["id"]
        pack = await call(s, "memory_recall_pack", query="where does Alice live")
        assert second["id"] in json.dumps(pack)
        found = await call(s, "memory_search", query="Lyon")
        assert [m["id"] for m in found["memories"]] == [second["id"]]
        stats = await call(s, "memory_stats")
        assert (stats["total"], stats["active"], stats["superseded"]) == (2, 1, 1)
        health = await call(s, "memory_health")
        assert health["ok"] is True and "embedder" in health
        gone = await call(s, "memory_forget", memory_id=second["id"], reason="moved away")
        assert gone["status"] == "archived"

        # error paths come back as error results, and the server keeps serving
        assert code_of(await error_of(s, "memory_get", memory_id="nope")) == "not_found"
        assert code_of(await error_of(s, "memory_add", content="")) == "invalid_input"
        bad = await error_of(s, "memory_recall", query="x", token_budget=0)
        assert code_of(bad) == "invalid_input"
        naive = await error_of(s, "memory_add", content="t", valid_from="2026-01-01T00:00:00")
        assert code_of(naive) == "invalid_input"
        again = await error_of(s, "memory_forget", memory_id=second["id"])
        assert code_of(again) == "conflict"
        assert await error_of(s, "memory_add", tags=["missing content"])
        assert await error_of(s, "no_such_tool")
        assert (await call(s, "memory_stats"))["archived"] == 1

        resources = await s.list_resources()
        assert "memory://memories" in {str(r.uri) for r in resources.resources}
        listing = await s.read_resource("memory://memories")
        rows = json.loads(listing.contents[0].text)  # type: ignore[union-attr]
        assert rows == []  # both facts are closed now: none active
        one = await s.read_resource(f"memory://memories/{first['id']}")
        assert json.loads(one.contents[0].text)["id"] == first["id"]  # type: ignore[union-attr]

        prompts = await s.list_prompts()
        assert {p.name for p in prompts.prompts} == {"recall", "handoff", "record_decision"}
        prompt = await s.get_prompt("recall", {"question": "Where does Alice live?"})
        text = prompt.messages[0].content.text  # type: ignore[union-attr]
        assert "ABSTAIN" in text and "Where does Alice live?" in text
        handoff = await s.get_prompt("handoff", {"to_agent": "planner-2", "task": "move Alice"})
        assert "planner-2" in handoff.messages[0].content.text  # type: ignore[union-attr]
        timeline_res = await s.read_resource("memory://entities/Alice/timeline")
        assert len(json.loads(timeline_res.contents[0].text)) == 2  # type: ignore[union-attr]
        decision = await s.get_prompt(
            "record_decision", {"decision": "use Postgres", "rationale": "ops", "entity": "db"}
        )
        assert "memory_add" in decision.messages[0].content.text  # type: ignore[union-attr]


def test_every_tool_resource_and_prompt_over_stdio(tmp_path: Path) -> None:
    asyncio.run(_solo_session(tmp_path))


async def _reviewer_session(home: Path) -> None:
    env = {"ATTESTOR_ROLE": "reviewer", "ATTESTOR_AGENT_ID": "rev-1"}
    async with stdio_client(params(home, **env)) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        denied = await error_of(s, "memory_add", content="not allowed")
        assert code_of(denied) == "permission_denied" and '"role": "reviewer"' in denied
        assert (await call(s, "memory_stats"))["total"] == 0  # nothing was written
        assert (await call(s, "memory_recall", query="anything"))["results"] == []


def test_identity_comes_from_the_environment(tmp_path: Path) -> None:
    asyncio.run(_reviewer_session(tmp_path))
