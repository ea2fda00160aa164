"""Every SQL statement the embedded backend runs: fixed text, named parameters only.

This module is the embedded half of the query registry (the other is ``aql/``):
nothing assembles SQL at run time, so the tenant is always a bound parameter.
"""

from __future__ import annotations

MEMORY_COLUMNS = (
    "id, tenant, namespace, content, entity, category, tags, confidence, valid_from, "
    "valid_until, t_created, t_expired, superseded_by, supersedes, status, agent_id, role, "
    "session_id, source_episode_id, agent_trail, parent_agent_id, content_hash, signature, "
    "metadata, salt"
)

INSERT_MEMORY = """
INSERT INTO memories (id, tenant, namespace, content, entity, category, tags, confidence,
    valid_from, valid_until, t_created, t_expired, superseded_by, supersedes, status, agent_id,
    role, session_id, source_episode_id, agent_trail, parent_agent_id, content_hash, signature,
    metadata, salt, embedding)
VALUES (:id, :tenant, :namespace, :content, :entity, :category, :tags, :confidence,
    :valid_from, :valid_until, :t_created, :t_expired, :superseded_by, :supersedes, :status,
    :agent_id, :role, :session_id, :source_episode_id, :agent_trail, :parent_agent_id,
    :content_hash, :signature, :metadata, :salt, :embedding)
"""

INSERT_FTS = "INSERT INTO memories_fts (rowid, content) VALUES (:rowid, :content)"

SCOPE = "tenant = :tenant AND (:namespace IS NULL OR namespace = :namespace)"

VIEW = (
    "t_created <= :as_of AND t_expired > :expired_after "
    "AND valid_from < :w_end AND valid_until > :w_start"
)

# Lookups by id seek the unique (tenant, id) index (identity is per tenant, schema 6).
BY_ID_SCOPE = "tenant = :tenant AND (:namespace IS NULL OR namespace = :namespace)"
# Lookups by rowid: "+tenant" keeps the planner on the rowid (the tenant is checked, not
# sought on, which would scan the tenant's rows).
BY_ROWID_SCOPE = "+tenant = :tenant AND (:namespace IS NULL OR namespace = :namespace)"

GET_MEMORY = f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = :id AND {BY_ID_SCOPE}"

# a short id: the fragment is checked to be hex and '-' (no LIKE wildcards) by the caller
MEMORY_IDS_MATCHING = (
    "SELECT id, tenant, namespace FROM memories WHERE tenant = :tenant "
    "AND (:namespace IS NULL OR namespace = :namespace) "
    "AND (:created_by IS NULL OR t_created <= :created_by) "
    "AND (id LIKE :fragment || '%' OR id LIKE '%' || :fragment) ORDER BY id LIMIT :limit"
)

GET_MEMORIES = (
    f"SELECT {MEMORY_COLUMNS} FROM memories "
    f"WHERE id IN (SELECT value FROM json_each(:ids)) AND {BY_ID_SCOPE}"
)

GET_MEMORIES_BY_ROWID = (
    f"SELECT {MEMORY_COLUMNS} FROM memories "
    f"WHERE rowid IN (SELECT value FROM json_each(:rowids)) AND {BY_ROWID_SCOPE}"
)

GET_VECTORS = (
    "SELECT id, tenant, namespace, embedding FROM memories "
    f"WHERE id IN (SELECT value FROM json_each(:ids)) AND {BY_ID_SCOPE} "
    "AND embedding IS NOT NULL"
)

CLOSE_MEMORY = f"""
UPDATE memories SET t_expired = :t_expired, status = :status, superseded_by = :superseded_by
WHERE id = :id AND {BY_ID_SCOPE} AND t_expired = :open
"""

CLOSE_MEMORY_RELATIONS = f"""
UPDATE relations SET t_expired = :t_expired
WHERE memory_id = :id AND {SCOPE} AND t_expired = :open
"""

