"""The RBAC matrix: every role (and read_only) against every write, forget, purge,
retention, compaction, quota, export and import operation.

The expected outcome of each cell is written out here by hand (not derived from
the code under test). A refused call raises AccessDenied, changes no data, and
leaves a ``permission_denied`` entry naming the agent and the operation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from attestor_arango import AccessDenied, AgentContext, AgentRole
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

SEEDER = AgentContext(agent_id="seed", role=AgentRole.ORCHESTRATOR, tenant="acme", namespace="p1")
WRITERS = {"orchestrator", "planner", "executor", "researcher"}
ADMIN = {"orchestrator"}
EVERYONE = {r.value for r in AgentRole}

Op = Callable[[AgentMemory, AgentContext, dict[str, Any]], object]

OPS: dict[str, tuple[set[str], Op]] = {
    "add": (WRITERS, lambda m, c, s: m.add("a new fact", context=c)),
    "update": (WRITERS, lambda m, c, s: m.update(s["id"], content="changed", context=c)),
    "ingest_round": (
        WRITERS,
        lambda m, c, s: m.ingest_round(
            {"user": "I moved to Lisbon last week.", "assistant": "Noted."}, context=c
        ),
    ),
    "consolidate": (WRITERS, lambda m, c, s: m.consolidate(limit=5, context=c)),
    "forget": (ADMIN, lambda m, c, s: m.forget(s["id"], reason="r", context=c)),
    "purge_user": (ADMIN, lambda m, c, s: m.purge_user("acme", "erasure", context=c)),
    "apply_retention": (
        ADMIN,
        lambda m, c, s: m.apply_retention(
            [{"name": "all", "action": "delete", "older_than": "1s"}], context=c
        ),
    ),
    "compact": (ADMIN, lambda m, c, s: m.compact(older_than="1s", context=c)),
    "set_quota": (ADMIN, lambda m, c, s: m.set_quota("acme", daily_writes=5, context=c)),
    "export_user": (ADMIN, lambda m, c, s: m.export_user("acme", context=c)),
    "import_user": (
        ADMIN,
        lambda m, c, s: m.import_user(s["empty_export"], context=_in_tenant(c, "fresh")),
    ),
    "verify_audit_chain": (EVERYONE, lambda m, c, s: m.verify_audit_chain(context=c)),
    "deletion_audit_log": (EVERYONE, lambda m, c, s: m.deletion_audit_log(context=c)),
    "quota_status": (EVERYONE, lambda m, c, s: m.quota_status(context=c)),
}


def _in_tenant(ctx: AgentContext, tenant: str) -> AgentContext:
    return AgentContext(
        agent_id=ctx.agent_id, role=ctx.role, tenant=tenant, read_only=ctx.read_only
    )


def _state(mem: AgentMemory) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tenant in ("acme", "fresh"):
        out[tenant] = {
            "residue": {
                k: v
                for k, v in mem.store.tenant_residue(Scope(tenant)).items()
                if k not in ("vector_cache", "text_cache", "memory_cache", "graph_cache")
            },
            "rows": [m.model_dump() for m in mem.list(status="all", context=SEEDER)]
            if tenant == "acme"
            else None,
        }
    return out


CASES = [
    (role, read_only, op)
    for role in AgentRole
    for read_only in (False, True)
    for op in OPS
    if not (read_only and role in (AgentRole.REVIEWER, AgentRole.MONITOR))
]


@pytest.mark.parametrize(
    ("role", "read_only", "op"),
    CASES,
    ids=[f"{r.value}{'-ro' if ro else ''}-{op}" for r, ro, op in CASES],
)
def test_rbac_matrix(mem: AgentMemory, role: AgentRole, read_only: bool, op: str) -> None:
    seeded = mem.add("Alice leads design", entity="alice", category="role", context=SEEDER)
    setup = {
        "id": seeded.id,
        "empty_export": mem.export_user("void", context=_in_tenant(SEEDER, "void")),
    }
    ctx = AgentContext(
        agent_id=f"{role.value}-agent",
        role=role,
        tenant="acme",
        namespace="p1",
        read_only=read_only,
    )
    allowed_roles, call = OPS[op]
    read_op = allowed_roles == EVERYONE
    allowed = role.value in allowed_roles and (read_op or not read_only)
    before = _state(mem)
    if allowed:
        result = call(mem, ctx, setup)
        assert result is not None
        for tenant in ("acme", "fresh"):
            actions = {e.action for e in mem.store.read_audit(Scope(tenant), 1000)}
            assert "permission_denied" not in actions
        return
    with pytest.raises(AccessDenied):
        call(mem, ctx, setup)
    assert _state(mem) == before
    tenant = "fresh" if op == "import_user" else "acme"
    last = mem.store.read_audit(Scope(tenant), 1000)[-1]
    assert (last.action, last.target, last.agent_id) == (
        "permission_denied",
        op,
        ctx.agent_id,
    )
    assert last.details["role"] == role.value and last.details["read_only"] is read_only


def test_matrix_covers_every_role_and_operation() -> None:
    assert {c[0] for c in CASES} == set(AgentRole)
    assert {c[2] for c in CASES} == set(OPS)
    denied = sum(
        1
        for role, ro, op in CASES
        if not (role.value in OPS[op][0] and (OPS[op][0] == EVERYONE or not ro))
    )
    assert denied > 40  # the matrix exercises refusals, not just happy paths


def test_a_child_context_cannot_gain_governance_rights(mem: AgentMemory) -> None:
    planner = SEEDER.as_agent("planner", AgentRole.PLANNER)
    with pytest.raises(AccessDenied):
        planner.as_agent("sneaky", AgentRole.ORCHESTRATOR)
    with pytest.raises(AccessDenied):
        mem.purge_user("acme", "escalation attempt", context=planner)
    assert mem.store.read_audit(Scope("acme"), 10)[-1].action == "permission_denied"
