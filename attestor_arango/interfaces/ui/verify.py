"""Full audit verification on request: one background run per tenant, cached per chain head.

Verifying the whole chain and every memory row reads all of the tenant's entries and
rows, which at 100k memories takes far longer than a page load. So the audit page checks
only the entries it shows (``AgentMemory.audit_page``), and a GET of the verify page
starts ``verify_audit_chain`` in a background thread and answers at once; the page
refreshes itself (a ``<meta>`` refresh, no script) until the run is done. The result is
kept per tenant together with the chain head it covered, so later visits show it until
the chain grows, and "verify again" starts a fresh run. Nothing here writes: the run is
the same read a REST caller makes with the same key.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from attestor_arango.errors import AttestorError
from attestor_arango.interfaces.api.logs import log_failure
from attestor_arango.interfaces.ui.access import Reader

log = logging.getLogger("attestor_arango.interfaces.ui")


@dataclass
class Run:
    """One full verification of one tenant's chain."""

    head: tuple[int, str] | None  # the head when the run started
    started: float = field(default_factory=time.time)
    finished: float | None = None
    report: Any = None  # ChainReport
    error: str | None = None

    @property
    def done(self) -> bool:
        return self.finished is not None

    @property
    def seconds(self) -> float:
        return round((self.finished or time.time()) - self.started, 1)


class Verifications:
    """The latest run per tenant; at most one running per tenant at a time."""

    def __init__(self) -> None:
        self._runs: dict[str, Run] = {}
        self._lock = threading.Lock()

    def latest(self, tenant: str) -> Run | None:
        with self._lock:
            return self._runs.get(tenant)

    def start(self, r: Reader, head: tuple[int, str] | None, *, again: bool) -> Run:
        """The tenant's run for ``head``: the cached one, the one running, or a new one."""
        tenant = r.context.tenant
        with self._lock:
            run = self._runs.get(tenant)
            if run is not None and (not run.done or (run.head == head and not again)):
                return run
            run = Run(head=head)
            self._runs[tenant] = run
        threading.Thread(
            target=self._verify, args=(r, run), name=f"board-verify-{tenant}", daemon=True
        ).start()
        return run

    @staticmethod
    def _verify(r: Reader, run: Run) -> None:
        try:
            run.report = r.call("verify_audit_chain")
        except AttestorError as exc:
            run.error = exc.message
        except Exception as exc:  # the page says so; the log has the rest, and no tenant
            run.error = log_failure("Evidence Board audit verification", exc, log).message
        finally:
            run.finished = time.time()