FIND_ACTIVE = f"""
SELECT {MEMORY_COLUMNS} FROM memories INDEXED BY memories_tenant_entity
WHERE tenant = :tenant AND entity = :entity AND category = :category
  AND (:namespace IS NULL OR namespace = :namespace) AND {VIEW}
ORDER BY t_created, id
"""

# The optional filters of a listing; the three LIST_* statements differ only in the
# index they seek on, so the write path's lookups stay O(matches), not O(tenant).
_LIST_WHERE = f"""
  AND (:namespace IS NULL OR namespace = :namespace) AND {VIEW}
  AND (:entity IS NULL OR entity = :entity)
  AND (:category IS NULL OR category = :category)
  AND (:content_hash IS NULL OR content_hash = :content_hash)
  AND (:tags IS NULL OR EXISTS (
        SELECT 1 FROM json_each(memories.tags) AS t
        WHERE t.value IN (SELECT value FROM json_each(:tags))))
  AND (:status IS NULL OR
       (CASE WHEN t_expired > :as_of THEN 'active' ELSE status END) = :status)
"""
_LIST_FILTERS = f"""{_LIST_WHERE}
ORDER BY t_created, id
LIMIT :limit OFFSET :offset
"""

LIST_MEMORIES = f"""
SELECT {MEMORY_COLUMNS} FROM memories
WHERE tenant = :tenant {_LIST_FILTERS}
"""

LIST_BY_HASH = f"""
SELECT {MEMORY_COLUMNS} FROM memories INDEXED BY memories_tenant_hash
WHERE tenant = :tenant AND content_hash = :content_hash {_LIST_FILTERS}
"""

LIST_BY_ENTITY = f"""
SELECT {MEMORY_COLUMNS} FROM memories INDEXED BY memories_tenant_entity
WHERE tenant = :tenant AND entity = :entity {_LIST_FILTERS}
"""

# The totals of a listing (the Evidence Board's pagination): the same filters, no order.
COUNT_LISTED = f"SELECT COUNT(*) FROM memories WHERE tenant = :tenant {_LIST_WHERE}"
COUNT_LISTED_BY_ENTITY = f"""
SELECT COUNT(*) FROM memories INDEXED BY memories_tenant_entity
WHERE tenant = :tenant AND entity = :entity {_LIST_WHERE}
"""

# Text lane rows are light (what BM25 re-scoring reads); whole rows of the hits kept
# are read by id afterwards.
TEXT_COLUMNS = "id, tenant, namespace, content, t_created"

TEXT_CANDIDATES = f"""
SELECT {", ".join("m." + c.strip() for c in TEXT_COLUMNS.split(","))},
       -bm25(memories_fts) AS score
FROM memories_fts JOIN memories AS m ON m.rowid = memories_fts.rowid
WHERE memories_fts MATCH :match
  AND m.tenant = :tenant AND (:namespace IS NULL OR m.namespace = :namespace)
  AND m.t_created <= :as_of AND m.t_expired > :expired_after
  AND m.valid_from < :w_end AND m.valid_until > :w_start
ORDER BY score DESC, m.id
LIMIT :k
"""

# The two steps of the fast text lane: the index's best rows by rank alone, then the
# scope and view filter on exactly those rows (see fts.py, EmbeddedText.text_pool).
TEXT_TOP_RANKED = """
SELECT rowid, -rank AS score FROM memories_fts WHERE memories_fts MATCH :match
ORDER BY rank LIMIT :n
"""

TEXT_FILTER_ROWS = f"""
SELECT rowid, {TEXT_COLUMNS} FROM memories
WHERE rowid IN (SELECT value FROM json_each(:rowids))
  AND +tenant = :tenant AND (:namespace IS NULL OR namespace = :namespace) AND {VIEW}
"""

# the in-memory indexes load a tenant's rows after a rowid (0: all of them)
LOAD_TEXTS = """
SELECT rowid, id, namespace, content, t_created, t_expired, valid_from, valid_until
FROM memories WHERE tenant = :tenant AND rowid > :after ORDER BY rowid
"""

