"""Attacks on time across tenants: one tenant's requests must not move the clock, quota day,
as_of view or audit chain of another, and a refused request changes nothing stored.

Finding (session 16): ``import_user`` accepted transaction times up to a minute ahead of
the server's clock and then pushed the clock, shared by every tenant, past them. An
orchestrator of one tenant could purge its own tenant and import its export again, each
time stamped a minute past the clock it had just pushed, and walk the clock forward
without end: another tenant's next write was stamped minutes (then days) in the future,
its quota day could be made to roll over, and an ``as_of`` of the real "now" no longer saw
its own latest rows. The import now refuses any time past a tick already handed out.
"""

from __future__ import annotations

import copy
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from attack_support import stored
from starlette.testclient import TestClient

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock, iso
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.memory import AgentMemory

ATTACKER = AgentContext(agent_id="o", role="orchestrator", tenant="mallory")
VICTIM = AgentContext(agent_id="o", role="orchestrator", tenant="victim")
MINUTE_US = 60_000_000


def _memory(path: Path, clock: ManualClock) -> AgentMemory:
    return AgentMemory(path / "m.db", embedder=HashingEmbedder(64), clock=clock)


def _stamped(export: dict[str, Any], at_us: int) -> dict[str, Any]:
    """The export with every memory created at ``at_us`` (a transaction time)."""
    data = copy.deepcopy(export)
    for row in data["memories"]:
        row["t_created"] = iso(at_us)
    return data


def test_purge_and_reimport_cannot_walk_the_shared_clock_forward(tmp_path: Path) -> None:
    clock = ManualClock()  # the wall clock stands still: only ticks move it
    mem = _memory(tmp_path, clock)
    mem.add("victim keeps its books in Lisbon", context=VICTIM)
    mem.add("mallory keeps hers in Porto", context=ATTACKER)
    export = mem.export_user("mallory", context=ATTACKER)
    for _ in range(5):
        assert mem.purge_user("mallory", "again", context=ATTACKER).ok
        ahead = _stamped(export, mem.clock.now_us() + MINUTE_US - 1_000_000)
        with pytest.raises(ValidationError, match="after this server's time"):
            mem.import_user(ahead, context=ATTACKER)
    wrote = mem.add("victim opens an office in Faro", context=VICTIM)
    # every call takes one microsecond tick; nothing may have pushed it by seconds
    assert wrote.t_created.timestamp() - clock.now_us() / 1e6 < 1.0, wrote.t_created
    assert mem.quota_status("victim", context=VICTIM)["day"] == "2026-01-01"
    assert mem.verify_audit_chain("victim", context=VICTIM).ok
    # the victim's own "now" still sees what it just wrote
    now = datetime.fromtimestamp(wrote.t_created.timestamp() + 0.5, tz=wrote.t_created.tzinfo)
    clock.set(now)
    assert wrote.id in {m.id for m in mem.list(as_of=now, context=VICTIM)}
    mem.close()


def test_an_import_refused_for_its_times_stores_nothing(tmp_path: Path) -> None:
    clock = ManualClock()
    mem = _memory(tmp_path, clock)
    mem.add("victim keeps its books in Lisbon", context=VICTIM)
    mem.add("mallory keeps hers in Porto", context=ATTACKER)
    export = mem.export_user("mallory", context=ATTACKER)
    assert mem.purge_user("mallory", "again", context=ATTACKER).ok
    before = stored(mem)
    ahead = _stamped(export, mem.clock.last + 30_000_000)
    with pytest.raises(ValidationError):
        mem.import_user(ahead, context=ATTACKER)
    assert stored(mem) == before
    # the export as made (its times all past) still imports, and later writes come after it
    counts = mem.import_user(export, context=ATTACKER)
    assert counts["memories"] == 1
    later = mem.add("mallory moves to Braga", context=ATTACKER)
    imported = mem.list(status="all", context=ATTACKER)
    assert all(m.t_created < later.t_created for m in imported if m.id != later.id)
    mem.close()


def test_rest_import_a_minute_ahead_is_a_422_and_moves_no_clock(tmp_path: Path) -> None:
    clock = ManualClock()
    mem = _memory(tmp_path, clock)
    mem.add("mallory keeps hers in Porto", context=ATTACKER)
    export = mem.export_user("mallory", context=ATTACKER)
    assert mem.purge_user("mallory", "again", context=ATTACKER).ok
    keys = [
        ApiKey(id=t, sha256=hash_key(f"key-{t}"), tenant=t, roles=("orchestrator",),
               agent_ids=("o",))
        for t in ("mallory", "victim")
    ]  # fmt: skip
    client = TestClient(create_app(mem, KeyRing(keys)), raise_server_exceptions=False)
    ahead = _stamped(export, mem.clock.last + 45_000_000)
    before = stored(mem)
    r = client.post(
        "/v1/governance/import", json={"data": ahead}, headers={"x-api-key": "key-mallory"}
    )
    assert r.status_code == 422, r.text
    assert "after this server's time" in r.json()["message"]
    assert stored(mem) == before
    wrote = client.post(
        "/v1/memories", json={"content": "victim fact"}, headers={"x-api-key": "key-victim"}
    )
    assert wrote.status_code == 200, wrote.text
    stamped = datetime.fromisoformat(wrote.json()["t_created"].replace("Z", "+00:00"))
    assert stamped.timestamp() - clock.now_us() / 1e6 < 1.0, stamped
    mem.close()


