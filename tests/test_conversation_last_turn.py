"""A session's latest turn, found without reading the tenant (``conversation.last_turn``).

``add_turns`` links each session's first turn of a call to the latest turn stored for
that session. It used to list the tenant's rows carrying the session's tag, oldest first
and at most 10,000 of them, then pick the latest in Python: one scan of the tenant per new
session of a call (2,000 new sessions took 43.9 s at ~12k rows), and a session longer than
the limit linked a new turn to one of its first 10,000 turns. The store now reads the
session's rows newest first through an index (``latest_in_session``). These tests hold it
to the answers of the old full scan (kept below as the reference) for every case the scan
handled: forged turn records, ties in message time and turn index, rows closed before or
after ``as_of``, other namespaces, other tenants, a session tag on another session's row.
"""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from attestor_arango import AgentContext, AgentMemory
from attestor_arango.clock import OPEN, from_us
from attestor_arango.ingest import conversation
from attestor_arango.ingest.conversation import TURN_TAG, last_turn, session_tag, turn_index
from attestor_arango.models import Memory, Provenance, content_hash
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.embedded import sql
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.protocol import MemoryFilter, Store

T0 = 1_767_225_600_000_000
SESSIONS = ("s1", "s2", "S1")  # "S1" differs from "s1" in case only


def scan_last_turn(store: Store, ctx: AgentContext, session_id: str, now_us: int) -> Memory | None:
    """The lookup as it was before session 24, without its 10,000-row cap: every row of
    the tenant tagged with the session, the latest valid turn by (message time, index),
    the first in (t_created, id) order on a tie (what ``max`` keeps)."""
    rows = store.list_memories(
        ctx.scope,
        MemoryFilter(tags=(session_tag(session_id),)),
        TemporalView(as_of=now_us),
        limit=1_000_000,
    )
    turns = [
        (m.us("valid_from"), index, m)
        for m in rows
        if TURN_TAG in m.tags and m.provenance.session_id == session_id
        for index in (turn_index(m),)
        if index is not None
    ]
    return max(turns, key=lambda t: t[:2])[2] if turns else None


def _row(rng: random.Random, n: int) -> Memory:
    """One random row: a turn, a forged one, or a plain memory near a session."""
    session = rng.choice((*SESSIONS, None))
    tags = ["verbatim"]
    if rng.random() < 0.85:
        tags.append(TURN_TAG)
    if rng.random() < 0.85:  # usually its own session's tag, sometimes another's
        tags.append(session_tag(session or "s1") if rng.random() < 0.8 else
                    session_tag(rng.choice(SESSIONS)))  # fmt: skip
    index: Any = rng.choice((0, 1, 2, 3, 3, 4, 7, 2**53 - 1, 2**53, -1, True, "2", 2.0, None))
    metadata: dict[str, Any] = rng.choice(({"turn": {"index": index}}, {"turn": {"index": index}},
                                           {}, {"turn": "x"}))  # fmt: skip
    created = T0 + rng.randrange(0, 30)
    expired = rng.choice((None, None, None, created + rng.randrange(1, 20)))
    content = f"row {n}"
    return Memory(
        id=f"m-{rng.randrange(10**6):06d}-{n:03d}",
        tenant=rng.choice(("acme", "acme", "acme", "beta")),
        namespace=rng.choice(("ns1", "ns1", "ns2")),
        content=content,
        tags=tuple(tags),
        valid_from=from_us(T0 - 1_000 + rng.choice((0, 5, 5, 9, 9, 9, 12))),
        t_created=from_us(created),
        t_expired=None if expired is None else from_us(expired),
        provenance=Provenance(agent_id="a", role="planner", session_id=session),
        content_hash=content_hash(content),
        metadata=metadata,
    )


CONTEXTS = [
    AgentContext(agent_id="a", role="orchestrator", tenant=t, namespace=ns)
    for t in ("acme", "beta")
    for ns in ("ns1", "ns2")
]


@pytest.mark.parametrize("page", [1, 2, 500])
@pytest.mark.parametrize("seed", range(6))
def test_the_latest_turn_is_the_one_the_full_scan_found(
    store: Store, monkeypatch: pytest.MonkeyPatch, seed: int, page: int
) -> None:
    monkeypatch.setattr(conversation, "LAST_TURN_ROWS", page)
    rng = random.Random(seed)
    for n in range(60):
        row = _row(rng, n)
        store.insert_memory(Scope(row.tenant, row.namespace), row, None)
    checked = found = 0
    for ctx in CONTEXTS:
        for session in SESSIONS:
            for now in (T0 + 4, T0 + 15, T0 + 100):
                want = scan_last_turn(store, ctx, session, now)
                got = last_turn(store, ctx, session, now)
                assert (got and got.id) == (want and want.id), (ctx.scope, session, now)
                checked += 1
                found += want is not None
    assert checked == 36 and found > 5  # the data gives the lookups something to find