LOAD_VECTORS = """
SELECT id, namespace, embedding, t_created, t_expired, valid_from, valid_until
FROM memories WHERE tenant = :tenant AND embedding IS NOT NULL AND rowid > :after ORDER BY rowid
"""

# what a persisted index file is checked against (schema migration 4 keeps it)
GET_GENERATION = """
SELECT epoch, inserts, closes, changes, last_rowid FROM index_generation WHERE tenant = :tenant
"""

# which rows an index file reflects, beyond the counters (persisted.py ``_marks``)
ID_AT_ROWID = """
SELECT id FROM memories WHERE rowid = :rowid AND tenant = :tenant
"""

EXPIRED_OF = """
SELECT t_expired FROM memories WHERE tenant = :tenant AND id = :id
"""

CLOSED_ROWS = """
SELECT id, t_expired FROM memories
WHERE tenant = :tenant AND rowid <= :upto AND t_expired != :open
"""

COUNT_MEMORIES = f"""
SELECT
  COUNT(*) AS total,
  COALESCE(SUM(t_expired = :open), 0) AS active,
  COALESCE(SUM(t_expired != :open AND status = 'superseded'), 0) AS superseded,
  COALESCE(SUM(t_expired != :open AND status = 'archived'), 0) AS archived
FROM memories WHERE {SCOPE}
"""
COUNT_EPISODES = f"SELECT COUNT(*) FROM episodes WHERE {SCOPE}"
COUNT_ENTITIES = f"SELECT COUNT(*) FROM entities WHERE {SCOPE}"
COUNT_RELATIONS = f"SELECT COUNT(*) FROM relations WHERE {SCOPE}"
# the links written by calls made in the namespace (every link when it is NULL)
COUNT_AUDIT = """
SELECT COUNT(*) FROM audit WHERE tenant = :tenant
  AND (:namespace IS NULL OR json_extract(details, '$.namespace') = :namespace)
"""

GET_SPACE = "SELECT name, dimension FROM embedding_spaces WHERE tenant = :tenant"
SET_SPACE = """
INSERT INTO embedding_spaces (tenant, name, dimension) VALUES (:tenant, :name, :dimension)
ON CONFLICT (tenant) DO UPDATE SET name = excluded.name, dimension = excluded.dimension
"""

GET_ENTITY = (
    "SELECT tenant, namespace, key, name, kind, aliases FROM entities "
    "WHERE tenant = :tenant AND namespace = :namespace AND key = :key"
)
UPSERT_ENTITY = """
INSERT INTO entities (tenant, namespace, key, name, kind, aliases)
VALUES (:tenant, :namespace, :key, :name, :kind, :aliases)
ON CONFLICT (tenant, namespace, key) DO UPDATE
SET kind = COALESCE(excluded.kind, entities.kind), aliases = excluded.aliases
"""
LIST_ENTITIES = (
    f"SELECT tenant, namespace, key, name, kind, aliases FROM entities WHERE {SCOPE} "
    "ORDER BY namespace, key"
)

INSERT_RELATION = """
INSERT INTO relations (id, tenant, namespace, source, relation, target, memory_id, t_created,
    t_expired, properties)
VALUES (:id, :tenant, :namespace, :source, :relation, :target, :memory_id, :t_created,
    :t_expired, :properties)
"""
_RELATION_COLUMNS = (
    "id, tenant, namespace, source, relation, target, memory_id, t_created, t_expired, properties"
)
_RELATION_VIEW = (
    "(:namespace IS NULL OR namespace = :namespace) "
    "AND t_created <= :as_of AND t_expired > :expired_after"
)


def _touching(columns: str) -> str:
    """Relations with either end among :keys, visible in the view: two index seeks (by
    source, by target) instead of one scan of the tenant's edges."""
    return f"""
SELECT {columns} FROM relations INDEXED BY relations_tenant_source
WHERE tenant = :tenant AND source IN (SELECT value FROM json_each(:keys)) AND {_RELATION_VIEW}
UNION
SELECT {columns} FROM relations INDEXED BY relations_tenant_target
WHERE tenant = :tenant AND target IN (SELECT value FROM json_each(:keys)) AND {_RELATION_VIEW}
"""


