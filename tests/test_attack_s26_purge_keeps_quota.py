"""A purge erases the subject's data, not the operator's limits on the tenant.

Before, ``purge_user`` deleted the tenant's daily quota with its rows: right after the
erasure the tenant (an agent still holding a key) could write without any limit, until an
operator noticed and set the quota again. A quota is configuration an operator set (who may
write how much), not the subject's data; its every value is already in the kept audit chain
(``quota_set`` entries), so keeping it reveals nothing the erasure removes. The purge keeps
it and says so (report ``kept``, the outcome audit entry's ``kept``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import QuotaExceededError
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope
from tests.test_arango_store_unit import RecordingDB, make_store

CTX = AgentContext(agent_id="ops", role=AgentRole.ORCHESTRATOR, tenant="zoe", namespace="n1")


def test_a_purge_keeps_the_quota_an_operator_set_and_says_so(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    mem.add("Zoe lives in Quimper", context=CTX)
    mem.set_quota("zoe", daily_writes=2, context=CTX)

    report = mem.purge_user("zoe", "GDPR request #7", context=CTX)

    assert report.ok, report.to_dict()
    assert "quotas" not in report.removed
    assert report.kept["quota"] == {"daily_writes": 2}
    assert report.to_dict()["kept"]["quota"] == {"daily_writes": 2}
    assert mem.store.get_quota(Scope("zoe")) == 2
    assert mem.quota_status("zoe", context=CTX)["daily_writes"] == 2
    outcome = [e for e in mem.audit_log(limit=100, context=CTX) if e.action == "purge_completed"]
    assert outcome[-1].details["kept"]["quota"] == {"daily_writes": 2}
    # the limit still holds: the day's counter was erased with the rest, the quota was not
    mem.add("one", context=CTX)
    mem.add("two", context=CTX)
    with pytest.raises(QuotaExceededError):
        mem.add("three", context=CTX)
    assert len(mem.list(context=CTX)) == 2
    mem.close()


def test_a_purge_of_a_tenant_without_quota_keeps_no_quota(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    mem.add("Zoe lives in Quimper", context=CTX)
    report = mem.purge_user("zoe", "GDPR request #8", context=CTX)
    assert report.ok and "quota" not in report.kept
    mem.close()


def test_the_arango_store_neither_erases_nor_counts_the_quota() -> None:
    """The ArangoDB backend in step (offline): no purge step, no residue, no compaction of
    the quotas collection, and a request to purge it is refused like any unknown step."""
    store = make_store(RecordingDB())
    assert "quotas" not in store.purge_collections()
    assert "write_counts" in store.purge_collections()
    with pytest.raises(Exception, match="unknown purge collection"):
        store.purge_collection(Scope("zoe"), "quotas")
    store._count_in = lambda scope, name: 0  # type: ignore[method-assign]
    store._run = lambda name, scope, params: []  # type: ignore[method-assign]
    assert "quotas" not in store.tenant_residue(Scope("zoe"))
