"""What the parts of the embedded store share: the row codec and the connection's contract.

``SQLiteStore`` (store.py) only assembles components and forwards the Store protocol
to them: the connection (connection.py), the caches (caches.py, with the index files of
persisted.py), memories and the vector lane (memories.py), the text lane (fts.py), the
graph and episodes (graph.py) and governance (governance.py). Each is handed a
``SQLiteAccess`` (the connection, as the protocol below draws it) and the other
components it needs, never the store; none of them imports store.py.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import AbstractContextManager
from typing import Any, Protocol

from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import MemoryFilter

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
    """What a component of ``SQLiteStore`` is handed (``SQLiteConnection``, connection.py):
    the lock, transactions, the SQL runners, and the queue of what a commit did."""

    lock: threading.RLock
    schema_version: int

    @property
    def in_transaction(self) -> bool: ...
    def transaction(self) -> AbstractContextManager[None]: ...
    def snapshot(self) -> AbstractContextManager[None]: ...
    def write_lock(self) -> AbstractContextManager[None]: ...
    def checkpoint(self, wait_s: float) -> tuple[int, int, int]: ...
    def execute(self, sql: str, params: dict[str, Any] | None = None) -> sqlite3.Cursor: ...
    def read(self, sql: str, params: dict[str, Any]) -> list[sqlite3.Row]: ...
    def pending_state(self, kind: str, tenant: str) -> tuple[str, Any]: ...
    def after_commit(self, op: str, payload: Any) -> None: ...
