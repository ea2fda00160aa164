"""Who is calling: roles, permissions and the per-agent context.

Permissions are checked in AgentMemory before any I/O. The REST and MCP layers
only build a context; they can never widen one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from attestor_arango.errors import AccessDenied, ValidationError
from attestor_arango.scope import Scope, check_name


class AgentRole(StrEnum):
    ORCHESTRATOR = "orchestrator"
    PLANNER = "planner"
    EXECUTOR = "executor"
    RESEARCHER = "researcher"
    REVIEWER = "reviewer"
    MONITOR = "monitor"

    @classmethod
    def parse(cls, value: AgentRole | str) -> AgentRole:
        if isinstance(value, AgentRole):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            names = ", ".join(r.value for r in cls)
            raise ValidationError(f"unknown role {value!r}; use one of: {names}") from None


class Permission(StrEnum):
    READ = "read"
    WRITE = "write"
    FORGET = "forget"  # also purge, retention and compaction


PERMISSIONS: dict[AgentRole, frozenset[Permission]] = {
    AgentRole.ORCHESTRATOR: frozenset({Permission.READ, Permission.WRITE, Permission.FORGET}),
    AgentRole.PLANNER: frozenset({Permission.READ, Permission.WRITE}),
    AgentRole.EXECUTOR: frozenset({Permission.READ, Permission.WRITE}),
    AgentRole.RESEARCHER: frozenset({Permission.READ, Permission.WRITE}),
    AgentRole.REVIEWER: frozenset({Permission.READ}),
    AgentRole.MONITOR: frozenset({Permission.READ}),
}

SOLO_TENANT = "local"
SOLO_NAMESPACE = "inbox"
DEFAULT_TOKEN_BUDGET = 20_000


@dataclass
class AgentContext:
    """One agent's identity, scope and budgets.

    ``scratchpad`` is shared by reference with every child made by ``as_agent``;
    the trail grows by one agent id per hand-off, so a fact can be traced to the
    chain of agents that produced it.
    """

    agent_id: str = "solo"
    role: AgentRole = AgentRole.ORCHESTRATOR
    tenant: str = SOLO_TENANT
    namespace: str = SOLO_NAMESPACE
    session_id: str | None = None
    parent_agent_id: str | None = None
    agent_trail: tuple[str, ...] = ()
    scratchpad: dict[str, Any] = field(default_factory=dict)
    token_budget: int = DEFAULT_TOKEN_BUDGET
    token_budget_used: int = 0
    max_writes_per_agent: int | None = None
    writes_made: int = 0
    read_only: bool = False

    def __post_init__(self) -> None:
        self.role = AgentRole.parse(self.role)
        if not isinstance(self.agent_id, str) or not self.agent_id.strip():
            raise ValidationError("agent_id must be a non-empty string")
        check_name(self.tenant, "tenant")
        check_name(self.namespace, "namespace")
        if self.token_budget <= 0:
            raise ValidationError("token_budget must be a positive number of tokens")
        if self.max_writes_per_agent is not None and self.max_writes_per_agent < 0:
            raise ValidationError("max_writes_per_agent must be >= 0")
        if not self.agent_trail or self.agent_trail[-1] != self.agent_id:
            self.agent_trail = (*self.agent_trail, self.agent_id)

    @property
    def permissions(self) -> frozenset[Permission]:
        granted = PERMISSIONS[self.role]
        if self.read_only:
            granted = granted & {Permission.READ}
        return granted

    def can(self, permission: Permission) -> bool:
        return permission in self.permissions

    def require(self, permission: Permission, operation: str) -> None:
        if not self.can(permission):
            why = "the context is read_only" if self.read_only else f"role {self.role.value}"
            raise AccessDenied(
                f"{operation} needs {permission.value} permission, which {why} does not have; "
                "use a context with a role that grants it",
                agent_id=self.agent_id,
                role=self.role.value,
                operation=operation,
            )

    @property
    def scope(self) -> Scope:
        return Scope(self.tenant, self.namespace)

    def as_agent(
        self,
        agent_id: str,
        role: AgentRole | str | None = None,
        *,
        namespace: str | None = None,
        read_only: bool | None = None,
        token_budget: int | None = None,
    ) -> AgentContext:
        """A child context; it never holds a permission its parent lacks."""
        child_role = self.role if role is None else AgentRole.parse(role)
        child_ro = self.read_only or bool(read_only)
        if read_only is False and self.read_only:
            raise AccessDenied("a child of a read_only context cannot be writable")
        extra = PERMISSIONS[child_role] - self.permissions
        if not child_ro and extra:
            raise AccessDenied(
                f"role {child_role.value} would grant {sorted(p.value for p in extra)}, "
                f"which the parent {self.agent_id} ({self.role.value}) does not have; "
                "spawn the child with an equal or narrower role",
            )
        return replace(
            self,
            agent_id=agent_id,
            role=child_role,
            namespace=namespace or self.namespace,
            parent_agent_id=self.agent_id,
            agent_trail=(*self.agent_trail, agent_id),
            token_budget=token_budget or self.token_budget,
            token_budget_used=0,
            writes_made=0,
            read_only=child_ro,
            scratchpad=self.scratchpad,
        )

    @classmethod
    def from_env(cls, **overrides: Any) -> AgentContext:
        """Reads ATTESTOR_AGENT_ID, _ROLE, _TENANT, _NAMESPACE, _SESSION_ID, _TOKEN_BUDGET,
        _READ_ONLY; keyword arguments win."""
        env = os.environ
        values: dict[str, Any] = {}
        for key, name in (
            ("agent_id", "ATTESTOR_AGENT_ID"),
            ("role", "ATTESTOR_ROLE"),
            ("tenant", "ATTESTOR_TENANT"),
            ("namespace", "ATTESTOR_NAMESPACE"),
            ("session_id", "ATTESTOR_SESSION_ID"),
        ):
            if env.get(name):
                values[key] = env[name]
        if env.get("ATTESTOR_TOKEN_BUDGET"):
            try:
                values["token_budget"] = int(env["ATTESTOR_TOKEN_BUDGET"])
            except ValueError:
                raise ValidationError("ATTESTOR_TOKEN_BUDGET must be an integer") from None
        if env.get("ATTESTOR_READ_ONLY"):
            values["read_only"] = env["ATTESTOR_READ_ONLY"].lower() in {"1", "true", "yes"}
        values.update(overrides)
        return cls(**values)
