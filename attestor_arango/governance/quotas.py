"""Per-user (per-tenant) daily write quotas: setting them and reading their state.

Days are UTC calendar days named ``YYYY-MM-DD``; a counter exists per day, so
a quota resets by construction at 00:00 UTC (no reset job that can fail to
run). Enforcement happens in ``AgentMemory._write_memory`` inside the write's
transaction; this module owns changing the limit and reporting usage.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from attestor_arango.clock import from_us, iso, to_us
from attestor_arango.context import AgentContext
from attestor_arango.errors import ValidationError
from attestor_arango.scope import Scope

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

MAX_DAILY_WRITES = 10_000_000


def utc_day(now_us: int) -> str:
    """The UTC calendar day of an instant, as the write counters name it."""
    return from_us(now_us).strftime("%Y-%m-%d")


def next_reset_us(now_us: int) -> int:
    """The next 00:00 UTC after ``now_us``: when today's counter stops counting."""
    day = from_us(now_us).date()
    midnight = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)
    return to_us(midnight)


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
    mem: AgentMemory, ctx: AgentContext, user: str, daily_writes: int | None
) -> dict[str, Any]:
    """Sets (or with None removes) the limit, audited with the old and new value."""
    scope = Scope(user)
    with mem.store.transaction():
        old = mem.store.get_quota(scope)
        mem.store.set_quota(scope, daily_writes)
        mem._audit(ctx, "quota_set", user, {"old": old, "new": daily_writes})
    return quota_status(mem, user)


def quota_status(mem: AgentMemory, user: str) -> dict[str, Any]:
    """Limit, writes used today, what is left and when the counter resets."""
    scope = Scope(user)
    now = mem.clock.now_us()
    day = utc_day(now)
    limit = mem.store.get_quota(scope)
    used = mem.store.count_writes(scope, day)
    return {
        "user": user,
        "daily_writes": limit,
        "day": day,
        "used": used,
        "remaining": None if limit is None else max(0, limit - used),
        "resets_at": iso(next_reset_us(now)),
    }
