"""GDPR erasure: every store is emptied of the subject, others are untouched,
and a failure mid-purge is reported, audited and completed by a re-run."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attestor_arango import AgentContext, AgentRole, ValidationError
from attestor_arango.clock import ManualClock
from attestor_arango.core.audit import digest_text
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import StoreError
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.models import Episode, Relation
from attestor_arango.scope import Scope
from attestor_arango.store.embedded.store import SQLiteStore
from tests.support.trace_reading import trace_text

SUBJECT = "zoe-tenant"
MARK = "Zyxwvbqk"  # a token no other row contains, to scan raw bytes for
ORCH = AgentRole.ORCHESTRATOR
ZOE = AgentContext(agent_id="zoe-orch", role=ORCH, tenant=SUBJECT, namespace="n1")
ACME = AgentContext(
    agent_id="acme-orch", role=AgentRole.ORCHESTRATOR, tenant="acme", namespace="n1"
)


def _fill(mem: AgentMemory, ctx: AgentContext, marker: str) -> None:
    """Memories in two namespaces with history, an episode, graph edges, a quota, counters."""
    a = mem.add(f"{marker} lives in Paris", entity=marker, category="home", context=ctx)
    lyon = mem.add(f"{marker} lives in Lyon", entity=marker, category="home", context=ctx)
    mem.update(lyon.id, content=f"{marker} moved to Nice", context=ctx)
    other_ns = AgentContext(agent_id=ctx.agent_id, role=ctx.role, tenant=ctx.tenant, namespace="n2")
    mem.add(f"{marker} prefers tea", entity=f"{marker}", category="pref", context=other_ns)
    archived = mem.add(f"{marker} old phone 555", context=ctx)
    mem.forget(archived.id, reason="stale", context=ctx)
    scope = Scope(ctx.tenant, ctx.namespace)
    now = mem.clock.now_us()
    from attestor_arango.clock import from_us

    mem.store.put_episode(
        scope,
        Episode(
            id=f"ep-{ctx.tenant}",
            tenant=ctx.tenant,
            namespace=ctx.namespace,
            session_id=f"s-{ctx.tenant}",
            agent_id=ctx.agent_id,
            user_text=f"I am {marker}",
            assistant_text=f"Hello {marker}",
            user_time=from_us(now),
            t_created=from_us(now),
        ),
    )
    mem.store.add_relation(
        scope,
        Relation(
            id=f"rel-{ctx.tenant}",
            tenant=ctx.tenant,
            namespace=ctx.namespace,
            source=marker.lower(),
            relation="lives_in",
            target="nice",
            memory_id=a.id,
            t_created=from_us(now),
        ),
    )
    mem.set_quota(ctx.tenant, daily_writes=1000, context=ctx)


@pytest.fixture
def filled(mem: AgentMemory) -> AgentMemory:
    _fill(mem, ZOE, MARK)
    _fill(mem, ACME, "Acmeperson")
    # warm the in-memory vector matrices of both tenants
    assert mem.recall(f"{MARK} Nice", context=ZOE).results
    assert mem.recall("Acmeperson Nice", context=ACME).results
    return mem


def _tables(conn: sqlite3.Connection) -> list[str]:
    return [
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    ]


def _rows_mentioning(conn: sqlite3.Connection, needles: tuple[str, ...]) -> dict[str, int]:
    """Rows per table whose any column (text or blob) contains one of the needles."""
    found: dict[str, int] = {}
    for table in _tables(conn):
        for row in conn.execute(f'SELECT * FROM "{table}"'):  # test-only introspection
            text = " ".join(
                v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in row
            )
            if any(n in text for n in needles):
                found[table] = found.get(table, 0) + 1
    return found


def _acme_counts(mem: AgentMemory) -> dict[str, Any]:
    # the caches are left out: any commit by another connection drops every cache
    caches = ("vector_cache", "text_cache", "memory_cache", "graph_cache")
    residue = {k: v for k, v in mem.store.tenant_residue(Scope("acme")).items() if k not in caches}
    return {"residue": residue, "rows": mem.store.count_rows(Scope("acme"))}


def test_purge_erases_the_subject_everywhere_and_only_the_subject(filled: AgentMemory) -> None:
    mem = filled
    store = mem.store
    assert isinstance(store, SQLiteStore)
    path = Path(store.path)
    acme_before = _acme_counts(mem)
    with sqlite3.connect(str(path)) as conn:
        before = _rows_mentioning(conn, (MARK, SUBJECT))
    assert before.get("memories", 0) == 5 and before.get("episodes") == 1
    assert SUBJECT in store.cached_tenants()

    report = mem.purge_user(SUBJECT, "GDPR art. 17 request #42", context=ZOE)

    assert report.ok and report.status == "completed", report.to_dict()
    assert report.removed["memories"] == 5 and report.removed["episodes"] == 1
    assert report.removed["vectors"] == 5 and report.removed["relations"] == 1
    assert report.removed["write_counts"] == 1 and "quotas" not in report.removed
    assert report.kept["quota"] == {"daily_writes": 1000}  # the operator's limit stays
    assert report.remaining is not None and not any(report.remaining.values())
    # every table: only the audit chain still names the tenant, and never its content
    with sqlite3.connect(str(path)) as conn:
        assert _rows_mentioning(conn, (MARK,)) == {}
        # (and the quota an operator set: its values are in the chain's quota_set entries;
        # and the tenant's recall-id key, random bytes: core/recall_key.py)
        kept = {"audit", "audit_heads", "quotas", "recall_keys"}
        assert set(_rows_mentioning(conn, (SUBJECT,))) <= kept
        fts_hits = conn.execute(
            "SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH ?", (MARK.lower(),)
        ).fetchone()[0]
        assert fts_hits == 0
    # raw bytes: secure_delete, the FTS merge and the WAL checkpoint leave nothing behind
    raw = path.read_bytes()
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        raw += wal.read_bytes()
    assert MARK.encode() not in raw and MARK.lower().encode() not in raw
    # caches: the vector matrix of the subject is gone, the other tenant's is intact
    assert SUBJECT not in store.cached_tenants()
    # every recall lane returns nothing of theirs
    zoe_reader = ZOE.as_agent("reader", AgentRole.MONITOR)
    resp = mem.recall(f"{MARK} Nice Paris tea phone", context=zoe_reader)
    assert resp.results == () and not resp.errors
    assert (
        store.vector_candidates(
            Scope(SUBJECT), mem.embedder.embed([f"{MARK} Nice"])[0], 50, mem.runtime.view(None)
        )
        == []
    )
    assert store.text_pool(Scope(SUBJECT), MARK, 50, mem.runtime.view(None)) == []
    assert store.hops(Scope(SUBJECT), [MARK.lower()], 2, mem.runtime.view(None)) == {
        MARK.lower(): 0
    }
    assert store.relations_touching(Scope(SUBJECT), [MARK.lower()], mem.runtime.view(None)) == []
    assert store.list_entities(Scope(SUBJECT)) == []
    assert store.get_quota(Scope(SUBJECT)) == 1000
    assert mem.export_user(SUBJECT, context=ZOE)["memories"] == []
    # other tenants untouched: same counts before and after
    assert _acme_counts(mem) == acme_before
    assert mem.recall("Acmeperson Nice", context=ACME).results
    # the erasure itself is on record, without content
    actions = [e.action for e in mem.audit_log(limit=1000, context=ZOE)]
    assert actions[-3:] == ["purge_attempted", "purge_completed", "export"]
    attempt = next(
        e for e in mem.audit_log(limit=1000, context=ZOE) if e.action == "purge_attempted"
    )
    assert attempt.agent_id == "zoe-orch"
    assert attempt.details["reason"] == digest_text("GDPR art. 17 request #42", report.reason_key)
    assert attempt.details["scope"] == {"tenant": SUBJECT, "namespace": None}
    assert attempt.details["holding"]["memories"] == 5
    assert mem.verify_audit_chain(context=ZOE).ok


def test_purge_of_an_empty_tenant_completes_with_zero_counts(mem: AgentMemory) -> None:
    report = mem.purge_user(SUBJECT, "nothing stored", context=ZOE)
    assert report.ok and set(report.removed.values()) == {0}


def test_purge_needs_a_reason_and_changes_nothing_without_one(filled: AgentMemory) -> None:
    before = filled.store.tenant_residue(Scope(SUBJECT))
    audit_before = filled.store.count_rows(Scope(SUBJECT))["audit"]
    for bad in ("", "   ", None, "x" * 5000):
        with pytest.raises(ValidationError):
            filled.purge_user(SUBJECT, bad, context=ZOE)  # type: ignore[arg-type]
    assert filled.store.tenant_residue(Scope(SUBJECT)) == before
    assert filled.store.count_rows(Scope(SUBJECT))["audit"] == audit_before


class FailingStore:
    """A real Store: delegates to the embedded one, but fails purging chosen collections."""

    def __init__(self, inner: SQLiteStore, fail_on: set[str]) -> None:
        self.inner = inner
        self.fail_on = fail_on
        self.backend = inner.backend

    def purge_collection(self, scope: Scope, collection: str) -> int:
        if collection in self.fail_on:
            raise StoreError(f"injected failure while purging {collection}")
        return self.inner.purge_collection(scope, collection)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_fault_mid_purge_is_reported_audited_and_rerun_completes(filled: AgentMemory) -> None:
    mem = filled
    inner = mem.store
    assert isinstance(inner, SQLiteStore)
    acme_before = _acme_counts(mem)
    mem.store = FailingStore(inner, {"memories"})  # type: ignore[assignment]

    report = mem.purge_user(SUBJECT, "erasure #9", context=ZOE)

    assert not report.ok and report.status == "failed"
    assert report.failed_collection == "memories" and "injected failure" in (report.error or "")
    order = list(inner.purge_collections())
    done = order[: order.index("memories")]
    assert list(report.removed) == done  # relations, entities, vectors went
    assert report.not_attempted == order[order.index("memories") + 1 :]
    assert report.remaining is not None
    assert report.remaining["memories"] == 5 and report.remaining["episodes"] == 1
    assert report.remaining["vectors"] == 0 and report.remaining["relations"] == 0
    entries = mem.audit_log(limit=1000, context=ZOE)
    attempt, outcome = entries[-2], entries[-1]
    assert attempt.action == "purge_attempted"
    assert attempt.details["reason"] == digest_text("erasure #9", report.reason_key)
    assert outcome.action == "purge_failed"
    assert outcome.details["failed_collection"] == "memories"
    assert outcome.details["remaining"]["memories"] == 5
    assert outcome.details["attempt_seq"] == attempt.seq

    mem.store = inner  # the store recovers; the re-run finishes the job
    again = mem.purge_user(SUBJECT, "erasure #9 (re-run)", context=ZOE)
    assert again.ok, again.to_dict()
    assert again.removed["memories"] == 5 and again.removed["relations"] == 0
    assert not any(inner.tenant_residue(Scope(SUBJECT)).values())
    assert _acme_counts(mem) == acme_before
    assert mem.verify_audit_chain(context=ZOE).ok


def test_failure_counting_the_residue_is_still_a_failure(filled: AgentMemory) -> None:
    mem = filled
    inner = mem.store
    assert isinstance(inner, SQLiteStore)

    class BlindStore(FailingStore):
        calls = 0

        def tenant_residue(self, scope: Scope) -> dict[str, int]:
            BlindStore.calls += 1
            if BlindStore.calls > 1:
                raise StoreError("connection lost")
            return self.inner.tenant_residue(scope)

    mem.store = BlindStore(inner, set())  # type: ignore[assignment]
    report = mem.purge_user(SUBJECT, "erasure", context=ZOE)
    mem.store = inner
    assert not report.ok and report.remaining is None
    assert "connection lost" in (report.error or "")
    assert mem.audit_log(limit=1000, context=ZOE)[-1].action == "purge_failed"


def test_purge_then_new_writes_start_clean(tmp_path: Path, clock: ManualClock) -> None:
    mem = AgentMemory(
        tmp_path / "m.db", embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(3)
    )
    _fill(mem, ZOE, MARK)
    assert mem.purge_user(SUBJECT, "erasure", context=ZOE).ok
    fresh = mem.add("a new fact after erasure", context=ZOE)
    hits = mem.recall("new fact erasure", context=ZOE).results
    assert [r.memory.id for r in hits] == [fresh.id]
    vec = mem.store.get_vectors(Scope(SUBJECT), [fresh.id])[fresh.id]
    assert np.isclose(float(np.linalg.norm(vec)), 1.0, atol=1e-3)
    mem.close()


def test_purge_removes_the_tenants_content_traces(tmp_path: Path, clock: ManualClock) -> None:
    from attestor_arango.config import Config, TraceSettings

    trace = tmp_path / "trace.jsonl"
    config = Config(
        path=str(tmp_path / "t.db"),
        trace=TraceSettings(enabled=True, path=str(trace), include_content=True),
    )
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64), clock=clock)
    mem.add(f"{MARK} likes jazz", context=ZOE)
    mem.recall(f"what does {MARK} like", context=ZOE)
    assert MARK in trace_text(trace)
    report = mem.purge_user(SUBJECT, "erasure", context=ZOE)
    assert report.ok and report.warnings == [], report.to_dict()
    assert report.removed["trace_events"] > 0
    assert MARK not in trace_text(trace)
    mem.close()
    quiet = AgentMemory(tmp_path / "q.db", embedder=HashingEmbedder(64), clock=clock)
    report = quiet.purge_user(SUBJECT, "erasure", context=ZOE)
    assert report.ok and "trace_events" not in report.removed  # tracing off: no file touched
    quiet.close()
