"""Role escalation through the interfaces: a key or context whose role only reads
(reviewer, monitor) or that is read-only tries every route and tool that writes, forgets
or governs. Each gets a 403 over REST and a ``permission_denied`` MCP error result, and
no row of the tenant (nor of another) changes; the refusal itself is audited, by design.
A key also cannot be talked into another role, and an agent cannot raise its own.

These guarantees held when written; the write routes of REST and the write tools of MCP
were not run with read-only roles by any test before.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from attack_support import stored
from mcp.server.mcpserver.exceptions import ToolError
from starlette.testclient import TestClient

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import AccessDenied
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.interfaces.mcp import build_server
from attestor_arango.memory import AgentMemory

ORCH = AgentContext(agent_id="o", role="orchestrator", tenant="acme")
OTHER = AgentContext(agent_id="o", role="orchestrator", tenant="beta")
ID = "@id"


def _seeded(tmp_path: Path) -> tuple[AgentMemory, str]:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    fact = mem.add("Ann likes green tea", entity="ann", category="drink", context=ORCH)
    mem.ingest_round({"user": "I live in Lisbon."}, context=ORCH)
    mem.add("Bob likes coffee", entity="bob", category="drink", context=OTHER)
    return mem, fact.id


WRITES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "add": ("POST", "/v1/memories", {"content": "Ann likes mint"}),
    "update": ("PATCH", f"/v1/memories/{ID}", {"content": "Ann likes mint"}),
    "forget": ("POST", f"/v1/memories/{ID}/forget", {}),
    "ingest": ("POST", "/v1/ingest", {"turn": {"user": "I moved to Porto."}}),
    "turns": ("POST", "/v1/turns", {"turns": [{"speaker": "Ann", "text": "hello"}]}),
    "consolidate": ("POST", "/v1/consolidate", {}),
    "reflect and keep": ("POST", "/v1/reflect", {"min_episodes": 1, "store": True}),
    "purge": ("POST", "/v1/governance/purge", {"user": "acme", "reason": "r"}),
    "set quota": ("POST", "/v1/governance/quota", {"user": "acme", "daily_writes": 0}),
    "export": ("POST", "/v1/governance/export", {"user": "acme"}),
    "import": ("POST", "/v1/governance/import", {"data": {}}),
    "retention": ("POST", "/v1/governance/retention",
                  {"policies": [{"name": "all", "action": "delete", "older_than": "1s"}]}),
    "compact": ("POST", "/v1/governance/compact", {"older_than": "1s"}),
}  # fmt: skip


@pytest.mark.parametrize("grant", ["reviewer", "monitor", "executor read_only", "header ro"])
def test_rest_write_routes_refuse_read_only_roles_and_change_nothing(
    tmp_path: Path, grant: str
) -> None:
    mem, fact = _seeded(tmp_path)
    role = grant.split()[0] if grant != "header ro" else "planner"
    key = ApiKey(id="r", sha256=hash_key("key-r"), tenant="acme", roles=(role,),
                 agent_ids=("a",), read_only=grant.endswith("read_only"))  # fmt: skip
    client = TestClient(create_app(mem, KeyRing([key])), raise_server_exceptions=False)
    headers = {"x-api-key": "key-r"}
    if grant == "header ro":
        headers["x-read-only"] = "true"
    before = stored(mem, with_audit=False)
    for name, (method, path, body) in WRITES.items():
        r = client.request(method, path.replace(ID, fact), json=body, headers=headers)
        assert r.status_code == 403, (name, r.status_code, r.text)
        assert r.json()["code"] == "permission_denied", name
        # asking for a role the key does not grant is refused too, before any call
        up = {**headers, "x-agent-role": "orchestrator"}
        r = client.request(method, path.replace(ID, fact), json=body, headers=up)
        assert r.status_code == 403, (name, r.text)
    assert stored(mem, with_audit=False) == before
    assert mem.verify_audit_chain("acme", context=ORCH).ok
    assert mem.verify_audit_chain("beta", context=OTHER).ok
    mem.close()


TOOLS: dict[str, dict[str, Any]] = {
    "memory_add": {"content": "Ann likes mint"},
    "memory_forget": {"memory_id": ID},
}


@pytest.mark.parametrize("tool", list(TOOLS))
@pytest.mark.parametrize(
    "ctx",
    [
        ORCH.as_agent("rev", "reviewer"),
        ORCH.as_agent("mon", "monitor"),
        ORCH.as_agent("ro", "executor", read_only=True),
    ],
    ids=["reviewer", "monitor", "read_only"],
)
def test_mcp_write_tools_refuse_read_only_contexts(
    tmp_path: Path, tool: str, ctx: AgentContext
) -> None:
    mem, fact = _seeded(tmp_path)
    server = build_server(mem, context=ctx)
    arguments = {k: fact if v == ID else v for k, v in TOOLS[tool].items()}
    before = stored(mem, with_audit=False)

    async def call() -> dict[str, Any]:
        with pytest.raises(ToolError) as refused:
            await server.call_tool(tool, arguments)
        text = str(refused.value)
        return dict(json.loads(text[text.index("{") :]))

    assert asyncio.run(call())["code"] == "permission_denied"
    assert stored(mem, with_audit=False) == before
    mem.close()


def test_an_agent_cannot_raise_its_own_role_or_clear_read_only() -> None:
    reviewer = ORCH.as_agent("rev", "reviewer")
    for role in ("orchestrator", "executor", "planner", "researcher"):
        with pytest.raises(AccessDenied):
            reviewer.as_agent("rev", role)
    read_only = ORCH.as_agent("ro", "executor", read_only=True)
    with pytest.raises(AccessDenied):
        read_only.as_agent("ro", "executor", read_only=False)
    assert read_only.as_agent("ro2").read_only  # its children stay read-only


def test_refusals_under_many_names_in_one_tenant_keep_anothers_suppressed_count() -> None:
    """Finding: refusal windows were one store-wide list of 10,000 (tenant, agent,
    operation) entries. A tenant refused under 10,000 agent names (a key for any agent
    id) pushed out another tenant's windows, and the refusals that tenant's window had
    suppressed were never written to its chain. Windows are now bounded per tenant."""
    from attestor_arango.governance.access import DENIAL_BURST, DENIAL_KEYS, DenialLimiter

    limiter = DenialLimiter()
    victim = ("victim", "bot", "add")
    written = [limiter.admit(victim, 1_000 + i) for i in range(DENIAL_BURST + 3)]
    assert written[:DENIAL_BURST] == [0] * DENIAL_BURST and written[DENIAL_BURST:] == [None] * 3
    for i in range(DENIAL_KEYS + 10):
        limiter.admit(("mallory", f"agent-{i}", "add"), 2_000)
    # the victim's next window writes an entry carrying the 3 refusals it suppressed
    assert limiter.admit(victim, 1_000 + limiter.window_us + 5) == 3
