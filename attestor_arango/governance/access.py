"""Who may run which governance operation, and the audit of every refusal.

Operations that act on a whole tenant (export, import, quota changes, purge,
retention, compaction) need FORGET, which only the ORCHESTRATOR role holds and
``read_only`` removes: an export copies every namespace, episode and audit
entry of the tenant out of the store, so it is as privileged as erasing it.
Reading the audit trail and checking signatures only needs READ, so a MONITOR
or REVIEWER can audit the writers without being able to change anything.

A context is bound to one tenant; naming another tenant as the subject is
refused (tenants are isolated hard, even from orchestrators of other tenants).

Refusals are audited in the caller's tenant chain. Appending that entry goes
straight to the audit chain and needs no permission, so a read-only agent's
refused write still leaves a trace. Refusals are rate-limited per (tenant,
agent, operation): the first ``DENIAL_BURST`` in a ``DENIAL_WINDOW_US`` window are
written, later ones are only counted, and the count rides on the next entry
written (``suppressed``), so a caller without write permission cannot grow the
store by being refused.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any

from attestor_arango.context import AgentContext, AgentRole, Permission
from attestor_arango.core.audit import Auditor
from attestor_arango.errors import AccessDenied, ValidationError, shown
from attestor_arango.scope import check_name

OPERATIONS: dict[str, Permission] = {
    "set_quota": Permission.FORGET,
    "export_user": Permission.FORGET,
    "import_user": Permission.FORGET,
    "purge_user": Permission.FORGET,
    "apply_retention": Permission.FORGET,
    "compact": Permission.FORGET,
    "reembed": Permission.FORGET,
    "verify_audit_chain": Permission.READ,
    "deletion_audit_log": Permission.READ,
    "audit_page": Permission.READ,
    "verify_memory": Permission.READ,
    "verify_all": Permission.READ,
    "quota_status": Permission.READ,
}

DENIED_ACTION = "permission_denied"
DENIAL_BURST = 5  # refusals written per (tenant, agent, operation) and window
DENIAL_WINDOW_US = 60_000_000
DENIAL_KEYS = 10_000  # (agent, operation) windows remembered per tenant, least recent dropped
DENIAL_TENANTS = 1_000  # tenants whose windows are remembered, least recent dropped


class DenialLimiter:
    """Counts refusals per (tenant, agent, operation) in fixed windows of time.

    Windows are kept per tenant, each tenant with its own bound: a tenant whose agents are
    refused under many names drops only its own oldest windows, never another tenant's
    (whose suppressed count would then be lost from that tenant's chain).
    """

    def __init__(self, burst: int = DENIAL_BURST, window_us: int = DENIAL_WINDOW_US) -> None:
        self.burst = burst
        self.window_us = window_us
        self._tenants: OrderedDict[str, OrderedDict[tuple[str, str], list[int]]] = OrderedDict()
        self._lock = threading.Lock()

    def admit(self, key: tuple[str, str, str], now_us: int) -> int | None:
        """None: only count this refusal; else write it, noting this many suppressed before."""
        tenant, agent, operation = key
        with self._lock:
            windows = self._tenants.pop(tenant, None)
            if windows is None:
                windows = OrderedDict()
            self._tenants[tenant] = windows
            while len(self._tenants) > DENIAL_TENANTS:
                self._tenants.popitem(last=False)
            inner = (agent, operation)
            window = windows.pop(inner, None)
            if window is None or now_us - window[0] >= self.window_us:
                suppressed = 0 if window is None else window[2]
                window = [now_us, 0, 0]  # start, written, suppressed since the last write
            else:
                suppressed = window[2]
            windows[inner] = window
            while len(windows) > DENIAL_KEYS:
                windows.popitem(last=False)
            if window[1] >= self.burst:
                window[2] += 1
                return None
            window[1] += 1
            window[2] = 0
            return suppressed


_LIMITERS: weakref.WeakKeyDictionary[Any, DenialLimiter] = weakref.WeakKeyDictionary()
_LIMITERS_LOCK = threading.Lock()


def denial_limiter(store: Any) -> DenialLimiter:
    """One limiter per store object (every AgentMemory over it shares the count)."""
    with _LIMITERS_LOCK:
        limiter = _LIMITERS.get(store)
        if limiter is None:
            limiter = _LIMITERS[store] = DenialLimiter()
        return limiter


def audit_denial(auditor: Auditor, ctx: AgentContext, operation: str, exc: AccessDenied) -> None:
    """Appends a ``permission_denied`` entry (rate-limited, see the module docstring);
    an audit failure never hides the refusal."""
    try:
        key = (ctx.tenant, ctx.agent_id, operation)
        rt = auditor.runtime
        suppressed = denial_limiter(rt.store).admit(key, rt.clock.now_us())
        if suppressed is None:
            return
        details: dict[str, Any] = {
            "operation": operation,
            "role": ctx.role.value,
            "read_only": ctx.read_only,
            "suppressed": suppressed,
        }
        if ctx.parent_agent_id:
            details["parent_agent_id"] = ctx.parent_agent_id
        auditor.record(ctx, DENIED_ACTION, operation, details)
    except Exception:  # the caller must still see AccessDenied, not a store error
        return


def caller(context: AgentContext | None, default: AgentContext) -> AgentContext:
    """The context a call runs as: the one given, else the memory's default one.

    Raises ``ValidationError`` for anything that is not an ``AgentContext``, a subclass
    included (one could redefine ``permissions`` or ``require`` and grant its role what the
    role table does not), and for one whose role or read_only switch was replaced after it
    was built (``object.__setattr__`` past the frozen dataclass).
    """
    if context is None:
        return default
    if type(context) is not AgentContext:
        raise ValidationError(
            "context must be an AgentContext (not a subclass: roles are the library's)"
        )
    if type(context.role) is not AgentRole or type(context.read_only) is not bool:
        raise ValidationError("context was altered after it was built; build a new one")
    return context


def require(
    auditor: Auditor, ctx: AgentContext, permission: Permission, operation: str
) -> AgentContext:
    """``ctx.require`` plus one audit entry for a refusal; ``ctx`` when it may, else raises
    ``AccessDenied``."""
    try:
        ctx.require(permission, operation)
    except AccessDenied as exc:
        audit_denial(auditor, ctx, operation, exc)
        raise
    return ctx


def guard(
    auditor: Auditor, ctx: AgentContext, operation: str, subject: str | None = None
) -> AgentContext:
    """Checks the permission ``operation`` needs (and the subject tenant) before any I/O.

    Returns ``ctx``; raises ``ValidationError`` for a malformed subject and ``AccessDenied``
    (audited once).
    """
    if subject is not None:
        check_name(subject, "user")
    try:
        ctx.require(OPERATIONS[operation], operation)
        if subject is not None and subject != ctx.tenant:
            raise AccessDenied(
                f"{operation} on tenant {subject!r} refused: the context is bound to tenant "
                f"{ctx.tenant!r}; use a context of tenant {subject!r}",
                agent_id=ctx.agent_id,
                operation=operation,
            )
    except AccessDenied as exc:
        audit_denial(auditor, ctx, operation, exc)
        raise
    return ctx


def subject(user: str | None, alias: str | None, alias_name: str, op: str) -> str:
    """The tenant a governance call is about, given as ``user`` or Attestor's keyword
    (``alias_name``); ``ValidationError`` when neither or two different ones are given."""
    if user is not None and alias is not None and user != alias:
        raise ValidationError(
            f"{op}: user {shown(user)} and {alias_name} {shown(alias)} differ; give one"
        )
    chosen = user if user is not None else alias
    if chosen is None:
        raise ValidationError(f"{op} needs the user (tenant): pass it, or {alias_name}=...")
    return chosen
