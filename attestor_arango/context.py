"""Who is calling: roles, permissions and the per-agent context.

Permissions are checked in AgentMemory before any I/O. The REST and MCP layers
only build a context; they can never widen one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from attestor_arango.errors import AccessDenied, ValidationError, shown
from attestor_arango.scope import Scope, check_name, chosen_namespace, refuse_empty_namespace


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
        if isinstance(value, str):  # not str(value): an int of 5000 digits has no text
            try:
                return cls(value.strip().lower())
            except ValueError:
                pass
        names = ", ".join(r.value for r in cls)
        raise ValidationError(f"unknown role {shown(value)}; use one of: {names}")


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


MAX_AGENT_ID = 128  # agent ids, trail entries and session ids land in rows and audit entries
ANY_AGENT = "*"  # "any agent" in a key file (REST, MCP over HTTP): no agent's name
_AGENT_FIELDS = frozenset({"agent_id", "agent_trail entry", "parent_agent_id"})


def check_agent_text(value: object, what: str, *, optional: bool = False) -> None:
    """An agent id, trail entry or session id: at most ``MAX_AGENT_ID`` printable
    characters (``optional``: None too); an agent (``what`` agent_id, agent_trail entry,
    parent_agent_id) is not ``*``, as REST refuses it. Raises ``ValidationError``."""
    if value is None and optional:
        return
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{what} must be a non-empty string")
    if what in _AGENT_FIELDS and value.strip() == ANY_AGENT:
        raise ValidationError(
            f"{what}: '*' is not an agent id (in a key file it means any agent); name the agent",
            field=what,
        )
    if len(value) > MAX_AGENT_ID:
        raise ValidationError(
            f"{what} has {len(value)} characters, over the limit of {MAX_AGENT_ID}; use a short id",
            field=what,
        )
    if not value.isprintable():
        char = next(c for c in value if not c.isprintable())
        raise ValidationError(
            f"{what} holds the character U+{ord(char):04X}, which is not printable; "
            "use letters, digits, punctuation and spaces",
            field=what,
        )


class Usage:
    """What a context (and every copy of it with another session) has spent.

    Kept apart from the frozen ``AgentContext`` and shared by reference, so the
    counters move while identity, role and tenant cannot. A server that builds a
    context per request keeps one ``Usage`` per (key, agent), so a limit counts
    across requests whatever the request headers say.
    """

    __slots__ = ("_lock", "tokens", "writes")

    def __init__(self) -> None:
        self.writes = 0
        self.tokens = 0
        self._lock = threading.Lock()

    def claim_write(self, limit: int | None) -> bool:
        """Counts one write when fewer than ``limit`` are counted (any number when None);
        False, counting nothing, when not. Check and count are one step, so two threads
        sharing this usage cannot both take its last write."""
        with self._lock:
            if limit is not None and self.writes >= limit:
                return False
            self.writes += 1
            return True

    def take_back(self, writes: int) -> None:
        """Un-counts ``writes`` that rolled back (``Writer.together``): they stored nothing."""
        with self._lock:
            self.writes = max(0, self.writes - writes)

    def add_tokens(self, n: int) -> None:
        with self._lock:
            self.tokens += n


@dataclass(frozen=True)
class AgentContext:
    """One agent's identity, scope and budgets; immutable (narrowing returns a new one).

    ``scratchpad`` is shared by reference with every child made by ``as_agent``;
    the trail grows by one agent id per hand-off, so a fact can be traced to the
    chain of agents that produced it. Spending (writes, tokens) lives in ``usage``.
    """

    agent_id: str = "solo"
    role: AgentRole = AgentRole.ORCHESTRATOR
    tenant: str = SOLO_TENANT
    namespace: str = SOLO_NAMESPACE
    session_id: str | None = None
    parent_agent_id: str | None = None
    agent_trail: tuple[str, ...] = ()
    scratchpad: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    token_budget: int = DEFAULT_TOKEN_BUDGET
    max_writes_per_agent: int | None = None
    read_only: bool = False
    usage: Usage = field(default_factory=Usage, compare=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: the constructor normalises once, nothing later
        set_(self, "role", AgentRole.parse(self.role))
        check_agent_text(self.agent_id, "agent_id")
        check_agent_text(self.session_id, "session_id", optional=True)
        check_name(self.tenant, "tenant")
        refuse_empty_namespace(self.namespace)  # the CLI's --namespace '' among others
        check_name(self.namespace, "namespace")
        if not isinstance(self.read_only, bool):
            raise ValidationError("read_only must be a boolean")
        if isinstance(self.token_budget, bool) or not isinstance(self.token_budget, int):
            raise ValidationError("token_budget must be an integer number of tokens")
        if self.token_budget <= 0:
            raise ValidationError("token_budget must be a positive number of tokens")
        limit = self.max_writes_per_agent
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise ValidationError("max_writes_per_agent must be an integer or None")
        if limit is not None and limit < 0:
            raise ValidationError("max_writes_per_agent must be >= 0")
        trail = tuple(self.agent_trail)
        if len(trail) > 64:
            raise ValidationError("agent_trail is longer than 64 hand-offs")
        for name in trail:
            check_agent_text(name, "agent_trail entry")
        # after the trail: over HTTP the parent is the trail's last entry, sent as such
        check_agent_text(self.parent_agent_id, "parent_agent_id", optional=True)
        if not trail or trail[-1] != self.agent_id:
            trail = (*trail, self.agent_id)
        set_(self, "agent_trail", trail)

    @property
    def writes_made(self) -> int:
        return self.usage.writes

    @property
    def token_budget_used(self) -> int:
        return self.usage.tokens

    def with_session(self, session_id: str | None) -> AgentContext:
        """The same agent (and the same ``usage``) in another session."""
        return replace(self, session_id=session_id, usage=self.usage)

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
        """A child context; it never holds a permission its parent lacks. ``namespace`` None
        keeps the parent's; an empty one is refused (``chosen_namespace``)."""
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
            namespace=chosen_namespace(namespace, self.namespace),
            parent_agent_id=self.agent_id,
            agent_trail=(*self.agent_trail, agent_id),
            token_budget=_narrower(self.token_budget, token_budget),
            read_only=child_ro,
            scratchpad=self.scratchpad,
            usage=Usage(),
        )

    def budget_for(self, asked: int | None) -> int:
        """The token budget of one call: the caller may ask for less than the context
        grants, never more (a body or header cannot raise the ceiling)."""
        return _narrower(self.token_budget, asked)

    @classmethod
    def from_env(cls, **overrides: Any) -> AgentContext:
        """Reads ATTESTOR_AGENT_ID, _ROLE, _TENANT, _NAMESPACE, _SESSION_ID, _TOKEN_BUDGET,
        _READ_ONLY (through ``config.identity_settings``); keyword arguments win.

        Raises ``ValidationError`` for a non-integer ``ATTESTOR_TOKEN_BUDGET`` and for an
        ``ATTESTOR_TENANT``, ``_NAMESPACE``, ``_ROLE`` or ``_READ_ONLY`` set but empty (and
        not given here).
        """
        # imported here: the HTTP client builds contexts and never needs the config reader
        from attestor_arango.config import identity_settings

        return cls(**{**identity_settings(given=frozenset(overrides)), **overrides})


def _narrower(ceiling: int, asked: int | None) -> int:
    if asked is None:
        return ceiling
    if isinstance(asked, bool) or not isinstance(asked, int) or asked <= 0:
        raise ValidationError("token_budget must be a positive integer")
    return min(ceiling, asked)
