"""How many REST workers one tenant may hold at once.

The service runs at most ``ApiSettings.workers`` memory calls at once. In one queue for
all tenants, a tenant sending that many slow calls held every worker, and another
tenant's call waited behind them until its request timed out: one tenant's load changed
what another was answered. A call now first takes one of its tenant's slots (at most
``ApiSettings.per_tenant()`` a tenant), then a worker: a tenant's calls past its share
wait in its own queue, and the workers left stay free for the other tenants.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio


class TenantSlots:
    """The slots of each tenant with a call under way; a tenant's entry goes when its
    last call ends, so tenants named once (a key for any tenant) keep nothing. Used from
    the event loop's thread only, so it needs no lock."""

    def __init__(self, per_tenant: int) -> None:
        self.per_tenant = per_tenant
        self._limiters: dict[str, anyio.CapacityLimiter] = {}
        self._calls: dict[str, int] = {}

    @asynccontextmanager
    async def hold(self, tenant: str) -> AsyncIterator[None]:
        """One of ``tenant``'s slots while the block runs (waits for one if all are held)."""
        limiter = self._limiters.get(tenant)
        if limiter is None:
            limiter = self._limiters[tenant] = anyio.CapacityLimiter(self.per_tenant)
        self._calls[tenant] = self._calls.get(tenant, 0) + 1
        try:
            async with limiter:
                yield
        finally:
            self._calls[tenant] -= 1
            if not self._calls[tenant]:
                del self._calls[tenant], self._limiters[tenant]

    def tenants(self) -> int:
        """Tenants with a call under way or waiting (their slots are kept meanwhile)."""
        return len(self._limiters)
