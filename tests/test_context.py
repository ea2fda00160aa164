"""Roles, the permission matrix, child contexts and the read_only switch."""

from __future__ import annotations

import pytest

from attestor_arango import AccessDenied, AgentContext, AgentRole, Permission
from attestor_arango.context import PERMISSIONS

R, W, F = Permission.READ, Permission.WRITE, Permission.FORGET
EXPECTED = {
    AgentRole.ORCHESTRATOR: {R, W, F},
    AgentRole.PLANNER: {R, W},
    AgentRole.EXECUTOR: {R, W},
    AgentRole.RESEARCHER: {R, W},
    AgentRole.REVIEWER: {R},
    AgentRole.MONITOR: {R},
}


@pytest.mark.parametrize("role", list(AgentRole))
def test_permission_matrix(role: AgentRole) -> None:
    ctx = AgentContext(role=role)
    assert ctx.permissions == EXPECTED[role] == PERMISSIONS[role]
    for perm in Permission:
        if perm in EXPECTED[role]:
            ctx.require(perm, "op")
        else:
            with pytest.raises(AccessDenied):
                ctx.require(perm, "op")


@pytest.mark.parametrize("role", list(AgentRole))
def test_read_only_removes_write_and_forget(role: AgentRole) -> None:
    assert AgentContext(role=role, read_only=True).permissions == {R}


@pytest.mark.parametrize("parent", list(AgentRole))
@pytest.mark.parametrize("child", list(AgentRole))
def test_child_never_gains_permission(parent: AgentRole, child: AgentRole) -> None:
    p = AgentContext(agent_id="p", role=parent)
    if EXPECTED[child] <= EXPECTED[parent]:
        c = p.as_agent("c", child)
        assert c.permissions <= p.permissions
    else:
        with pytest.raises(AccessDenied):
            p.as_agent("c", child)


def test_read_only_parent_cannot_spawn_writer() -> None:
    p = AgentContext(agent_id="p", role=AgentRole.ORCHESTRATOR, read_only=True)
    c = p.as_agent("c", AgentRole.EXECUTOR)
    assert c.read_only and c.permissions == {R}
    with pytest.raises(AccessDenied):
        p.as_agent("c2", AgentRole.EXECUTOR, read_only=False)


def test_child_defaults_to_parent_role_not_a_writer() -> None:
    p = AgentContext(agent_id="p", role=AgentRole.MONITOR)
    assert p.as_agent("c").role == AgentRole.MONITOR


def test_trail_and_shared_scratchpad() -> None:
    o = AgentContext(agent_id="orchestrator", namespace="project:acme")
    planner = o.as_agent("planner", AgentRole.PLANNER)
    executor = planner.as_agent("executor", AgentRole.EXECUTOR)
    assert executor.agent_trail == ("orchestrator", "planner", "executor")
    assert executor.parent_agent_id == "planner"
    executor.scratchpad["plan"] = [1, 2]
    assert o.scratchpad["plan"] == [1, 2]
    assert executor.namespace == "project:acme"


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTESTOR_AGENT_ID", "bot")
    monkeypatch.setenv("ATTESTOR_ROLE", "reviewer")
    monkeypatch.setenv("ATTESTOR_TENANT", "acme")
    monkeypatch.setenv("ATTESTOR_TOKEN_BUDGET", "500")
    ctx = AgentContext.from_env(namespace="ops")
    assert (ctx.agent_id, ctx.role, ctx.tenant, ctx.namespace, ctx.token_budget) == (
        "bot",
        AgentRole.REVIEWER,
        "acme",
        "ops",
        500,
    )
    monkeypatch.setenv("ATTESTOR_ROLE", "boss")
    with pytest.raises(ValueError, match="unknown role"):
        AgentContext.from_env()
