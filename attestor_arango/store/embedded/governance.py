"""The embedded store's governance primitives: audit chain, quotas, erasure, retention.

Erasure is thorough because a GDPR purge must leave nothing readable: FTS segments
are merged and the WAL is checkpointed, so no old page image of an erased row stays
in the file. A component of ``SQLiteStore``, handed the connection and the caches (an
erasure drops the tenant's caches and index files with its rows).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterable, Sequence

from attestor_arango.errors import ConflictError, StoreError, ValidationError
from attestor_arango.models import AuditEntry
from attestor_arango.scope import Scope
from attestor_arango.store.codec import audit_from_doc, audit_to_doc, replacement_batches
from attestor_arango.store.embedded import sql as q
from attestor_arango.store.embedded.base import SQLiteAccess, decode_row, encode_doc, scope_params
from attestor_arango.store.embedded.caches import TenantCaches
from attestor_arango.store.embedded.migrate import READONLY
from attestor_arango.store.protocol import EmbeddingSpace, VectorBatch, check_tenant
from attestor_arango.validation import entity_key


class EmbeddedGovernance:
    """Audit, quotas, tenant-wide deletion and re-embedding over one SQLite file."""

    def __init__(self, db: SQLiteAccess, caches: TenantCaches) -> None:
        self._db = db
        self._caches = caches

    # re-embedding -----------------------------------------------------------------------------
    def replace_vectors(
        self, scope: Scope, space: EmbeddingSpace, batches: Iterable[VectorBatch]
    ) -> int:
        """One SQLite transaction over every batch, each written (then dropped) before the
        next is read: the swap holds one batch of vectors (the Store protocol). Raises
        ``ConflictError`` / ``ValidationError`` and rolls back (see the protocol)."""
        tenant = {"tenant": scope.tenant}
        with self._db.transaction():
            held = int(self._db.execute(q.COUNT_VECTORS, tenant).fetchone()[0])
            changed = given = 0
            for batch in replacement_batches(batches, space):
                given += len(batch)
                for memory_id, vector in batch.items():
                    cur = self._db.execute(
                        q.REPLACE_VECTOR,
                        {**tenant, "id": memory_id, "embedding": vector.tobytes()},
                    )
                    changed += cur.rowcount
            if changed != held or changed != given:
                raise ConflictError(
                    f"tenant {scope.tenant!r} holds {held} vectors and {changed} of the "
                    f"{given} given matched; rows changed meanwhile, run reembed again"
                )
            self._db.execute(
                q.SET_SPACE, {**tenant, "name": space.name, "dimension": space.dimension}
            )
            self._db.after_commit("drop", scope.tenant)
            self._db.after_commit("state", ("space", scope.tenant, space))
        return changed

    # audit ------------------------------------------------------------------------------------
    def last_audit(self, scope: Scope) -> AuditEntry | None:
        # read by every write (the chain's head): kept between writes (caches.kept)
        last = self._caches.kept("audit", scope.tenant, lambda: self._read_last(scope.tenant))
        check_tenant(scope.tenant_wide(), [] if last is None else [last])
        return last

    def _read_last(self, tenant: str) -> AuditEntry | None:
        rows = self._db.read(q.LAST_AUDIT, {"tenant": tenant})
        out = [audit_from_doc(decode_row(r)) for r in rows]
        return out[0] if out else None

    def append_audit(self, scope: Scope, entry: AuditEntry) -> None:
        check_tenant(scope.tenant_wide(), [entry])
        with self._db.transaction():
            self._db.execute(q.INSERT_AUDIT, encode_doc(audit_to_doc(entry)))
            self._db.after_commit("state", ("audit", scope.tenant, entry))

    def read_audit(self, scope: Scope, limit: int, after_seq: int = 0) -> list[AuditEntry]:
        params = {"tenant": scope.tenant, "after_seq": after_seq, "limit": limit}
        out = [audit_from_doc(decode_row(r)) for r in self._db.read(q.READ_AUDIT, params)]
        check_tenant(scope.tenant_wide(), out)
        return out

    def read_audit_actions(
        self, scope: Scope, actions: Sequence[str], limit: int
    ) -> list[AuditEntry]:
        params = {"tenant": scope.tenant, "actions": json.dumps(list(actions)), "limit": limit}
        rows = self._db.read(q.READ_AUDIT_ACTIONS, params)
        out = [audit_from_doc(decode_row(r)) for r in rows]
        check_tenant(scope.tenant_wide(), out)
        return out

    # quotas -----------------------------------------------------------------------------------
    def get_quota(self, scope: Scope) -> int | None:
        # read by every write: kept between writes (caches.kept)
        return self._caches.kept("quota", scope.tenant, lambda: self._read_quota(scope.tenant))

    def _read_quota(self, tenant: str) -> int | None:
        rows = self._db.read(q.GET_QUOTA, {"tenant": tenant})
        return rows[0]["daily_writes"] if rows else None

    def set_quota(self, scope: Scope, daily_writes: int | None) -> None:
        with self._db.transaction():
            self._db.execute(q.SET_QUOTA, {"tenant": scope.tenant, "daily_writes": daily_writes})
            self._db.after_commit("state", ("quota", scope.tenant, daily_writes))

    def count_writes(self, scope: Scope, day: str) -> int:
        rows = self._db.read(q.COUNT_WRITES, {"tenant": scope.tenant, "day": day})
        return int(rows[0]["count"]) if rows else 0

    def add_writes(self, scope: Scope, day: str, n: int) -> int:
        with self._db.transaction():
            row = self._db.execute(
                q.ADD_WRITES, {"tenant": scope.tenant, "day": day, "n": n}
            ).fetchone()
        return int(row[0])

    # recall-id keys (core/recall_key.py) --------------------------------------------------------
    def get_recall_key(self, scope: Scope) -> str | None:
        if self._db.schema_version < 12:  # a read-only file not yet migrated (schema.py)
            return None
        rows = self._db.read(q.GET_RECALL_KEY, {"tenant": scope.tenant})
        return str(rows[0]["key"]) if rows else None

    def put_recall_key(self, scope: Scope, key: str) -> str | None:
        if self._db.schema_version < 12:
            return None
        params = {"tenant": scope.tenant, "key": key}
        try:
            with self._db.transaction():
                self._db.execute(q.PUT_RECALL_KEY, params)
                row = self._db.execute(q.GET_RECALL_KEY, params).fetchone()
        except StoreError as exc:  # a file SQLite opened read-only: the caller falls back
            cause = exc.__cause__
            if isinstance(cause, sqlite3.Error) and cause.sqlite_errorcode & 0xFF == READONLY:
                return None
            raise
        return str(row["key"])

    # compliance -------------------------------------------------------------------------------
    def purge_tenant(self, scope: Scope) -> dict[str, int]:
        counts: dict[str, int] = {}
        params = {"tenant": scope.tenant}
        with self._db.transaction():
            counts["vectors"] = int(self._db.execute(q.COUNT_VECTORS, params).fetchone()[0])
            self._db.execute(q.PURGE_FTS, params)
            for table, sql in q.PURGE.items():
                counts[table] = self._db.execute(sql, params).rowcount
            self._db.after_commit("drop", scope.tenant)
        return counts

    # governance -------------------------------------------------------------------------------
    def purge_collections(self) -> tuple[str, ...]:
        return tuple(q.PURGE_STEPS)

    def purge_collection(self, scope: Scope, collection: str) -> int:
        steps = q.PURGE_STEPS.get(collection)
        if steps is None:
            raise ValidationError(
                f"unknown purge collection {collection!r}; use one of {list(q.PURGE_STEPS)}"
            )
        params = {"tenant": scope.tenant}
        with self._db.lock, self._db.transaction():
            removed = 0
            for sql in steps:
                removed = self._db.execute(sql, params).rowcount
            if collection == "memories":
                # merge FTS segments so no deleted token survives in an old segment
                self._db.execute(q.FTS_OPTIMIZE)
            if collection in ("vectors", "memories"):
                self._db.after_commit("drop", scope.tenant)
            kept = {"embedding_spaces": "space"}.get(collection)
            if kept is not None:  # what caches.kept holds of the tenant is gone too
                self._db.after_commit("state", (kept, scope.tenant, None))
            if collection in ("entities", "relations"):  # and what the graph keeps decoded
                self._db.after_commit("state", (collection, scope.tenant, {}))
        # the WAL is emptied once, by flush_erasure, after the last step
        return max(removed, 0)

    def flush_erasure(self, attempts: int = 10, wait_s: float = 0.2, rewrite: bool = True) -> int:
        """Rewrites the file (``VACUUM``), copies every committed page into it and empties
        the WAL, so no byte of an erased row lingers on disk; returns the WAL frames left
        (0: done; at least 1 when the file could not be rewritten).

        ``secure_delete`` zeroes a deleted cell, but SQLite leaves bytes of cells it moved
        on a page that stays in use (a few hundred rows of two tenants were enough for a
        page to keep the tail of an erased text); the rewrite copies the rows kept into
        fresh pages. It holds this store's lock while it runs (2.6 s for a 205 MB file
        here; the WAL grows to the file's size until the checkpoint), so an erasure pauses
        this process's other calls that long.

        ``rewrite=False``: the checkpoint alone (the open after a killed erasure, which runs
        on every open until the erasure is run again: the rewrite is left to that run).

        A reader elsewhere (another process on this file) holding an old snapshot blocks
        the checkpoint: each attempt waits at most ``wait_s`` for that reader and holds
        this store's lock only that long; after ``attempts`` the frames still in the WAL
        are returned for the caller to report.
        """
        with self._db.lock:
            if self._db.in_transaction:  # inside a transaction nothing can be rewritten
                return -1
            try:
                if rewrite:
                    self._db.execute("VACUUM")
                rewritten = True
            except StoreError:  # another writer past the busy timeout, a full disk
                rewritten = False
        left = -1
        for attempt in range(attempts):
            with self._db.lock:
                if self._db.in_transaction:  # inside a transaction nothing can be checkpointed
                    return -1
                busy, log, done = self._db.checkpoint(wait_s)
            left = 0 if busy == 0 and log <= 0 else max(int(log) - max(int(done), 0), 1)
            if left == 0:
                break
            if attempt + 1 < attempts:
                time.sleep(wait_s)
        return left if rewritten else max(left, 1)

    def settle_interrupted(self) -> list[str]:
        """At open: the tenants whose erasure was interrupted (the chain ends in its attempt
        entry: the process was killed before the outcome), with their index files (and a
        killed writer's temporary ones) removed and the WAL emptied if no reader holds it
        (not the file's rewrite: that is the erasure's, run again).

        The rows the killed erasure had deleted stay readable in their old page images
        (the WAL, the file's pages not yet checkpointed) until a checkpoint, and a server
        opened after the crash checkpoints only every ``WAL_CHECKPOINT_PAGES`` pages or at
        close. What is left of the tenant's rows stays until the erasure is run again.
        Best effort: a file that cannot be removed or a WAL that cannot be emptied does
        not stop the open (the erasure run again reports them).
        """
        tenants = [str(r[0]) for r in self._db.read(q.INTERRUPTED_ERASURES, {})]
        with contextlib.suppress(OSError, sqlite3.Error):
            for tenant in tenants:
                self._caches.persisted.remove_files(tenant)
            if tenants:
                self.flush_erasure(attempts=1, rewrite=False)
        return tenants

    def tenant_residue(self, scope: Scope) -> dict[str, int]:
        params = {"tenant": scope.tenant}
        with self._db.lock:
            self._caches.refresh()
            counts = {
                k: int(self._db.execute(sql, params).fetchone()[0]) for k, sql in q.RESIDUE.items()
            }
            counts.update(self._caches.residue(scope.tenant))
        return counts

    def delete_memories(self, scope: Scope, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        params = {**scope_params(scope), "ids": json.dumps(list(ids))}
        with self._db.transaction():
            named = self._db.execute(q.NAMED_BY_ROWS, params).fetchall()
            removed = 0
            for sql in q.DELETE_MEMORIES:
                removed = self._db.execute(sql, params).rowcount
            self._drop_unnamed(scope.tenant, named)
            # as a purge: merge FTS segments so no deleted token survives in an old one
            self._db.execute(q.FTS_OPTIMIZE)
            self._db.after_commit("drop", scope.tenant)
        return removed

    def _drop_unnamed(self, tenant: str, named: Sequence[sqlite3.Row]) -> None:
        """The entities of ``named`` (namespace, name) no row or relation of their namespace
        names any more: an entity's name is a word of the rows that named it, so it goes
        with the last of them (a superseded version still names it: it stays)."""
        keys: dict[str, set[str]] = {}
        for namespace, name in named:
            keys.setdefault(namespace, set()).add(entity_key(name))
        for namespace, candidates in sorted(keys.items()):
            params = {"tenant": tenant, "namespace": namespace}
            left = {entity_key(r[0]) for r in self._db.execute(q.NAMED_IN_NAMESPACE, params)}
            unnamed = sorted(candidates - left)
            if unnamed:
                self._db.execute(q.DELETE_ENTITIES, {**params, "keys": json.dumps(unnamed)})

    def audit_head(self, scope: Scope) -> tuple[int, str] | None:
        rows = self._db.read(q.AUDIT_HEAD, {"tenant": scope.tenant})
        return (int(rows[0]["seq"]), str(rows[0]["hash"])) if rows else None
