"""Tenant isolation as a property: no AgentMemory method returns or changes another
tenant's data, and a call without a tenant fails before any I/O."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attestor_arango import AgentContext, NotFoundError, Scope, TenantRequiredError
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory

CONTEXTS = [
    AgentContext(agent_id=f"a-{t}-{n}", tenant=t, namespace=n)
    for t in ("acme", "beta", "gamma")
    for n in ("n1", "n2")
]
WORDS = ["plan", "secret", "budget", "alice", "deploy", "friday"]

ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "update", "forget", "probe"]),
        st.integers(0, len(CONTEXTS) - 1),
        st.integers(0, 1000),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    ),
    min_size=1,
    max_size=30,
)


def _tenant_state(mem: AgentMemory, tenant: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for ctx in CONTEXTS:
        if ctx.tenant == tenant:
            rows += [m.model_dump() for m in mem.list(status="all", context=ctx)]
    return rows


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_no_method_crosses_tenants(steps: list[tuple[str, int, int, list[str]]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        mem = AgentMemory(Path(tmp) / "m.db", embedder=HashingEmbedder(32), clock=ManualClock())
        owner: dict[str, str] = {}
        for kind, ci, n, words in steps:
            ctx = CONTEXTS[ci]
            text = " ".join(words)
            if kind == "add":
                m = mem.add(text, entity=words[0], category="c", context=ctx)
                owner[m.id] = m.tenant
                continue
            foreign = sorted(i for i, t in owner.items() if t != ctx.tenant)
            if not foreign:
                continue
            target = foreign[n % len(foreign)]
            victim = owner[target]
            before = _tenant_state(mem, victim)
            with pytest.raises(NotFoundError):
                if kind == "update":
                    mem.update(target, content=text + " hijack", context=ctx)
                elif kind == "forget":
                    mem.forget(target, context=ctx)
                else:
                    mem.get(target, context=ctx)
            assert _tenant_state(mem, victim) == before
        for ctx in CONTEXTS:
            seen: list[Any] = []
            seen += mem.list(status="all", context=ctx)
            seen += [r.memory for r in mem.recall(" ".join(WORDS), context=ctx)]
            seen += mem.search("plan secret budget alice", context=ctx)
            seen += mem.timeline("plan", context=ctx)
            assert all(m.tenant == ctx.tenant and m.namespace == ctx.namespace for m in seen)
            stats = mem.stats(context=ctx)
            mine = [i for i, t in owner.items() if t == ctx.tenant]
            assert stats.total <= len(mine)
        mem.close()


def test_missing_tenant_fails_before_io() -> None:
    with pytest.raises(TenantRequiredError):
        Scope("")
    with pytest.raises(TenantRequiredError):
        Scope(None)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        AgentContext(tenant="")
