"""An attacker holding tenant acme's key (or an acme agent's context) reaches for tenant
beta's data by every id beta's rows carry, through REST, the Evidence Board and MCP:
memory ids (whole, short, upper-cased, padded), episode ids, recall ids, entity names,
signatures, the audit trail. Each read answers as if beta did not exist (404, or an empty
result holding only acme's own rows), and nothing of beta's changes: rows, audit chain,
quota counter.

These guarantees held when written; the paths were not covered before: signature
checks, episodes, recall traces, audit pages and the Evidence Board's provenance page by
another tenant's id, and short or case-changed forms of a foreign id.
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
from attestor_arango.config import Config, SigningSettings, TraceSettings
from attestor_arango.core.signing import Signer
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.interfaces.mcp import build_server
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

ACME = AgentContext(agent_id="o", role="orchestrator", tenant="acme")
BETA = AgentContext(agent_id="o", role="orchestrator", tenant="beta")
SECRET = "Bob's vault code is quartz"


def _world(tmp_path: Path) -> tuple[AgentMemory, dict[str, str]]:
    """acme and beta with a fact, an episode and a recorded recall each; beta's ids."""
    key = tmp_path / "sign.pem"
    Signer.generate().save(key)
    config = Config(
        path=str(tmp_path / "m.db"),
        signing=SigningSettings(enabled=True, key_path=str(key)),
        trace=TraceSettings(enabled=True, path=str(tmp_path / "trace.jsonl")),
    )
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64), clock=ManualClock())
    mem.add("Ann keeps the vault code in a drawer", entity="ann", category="vault", context=ACME)
    mem.ingest_round({"user": "I live in Lisbon."}, context=ACME)
    mem.recall("vault code", context=ACME)
    fact = mem.add(SECRET, entity="bob", category="vault", context=BETA)
    episode = mem.ingest_round({"user": "I live in Porto. My code is quartz."}, context=BETA)
    recall = mem.recall("vault code", context=BETA).recall_id
    assert recall is not None
    return mem, {"memory": fact.id, "episode": episode.episode.id, "recall": recall}


def _beta_state(mem: AgentMemory) -> tuple[Any, ...]:
    rows = [m.model_dump() for m in mem.list(status="all", limit=1000, context=BETA)]
    chain = [e.hash for e in mem.audit_log(limit=1000, context=BETA)]
    return rows, chain, mem.quota_status("beta", context=BETA)["used"]


def _id_forms(memory_id: str) -> list[str]:
    return [memory_id, memory_id[-8:], memory_id[:8], memory_id.upper(), f" {memory_id}"]


def _client(mem: AgentMemory) -> TestClient:
    key = ApiKey(
        id="k", sha256=hash_key("key-acme"), tenant="acme", roles=("orchestrator",),
        agent_ids=("o",),
    )  # fmt: skip
    return TestClient(create_app(mem, KeyRing([key])), raise_server_exceptions=False)


H = {"x-api-key": "key-acme"}


def test_rest_reads_by_another_tenants_ids_find_nothing(tmp_path: Path) -> None:
    mem, theirs = _world(tmp_path)
    client = _client(mem)
    before, beta = stored(mem, with_audit=False), _beta_state(mem)
    for form in _id_forms(theirs["memory"]):
        for path in (f"/v1/memories/{form}", f"/v1/memories/{form}/verify"):
            r = client.get(path, headers=H)
            if path.endswith("/verify") and r.status_code == 200:  # Attestor's bool (s31):
                assert r.json() is False, (path, r.text)  # their id verifies nothing here
            else:
                assert r.status_code in (404, 422), (path, r.text)  # 422: several of OUR ids
            assert SECRET not in r.text and "quartz" not in r.text
            if len(form) < len(theirs["memory"]):  # a short form never names their id
                assert theirs["memory"] not in r.text, r.text
    r = client.get(f"/v1/episodes/{theirs['episode']}", headers=H)
    assert r.status_code == 404, r.text
    r = client.get(f"/v1/recall/traces/{theirs['recall']}", headers=H)
    assert r.status_code == 404, r.text
    reads: list[tuple[str, str, dict[str, Any] | None]] = [
        ("POST", "/v1/timeline", {"entity": "bob"}),
        ("POST", "/v1/search", {"query": "vault code lives"}),
        ("POST", "/v1/recall", {"query": "vault code lives"}),
        ("POST", "/v1/recall/explain", {"query": "vault code lives"}),
        ("POST", "/v1/memories/list", {"status": "all", "entity": "bob"}),
        ("POST", "/v1/memories/list", {"status": "all"}),
        ("POST", "/v1/facts/current", {"entity": "bob"}),
        ("POST", "/v1/governance/export", {"user": "acme"}),
        ("GET", "/v1/audit?limit=1000", None),
        ("GET", "/v1/audit/page?limit=1000", None),
        ("GET", "/v1/audit/deletions", None),
        ("GET", "/v1/verify", None),
        ("GET", "/v1/stats", None),
    ]
    for method, path, body in reads:
        r = client.request(method, path, json=body, headers=H)
        assert r.status_code == 200, (path, r.text)
        text = r.text
        assert "quartz" not in text and "Porto" not in text and theirs["memory"] not in text, path
        assert '"tenant":"beta"' not in text.replace(" ", ""), path
    assert stored(mem, with_audit=False) == before
    assert _beta_state(mem) == beta
    assert mem.verify_audit_chain("beta", context=BETA).ok
    mem.close()


