"""Time belongs to the tenant (issue 16, findings 2 and 4): an import cannot move another
tenant's clock, and concurrent writers never make an untouched chain look tampered."""

from __future__ import annotations

import contextlib
import threading
from datetime import UTC, datetime
from pathlib import Path

import httpx
from interface_support import keyring, running_server

from attestor_arango.clock import SystemClock, iso, to_us
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import AccessDenied
from attestor_arango.memory import AgentMemory

A = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="acme")
B = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="beta")


def _memory(path: Path) -> AgentMemory:
    return AgentMemory(path / "memory.db", embedder=HashingEmbedder(64), clock=SystemClock())


# finding 2 --------------------------------------------------------------------------------------
def test_an_import_stamped_year_9000_is_refused_and_moves_no_other_tenants_clock(
    tmp_path: Path,
) -> None:
    mem = _memory(tmp_path)
    source = mem.add("acme keeps its books in Lisbon", context=A)
    export = mem.export_user("acme", context=A)
    mem.purge_user("acme", "re-import test", context=A)
    row = dict(export["memories"][0])
    row["t_created"] = "9000-01-01T00:00:00Z"
    row["valid_from"] = "9000-01-01T00:00:00Z"
    export["memories"] = [row]
    ring, plain = keyring()
    with running_server(mem, ring) as url, httpx.Client(base_url=url) as c:
        r = c.post("/v1/governance/import", json={"data": export},
                   headers={"x-api-key": plain["acme-orchestrator"]})  # fmt: skip
        wrote = c.post("/v1/memories", json={"content": "beta fact"},
                       headers={"x-api-key": plain["beta-orchestrator"]})  # fmt: skip
    assert r.status_code == 422, r.text
    assert "9000" in r.json()["message"]
    assert wrote.status_code == 200, wrote.text
    stamped = wrote.json()["t_created"]
    assert stamped < "2100", stamped
    assert mem.quota_status("beta", context=B)["day"] < "2100"
    assert mem.verify_audit_chain("beta", context=B).ok
    assert mem.stats(context=A).total == 0 and source.id
    mem.close()


def test_an_import_within_now_is_accepted_and_leaves_the_clock_alone(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    mem.add("acme keeps its books in Lisbon", context=A)
    export = mem.export_user("acme", context=A)
    mem.purge_user("acme", "re-import test", context=A)
    before = mem.clock.now_us()
    assert mem.import_user(export, context=A)["memories"] == 1
    after = mem.clock.now_us()
    assert after - before < 60_000_000  # no jump beyond the wall clock's own progress
    mem.close()


def test_a_turn_timestamp_from_the_future_is_refused(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    future = iso(to_us(datetime(9000, 1, 1, tzinfo=UTC)))
    try:
        mem.ingest_round({"user": "I live in Porto.", "timestamp": future}, context=A)
    except Exception as exc:
        assert type(exc).__name__ == "ValidationError"
    else:
        raise AssertionError("a turn from the year 9000 was stored")
    assert mem.stats(context=A).episodes == 0
    mem.close()


# finding 4 --------------------------------------------------------------------------------------
def test_concurrent_writers_on_two_connections_leave_every_chain_verifiable(
    tmp_path: Path,
) -> None:
    """N writer threads over two AgentMemory objects on one file (two connections, two
    clocks): afterwards each tenant's chain verifies with zero problems and every
    acknowledged write has its entry in the chain."""
    first, second = _memory(tmp_path), _memory(tmp_path)
    tenants = [
        AgentContext(agent_id=f"w{t}", role="orchestrator", tenant=f"t{t}") for t in range(3)
    ]
    acked: list[tuple[str, str]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def writer(n: int) -> None:
        mem = first if n % 2 else second
        ctx = tenants[n % 3]
        try:
            for i in range(15):
                m = mem.add(f"writer {n} fact {i}", entity=f"e{n}", category=f"c{i % 3}",
                            context=ctx)  # fmt: skip
                with lock:
                    acked.append((ctx.tenant, m.id))
                # a refusal is audited outside any write transaction: the racy path
                reader = AgentContext(agent_id=f"r{n}-{i}", role="reviewer", tenant=ctx.tenant)
                with contextlib.suppress(AccessDenied):
                    mem.add("refused", context=reader)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for ctx in tenants:
        report = first.verify_audit_chain(context=ctx)
        assert report.ok, report.to_dict()["problems"][:5]
        added = {e.target for e in first.audit_log(limit=10_000, context=ctx) if e.action == "add"}
        mine = {mid for tenant, mid in acked if tenant == ctx.tenant}
        assert mine <= added, len(mine - added)
    assert len(acked) == 8 * 15
    first.close()
    second.close()
