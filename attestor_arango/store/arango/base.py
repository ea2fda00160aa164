"""Connection, transaction routing and query helpers shared by the ArangoStore parts."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from arango.client import ArangoClient
from arango.database import Database, StandardDatabase, TransactionDatabase
from arango.exceptions import ArangoError

from attestor_arango.cancel import commit_point
from attestor_arango.errors import ConflictError, StoreError, ValidationError
from attestor_arango.scope import Scope
from attestor_arango.store.arango.executor import ArangoQueryError, Executor
from attestor_arango.store.arango.planning import (
    UNIQUE_CONSTRAINT_VIOLATED,
    VALIDATION_FAILED,
    WRITE_WRITE_CONFLICT,
    should_retry,
)
from attestor_arango.store.arango.registry import Registry
from attestor_arango.store.arango.schema import vector_index_state
from attestor_arango.store.protocol import ScopeGuarded

# Every collection a store call may write; a stream transaction must declare them up front.
COLLECTIONS = (
    "memories",
    "episodes",
    "entities",
    "graph_nodes",
    "relations",
    "audit",
    "audit_heads",
    "write_counts",
    "quotas",
    "embedding_spaces",
    "recall_keys",
)
INDEX_STATE_TTL_S = 30.0
# Rows per purge transaction: a memory with a 1536-d vector holds about 12 KB of doubles plus
# its text, so 5000 of them stay near 100 MB, well below the 512 MiB stream-transaction limit.
PURGE_BATCH = 5000
# Re-embedding (store/arango/vectors.py): rows per transaction, and the bytes their vectors
# may take while staged (current + new, as VelocyPack doubles): 500 rows of 3072-d vectors
# are about 27 MB, so the row count binds for every common embedder and a transaction stays
# far below the 512 MiB limit (128 MiB on servers before 3.12.4) with room for the rows' text.
REEMBED_BATCH = 500
REEMBED_BATCH_BYTES = 32 * 1024 * 1024


class _Local(threading.local):
    txn: TransactionDatabase | None = None


class ArangoBase(ScopeGuarded):
    """What every part of the store needs: the executor, the transaction, retries; a public
    call without a ``Scope`` fails closed before any query (``ScopeGuarded``)."""

    backend = "arangodb"

    def __init__(
        self,
        db: StandardDatabase,
        *,
        client: ArangoClient | None = None,
        registry: Registry | None = None,
        vector_min_docs: int = 1000,
        n_probe: int = 16,
        search_wait_for_sync: bool = False,
        max_attempts: int = 5,
        lock_timeout_s: int = 10,
        purge_batch: int = PURGE_BATCH,
        reembed_batch: int = REEMBED_BATCH,
        reembed_batch_bytes: int = REEMBED_BATCH_BYTES,
    ) -> None:
        self._db = db
        self._client = client
        self._local = _Local()
        self.vector_min_docs = vector_min_docs
        self.n_probe = n_probe
        self.search_wait_for_sync = search_wait_for_sync
        self.max_attempts = max_attempts
        self.lock_timeout_s = lock_timeout_s
        if purge_batch < 1:
            raise ValidationError(f"purge_batch must be at least 1; got {purge_batch}")
        self.purge_batch = purge_batch
        if reembed_batch < 1 or reembed_batch_bytes < 1:
            raise ValidationError(
                f"reembed_batch and reembed_batch_bytes must be at least 1; got "
                f"{reembed_batch} and {reembed_batch_bytes}"
            )
        self.reembed_batch = reembed_batch
        self.reembed_batch_bytes = reembed_batch_bytes
        self.executor = Executor(registry or Registry.load(), self._current_db)
        self._index_state: dict[str, Any] | None = None
        self._index_state_at = 0.0
        self._index_lock = threading.Lock()
        self._tenant_sizes: dict[str, tuple[int, float]] = {}

    @property
    def database(self) -> StandardDatabase:
        """The python-arango database handle (schema and index maintenance use it)."""
        return self._db

    # routing ----------------------------------------------------------------------------
    def _current_db(self) -> Database:
        txn = self._local.txn
        return txn if txn is not None else self._db

    @property
    def in_transaction(self) -> bool:
        return self._local.txn is not None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One stream transaction; every store call inside runs in it. Nesting joins.

        python-arango has no context manager for stream transactions and the server does
        not abort on a failed operation, so any exception aborts here explicitly. The
        outermost one passes ``commit_point`` right before the commit, so a call whose REST
        caller timed out aborts (``CallCancelled``) whatever route wrote.
        """
        if self._local.txn is not None:
            yield
            return
        try:
            txn = self._db.begin_transaction(
                write=list(COLLECTIONS), allow_implicit=False, lock_timeout=self.lock_timeout_s
            )
        except (ArangoError, OSError) as exc:  # OSError: python-arango's connection failures
            raise StoreError(f"cannot begin an ArangoDB stream transaction: {exc}") from exc
        self._local.txn = txn
        try:
            yield
            commit_point()  # last: a call whose caller gave up aborts (cancel.py)
        except BaseException:
            self._local.txn = None
            _abort_quietly(txn)
            raise
        self._local.txn = None
        try:
            txn.commit_transaction()
        except ArangoError as exc:
            _abort_quietly(txn)
            raise StoreError(
                f"ArangoDB refused to commit the transaction (nothing was written): {exc}"
            ) from exc
        except OSError as exc:
            # the commit may have been applied before its answer was lost; an abort of a
            # committed transaction fails, so the abort below changes nothing in that case
            _abort_quietly(txn)
            raise StoreError(
                f"lost the connection to ArangoDB while committing (the transaction may or "
                f"may not have been applied; read the rows back before retrying): {exc}"
            ) from exc

    # queries ------------------------------------------------------------------------------
    def _run(self, name: str, scope: Scope, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        try:
            return self.executor.run(name, scope, params)
        except ArangoQueryError as exc:
            raise _translate(exc) from exc

    def _retrying(self, name: str, scope: Scope, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """``_run`` for UPSERT-style writes: retried on 1210/1200 outside transactions."""
        attempt = 0
        while True:
            try:
                return self.executor.run(name, scope, params)
            except ArangoQueryError as exc:
                if not should_retry(
                    exc.error_code,
                    attempt=attempt,
                    max_attempts=self.max_attempts,
                    in_txn=self.in_transaction,
                ):
                    raise _translate(exc) from exc
            attempt += 1
            time.sleep(min(0.2, 0.01 * 2**attempt))

    # vector index state (cached: one index listing per TTL, never per query) ---------------
    def vector_index(self, refresh: bool = False) -> dict[str, Any]:
        with self._index_lock:
            fresh = time.monotonic() - self._index_state_at < INDEX_STATE_TTL_S
            if self._index_state is None or refresh or not fresh:
                try:
                    self._index_state = vector_index_state(self._db)
                except (ArangoError, OSError) as exc:  # OSError: no server answered
                    raise StoreError(f"cannot list the indexes of memories: {exc}") from exc
                self._index_state_at = time.monotonic()
            return dict(self._index_state)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def _abort_quietly(txn: TransactionDatabase) -> None:
    # if even the abort fails, the server drops the idle transaction after its timeout. A
    # server that cannot be reached makes python-arango raise an OSError (requests'
    # ConnectionError, or ConnectionAbortedError once every host was tried: arango/
    # connection.py, process_request), which must not replace the error being handled.
    with contextlib.suppress(ArangoError, OSError):
        txn.abort_transaction()


def _translate(exc: ArangoQueryError) -> Exception:
    """Codes a caller can act on become typed errors; the rest stay StoreError."""
    if exc.error_code == UNIQUE_CONSTRAINT_VIOLATED:
        return ConflictError(
            f"{exc.query}: a row with the same identity already exists (ArangoDB 1210)",
            query=exc.query,
        )
    if exc.error_code == WRITE_WRITE_CONFLICT:
        return ConflictError(
            f"{exc.query}: a concurrent write touched the same row (ArangoDB 1200); retry",
            query=exc.query,
        )
    if exc.error_code == VALIDATION_FAILED:
        return ValidationError(
            f"{exc.query}: the document breaks the collection schema (schemas/"
            f"collections.json): {exc.message}",
        )
    return exc