def test_a_session_longer_than_one_read_links_to_its_latest_turn(
    mem: AgentMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old lookup read the session's first ``LAST_TURN_ROWS`` rows (10,000) only: a
    longer session linked its next turn to one of those. Small here, same path."""
    monkeypatch.setattr(conversation, "LAST_TURN_ROWS", 3)
    ctx = AgentContext(agent_id="a", role="orchestrator", namespace="n", session_id="s")
    start = from_us(mem.runtime.clock.peek())
    said = mem.add_turns(
        [{"speaker": f"p{i % 2}", "text": f"message {i}",
          "timestamp": start - timedelta(minutes=10 - i)} for i in range(7)],
        context=ctx,
    )  # fmt: skip
    (same_time,) = mem.add_turns([{"speaker": "p1", "text": "one more"}], context=ctx)
    assert same_time.metadata["turn"]["index"] == 7
    assert same_time.metadata["turn"]["replies_to"] == said[-1].id
    (next_one,) = mem.add_turns([{"speaker": "p0", "text": "and another"}], context=ctx)
    assert next_one.metadata["turn"]["index"] == 8
    assert next_one.metadata["turn"]["replies_to"] == same_time.id


def _turn(scope: Scope, mid: str, session: str, valid_from: int, created: int = T0) -> Memory:
    return Memory(
        id=mid,
        tenant=scope.tenant,
        namespace=scope.namespace or "ns1",
        content=f"turn {mid}",
        tags=(TURN_TAG, session_tag(session)),
        valid_from=from_us(valid_from),
        t_created=from_us(created),
        provenance=Provenance(agent_id="a", role="planner", session_id=session),
        content_hash=content_hash(f"turn {mid}"),
        metadata={"turn": {"index": 0}},
    )


def test_latest_in_session_reads_the_newest_message_time_below_before(store: Store) -> None:
    a, other_ns, b = Scope("acme", "ns1"), Scope("acme", "ns2"), Scope("beta", "ns1")
    rows = [
        (a, _turn(a, "x3", "s", T0 - 50, created=T0 + 2)),
        (a, _turn(a, "x1", "s", T0 - 50, created=T0 + 1)),
        (a, _turn(a, "x2", "s", T0 - 50, created=T0 + 1)),
        (a, _turn(a, "y", "s", T0 - 90)),
        (a, _turn(a, "late", "s", T0 - 10, created=T0 + 50)),  # created after as_of
        (a, _turn(a, "other", "t", T0 - 5)),  # another session
        (other_ns, _turn(other_ns, "ns2", "s", T0 - 20)),
        (b, _turn(b, "beta", "s", T0 - 1)),
    ]
    for scope, row in rows:
        store.insert_memory(scope, row, None)
    view = TemporalView(as_of=T0 + 10)
    tag = session_tag("s")

    def ids(scope: Scope, before: int = OPEN + 1, limit: int = 10, offset: int = 0) -> list[str]:
        found = store.latest_in_session(scope, "s", tag, view, before, limit, offset)
        return [m.id for m in found]

    assert ids(a) == ["x1", "x2", "x3"]  # one message time, in (t_created, id) order
    assert ids(a, limit=2) == ["x1", "x2"] and ids(a, limit=2, offset=2) == ["x3"]
    assert ids(a, before=T0 - 50) == ["y"]
    assert ids(a, before=T0 - 90) == []
    assert ids(Scope("acme", None)) == ["ns2"]  # every namespace of the tenant
    assert ids(other_ns) == ["ns2"]
    assert ids(b) == ["beta"]
    assert store.latest_in_session(a, "s", session_tag("t"), view, OPEN + 1, 10) == []
    assert store.latest_in_session(a, "S", tag, view, OPEN + 1, 10) == []


def test_the_embedded_lookup_seeks_the_session_index(tmp_path: Path) -> None:
    """Both steps search the index by tenant and session (no scan of the tenant's rows)."""
    store = SQLiteStore(tmp_path / "m.db")
    params = {"tenant": "acme", "namespace": "ns1", "session_id": "s", "tag": "t",
              "before": OPEN + 1, "as_of": T0, "expired_after": T0, "w_start": -1,
              "w_end": OPEN + 1, "limit": 10, "offset": 0}  # fmt: skip
    with store.db.lock:
        plan = store.db.execute("EXPLAIN QUERY PLAN " + sql.LATEST_IN_SESSION, params).fetchall()
    store.close()
    steps = [str(r[3]) for r in plan if "memories" in str(r[3]) and "json_each" not in str(r[3])]
    assert len(steps) == 2, plan
    for step in steps:
        assert step.startswith("SEARCH memories USING INDEX memories_tenant_session"), plan
        assert "tenant=? AND session_id=? AND valid_from" in step, plan


def test_the_arango_lookup_sends_one_registered_query_with_the_tenant_of_the_scope() -> None:
    from tests.test_arango_store_unit import RecordingDB, Sent, make_store

    db = RecordingDB()
    store = make_store(db)
    view = TemporalView(as_of=T0 + 10)
    with pytest.raises(Sent):
        store.latest_in_session(Scope("acme", "ns1"), "s", "tag", view, T0, 7, 3)
    (_, name, binds) = db.log[-1]
    assert name == "memory_session_latest"
    assert binds == {
        "tenant": "acme", "namespace": "ns1", "session_id": "s", "tag": "tag", "before": T0,
        "as_of": T0 + 10, "t_expired_after": T0 + 10, "window_start": -1,
        "window_end": OPEN, "offset": 3, "limit": 7,
    }  # fmt: skip
    with pytest.raises(Sent):  # OPEN + 1 (no double) is sent as OPEN, as a view's window end
        store.latest_in_session(Scope("acme", "ns1"), "s", "tag", view, OPEN + 1, 7)
    assert db.log[-1][2]["before"] == OPEN