def test_a_refused_as_of_changes_nothing_and_moves_no_clock(tmp_path: Path) -> None:
    """A future or naive ``as_of`` is refused before the read: no rows, no audit entry and
    no quota counter change, and the clock moves only by its own ticks."""
    clock = ManualClock()
    mem = _memory(tmp_path, clock)
    mem.add("victim keeps its books in Lisbon", context=VICTIM)
    before = stored(mem)
    tick = mem.clock.last
    bad: list[Any] = [
        "2999-01-01T00:00:00Z",
        datetime(2026, 1, 1, 0, 0),  # naive
        iso(clock.now_us() + 2 * MINUTE_US),
    ]
    reads = ("list", "recall", "search", "list_page")
    for as_of in bad:
        for op in reads:
            args = ("books",) if op in ("recall", "search") else ()
            with pytest.raises(ValidationError):
                getattr(mem, op)(*args, as_of=as_of, context=ATTACKER)
    assert stored(mem) == before
    assert mem.clock.last - tick < 100  # a handful of microsecond ticks, no jump
    assert mem.quota_status("victim", context=VICTIM)["used"] == 1
    mem.close()


@pytest.mark.parametrize("when", ["9000-01-01T00:00:00Z", "@minutes"])
def test_a_turn_said_in_the_future_is_refused_by_add_turns_as_by_ingest(
    tmp_path: Path, when: str
) -> None:
    """Finding: ``ingest_round`` refused a message time ahead of the server's clock, but
    ``add_turns`` (library, REST ``/v1/turns``, the client) stored it, year 9000 included,
    as when the turn was said. Now both refuse it, and nothing is stored."""
    clock = ManualClock()
    mem = _memory(tmp_path, clock)
    mem.add("victim keeps its books in Lisbon", context=VICTIM)
    stamp = iso(clock.now_us() + 5 * MINUTE_US) if when == "@minutes" else when
    turns = [
        {"speaker": "Ann", "text": "we met yesterday", "timestamp": iso(clock.now_us() - 10**9)},
        {"speaker": "Bob", "text": "and we meet again", "timestamp": stamp},
    ]
    before = stored(mem)
    with pytest.raises(ValidationError, match="after this server's time"):
        mem.add_turns(turns, context=ATTACKER)
    assert stored(mem) == before
    key = ApiKey(id="m", sha256=hash_key("key-m"), tenant="mallory", roles=("executor",),
                 agent_ids=("o",))  # fmt: skip
    client = TestClient(create_app(mem, KeyRing([key])), raise_server_exceptions=False)
    r = client.post("/v1/turns", json={"turns": turns}, headers={"x-api-key": "key-m"})
    assert r.status_code == 422, r.text
    assert "after this server's time" in r.json()["message"]
    assert stored(mem) == before
    # the turns said in the past are stored as said
    assert len(mem.add_turns(turns[:1], context=ATTACKER)) == 1
    mem.close()


def test_every_governance_move_of_one_tenant_leaves_anothers_chain_and_files_alone(
    tmp_path: Path,
) -> None:
    """Held when written, not covered before: purge, import, compaction, retention, quota
    and signature checks of one tenant leave another's audit chain (every entry and its
    head), rows and persisted index files byte for byte as they were."""
    import hashlib

    from attestor_arango.scope import Scope

    clock = ManualClock()
    mem = _memory(tmp_path, clock)
    for i in range(260):  # enough rows for the indexes to be written to files
        mem.add(f"victim fact {i} about the harbour", context=VICTIM)
        mem.add(f"mallory fact {i} about the harbour", context=ATTACKER)
    mem.recall("harbour fact", context=VICTIM)
    mem.recall("harbour fact", context=ATTACKER)
    digest = hashlib.sha256(b"victim").hexdigest()[:32]

    def victim_state() -> tuple[Any, ...]:
        files = {
            p.name: p.read_bytes() for p in sorted(tmp_path.rglob(f"{digest}.*")) if p.is_file()
        }
        chain = mem.store.read_audit(Scope("victim"), 10_000, 0)
        rows = [m.model_dump() for m in mem.list(status="all", limit=1000, context=VICTIM)]
        return files, [e.model_dump() for e in chain], rows

    before = victim_state()
    assert before[0], "the victim's indexes were not written to files"
    head = mem.audit_log(limit=10_000, context=VICTIM)[-1]
    export = mem.export_user("mallory", context=ATTACKER)
    mem.set_quota("mallory", daily_writes=10_000, context=ATTACKER)
    mem.forget(mem.list(limit=1, context=ATTACKER)[0].id, context=ATTACKER)
    clock.advance(days=3)
    mem.compact(older_than="1d", context=ATTACKER)
    policy = [{"name": "old", "action": "archive", "older_than": "1d"}]
    mem.apply_retention(policy, context=ATTACKER)
    assert mem.purge_user("mallory", "drill", context=ATTACKER).ok
    mem.import_user(export, context=ATTACKER)
    assert mem.purge_user("mallory", "drill again", context=ATTACKER).ok
    assert victim_state() == before
    report = mem.verify_audit_chain("victim", anchor=(head.seq, head.hash), context=VICTIM)
    assert report.ok, report
    mem.close()