RELATIONS_TOUCHING = _touching(_RELATION_COLUMNS) + "ORDER BY t_created, id\n"
# The ends only, for a walk over the graph (``hops``): no row decoded, none built.
RELATION_ENDS_TOUCHING = _touching("tenant, namespace, source, target")

# What recall's graph step reads (``relations_backed``), one statement: the relations
# touching :keys whose backing memory (if any) is a candidate (:candidates) or visible in
# the view within the scope; the newest :limit of those no candidate backs, then one row
# per key of :keys that is an end of any of them (``id`` NULL, the key in ``source``).
# The touching rows are read narrow (what the checks and the order need) and only the
# :limit kept are read whole, by rowid.
_BACKED_ENDS = ", ".join(
    "value" if c == "source" else "NULL" for c in _RELATION_COLUMNS.split(", ")
)
RELATIONS_BACKED = f"""
WITH touching AS ({_touching("rowid AS rid, id, source, target, memory_id, t_created")}),
backed AS (
SELECT * FROM touching AS r
WHERE r.memory_id IS NULL
   OR r.memory_id IN (SELECT value FROM json_each(:candidates))
   OR EXISTS (
     SELECT 1 FROM memories AS m
     WHERE m.tenant = :tenant AND m.id = r.memory_id
       AND (:namespace IS NULL OR m.namespace = :namespace)
       AND m.t_created <= :as_of AND m.t_expired > :expired_after)
)
SELECT * FROM (
  SELECT {_RELATION_COLUMNS} FROM relations
  WHERE +tenant = :tenant AND rowid IN (
    SELECT rid FROM backed
    WHERE memory_id IS NULL OR memory_id NOT IN (SELECT value FROM json_each(:candidates))
    ORDER BY t_created DESC, id LIMIT :limit)
  UNION ALL
  SELECT {_BACKED_ENDS} FROM json_each(:keys)
  WHERE EXISTS (SELECT 1 FROM backed WHERE source = value OR target = value))
ORDER BY id IS NULL, t_created DESC, id, source
"""

INSERT_EPISODE = """
INSERT INTO episodes (id, tenant, namespace, session_id, agent_id, user_text, assistant_text,
    user_time, assistant_time, t_created, metadata, salt)
VALUES (:id, :tenant, :namespace, :session_id, :agent_id, :user_text, :assistant_text,
    :user_time, :assistant_time, :t_created, :metadata, :salt)
"""
EPISODE_COLUMNS = (
    "id, tenant, namespace, session_id, agent_id, user_text, assistant_text, user_time, "
    "assistant_time, t_created, metadata, salt"
)
GET_EPISODE = f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = :id AND {SCOPE}"
LIST_EPISODES = (
    f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {SCOPE} "
    "ORDER BY t_created, id LIMIT :limit OFFSET :offset"
)
LIST_EPISODES_NEWEST = (
    f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {SCOPE} "
    "ORDER BY t_created DESC, id DESC LIMIT :limit OFFSET :offset"
)

AUDIT_COLUMNS = (
    "tenant, seq, id, ts, agent_id, role, action, target, details, prev_hash, hash, signature"
)
LAST_AUDIT = f"SELECT {AUDIT_COLUMNS} FROM audit WHERE tenant = :tenant ORDER BY seq DESC LIMIT 1"
INSERT_AUDIT = f"""
INSERT INTO audit ({AUDIT_COLUMNS})
VALUES (:tenant, :seq, :id, :ts, :agent_id, :role, :action, :target, :details, :prev_hash, :hash,
    :signature)
"""
READ_AUDIT = f"""
SELECT {AUDIT_COLUMNS} FROM audit WHERE tenant = :tenant AND seq > :after_seq
ORDER BY seq LIMIT :limit
"""
READ_AUDIT_ACTIONS = f"""
SELECT {AUDIT_COLUMNS} FROM audit WHERE tenant = :tenant
AND action IN (SELECT value FROM json_each(:actions))
ORDER BY seq DESC LIMIT :limit
"""

