"""Recall never degrades a tenant leak into a lane error (issue 16, finding 14)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import TenantLeakError
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.protocol import check_tenant

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme")


class LeakyVectors(SQLiteStore):
    """A real store with one bug: its vector lane answers with another tenant's rows,
    which the tenant filter's third lock (check_tenant) must turn into an error."""

    def vector_candidates(self, scope: Scope, *args: Any, **kwargs: Any) -> Any:
        hits = super().vector_candidates(Scope("beta", scope.namespace), *args, **kwargs)
        check_tenant(scope, [h.memory for h in hits])
        return hits

    def vector_ranked(self, scope: Scope, *args: Any, ordered: bool = True, **kwargs: Any) -> Any:
        # the lane's ranking handed over before its rows are read (what recall asks this
        # store for): the same bug
        hits = self.vector_candidates(scope, *args, **kwargs)
        return [h.memory.id for h in hits], [h.score for h in hits]


def test_a_leaking_lane_fails_recall_and_is_audited(tmp_path: Path) -> None:
    store = LeakyVectors(tmp_path / "memory.db")
    mem = AgentMemory(store=store, embedder=HashingEmbedder(64), clock=ManualClock(),
                      ids=SeededIdSource(4))  # fmt: skip
    mem.add("acme stores its files in Oslo", context=CTX)
    mem.add("beta stores its files in Rome", context=AgentContext(tenant="beta"))
    with pytest.raises(TenantLeakError):
        mem.recall("where are the files stored", context=CTX)
    actions = [e.action for e in mem.audit_log(limit=100, context=CTX)]
    mem.close()
    assert actions[-1] == "tenant_leak"
