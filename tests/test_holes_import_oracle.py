"""An import reveals nothing about another tenant's ids (issue 16, finding 15), over a real
uvicorn server: importing rows whose ids exist in another tenant answers exactly as importing
rows whose ids exist nowhere, and the other tenant's rows are untouched.

The embedded store's identity is (tenant, id), as ArangoDB's unique (tenant, id) indexes
already are (the schema checks at the end are offline: no server runs here)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
from forged_chain import rechained
from interface_support import ROOT, role_key, running_server

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.interfaces.api.auth import KeyRing
from attestor_arango.memory import AgentMemory

TENANTS = ("acme", "beta", "gamma")
CTX = {t: AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant=t) for t in TENANTS}


def _memory(path: Path, seed: int) -> AgentMemory:
    return AgentMemory(
        path, embedder=HashingEmbedder(64), clock=ManualClock(), ids=SeededIdSource(seed)
    )


def _fill(mem: AgentMemory) -> None:
    """Memories (one superseded), an episode, entities and a relation in tenant acme."""
    ctx = CTX["acme"]
    mem.add("Ann likes tea", entity="Ann", category="drink", context=ctx)
    mem.add("Ann likes coffee", entity="Ann", category="drink", context=ctx)
    mem.ingest_round({"user": "I live in Porto and I work at Initech."}, context=ctx)


def _as_tenant(export: dict[str, Any], tenant: str) -> dict[str, Any]:
    """The export claims to come from ``tenant`` itself, so every id is kept on import (its
    rows too: an export whose rows name another tenant than its header is refused)."""
    rows = {
        key: [{**row, "tenant": tenant} for row in export[key]]
        for key in ("memories", "episodes", "entities", "relations")
    }
    return rechained({**export, **rows, "tenant": tenant})


def _ids(export: dict[str, Any]) -> set[str]:
    return {r["id"] for key in ("memories", "episodes", "relations") for r in export[key]}


def _state(mem: AgentMemory, tenant: str) -> str:
    """Everything stored for ``tenant`` (its export minus the audit tail the export adds)."""
    data = mem.export_user(tenant, context=CTX[tenant])
    data.pop("exported_at")
    data.pop("chain")  # the head counts the export entries dropped below
    data["audit"] = [a for a in data["audit"] if a["action"] != "export"]
    return json.dumps(data, sort_keys=True)


def test_an_import_answers_the_same_for_a_foreign_id_and_a_fresh_one(tmp_path: Path) -> None:
    mem = _memory(tmp_path / "memory.db", seed=9)
    _fill(mem)
    foreign = mem.export_user("acme", context=CTX["acme"])
    other = _memory(tmp_path / "other.db", seed=10)  # the same rows under ids nobody holds
    _fill(other)
    fresh = other.export_user("acme", context=CTX["acme"])
    other.close()
    assert _ids(foreign) and not _ids(foreign) & _ids(fresh)
    before = _state(mem, "acme")

    keys, plain = [], {}
    for tenant in TENANTS:
        text, key = role_key("orchestrator", tenant)
        keys.append(key)
        plain[tenant] = text
    with running_server(mem, KeyRing(keys)) as url, httpx.Client(base_url=url) as c:
        answers = {
            tenant: c.post(
                "/v1/governance/import",
                json={"data": _as_tenant(data, tenant)},
                headers={"x-api-key": plain[tenant]},
            )
            for tenant, data in (("beta", foreign), ("gamma", fresh))
        }
        listed = c.post("/v1/memories/list", json={}, headers={"x-api-key": plain["acme"]})
    beta, gamma = answers["beta"], answers["gamma"]
    assert (beta.status_code, beta.json()) == (gamma.status_code, gamma.json()), beta.text
    assert beta.status_code == 200, beta.text

    # the other tenant is untouched, and each tenant reads only its own rows
    assert _state(mem, "acme") == before
    assert mem.verify_audit_chain("acme", context=CTX["acme"]).ok
    assert mem.verify_audit_chain("beta", context=CTX["beta"]).ok
    acme_rows = {m["id"]: m["tenant"] for m in listed.json()}
    assert set(acme_rows.values()) == {"acme"}, acme_rows
    beta_rows = mem.list(context=CTX["beta"], limit=100)
    assert {m.tenant for m in beta_rows} == {"beta"}
    assert {m.id for m in beta_rows} <= _ids(foreign)
    mem.close()


def test_the_embedded_schema_keys_rows_by_tenant_and_id(tmp_path: Path) -> None:
    mem = _memory(tmp_path / "memory.db", seed=9)
    mem.close()
    conn = sqlite3.connect(tmp_path / "memory.db")
    try:
        for table in ("memories", "episodes", "relations"):
            unique = [
                [c[2] for c in conn.execute(f"PRAGMA index_info('{idx[1]}')")]
                for idx in conn.execute(f"PRAGMA index_list('{table}')")
                if idx[2]  # unique
            ]
            assert ["tenant", "id"] in unique and ["id"] not in unique, (table, unique)
    finally:
        conn.close()


def test_arango_keys_rows_by_tenant_and_id_and_never_sends_a_key() -> None:
    """Offline: the ArangoDB schema's unique indexes and the insert queries."""
    schema = json.loads((ROOT / "schemas" / "collections.json").read_text(encoding="utf-8"))
    uniques: dict[str, list[list[str]]] = {}
    for coll in schema["collections"]:
        uniques[coll["name"]] = [i["fields"] for i in coll.get("indexes", []) if i.get("unique")]
    for name in ("memories", "episodes", "relations"):
        assert ["tenant", "id"] in uniques[name], (name, uniques[name])
        assert ["id"] not in uniques[name] and ["_key"] not in uniques[name]
    for name in ("memory_insert", "episode_insert", "relation_insert"):
        text = (ROOT / "aql" / f"{name}.aql").read_text(encoding="utf-8")
        body = "\n".join(line for line in text.splitlines() if not line.startswith("//"))
        assert "tenant: @tenant" in body and "_key" not in body, name