GET_QUOTA = "SELECT daily_writes FROM quotas WHERE tenant = :tenant"
SET_QUOTA = """
INSERT INTO quotas (tenant, daily_writes) VALUES (:tenant, :daily_writes)
ON CONFLICT (tenant) DO UPDATE SET daily_writes = excluded.daily_writes
"""
GET_RECALL_KEY = "SELECT key FROM recall_keys WHERE tenant = :tenant"
PUT_RECALL_KEY = "INSERT INTO recall_keys VALUES (:tenant, :key) ON CONFLICT DO NOTHING"
COUNT_WRITES = "SELECT count FROM write_counts WHERE tenant = :tenant AND day = :day"
ADD_WRITES = """
INSERT INTO write_counts (tenant, day, count) VALUES (:tenant, :day, :n)
ON CONFLICT (tenant, day) DO UPDATE SET count = write_counts.count + excluded.count
RETURNING count
"""

COUNT_VECTORS = "SELECT COUNT(*) FROM memories WHERE tenant = :tenant AND embedding IS NOT NULL"
FTS_PRESENT = "SELECT COUNT(*) FROM sqlite_master WHERE name = 'memories_fts'"

PURGE_FTS = (
    "DELETE FROM memories_fts WHERE rowid IN (SELECT rowid FROM memories WHERE tenant = :tenant)"
)
PURGE: dict[str, str] = {
    "memories": "DELETE FROM memories WHERE tenant = :tenant",
    "episodes": "DELETE FROM episodes WHERE tenant = :tenant",
    "entities": "DELETE FROM entities WHERE tenant = :tenant",
    "relations": "DELETE FROM relations WHERE tenant = :tenant",
    "write_counts": "DELETE FROM write_counts WHERE tenant = :tenant",
    "embedding_spaces": "DELETE FROM embedding_spaces WHERE tenant = :tenant",
}

