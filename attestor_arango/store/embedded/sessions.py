"""A session's rows at its latest message time: how ``add_turns`` finds a session's last
turn (``Store.latest_in_session``) by seeking the ``memories_tenant_session`` index
(schema 10), not by listing the tenant. A component of ``SQLiteStore``."""

from __future__ import annotations

from attestor_arango.models import Memory
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.embedded import sql as q
from attestor_arango.store.embedded.base import SQLiteAccess
from attestor_arango.store.embedded.base import scope_params as _scope_params
from attestor_arango.store.embedded.base import view_params as _view_params
from attestor_arango.store.embedded.memories import memory_from_row
from attestor_arango.store.protocol import check_tenant


def latest_in_session(
    db: SQLiteAccess,
    scope: Scope,
    session_id: str,
    tag: str,
    view: TemporalView,
    before: int,
    limit: int,
    offset: int = 0,
) -> list[Memory]:
    """See ``MemoryStore.latest_in_session``."""
    params = {
        **_scope_params(scope),
        **_view_params(view),
        "session_id": session_id,
        "tag": tag,
        "before": before,
        "limit": limit,
        "offset": offset,
    }
    found = list(map(memory_from_row, db.read(q.LATEST_IN_SESSION, params)))
    check_tenant(scope, found)
    return found
