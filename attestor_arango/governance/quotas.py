"""Per-user (per-tenant) daily write quotas: setting them and reading their state.

Days are UTC calendar days named ``YYYY-MM-DD``; a counter exists per day, so
a quota resets by construction at 00:00 UTC (no reset job that can fail to
run). Enforcement happens in ``core/quota.py`` inside every write's transaction
(core sits below governance); this module owns changing the limit and reporting usage.
"""

from __future__ import annotations

from typing import Any

from attestor_arango.clock import iso
from attestor_arango.context import AgentContext
from attestor_arango.core.audit import Auditor
from attestor_arango.core.quota import next_reset_us, utc_day
from attestor_arango.core.runtime import Runtime
from attestor_arango.errors import ValidationError
from attestor_arango.scope import Scope

__all__ = ["check_limit", "next_reset_us", "quota_status", "set_quota", "utc_day"]

MAX_DAILY_WRITES = 10_000_000


def check_limit(daily_writes: object) -> int | None:
    if daily_writes is None:
        return None
    if isinstance(daily_writes, bool) or not isinstance(daily_writes, int):
        raise ValidationError(
            "daily_writes must be a whole number of writes per UTC day, or None to remove the quota"
        )
    if daily_writes < 0 or daily_writes > MAX_DAILY_WRITES:
        raise ValidationError(f"daily_writes must be between 0 and {MAX_DAILY_WRITES}")
    return daily_writes


def set_quota(
    rt: Runtime, auditor: Auditor, ctx: AgentContext, user: str, daily_writes: int | None
) -> dict[str, Any]:
    """Sets (or with None removes) the limit, audited with the old and new value."""
    scope = Scope(user)
    with rt.store.transaction():
        old = rt.store.get_quota(scope)
        rt.store.set_quota(scope, daily_writes)
        auditor.record(ctx, "quota_set", user, {"old": old, "new": daily_writes})
    return quota_status(rt, user)


def quota_status(rt: Runtime, user: str) -> dict[str, Any]:
    """Limit, writes used today, what is left and when the counter resets."""
    scope = Scope(user)
    now = rt.clock.now_us()
    day = utc_day(now)
    limit = rt.store.get_quota(scope)
    used = rt.store.count_writes(scope, day)
    return {
        "user": user,
        "daily_writes": limit,
        "day": day,
        "used": used,
        "remaining": None if limit is None else max(0, limit - used),
        "resets_at": iso(next_reset_us(now)),
    }