# governance: erasure step by step, retention deletes, chain head ------------------------------
# The tenant's quota is not erased nor counted as residue: an operator's limit, not the
# subject's data (governance/purge.py keeps it and reports it kept).
# Each purge step is one statement list run in one transaction; "memories" removes the FTS
# rows with the memory rows so no orphaned text-index entry can outlive its row.
PURGE_STEPS: dict[str, tuple[str, ...]] = {
    "relations": ("DELETE FROM relations WHERE tenant = :tenant",),
    "entities": ("DELETE FROM entities WHERE tenant = :tenant",),
    "vectors": (
        "UPDATE memories SET embedding = NULL WHERE tenant = :tenant AND embedding IS NOT NULL",
    ),
    "memories": (PURGE_FTS, "DELETE FROM memories WHERE tenant = :tenant"),
    "episodes": ("DELETE FROM episodes WHERE tenant = :tenant",),
    "write_counts": ("DELETE FROM write_counts WHERE tenant = :tenant",),
    "embedding_spaces": ("DELETE FROM embedding_spaces WHERE tenant = :tenant",),
}
RESIDUE: dict[str, str] = {
    "relations": "SELECT COUNT(*) FROM relations WHERE tenant = :tenant",
    "entities": "SELECT COUNT(*) FROM entities WHERE tenant = :tenant",
    "vectors": COUNT_VECTORS,
    "memories": "SELECT COUNT(*) FROM memories WHERE tenant = :tenant",
    "memories_fts": (
        "SELECT COUNT(*) FROM memories_fts "
        "WHERE rowid IN (SELECT rowid FROM memories WHERE tenant = :tenant)"
    ),
    "episodes": "SELECT COUNT(*) FROM episodes WHERE tenant = :tenant",
    "write_counts": "SELECT COUNT(*) FROM write_counts WHERE tenant = :tenant",
    "embedding_spaces": "SELECT COUNT(*) FROM embedding_spaces WHERE tenant = :tenant",
}
DELETE_MEMORIES: tuple[str, ...] = (
    f"DELETE FROM relations WHERE {SCOPE} AND memory_id IN (SELECT value FROM json_each(:ids))",
    "DELETE FROM memories_fts WHERE rowid IN (SELECT rowid FROM memories "
    f"WHERE {BY_ID_SCOPE} AND id IN (SELECT value FROM json_each(:ids)))",
    f"DELETE FROM memories WHERE {BY_ID_SCOPE} AND id IN (SELECT value FROM json_each(:ids))",
)
# the entities the rows about to be deleted name (as a row's entity or a relation's end):
# those no row or relation left names go with them (governance.delete_memories)
NAMED_BY_ROWS = f"""
SELECT namespace, entity FROM memories
WHERE {BY_ID_SCOPE} AND entity IS NOT NULL AND id IN (SELECT value FROM json_each(:ids))
UNION SELECT namespace, source FROM relations
WHERE {SCOPE} AND memory_id IN (SELECT value FROM json_each(:ids))
UNION SELECT namespace, target FROM relations
WHERE {SCOPE} AND memory_id IN (SELECT value FROM json_each(:ids))
"""
NAMED_IN_NAMESPACE = """
SELECT DISTINCT entity FROM memories
WHERE tenant = :tenant AND namespace = :namespace AND entity IS NOT NULL
UNION SELECT source FROM relations WHERE tenant = :tenant AND namespace = :namespace
UNION SELECT target FROM relations WHERE tenant = :tenant AND namespace = :namespace
"""
DELETE_ENTITIES = """
DELETE FROM entities WHERE tenant = :tenant AND namespace = :namespace
AND key IN (SELECT value FROM json_each(:keys))
"""
FTS_OPTIMIZE = "INSERT INTO memories_fts (memories_fts) VALUES ('optimize')"
# tenants whose audit chain ends in an erasure's attempt entry: the process erasing was
# killed before the outcome entry (governance/purge.py, retention.delete_audited)
INTERRUPTED_ERASURES = """
SELECT h.tenant FROM audit_heads AS h JOIN audit AS a ON a.tenant = h.tenant AND a.seq = h.seq
WHERE a.action IN ('purge_attempted', 'compact_attempted', 'retention_delete_attempted')
ORDER BY h.tenant
"""
AUDIT_HEAD = "SELECT seq, hash FROM audit_heads WHERE tenant = :tenant"

# re-embedding (core/reembed.py): the vector column only; triggers count it as a change,
# so persisted indexes are rebuilt
COUNT_VECTORS = "SELECT COUNT(*) FROM memories WHERE tenant = :tenant AND embedding IS NOT NULL"
REPLACE_VECTOR = """
UPDATE memories SET embedding = :embedding
WHERE tenant = :tenant AND id = :id AND embedding IS NOT NULL
"""

# A session's rows at its latest message time below :before (``latest_in_session``, what
# conversation.last_turn pages through): both steps seek memories_tenant_session, the inner
# one newest message time first and stopping at the first row the view sees, so a
# session's latest turn is found without reading the tenant's or the session's other rows.
_SESSION_WHERE = f"""
  AND (:namespace IS NULL OR namespace = :namespace) AND {VIEW}
  AND EXISTS (SELECT 1 FROM json_each(memories.tags) AS t WHERE t.value = :tag)
"""
LATEST_IN_SESSION = f"""
SELECT {MEMORY_COLUMNS} FROM memories INDEXED BY memories_tenant_session
WHERE tenant = :tenant AND session_id = :session_id AND valid_from = (
    SELECT valid_from FROM memories INDEXED BY memories_tenant_session
    WHERE tenant = :tenant AND session_id = :session_id AND valid_from < :before
    {_SESSION_WHERE}
    ORDER BY valid_from DESC LIMIT 1)
{_SESSION_WHERE}
ORDER BY t_created, id
LIMIT :limit OFFSET :offset
"""
