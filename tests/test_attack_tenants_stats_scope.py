"""A namespace's stats tell nothing of the tenant's other namespaces (nor of another
tenant): every figure, the audit count included, moves only with the caller's own
namespace. Before, ``audit_entries`` counted the whole tenant's chain, so a key limited to
one namespace (which may not read the audit chain at all) watched another namespace's
activity through it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope
from tests.test_arango_store_unit import RecordingDB, make_store

A = AgentContext(agent_id="a", role="orchestrator", tenant="acme", namespace="alpha")
B = AgentContext(agent_id="b", role="orchestrator", tenant="acme", namespace="beta")
OTHER = AgentContext(agent_id="o", role="orchestrator", tenant="zeta", namespace="alpha")


def _busy_elsewhere(mem: AgentMemory) -> None:
    """Activity in another namespace of the tenant and in another tenant."""
    for ctx in (B, OTHER):
        m = mem.add("Bob likes coffee", entity="bob", category="drink", context=ctx)
        m = mem.update(m.id, content="Bob likes strong coffee", context=ctx)
        mem.ingest_round({"user": "I moved to Porto."}, context=ctx)
        mem.recall("coffee", context=ctx)
        mem.forget(m.id, context=ctx)


def test_stats_of_a_namespace_do_not_move_with_another(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    mem.add("Ann likes green tea", entity="ann", category="drink", context=A)
    before = mem.stats(context=A)
    assert before.audit_entries >= 1 and before.total == 1
    _busy_elsewhere(mem)
    assert mem.stats(context=A) == before
    # the caller's own activity still counts
    mem.add("Ann likes mint", entity="ann", category="herb", context=A)
    assert mem.stats(context=A).audit_entries > before.audit_entries
    # and a scope without a namespace counts the tenant's whole chain
    whole = mem.runtime.store.count_rows(Scope("acme"))["audit"]
    assert whole == len(mem.audit_log(limit=1000, context=A))
    mem.close()


def test_rest_stats_and_metrics_of_a_namespace_key(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    key = ApiKey(id="k", sha256=hash_key("k"), tenant="acme", roles=("monitor",),
                 agent_ids=("mon",), namespaces=("alpha",))  # fmt: skip
    client = TestClient(create_app(mem, KeyRing([key])), raise_server_exceptions=False)
    mem.add("Ann likes green tea", entity="ann", category="drink", context=A)
    stats = client.get("/v1/stats", headers={"x-api-key": "k"})
    metrics = client.get("/metrics", headers={"x-api-key": "k"})
    assert stats.status_code == 200 and metrics.status_code == 200
    _busy_elsewhere(mem)
    again = client.get("/v1/stats", headers={"x-api-key": "k"})
    assert again.json() == stats.json()
    tenant_lines = [ln for ln in metrics.text.splitlines() if "acme" in ln]
    later = client.get("/metrics", headers={"x-api-key": "k"}).text.splitlines()
    assert tenant_lines and tenant_lines == [ln for ln in later if "acme" in ln]
    mem.close()


def test_arango_counts_audit_in_the_scope() -> None:
    """Offline: the audit count is asked with the caller's namespace, never tenant-wide."""
    store = make_store(RecordingDB())
    sent: list[tuple[str, Scope, dict[str, Any]]] = []

    def run(name: str, scope: Scope, params: dict[str, Any]) -> list[dict[str, Any]]:
        sent.append((name, scope, dict(params)))
        return []

    store._run = run  # type: ignore[method-assign]
    assert store.count_rows(Scope("acme", "alpha"))["audit"] == 0
    audit = [(scope, params) for name, scope, params in sent if "audit" in name
             or params.get("@collection") == "audit"]  # fmt: skip
    assert audit == [(Scope("acme", "alpha"), {"namespace": "alpha"})]