def test_rest_audit_page_cursor_of_another_tenants_chain_reads_only_ours(tmp_path: Path) -> None:
    mem, _ = _world(tmp_path)
    client = _client(mem)
    beta_seqs = [e.seq for e in mem.audit_log(limit=1000, context=BETA)]
    ours = {e.hash for e in mem.audit_log(limit=1000, context=ACME)}
    for before_seq in sorted(set(beta_seqs))[-3:]:
        r = client.get(f"/v1/audit/page?before_seq={before_seq + 1}&limit=100", headers=H)
        if r.status_code != 200:
            assert r.status_code == 422, r.text
            continue
        hashes = {e["hash"] for e in r.json()["entries"]}
        assert hashes <= ours, before_seq
    mem.close()


def test_the_evidence_board_shows_nothing_of_another_tenant(tmp_path: Path) -> None:
    mem, theirs = _world(tmp_path)
    client = _client(mem)
    beta = _beta_state(mem)
    for form in _id_forms(theirs["memory"]):
        r = client.get(f"/ui/memory/{form}", headers=H)
        assert r.status_code in (404, 422), (form, r.status_code)
        assert "quartz" not in r.text
        if len(form) < len(theirs["memory"]):
            assert theirs["memory"] not in r.text
    for path in ("/ui/timeline?entity=bob", "/ui/memories?status=all",
                 "/ui/recall?q=vault+code+lives", "/ui/audit"):  # fmt: skip
        r = client.get(path, headers=H)
        assert r.status_code == 200, (path, r.status_code)
        assert "quartz" not in r.text and theirs["memory"] not in r.text, path
    assert _beta_state(mem) == beta
    mem.close()


MCP_CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "get by id": ("memory_get", {"memory_id": "@memory"}),
    "get by short id": ("memory_get", {"memory_id": "@short"}),
    "forget by id": ("memory_forget", {"memory_id": "@memory"}),
    "forget by short id": ("memory_forget", {"memory_id": "@short"}),
    "timeline of their entity": ("memory_timeline", {"entity": "bob"}),
    "search their words": ("memory_search", {"query": "vault code lives"}),
    "recall their words": ("memory_recall", {"query": "vault code lives"}),
}


@pytest.mark.parametrize("case", list(MCP_CALLS))
def test_mcp_reads_and_forgets_by_another_tenants_ids_reach_nothing(
    tmp_path: Path, case: str
) -> None:
    mem, theirs = _world(tmp_path)
    server = build_server(mem, context=ACME)
    tool, arguments = MCP_CALLS[case]
    swap = {"@memory": theirs["memory"], "@short": theirs["memory"][-8:]}
    arguments = {k: swap.get(v, v) for k, v in arguments.items()}
    beta, rows = _beta_state(mem), mem.store.count_rows(Scope("beta"))

    async def call() -> str:
        try:
            result = await server.call_tool(tool, arguments)
        except ToolError as refused:
            text = str(refused)
            assert json.loads(text[text.index("{") :])["code"] == "not_found", text
            return text
        return json.dumps(result, default=str)

    text = asyncio.run(call())
    assert "quartz" not in text and "Porto" not in text
    assert _beta_state(mem) == beta
    assert mem.store.count_rows(Scope("beta")) == rows
    mem.close()
