"""The embedded store's role checks: each role is probed with the columns it reads.

``doctor`` and ``/v1/health`` report these; a role whose table is gone or damaged (a
dropped ``relations`` table, a vector blob of the wrong width) reads as failed instead
of healthy by assumption.
"""

from __future__ import annotations

import sqlite3

from attestor_arango.store.embedded import sql as q

# the columns each role's queries read; LIMIT 0 checks they exist without reading rows
_GRAPH_PROBES = (
    "SELECT tenant, namespace, key, name, kind, aliases FROM entities LIMIT 0",
    "SELECT id, tenant, namespace, source, relation, target, memory_id, t_created, "
    "t_expired, properties FROM relations LIMIT 0",
)
_VECTOR_PROBE = """
SELECT s.dimension,
       (SELECT length(m.embedding) FROM memories AS m
        WHERE m.tenant = s.tenant AND m.embedding IS NOT NULL LIMIT 1)
FROM embedding_spaces AS s
"""
_FLOAT32_BYTES = 4


def _answers(conn: sqlite3.Connection, sql: str) -> bool:
    try:
        conn.execute(sql).fetchall()
    except sqlite3.Error:
        return False
    return True


def graph_ok(conn: sqlite3.Connection) -> bool:
    """Entities and relations are readable with every column the graph role uses."""
    return all(_answers(conn, probe) for probe in _GRAPH_PROBES)


def vector_ok(conn: sqlite3.Connection) -> bool:
    """Each tenant's recorded space matches the width of a vector it stored."""
    try:
        rows = conn.execute(_VECTOR_PROBE).fetchall()
    except sqlite3.Error:
        return False
    return all(width is None or width == dim * _FLOAT32_BYTES for dim, width in rows)


def role_health(conn: sqlite3.Connection) -> dict[str, bool]:
    """document (SQLite's quick_check), vector, text (FTS5 present) and graph."""
    try:
        document = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    except sqlite3.Error:
        document = False
    text = _answers(conn, q.FTS_PRESENT) and bool(conn.execute(q.FTS_PRESENT).fetchone()[0])
    return {
        "document": document,
        "vector": vector_ok(conn),
        "text": text,
        "graph": graph_ok(conn),
    }
