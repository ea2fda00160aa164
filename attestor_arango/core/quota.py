"""Enforcing write budgets: the agent's, then the tenant's daily quota.

Days are UTC calendar days named ``YYYY-MM-DD``; a counter exists per day, so a
quota resets by construction at 00:00 UTC (no reset job that can fail to run). The
check runs inside every write's transaction (``Writer.write``, ingestion), so it
lives in core, below the services; ``governance/quotas.py`` owns changing the limit
and reporting usage, and reads the day and its reset from here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from attestor_arango.clock import from_us, iso, to_us
from attestor_arango.context import AgentContext
from attestor_arango.core.runtime import Runtime
from attestor_arango.errors import QuotaExceededError
from attestor_arango.scope import Scope


def utc_day(now_us: int) -> str:
    """The UTC calendar day of an instant, as the write counters name it."""
    return from_us(now_us).strftime("%Y-%m-%d")


def next_reset_us(now_us: int) -> int:
    """The next 00:00 UTC after ``now_us``: when today's counter stops counting."""
    day = from_us(now_us).date()
    midnight = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)
    return to_us(midnight)


def check_quota(
    rt: Runtime, ctx: AgentContext, scope: Scope, now: int, *, claim: bool = False
) -> str:
    """The agent's write budget, then the tenant's daily quota; returns the UTC day counted.

    Called inside the write transaction, so two writers cannot both pass a full quota.
    With ``claim`` (the write path) the agent's write is counted by the check itself
    (``Usage.claim_write``): threads sharing the agent's usage (one key's requests) cannot
    both pass its last write, as they could when it was counted after the transaction;
    it is given back here when the tenant's quota refuses, by the caller when the write
    then fails. Raises QuotaExceededError (with the limit, and for the tenant's quota the
    day and when it resets) when either is used up.
    """
    limit = ctx.max_writes_per_agent
    passed = ctx.usage.claim_write(limit) if claim else limit is None or ctx.writes_made < limit
    if not passed:
        raise QuotaExceededError(
            f"agent {ctx.agent_id} has used its {ctx.max_writes_per_agent} writes; "
            "start a new context or raise max_writes_per_agent",
            limit=ctx.max_writes_per_agent,
        )
    try:
        return _check_tenant_quota(rt, scope, now)
    except BaseException:
        if claim:
            ctx.usage.take_back(1)
        raise


def _check_tenant_quota(rt: Runtime, scope: Scope, now: int) -> str:
    day = from_us(now).date().isoformat()
    quota = rt.store.get_quota(scope)
    if quota is not None and rt.store.count_writes(scope, day) >= quota:
        raise QuotaExceededError(
            f"tenant {scope.tenant!r} has used its daily quota of {quota} writes for {day} "
            "(UTC); it resets at 00:00 UTC",
            limit=quota,
            day=day,
            resets_at=iso(next_reset_us(now)),
        )
    return day
