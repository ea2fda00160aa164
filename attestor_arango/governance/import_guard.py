"""Whether an import may write into its tenant: no data held, no purge of it running.

An import checks before it embeds and again inside its write transaction. A purge erases
collection by collection, each step its own commit, and writes its outcome entry last:
an import landing between two steps was half erased by the later ones (its entities and
relations outlived the purge), one landing after them restored what was just erased, and
one made while the data was still there was told "purge it first". So an import is refused
while a purge of its tenant has no outcome entry yet (running, or interrupted: finish it
first), and when a purge of its tenant began after the import did.
"""

from __future__ import annotations

from attestor_arango.errors import ConflictError
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import AuditStore, Store

__all__ = ["purge_marker", "require_importable"]

PURGE_ACTIONS = ("purge_attempted", "purge_completed", "purge_failed")
MARKER_WINDOW = 50  # the tenant's newest purge entries read to find one still running


def purge_marker(store: AuditStore, scope: Scope) -> tuple[int, int | None]:
    """(seq of the tenant's newest purge entry, 0 for none; seq of a purge attempt that has
    no outcome entry yet, None for none): a purge running, or interrupted.

    An attempt is settled by its own outcome (the outcome's ``attempt_seq``) or by a later
    attempt that reached one (it finished the interrupted erasure); an import compares
    the marker at its start and in its write (``governance.export``)."""
    entries = store.read_audit_actions(scope.tenant_wide(), PURGE_ACTIONS, MARKER_WINDOW)
    if not entries:
        return 0, None
    outcomes = [e for e in entries if e.action != "purge_attempted"]
    settled = {e.details.get("attempt_seq") for e in outcomes}
    # an outcome naming no attempt (not written by this code) settles every attempt before it
    ends = [s if isinstance(s := e.details.get("attempt_seq"), int) else e.seq for e in outcomes]
    newest_settled = max(ends, default=0)
    running = [
        e.seq
        for e in entries
        if e.action == "purge_attempted" and e.seq > newest_settled and e.seq not in settled
    ]
    return max(e.seq for e in entries), (min(running) if running else None)


def require_importable(store: Store, scope: Scope, since: int | None) -> int:
    """``ConflictError`` while a purge of the tenant runs (``purge_marker``) or when one
    began after ``since`` (the marker at the import's start), then unless the tenant holds
    no data (``tenant_residue``); returns the newest purge entry's seq."""
    newest, running = purge_marker(store, scope)
    if running is not None:
        raise ConflictError(
            f"a purge of tenant {scope.tenant!r} is running (its purge_attempted entry, audit "
            f"seq {running}, has no outcome yet); nothing was imported: import once it has "
            "ended, and if it was interrupted, run purge_user again to finish the erasure first",
        )
    if since is not None and newest != since:
        raise ConflictError(
            f"tenant {scope.tenant!r} was purged while this import ran (audit seq {newest}); "
            "nothing was imported: import again if the data is to be restored into the "
            "purged tenant",
        )
    held = {k: v for k, v in store.tenant_residue(scope).items() if v}
    if held:
        raise ConflictError(
            f"tenant {scope.tenant!r} already holds data {held}; import only into an empty "
            "tenant (purge it first, or import it as another tenant with --tenant)",
        )
    return newest
