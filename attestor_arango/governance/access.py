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
refused write still leaves a trace.
"""

from __future__ import annotations

from typing import Any

from attestor_arango.context import AgentContext, Permission
from attestor_arango.core.audit import Auditor
from attestor_arango.errors import AccessDenied
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
    "verify_memory": Permission.READ,
    "verify_all": Permission.READ,
    "quota_status": Permission.READ,
}

DENIED_ACTION = "permission_denied"


def audit_denial(auditor: Auditor, ctx: AgentContext, operation: str, exc: AccessDenied) -> None:
    """Appends a ``permission_denied`` entry; an audit failure never hides the refusal."""
    details: dict[str, Any] = {
        "operation": operation,
        "role": ctx.role.value,
        "read_only": ctx.read_only,
        "reason": exc.message,
    }
    if ctx.parent_agent_id:
        details["parent_agent_id"] = ctx.parent_agent_id
    try:
        auditor.record(ctx, DENIED_ACTION, operation, details)
    except Exception:  # the caller must still see AccessDenied, not a store error
        return


def require(auditor: Auditor, ctx: AgentContext, permission: Permission, operation: str) -> None:
    """``ctx.require`` plus one audit entry for a refusal; raises ``AccessDenied``."""
    try:
        ctx.require(permission, operation)
    except AccessDenied as exc:
        audit_denial(auditor, ctx, operation, exc)
        raise


def guard(auditor: Auditor, ctx: AgentContext, operation: str, subject: str | None = None) -> None:
    """Checks the permission ``operation`` needs (and the subject tenant) before any I/O.

    Raises ``ValidationError`` for a malformed subject and ``AccessDenied`` (audited once).
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
