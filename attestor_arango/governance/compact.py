"""Compaction: physically remove archived rows once they are old enough.

Archiving hides a row from current reads but keeps it for ``as_of`` replays;
compaction is the step that gives that history up. Only rows archived (closed
with status ``archived``) before ``now - older_than`` go, superseded history is
never touched, and the removal is audited like a delete (attempt first, then
the outcome).
"""

from __future__ import annotations

from typing import Any

from attestor_arango.context import AgentContext
from attestor_arango.core.audit import Auditor
from attestor_arango.core.paging import all_memories
from attestor_arango.core.runtime import Runtime
from attestor_arango.governance.retention import delete_audited, parse_age, unfinished
from attestor_arango.models import MemoryStatus
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import MemoryFilter


def archived_before(rt: Runtime, tenant: str, cutoff_us: int, now_us: int) -> list[str]:
    view = TemporalView(as_of=now_us, include_closed=True)
    filters = MemoryFilter(status=MemoryStatus.ARCHIVED.value)
    return [
        m.id
        for m in all_memories(rt.store, Scope(tenant), filters, view)
        if m.status == MemoryStatus.ARCHIVED and m.us("t_expired") < cutoff_us
    ]


def compact(
    rt: Runtime, auditor: Auditor, ctx: AgentContext, older_than: object, dry_run: bool = False
) -> dict[str, Any]:
    """Removes archived rows archived more than ``older_than`` ago ('30d', '12h', days)."""
    age = parse_age(older_than)
    now = rt.clock.now_us()
    ids = archived_before(rt, ctx.tenant, now - age, now)
    result: dict[str, Any] = {
        "tenant": ctx.tenant,
        "older_than": older_than,
        "dry_run": dry_run,
        "matched": ids,
        "removed": 0,
    }
    details = {"older_than": older_than, "count": len(ids)}
    if not dry_run and not ids and unfinished(rt, ctx.tenant, "compact"):
        delete_audited(rt, auditor, ctx, "compact", [], details)  # a killed run's rewrite
    if dry_run or not ids:
        return result
    result["removed"] = delete_audited(rt, auditor, ctx, "compact", ids, details)
    return result
