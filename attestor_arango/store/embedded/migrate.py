"""Brings an embedded store's file to ``schema.LATEST``, one migration a transaction.

A file SQLite could only open read-only (its rights, an immutable or read-only mount) is
read at the version it has when what it lacks is only ``READABLE_WITHOUT``: a reader needs
no write (a writer's open migrates it); a file lacking more is refused, typed.
"""

from __future__ import annotations

import sqlite3

from attestor_arango.errors import StoreError
from attestor_arango.store.embedded import schema
from attestor_arango.validation import entity_key

# what a file SQLite opened read-only may lack and still be read: 11 reshapes an index only
# writes seek, 12 the recall-id keys (core/recall_key.py falls back without them)
READABLE_WITHOUT = frozenset({11, 12})
READONLY = 8  # SQLITE_READONLY, the primary code of every "cannot write this file" answer


def migrate(conn: sqlite3.Connection) -> int:
    """Applies every migration newer than the file's version; returns the version."""
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    if current > schema.LATEST:
        raise StoreError(
            f"database schema version {current} is newer than this package knows "
            f"({schema.LATEST}); upgrade attestor-arango",
        )
    # migration 9 folds entity keys with the one function that makes them
    conn.create_function("attestor_entity_key", 1, entity_key, deterministic=True)
    for version, script in schema.MIGRATIONS:
        if version <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {int(version)}")
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            conn.execute("ROLLBACK")
            if exc.sqlite_errorcode & 0xFF != READONLY:
                raise
            if {v for v, _ in schema.MIGRATIONS if v > current} <= READABLE_WITHOUT:
                return current  # read as it is; a writer's open migrates it
            raise StoreError(
                f"the store is at schema version {current} and cannot be written here; open "
                f"it once with write access so migration {version} runs"
            ) from exc
        except Exception:
            conn.execute("ROLLBACK")
            raise
        current = version
    return current


def _statements(script: str) -> list[str]:
    """Splits a migration script into statements the way SQLite itself does."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        raise StoreError("migration script ends with an incomplete statement")
    return out
