"""The embedded store's one SQLite connection: its lock, its transactions, its SQL runners.

A single connection is shared behind a re-entrant lock; writes run in ``BEGIN
IMMEDIATE`` transactions so check-then-write sequences (quotas, supersession) cannot
race across threads or processes. What a transaction did to the in-memory caches is
queued (``after_commit``) and handed to the ``CommitListener`` only once it committed;
a rollback forgets it. The other components of ``SQLiteStore`` are handed this object
(as ``SQLiteAccess``) and share nothing else.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from attestor_arango.cancel import commit_point
from attestor_arango.errors import ConflictError, StoreError, ValidationError
from attestor_arango.store.embedded.migrate import migrate

# WAL pages after which a commit copies them into the file (SQLite's default is 1,000). An
# add writes ~26 pages, so by default one add in ~38 paid a checkpoint (its page copies
# and two fsyncs) and that sat inside the adds' p95; at 10,000 it is one add in ~380, the
# WAL grows to ~40 MB at most, and pages written again between checkpoints (the chain's
# head, the counters, B-tree interiors) are copied once instead of ten times.
WAL_CHECKPOINT_PAGES = 10_000

# what a transaction did, for the caches: ("text" | "add" | "expire" | "drop" | "state", payload)
Op = tuple[str, Any]


class CommitListener(Protocol):
    """Who keeps state beside the rows (the caches) and must follow the commits."""

    def refresh(self) -> None:
        """Another connection may have committed: drop what may be stale."""
        ...

    def prepare(self, ops: list[Op]) -> Any:
        """Inside the transaction, just before COMMIT: what ``committed`` will need."""
        ...

    def committed(self, ops: list[Op], prepared: Any) -> None:
        """After COMMIT: the transaction's ops, in order, and what ``prepare`` returned."""
        ...


class _Nobody:
    def refresh(self) -> None:
        pass

    def prepare(self, ops: list[Op]) -> Any:
        return None

    def committed(self, ops: list[Op], prepared: Any) -> None:
        pass


