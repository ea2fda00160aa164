"""Adversarial finding: REST and MCP took what the library refuses.

Pydantic's lax mode read a JSON ``true`` as 1: over REST ``confidence: true`` stored 1.0,
``valid_from: true`` stored a fact valid from 1970-01-01T00:00:01Z, ``limit: true`` and
``token_budget: true`` answered with one row / one token, where ``AgentMemory`` refuses a
boolean for each. MCP did the same, and also dropped an argument the tool does not have
(a misspelt ``as_off`` read the present instead of the past; ``namespace`` on
``memory_add`` wrote to the caller's own namespace) where REST refuses unknown fields.
Each is now a typed ``invalid_input`` error that stores nothing.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from interface_support import PYTHON, cli_env
from mcp import ClientSession, StdioServerParameters, stdio_client
from starlette.testclient import TestClient

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="inbox")
REST_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "add confidence true": ("/v1/memories", {"content": "c1", "confidence": True}),
    "add valid_from true": ("/v1/memories", {"content": "c2", "valid_from": True}),
    "add valid_until false": ("/v1/memories", {"content": "c3", "valid_until": False}),
    "list limit true": ("/v1/memories/list", {"limit": True}),
    "list window of booleans": ("/v1/memories/list", {"time_window": [False, True]}),
    "recall token_budget true": ("/v1/recall", {"query": "tea", "token_budget": True}),
    "search limit true": ("/v1/search", {"query": "tea", "limit": True}),
}


@pytest.mark.parametrize("case", list(REST_CASES))
def test_rest_refuses_a_boolean_where_a_number_or_time_is_expected(
    tmp_path: Path, case: str
) -> None:
    mem = AgentMemory(tmp_path, embedder=HashingEmbedder(64))
    mem.add("Ann likes tea", context=CTX)
    mem.add("Ann likes green tea", context=CTX)
    key = ApiKey(id="k", sha256=hash_key("secret"), tenant="acme", roles=("orchestrator",),
                 agent_ids=("orch",))  # fmt: skip
    client = TestClient(create_app(mem, KeyRing([key])), raise_server_exceptions=False)
    before = mem.list(status="all", context=CTX), mem.verify_audit_chain(context=CTX).last_hash
    path, body = REST_CASES[case]
    answer = client.post(path, json=body, headers={"Authorization": "Bearer secret"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == "invalid_input"
    after = mem.list(status="all", context=CTX), mem.verify_audit_chain(context=CTX).last_hash
    assert after == before
    # a real boolean argument still is one
    dry = client.post("/v1/governance/compact", json={"older_than": "1d", "dry_run": True},
                      headers={"Authorization": "Bearer secret"})  # fmt: skip
    assert dry.status_code == 200, dry.text
    mem.close()


MCP_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "add confidence true": ("memory_add", {"content": "c1", "confidence": True}),
    "add unknown namespace": ("memory_add", {"content": "c2", "namespace": "elsewhere"}),
    "get misspelt as_of": ("memory_get", {"memory_id": "x", "as_off": "2020-01-01T00:00:00Z"}),
    "search limit true": ("memory_search", {"query": "tea", "limit": True}),
    "recall token_budget true": ("memory_recall", {"query": "tea", "token_budget": True}),
}


async def _mcp_answers(home: Path) -> dict[str, tuple[bool, str]]:
    params = StdioServerParameters(
        command=PYTHON, args=["-m", "attestor_arango.interfaces.cli.main", "mcp"],
        env=cli_env(home),
    )  # fmt: skip
    answers: dict[str, tuple[bool, str]] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        await s.call_tool("memory_add", {"content": "Ann likes tea"})
        for case, (tool, args) in MCP_CASES.items():
            got = await s.call_tool(tool, args)
            answers[case] = (got.is_error, "".join(getattr(b, "text", "") for b in got.content))
        stats = await s.call_tool("memory_stats", {})
        answers["stats"] = (stats.is_error, "".join(getattr(b, "text", "") for b in stats.content))
    return answers


def test_mcp_refuses_unknown_arguments_and_booleans_for_numbers(tmp_path: Path) -> None:
    answers = asyncio.run(asyncio.wait_for(_mcp_answers(tmp_path), 120))
    for case in MCP_CASES:
        is_error, text = answers[case]
        assert is_error, (case, text)
        assert json.loads(text[text.index("{") :])["code"] == "invalid_input", (case, text)
    assert json.loads(answers["stats"][1])["total"] == 1  # only the first add was stored
