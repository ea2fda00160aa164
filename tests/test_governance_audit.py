"""The audit hash chain: verification, tamper detection and the deletion trail.

Tamper tests act like an attacker with write access to the SQLite file: they
open their own connection, drop the append-only triggers and rewrite rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attestor_arango import AccessDenied, AgentContext, AgentRole
from attestor_arango.core import audit as audit_log
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

ORCH = AgentContext(agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="acme", namespace="p1")
MONITOR = ORCH.as_agent("mon", AgentRole.MONITOR)
OTHER = AgentContext(agent_id="o2", role=AgentRole.ORCHESTRATOR, tenant="beta", namespace="p1")


def _build_chain(mem: AgentMemory) -> None:
    """Nine entries: supersessions, an update, a forget, a quota change."""
    a = mem.add("Alice leads design", entity="alice", category="role", context=ORCH)
    mem.add("Alice leads research", entity="alice", category="role", context=ORCH)
    b = mem.add("Bob likes tea", entity="bob", category="pref", context=ORCH)
    b2 = mem.update(b.id, content="Bob likes green tea", context=ORCH)
    mem.forget(b2.id, reason="asked", context=ORCH)
    mem.set_quota("acme", daily_writes=100, context=ORCH)
    for i in range(6):
        mem.add(f"Carol fact {i}", entity="carol", category="fact", context=ORCH)
    mem.add("beta fact", entity="x", category="y", context=OTHER)
    mem.add("beta fact 2", entity="x", category="y", context=OTHER)
    assert a.id


@pytest.fixture
def chain_mem(mem: AgentMemory) -> AgentMemory:
    _build_chain(mem)
    return mem


@pytest.fixture
def attacker(chain_mem: AgentMemory) -> Iterator[sqlite3.Connection]:
    path = Path(chain_mem.store.path)  # type: ignore[attr-defined]
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("DROP TRIGGER audit_no_update")
    conn.execute("DROP TRIGGER audit_no_delete")
    yield conn
    conn.close()


def _seqs(mem: AgentMemory) -> list[int]:
    return [e.seq for e in mem.audit_log(limit=1000, context=ORCH)]


def test_intact_chain_verifies_and_head_matches(chain_mem: AgentMemory) -> None:
    report = chain_mem.verify_audit_chain(context=ORCH)
    assert report.ok, report.to_dict()
    assert report.entries == len(_seqs(chain_mem)) >= 8
    assert report.head == (report.last_seq, report.last_hash)
    # a read-only monitor may verify; the other tenant's chain is separate and intact too
    assert chain_mem.verify_audit_chain(context=MONITOR).ok
    assert chain_mem.verify_audit_chain("beta", context=OTHER).ok


def test_edit_is_detected(chain_mem: AgentMemory, attacker: sqlite3.Connection) -> None:
    attacker.execute(
        "UPDATE audit SET details = json_set(details, '$.reason', 'routine') "
        "WHERE tenant = 'acme' AND action = 'forget'"
    )
    report = chain_mem.verify_audit_chain(context=ORCH)
    assert not report.ok
    kinds = {(p.kind, p.seq) for p in report.problems}
    forget_seq = next(e.seq for e in chain_mem.audit_log(context=ORCH) if e.action == "forget")
    assert ("modified", forget_seq) in kinds
    # the other tenant's chain is unaffected
    assert chain_mem.verify_audit_chain("beta", context=OTHER).ok


def test_edit_with_recomputed_hash_breaks_the_next_link(
    chain_mem: AgentMemory, attacker: sqlite3.Connection
) -> None:
    from attestor_arango.core import audit as audit_log

    entries = chain_mem.audit_log(limit=1000, context=ORCH)
    victim = entries[3]
    forged = victim.model_copy(update={"action": "noop"})
    new_hash = audit_log.entry_hash(audit_log.hash_fields(forged))
    attacker.execute(
        "UPDATE audit SET action = 'noop', hash = ? WHERE tenant = 'acme' AND seq = ?",
        (new_hash, victim.seq),
    )
    report = chain_mem.verify_audit_chain(context=ORCH)
    assert ("broken_link", victim.seq + 1) in {(p.kind, p.seq) for p in report.problems}


def test_delete_is_detected(chain_mem: AgentMemory, attacker: sqlite3.Connection) -> None:
    attacker.execute("DELETE FROM audit WHERE tenant = 'acme' AND seq = 4")
    report = chain_mem.verify_audit_chain(context=ORCH)
    kinds = {(p.kind, p.seq) for p in report.problems}
    assert ("gap", 5) in kinds and ("broken_link", 5) in kinds


def test_reorder_is_detected(chain_mem: AgentMemory, attacker: sqlite3.Connection) -> None:
    # swap entries 3 and 4 by renumbering them (seq is part of the primary key)
    attacker.execute("UPDATE audit SET seq = -1 WHERE tenant = 'acme' AND seq = 3")
    attacker.execute("UPDATE audit SET seq = 3 WHERE tenant = 'acme' AND seq = 4")
    attacker.execute("UPDATE audit SET seq = 4 WHERE tenant = 'acme' AND seq = -1")
    report = chain_mem.verify_audit_chain(context=ORCH)
    kinds = {p.kind for p in report.problems}
    assert not report.ok
    assert {"modified", "broken_link", "reordered"} <= kinds


def test_truncate_is_detected_by_the_chain_head(
    chain_mem: AgentMemory, attacker: sqlite3.Connection
) -> None:
    last = _seqs(chain_mem)[-1]
    attacker.execute("DELETE FROM audit WHERE tenant = 'acme' AND seq > ?", (last - 2,))
    report = chain_mem.verify_audit_chain(context=ORCH)
    chain = [(p.kind, p.seq) for p in report.problems if not p.kind.startswith("row_")]
    assert chain == [("truncated", last)]
    # the rows the removed entries closed no longer match the chain either
    assert {p.kind for p in report.problems} - {"truncated"} <= {
        "row_closed_unrecorded",
        "row_unrecorded",
    }


def test_truncate_plus_head_rewrite_is_caught_by_a_saved_anchor(
    chain_mem: AgentMemory, attacker: sqlite3.Connection
) -> None:
    report = chain_mem.verify_audit_chain(context=ORCH)
    anchor = (report.last_seq, report.last_hash)
    assert anchor[1] is not None
    attacker.execute("DROP TRIGGER audit_heads_forward_only")
    attacker.execute("DELETE FROM audit WHERE tenant = 'acme' AND seq > ?", (anchor[0] - 2,))
    attacker.execute(
        "UPDATE audit_heads SET seq = a.seq, hash = a.hash FROM "
        "(SELECT seq, hash FROM audit WHERE tenant = 'acme' ORDER BY seq DESC LIMIT 1) AS a "
        "WHERE audit_heads.tenant = 'acme'"
    )
    alone = chain_mem.verify_audit_chain(context=ORCH)
    # the chain alone is fooled; the rows it covers are not (issue 16: verification covers rows)
    assert not [p for p in alone.problems if not p.kind.startswith("row_")]
    assert alone.problems and {p.kind for p in alone.problems} <= {
        "row_closed_unrecorded",
        "row_unrecorded",
    }
    fooled = chain_mem.verify_audit_chain(anchor=(anchor[0], str(anchor[1])), context=ORCH)
    assert [p.kind for p in fooled.problems if not p.kind.startswith("row_")] == ["truncated"]


def test_append_only_triggers_and_head_guard_hold_without_an_attacker(
    chain_mem: AgentMemory,
) -> None:
    conn = sqlite3.connect(str(chain_mem.store.path))  # type: ignore[attr-defined]
    try:
        for sql in (
            "UPDATE audit SET action = 'x' WHERE seq = 1",
            "DELETE FROM audit WHERE seq = 1",
            "UPDATE audit_heads SET seq = 1",
            "DELETE FROM audit_heads",
        ):
            with pytest.raises(sqlite3.DatabaseError):
                conn.execute(sql)
    finally:
        conn.close()
    assert chain_mem.verify_audit_chain(context=ORCH).ok


def test_verifying_another_tenants_chain_is_refused_and_audited(chain_mem: AgentMemory) -> None:
    with pytest.raises(AccessDenied):
        chain_mem.verify_audit_chain("beta", context=ORCH)
    last = chain_mem.audit_log(limit=1000, context=ORCH)[-1]
    assert (last.action, last.target) == ("permission_denied", "verify_audit_chain")


def test_deletion_audit_log_lists_removals_newest_first(chain_mem: AgentMemory) -> None:
    log = chain_mem.deletion_audit_log(context=MONITOR)
    assert [e.action for e in log] == ["forget"]
    # the reason is agent-supplied free text: the chain keeps its digest, never the words,
    # keyed by the forgotten row's salt (erased with the row)
    forgotten = chain_mem.store.get_memory(Scope("acme"), str(log[0].target))
    assert forgotten is not None and forgotten.salt is not None
    assert log[0].details["reason"] == audit_log.digest_text("asked", forgotten.salt)
    report = chain_mem.purge_user("acme", "erasure request #7", context=ORCH)
    assert report.ok
    actions = [e.action for e in chain_mem.deletion_audit_log(limit=2, context=MONITOR)]
    assert actions == ["purge_completed", "purge_attempted"]
    assert chain_mem.verify_audit_chain(context=ORCH).ok


def test_long_chains_are_verified_across_pages(mem: AgentMemory) -> None:
    for i in range(1203):
        mem.auditor.record(ORCH, "note", f"t{i}", {"i": i})
    report = mem.verify_audit_chain(context=ORCH)
    assert report.ok and report.entries == 1203 and report.last_seq == 1203
    conn = sqlite3.connect(str(mem.store.path))  # type: ignore[attr-defined]
    conn.execute("DROP TRIGGER audit_no_update")
    conn.execute("UPDATE audit SET target = 'forged' WHERE tenant = 'acme' AND seq = 777")
    conn.commit()
    conn.close()
    broken = mem.verify_audit_chain(context=ORCH)
    assert [(p.kind, p.seq) for p in broken.problems] == [("modified", 777)]


def test_appends_during_verification_are_not_reported(chain_mem: AgentMemory) -> None:
    real = chain_mem.store
    appended: list[int] = []

    class Busy:
        """Another writer appends while the verifier is between its reads."""

        def read_audit(self, scope: Any, limit: int, after_seq: int = 0) -> list[Any]:
            rows = real.read_audit(scope, limit, after_seq)
            if not appended:
                appended.append(chain_mem.auditor.record(ORCH, "note", "concurrent", {}).seq)
            return rows

        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

    chain_mem.store = Busy()  # type: ignore[assignment]
    report = chain_mem.verify_audit_chain(context=ORCH)
    chain_mem.store = real
    assert appended and report.ok, report.to_dict()


def test_entries_forged_past_the_head_are_detected(
    chain_mem: AgentMemory, attacker: sqlite3.Connection
) -> None:
    from attestor_arango.core import audit as audit_log

    last = chain_mem.audit_log(limit=1000, context=ORCH)[-1]
    attacker.execute("DROP TRIGGER audit_head_advance")
    forged = last.model_copy(
        update={"seq": last.seq + 1, "id": "forged", "action": "note", "prev_hash": last.hash}
    )
    digest = audit_log.entry_hash(audit_log.hash_fields(forged))
    attacker.execute(
        "INSERT INTO audit (tenant, seq, id, ts, agent_id, role, action, target, details, "
        "prev_hash, hash) SELECT tenant, seq + 1, 'forged', ts, agent_id, role, 'note', target, "
        "details, hash, ? FROM audit WHERE tenant = 'acme' AND seq = ?",
        (digest, last.seq),
    )
    report = chain_mem.verify_audit_chain(context=ORCH)
    assert [(p.kind, p.seq) for p in report.problems] == [("head_mismatch", last.seq + 1)]


@pytest.mark.parametrize(
    "bad", [(0, "a" * 64), (3, "xyz"), [3], (True, "a" * 64), ("3", "a" * 64), "3:abc"]
)
def test_malformed_anchors_are_refused(chain_mem: AgentMemory, bad: Any) -> None:
    from attestor_arango import ValidationError

    with pytest.raises(ValidationError, match="anchor"):
        chain_mem.verify_audit_chain(anchor=bad, context=ORCH)


def test_an_anchor_from_json_verifies(chain_mem: AgentMemory) -> None:
    import json

    report = json.loads(json.dumps(chain_mem.verify_audit_chain(context=ORCH).to_dict()))
    anchor = [report["last_seq"], report["last_hash"]]
    assert chain_mem.verify_audit_chain(anchor=anchor, context=ORCH).ok
    wrong = [report["last_seq"] - 1, report["last_hash"]]
    assert [p.kind for p in chain_mem.verify_audit_chain(anchor=wrong, context=ORCH).problems] == [
        "anchor"
    ]


@pytest.mark.parametrize("bad", ["3", -1, 1.5, None, True])
def test_audit_log_refuses_an_after_seq_that_is_not_a_position(tmp_path: Path, bad: object) -> None:
    """A string or a float once read as 'after everything' and answered an empty page."""
    from attestor_arango import ValidationError

    mem = AgentMemory(tmp_path / "m")
    _build_chain(mem)
    before = mem.audit_log(context=ORCH)
    with pytest.raises(ValidationError, match="after_seq"):
        mem.audit_log(after_seq=bad, context=ORCH)  # type: ignore[arg-type]
    assert len(before) >= 9
    assert mem.audit_log(after_seq=0, context=ORCH) == before
    mem.close()
