"""The embedded backend's physical schema, as forward-only migrations.

Each migration runs once, inside one transaction, and bumps ``PRAGMA
user_version`` (applied by ``migrate.py``); opening a newer file with an older
package is refused rather than guessed at.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
        CREATE TABLE memories (
            rowid INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            tenant TEXT NOT NULL,
            namespace TEXT NOT NULL,
            content TEXT NOT NULL,
            entity TEXT,
            category TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            confidence REAL NOT NULL,
            valid_from INTEGER NOT NULL,
            valid_until INTEGER NOT NULL,
            t_created INTEGER NOT NULL,
            t_expired INTEGER NOT NULL,
            superseded_by TEXT,
            supersedes TEXT,
            status TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            role TEXT NOT NULL,
            session_id TEXT,
            source_episode_id TEXT,
            agent_trail TEXT NOT NULL DEFAULT '[]',
            parent_agent_id TEXT,
            content_hash TEXT NOT NULL,
            signature TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            embedding BLOB
        );
        CREATE INDEX memories_scope ON memories (tenant, namespace, t_expired, t_created);
        CREATE INDEX memories_entity ON memories (tenant, namespace, entity, category, t_expired);
        CREATE INDEX memories_hash ON memories (tenant, namespace, content_hash);
        CREATE VIRTUAL TABLE memories_fts USING fts5 (content, tokenize = 'porter unicode61');

        CREATE TABLE episodes (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            namespace TEXT NOT NULL,
            session_id TEXT,
            agent_id TEXT NOT NULL,
            user_text TEXT NOT NULL,
            assistant_text TEXT NOT NULL,
            user_time INTEGER NOT NULL,
            assistant_time INTEGER NOT NULL,
            t_created INTEGER NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX episodes_scope ON episodes (tenant, namespace, t_created);

        CREATE TABLE entities (
            tenant TEXT NOT NULL,
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            name TEXT NOT NULL,
            kind TEXT,
            aliases TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (tenant, namespace, key)
        );

        CREATE TABLE relations (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            namespace TEXT NOT NULL,
            source TEXT NOT NULL,
            relation TEXT NOT NULL,
            target TEXT NOT NULL,
            memory_id TEXT,
            t_created INTEGER NOT NULL,
            t_expired INTEGER NOT NULL,
            properties TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX relations_source ON relations (tenant, namespace, source);
        CREATE INDEX relations_target ON relations (tenant, namespace, target);

        CREATE TABLE audit (
            tenant TEXT NOT NULL,
            seq INTEGER NOT NULL,
            id TEXT NOT NULL UNIQUE,
            ts INTEGER NOT NULL,
            agent_id TEXT NOT NULL,
            role TEXT NOT NULL,
            action TEXT NOT NULL,
            target TEXT,
            details TEXT NOT NULL DEFAULT '{}',
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL,
            PRIMARY KEY (tenant, seq)
        );
        CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
            BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
        CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
            BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;

        CREATE TABLE quotas (
            tenant TEXT PRIMARY KEY,
            daily_writes INTEGER
        );
        CREATE TABLE write_counts (
            tenant TEXT NOT NULL,
            day TEXT NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (tenant, day)
        );
        CREATE TABLE embedding_spaces (
            tenant TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            dimension INTEGER NOT NULL
        );
        """,
    ),
    (
        2,
        # governance: the newest (seq, hash) per audit chain, kept apart from the entries
        # and moved only forward by a trigger, so a truncated chain is detectable.
        """
        CREATE TABLE audit_heads (
            tenant TEXT PRIMARY KEY,
            seq INTEGER NOT NULL,
            hash TEXT NOT NULL
        );
        INSERT INTO audit_heads (tenant, seq, hash)
            SELECT a.tenant, a.seq, a.hash FROM audit AS a
            WHERE a.seq = (SELECT MAX(b.seq) FROM audit AS b WHERE b.tenant = a.tenant);
        CREATE TRIGGER audit_head_advance AFTER INSERT ON audit
            BEGIN
                INSERT INTO audit_heads (tenant, seq, hash) VALUES (NEW.tenant, NEW.seq, NEW.hash)
                ON CONFLICT (tenant) DO UPDATE SET seq = excluded.seq, hash = excluded.hash;
            END;
        CREATE TRIGGER audit_heads_forward_only BEFORE UPDATE ON audit_heads
            WHEN NEW.seq <= OLD.seq OR NEW.tenant != OLD.tenant
            BEGIN SELECT RAISE(ABORT, 'audit chain heads only move forward'); END;
        CREATE TRIGGER audit_heads_no_delete BEFORE DELETE ON audit_heads
            BEGIN SELECT RAISE(ABORT, 'audit chain heads are append-only'); END;
        """,
    ),
    (
        3,
        # the write path's lookups (dedup by content hash, supersession by entity and
        # category) seek on the tenant plus these columns; the namespace is filtered after
        """
        CREATE INDEX memories_tenant_hash ON memories (tenant, content_hash);
        CREATE INDEX memories_tenant_entity ON memories (tenant, entity, category, t_expired);
        CREATE INDEX relations_memory ON relations (tenant, memory_id);
        CREATE INDEX relations_tenant_source ON relations (tenant, source);
        CREATE INDEX relations_tenant_target ON relations (tenant, target);
        """,
    ),
    (
        4,
        # Per tenant, counters of what changed its memories: the persisted vector and text
        # indexes (persisted.py) record them, and an index file is used only while no row
        # was changed or deleted since (``changes``); rows inserted since (rowid above
        # ``last_rowid``: AUTOINCREMENT never reuses one) and rows closed since are caught
        # up from the table. Triggers, so no write path can forget to count. A tenant's row
        # goes with its last memory (erasure leaves no name behind); the next one gets a new
        # random ``epoch``, so a file left from before can never match again.
        """
        CREATE TABLE index_generation (
            tenant TEXT PRIMARY KEY,
            epoch TEXT NOT NULL DEFAULT (lower(hex(randomblob(8)))),
            inserts INTEGER NOT NULL DEFAULT 0,
            closes INTEGER NOT NULL DEFAULT 0,
            changes INTEGER NOT NULL DEFAULT 0,
            last_rowid INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO index_generation (tenant, inserts, last_rowid)
            SELECT tenant, COUNT(*), MAX(rowid) FROM memories GROUP BY tenant;
        CREATE TRIGGER memories_generation_insert AFTER INSERT ON memories BEGIN
            INSERT INTO index_generation (tenant, inserts, last_rowid)
            VALUES (NEW.tenant, 1, NEW.rowid)
            ON CONFLICT (tenant) DO UPDATE SET inserts = inserts + 1, last_rowid = NEW.rowid;
        END;
        CREATE TRIGGER memories_generation_close AFTER UPDATE OF t_expired ON memories BEGIN
            UPDATE index_generation SET closes = closes + 1 WHERE tenant = NEW.tenant;
        END;
        CREATE TRIGGER memories_generation_change
        AFTER UPDATE OF id, tenant, namespace, content, t_created, valid_from, valid_until,
            embedding ON memories BEGIN
            UPDATE index_generation SET changes = changes + 1
            WHERE tenant IN (OLD.tenant, NEW.tenant);
        END;
        CREATE TRIGGER memories_generation_delete AFTER DELETE ON memories BEGIN
            UPDATE index_generation SET changes = changes + 1 WHERE tenant = OLD.tenant;
            DELETE FROM index_generation WHERE tenant = OLD.tenant
                AND NOT EXISTS (SELECT 1 FROM memories WHERE tenant = OLD.tenant);
        END;
        """,
    ),
    (
        5,
        # a listing of a tenant in transaction-time order (list(), the Evidence Board's
        # pages) walks this index and stops at its LIMIT instead of sorting every row:
        # 143 -> 1.1 ms for the first page of a 20k tenant
        """
        CREATE INDEX memories_tenant_created ON memories (tenant, t_created, id);
        """,
    ),
    (
        6,
        # Identity is (tenant, id), as in ArangoDB's unique (tenant, id) indexes: an id
        # one tenant holds is free in every other, so no write of one tenant (an import
        # with chosen ids) can collide with, and so reveal, another tenant's rows (issue
        # 16). SQLite cannot change a constraint in place: the three tables are rebuilt
        # with the same columns and rowids (the FTS rows and the persisted indexes refer
        # to memory rowids), the memories' AUTOINCREMENT counter is carried over (a
        # deleted rowid is never reused), and the indexes and triggers are made again.
        """
        CREATE TABLE memories_v6 (
            rowid INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL,
            tenant TEXT NOT NULL,
            namespace TEXT NOT NULL,
            content TEXT NOT NULL,
            entity TEXT,
            category TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            confidence REAL NOT NULL,
            valid_from INTEGER NOT NULL,
            valid_until INTEGER NOT NULL,
            t_created INTEGER NOT NULL,
            t_expired INTEGER NOT NULL,
            superseded_by TEXT,
            supersedes TEXT,
            status TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            role TEXT NOT NULL,
            session_id TEXT,
            source_episode_id TEXT,
            agent_trail TEXT NOT NULL DEFAULT '[]',
            parent_agent_id TEXT,
            content_hash TEXT NOT NULL,
            signature TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            embedding BLOB,
            UNIQUE (tenant, id)
        );
        INSERT INTO memories_v6 SELECT * FROM memories ORDER BY rowid;
        DELETE FROM sqlite_sequence WHERE name = 'memories_v6';
        INSERT INTO sqlite_sequence (name, seq)
            SELECT 'memories_v6', seq FROM sqlite_sequence WHERE name = 'memories';
        DROP TABLE memories;
        ALTER TABLE memories_v6 RENAME TO memories;
        CREATE INDEX memories_scope ON memories (tenant, namespace, t_expired, t_created);
        CREATE INDEX memories_entity ON memories (tenant, namespace, entity, category, t_expired);
        CREATE INDEX memories_hash ON memories (tenant, namespace, content_hash);
        CREATE INDEX memories_tenant_hash ON memories (tenant, content_hash);
        CREATE INDEX memories_tenant_entity ON memories (tenant, entity, category, t_expired);
        CREATE INDEX memories_tenant_created ON memories (tenant, t_created, id);
        CREATE TRIGGER memories_generation_insert AFTER INSERT ON memories BEGIN
            INSERT INTO index_generation (tenant, inserts, last_rowid)
            VALUES (NEW.tenant, 1, NEW.rowid)
            ON CONFLICT (tenant) DO UPDATE SET inserts = inserts + 1, last_rowid = NEW.rowid;
        END;
        CREATE TRIGGER memories_generation_close AFTER UPDATE OF t_expired ON memories BEGIN
            UPDATE index_generation SET closes = closes + 1 WHERE tenant = NEW.tenant;
        END;
        CREATE TRIGGER memories_generation_change
        AFTER UPDATE OF id, tenant, namespace, content, t_created, valid_from, valid_until,
            embedding ON memories BEGIN
            UPDATE index_generation SET changes = changes + 1
            WHERE tenant IN (OLD.tenant, NEW.tenant);
        END;
        CREATE TRIGGER memories_generation_delete AFTER DELETE ON memories BEGIN
            UPDATE index_generation SET changes = changes + 1 WHERE tenant = OLD.tenant;
            DELETE FROM index_generation WHERE tenant = OLD.tenant
                AND NOT EXISTS (SELECT 1 FROM memories WHERE tenant = OLD.tenant);
        END;

        CREATE TABLE episodes_v6 (
            id TEXT NOT NULL,
            tenant TEXT NOT NULL,
            namespace TEXT NOT NULL,
            session_id TEXT,
            agent_id TEXT NOT NULL,
            user_text TEXT NOT NULL,
            assistant_text TEXT NOT NULL,
            user_time INTEGER NOT NULL,
            assistant_time INTEGER NOT NULL,
            t_created INTEGER NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (tenant, id)
        );
        INSERT INTO episodes_v6 SELECT * FROM episodes;
        DROP TABLE episodes;
        ALTER TABLE episodes_v6 RENAME TO episodes;
        CREATE INDEX episodes_scope ON episodes (tenant, namespace, t_created);

        CREATE TABLE relations_v6 (
            id TEXT NOT NULL,
            tenant TEXT NOT NULL,
            namespace TEXT NOT NULL,
            source TEXT NOT NULL,
            relation TEXT NOT NULL,
            target TEXT NOT NULL,
            memory_id TEXT,
            t_created INTEGER NOT NULL,
            t_expired INTEGER NOT NULL,
            properties TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (tenant, id)
        );
        INSERT INTO relations_v6 SELECT * FROM relations;
        DROP TABLE relations;
        ALTER TABLE relations_v6 RENAME TO relations;
        CREATE INDEX relations_source ON relations (tenant, namespace, source);
        CREATE INDEX relations_target ON relations (tenant, namespace, target);
        CREATE INDEX relations_memory ON relations (tenant, memory_id);
        CREATE INDEX relations_tenant_source ON relations (tenant, source);
        CREATE INDEX relations_tenant_target ON relations (tenant, target);
        """,
    ),
    (
        7,
        # the service's ed25519 signature over each audit entry's (tenant, seq, hash), when
        # signing is on: a tail appended by someone without the key is detected
        # (governance/audit_chain.py); not part of the entry's hash
        """
        ALTER TABLE audit ADD COLUMN signature TEXT;
        """,
    ),
    (
        8,
        # each memory's and episode's salt (32 random bytes, hex): the key of every digest of
        # the row that outlives it (audit chain, signature; models.content_digest), erased
        # with the row. Rows written before stay NULL: their entries recorded plain digests,
        # which verify as they are. No trigger counts it: the salt is written once, with the row
        """
        ALTER TABLE memories ADD COLUMN salt TEXT;
        ALTER TABLE episodes ADD COLUMN salt TEXT;
        """,
    ),
    (
        9,
        # entity keys in Unicode NFKC (validation.entity_key): keys written before are
        # rewritten, so a name stored before matches its composed/decomposed/full-width
        # spellings now. Two old keys that fold to one keep the first row (by rowid) and
        # the union is not merged: aliases of the later one are dropped. No trigger counts
        # entities or relations, and no digest covers them: no index file or chain changes
        """
        CREATE TABLE entities_v9 (
            tenant TEXT NOT NULL,
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            name TEXT NOT NULL,
            kind TEXT,
            aliases TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (tenant, namespace, key)
        );
        INSERT OR IGNORE INTO entities_v9
            SELECT tenant, namespace, attestor_entity_key(key), name, kind, aliases
            FROM entities ORDER BY rowid;
        DROP TABLE entities;
        ALTER TABLE entities_v9 RENAME TO entities;
        UPDATE relations SET source = attestor_entity_key(source),
            target = attestor_entity_key(target)
            WHERE source != attestor_entity_key(source) OR target != attestor_entity_key(target);
        """,
    ),
    (
        10,
        # a session's rows, newest message time first: ``add_turns`` finds a session's
        # latest turn by seeking here (``latest_in_session``) instead of listing the tenant's
        # rows tagged with the session (one scan of the tenant per new session of a call).
        # Rows written without a session are left out of the index.
        """
        CREATE INDEX IF NOT EXISTS memories_tenant_session
            ON memories (tenant, session_id, valid_from, t_created, id)
            WHERE session_id IS NOT NULL;
        """,
    ),
    (
        11,
        # the same words' rows, open ones sought: a write asks for the oldest row with its
        # content hash the view sees (t_expired past now); with (tenant, content_hash) only,
        # every closed version of "ok" was read on the next "ok" (10,000 "ok" turns in one
        # call: 32.8 s)
        """
        DROP INDEX IF EXISTS memories_tenant_hash;
        CREATE INDEX memories_tenant_hash ON memories (tenant, content_hash, t_expired);
        """,
    ),
    # each tenant's recall-id key (core/recall_key.py), in the file: a reader needs no write
    (12, "CREATE TABLE IF NOT EXISTS recall_keys (tenant TEXT PRIMARY KEY, key TEXT NOT NULL);"),
]

LATEST = MIGRATIONS[-1][0]
