"""What the parts of the embedded store share: the row codec and the connection's contract.

``SQLiteStore`` (store.py) owns the connection, the transaction and the vector
caches. Its graph and episodes (graph.py) are a component it holds, handed only a
``SQLiteAccess`` (transactions and the SQL runners). Its other method groups
(caches.py with persisted.py, fts.py, governance.py) are still partial classes over
``EmbeddedBase``, which only declares (for mypy) the members they use, so no part
reaches into another's module and none of them imports store.py back.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import MemoryFilter

if TYPE_CHECKING:
    from attestor_arango.models import Memory
    from attestor_arango.store.embedded.text_index import TenantText
    from attestor_arango.store.embedded.vectors import TenantVectors

_JSON_FIELDS = ("tags", "agent_trail", "metadata", "details", "aliases", "properties")


def decode_row(row: sqlite3.Row) -> dict[str, Any]:
    doc = dict(zip(row.keys(), row, strict=True))  # a third of dict(row)'s time
    for key in _JSON_FIELDS:
        value = doc.get(key)
        if isinstance(value, str):
            # most rows carry empty lists and objects: skip the JSON parser for those
            if value == "[]":
                doc[key] = []
            elif value == "{}":
                doc[key] = {}
            else:
                doc[key] = json.loads(value)
    return doc


def encode_doc(doc: dict[str, Any]) -> dict[str, Any]:
    out = dict(doc)
    for key in _JSON_FIELDS:
        if key in out:
            out[key] = json.dumps(out[key], sort_keys=True, separators=(",", ":"))
    return out


def scope_params(scope: Scope) -> dict[str, Any]:
    return {"tenant": scope.tenant, "namespace": scope.namespace}


def view_params(view: TemporalView) -> dict[str, Any]:
    return {
        "as_of": view.as_of,
        "expired_after": view.t_expired_after,
        "w_start": view.window_start,
        "w_end": view.window_end,
    }


def list_params(scope: Scope, filters: MemoryFilter, view: TemporalView) -> dict[str, Any]:
    """The bind parameters of a filtered listing (and of its count)."""
    return {
        **scope_params(scope),
        **view_params(view),
        "entity": filters.entity,
        "category": filters.category,
        "content_hash": filters.content_hash,
        "tags": json.dumps(list(filters.tags)) if filters.tags else None,
        "status": filters.status,
    }


class SQLiteAccess(Protocol):
    """What a component of ``SQLiteStore`` is handed: its transactions and SQL runners."""

    def transaction(self) -> AbstractContextManager[None]: ...
    def _exec(self, sql: str, params: dict[str, Any] | None = None) -> sqlite3.Cursor: ...
    def _read(self, sql: str, params: dict[str, Any]) -> list[sqlite3.Row]: ...


class EmbeddedBase:
    """The members of ``SQLiteStore`` that its mixins use; declared here, defined there."""

    _conn: sqlite3.Connection
    _lock: threading.RLock
    _depth: int
    _vectors: dict[str, TenantVectors]
    _texts: dict[str, TenantText]
    _cache_use: OrderedDict[str, None]

    if TYPE_CHECKING:

        def transaction(self) -> AbstractContextManager[None]: ...
        def _exec(self, sql: str, params: dict[str, Any] | None = None) -> sqlite3.Cursor: ...
        def _read(self, sql: str, params: dict[str, Any]) -> list[sqlite3.Row]: ...
        def _refresh_caches(self) -> None: ...
        def _used(self, tenant: str) -> None: ...
        def _after_commit(self, op: str, payload: Any) -> None: ...
        def get_memories(self, scope: Scope, ids: Sequence[str]) -> dict[str, Memory]: ...