class SQLiteConnection:
    """One SQLite file (WAL) opened and migrated; see the module docstring."""

    def __init__(self, path: str | Path) -> None:
        """Opens (creating if needed) and migrates the file. Raises ``StoreError`` when it
        cannot: a folder that cannot be made (a file is in the way), or a file that is not
        an SQLite database; the message names the path, never a traceback of sqlite3."""
        self.path = Path(path)
        try:
            if str(path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(
                str(path), check_same_thread=False, isolation_level=None, timeout=30.0
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the embedded store at {path}: {exc}") from exc
        try:
            self._configure()
        except sqlite3.DatabaseError as exc:  # the first read of the file: not a database
            self.conn.close()
            raise StoreError(
                f"cannot open the embedded store at {path}: {exc}; point the path at an "
                "attestor store or a new file",
            ) from exc
        self.schema_version = migrate(self.conn)
        self.lock = threading.RLock()
        self._depth = 0
        self._pending: list[Op] = []
        # where in _pending each (kind, tenant)'s last "state" op and each tenant's last
        # "drop" stand: ``pending_state`` answers in O(1), not by scanning a queue that
        # grows with the transaction (5000 turns in one call read it ~20000 times)
        self._states: dict[tuple[str, str], int] = {}
        self._drops: dict[str, int] = {}
        self.listener: CommitListener = _Nobody()
        self._settled = 0  # every transaction time at or before it is committed (``settle``)

    def _configure(self) -> None:
        """The connection's settings; the first statement that reads the file."""
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.conn.execute("PRAGMA busy_timeout=30000")
        # erasure: deleted rows are overwritten in the file, not left in free pages
        self.conn.execute("PRAGMA secure_delete=ON")

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together or not at all; nesting joins the outer one.

        The outermost one passes ``commit_point`` right before COMMIT, so a call whose
        REST caller timed out rolls back (``CallCancelled``) whatever route wrote."""
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self.execute("BEGIN IMMEDIATE", {})  # typed: a broken or busy file is a StoreError
            # holding the write lock: every commit of another connection is seen now
            self.listener.refresh()
            self._depth = 1
            self._clear_queue()
            changes = self.conn.total_changes
            try:
                yield
                prepared = self.listener.prepare(self._pending)
                # last: a call whose caller gave up rolls back (cancel.py); one that
                # changed no row (a read under the write lock) stores nothing and stays
                # cancellable
                commit_point(writes=self.conn.total_changes != changes)
            except BaseException:
                self.conn.execute("ROLLBACK")
                self._clear_queue()
                raise
            else:
                self.execute("COMMIT", {})
                ops = self._pending
                self._clear_queue()
                self.listener.committed(ops, prepared)
            finally:
                self._depth = 0

    def _clear_queue(self) -> None:
        self._pending = []
        self._states = {}
        self._drops = {}

    def pending_state(self, kind: str, tenant: str) -> tuple[str, Any]:
        """What the open transaction's queue says of the tenant's kept ``kind``:
        ``("state", value)`` for its last ``"state"`` op when no ``"drop"`` of the tenant
        came after it; ``("drop", None)`` when a drop came last (its rows are not committed,
        so nothing kept holds); ``("", None)`` when the queue says nothing of it (or no
        write transaction is open)."""
        if not self._depth:
            return "", None
        at = self._states.get((kind, tenant), -1)
        dropped = self._drops.get(tenant, -1)
        if at > dropped:
            return "state", self._pending[at][1][2]
        return ("drop", None) if dropped >= 0 else ("", None)

    def after_commit(self, op: str, payload: Any) -> None:
        """Queues ``op`` for the listener until the transaction commits (now, outside one)."""
        if self._depth:
            if op == "state":
                self._states[(payload[0], payload[1])] = len(self._pending)
            elif op == "drop":
                self._drops[payload] = len(self._pending)
            self._pending.append((op, payload))
        else:
            self.listener.committed([(op, payload)], None)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction, so several reads agree (joins a write transaction)."""
        if self._depth:
            yield
            return
        self.execute("BEGIN", {})
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """SQLite's write lock with no transaction's queue: for work beside the rows (an
        index file installed only while the rows still are what it reflects)."""
        self.execute("BEGIN IMMEDIATE", {})
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    def settle(self, as_of: int) -> None:
        """Returns once no write transaction that could store a transaction time at or
        before ``as_of`` is open on the file, so a read of ``as_of`` that follows is final.

        A write takes its time inside its write lock and commits later; another process
        reading a later time meanwhile would miss the row and find it when read again. So a
        read of a time past ``_settled`` takes the write lock once (waiting for the open
        transaction, as a write would), and notes the wall time read while holding it: a
        write after it takes the lock later and a transaction time from a later wall clock.
        Earlier times (replays) read without waiting."""
        if as_of <= self._settled:
            return
        with self.lock:
            if self._depth:  # this connection's own transaction: nothing else is open
                return
            with self.write_lock():
                self._settled = max(self._settled, time.time_ns() // 1000 - 1)

    def checkpoint(self, wait_s: float) -> tuple[int, int, int]:
        """One ``wal_checkpoint(TRUNCATE)`` waiting at most ``wait_s`` for a reader:
        (busy, WAL frames, frames checkpointed), as SQLite reports them."""
        self.conn.execute(f"PRAGMA busy_timeout={int(wait_s * 1000)}")
        try:
            busy, log, done = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            self.conn.execute("PRAGMA busy_timeout=30000")
        return int(busy), int(log), int(done)

    def execute(self, sql: str, params: dict[str, Any] | None = None) -> sqlite3.Cursor:
        """Runs one statement; SQLite's errors as the package's typed errors."""
        try:
            return self.conn.execute(sql, params or {})
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"the write conflicts with stored data: {exc}") from exc
        except OverflowError:  # an integer argument past SQLite's 64 bits (offset 2**63...)
            raise ValidationError(
                "a number in the request is out of range (it must fit in 64 bits)"
            ) from None
        except UnicodeEncodeError:
            raise ValidationError(
                "text in the request holds a lone UTF-16 surrogate, which no stored value "
                "can hold; send valid Unicode (an id or text as it was given back)"
            ) from None
        except sqlite3.Error as exc:
            raise StoreError(f"embedded store error: {exc}") from exc

    def read(self, sql: str, params: dict[str, Any]) -> list[sqlite3.Row]:
        """Every row of one query, under the lock."""
        with self.lock:
            return self.execute(sql, params).fetchall()

    def data_version(self) -> int:
        """Moves when another connection commits (``PRAGMA data_version``)."""
        return int(self.execute("PRAGMA data_version", {}).fetchone()[0])

    def close(self) -> None:
        self.conn.close()
