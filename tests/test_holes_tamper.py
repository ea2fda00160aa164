"""The tamper table (issue 16, finding 10): each way of editing the SQLite file behind the
service's back, applied to a real store file, is reported by ``verify_audit_chain``.

The attacker holds the file (its own connection, triggers dropped) but not the operator's
saved anchor, nor the service's signing key. A consistent forged entry appended after the
anchor (every hash and the head record rewritten to match) is detected only when signing
is on: the service signs every entry it appends, and a tail without valid signatures is
reported (``SIGNED_TAMPERS``; docs/design-notes.md states what an attacker holding the
private key can still do).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.core.audit import entry_hash
from attestor_arango.core.signing import Signer, verify_audit_with_public_key
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
B = AgentContext(agent_id="orch", role="orchestrator", tenant="beta", namespace="n1")
Tamper = Callable[[sqlite3.Connection, dict[str, str]], None]


def _build(path: Path, signer: Signer | None = None) -> tuple[AgentMemory, dict[str, str]]:
    mem = AgentMemory(path, embedder=HashingEmbedder(64), clock=ManualClock(),
                      ids=SeededIdSource(21))  # fmt: skip
    mem.signer = signer
    live = mem.add("Ann lives in Oslo", entity="Ann", category="home", context=A)
    old = mem.add("Ann likes tea", entity="Ann", category="drink", context=A)
    new = mem.add("Ann likes coffee", entity="Ann", category="drink", context=A)
    gone = mem.add("Ann's old phone", context=A)
    mem.forget(gone.id, reason="stale", context=A)
    mem.add("beta's own fact", context=B)
    ids = {"live": live.id, "old": old.id, "new": new.id, "gone": gone.id}
    return mem, ids


def _sql(statement: str) -> Tamper:
    def run(conn: sqlite3.Connection, ids: dict[str, str]) -> None:
        conn.execute(statement.format(**ids))

    return run


def _forge_row(conn: sqlite3.Connection, ids: dict[str, str]) -> None:
    cols = [r[1] for r in conn.execute("PRAGMA table_info(memories)") if r[1] != "rowid"]
    picked = ", ".join("'forged-1'" if c == "id" else c for c in cols)
    conn.execute(f"INSERT INTO memories ({', '.join(cols)}) SELECT {picked} FROM memories "
                 f"WHERE id = '{ids['live']}'")  # fmt: skip


def _swap_entries(conn: sqlite3.Connection, ids: dict[str, str]) -> None:
    conn.execute("UPDATE audit SET seq = -1 WHERE tenant = 'acme' AND seq = 2")
    conn.execute("UPDATE audit SET seq = 2 WHERE tenant = 'acme' AND seq = 3")
    conn.execute("UPDATE audit SET seq = 3 WHERE tenant = 'acme' AND seq = -1")


def _truncate_and_rewind(conn: sqlite3.Connection, ids: dict[str, str]) -> None:
    conn.execute("DROP TRIGGER IF EXISTS audit_heads_forward_only")
    conn.execute("DELETE FROM audit WHERE tenant = 'acme' AND seq > 4")
    conn.execute("UPDATE audit_heads SET seq = 4, hash = (SELECT hash FROM audit WHERE "
                 "tenant = 'acme' AND seq = 4) WHERE tenant = 'acme'")  # fmt: skip


TAMPERS: dict[str, Tamper] = {
    "edit content": _sql("UPDATE memories SET content = 'Ann lives in Rome' WHERE id = '{live}'"),
    "edit content and its hash": _sql(
        "UPDATE memories SET content = 'Ann lives in Rome', content_hash = "
        "'0000000000000000000000000000000000000000000000000000000000000000' WHERE id = '{live}'"
    ),
    "edit valid_from": _sql("UPDATE memories SET valid_from = 0 WHERE id = '{live}'"),
    "edit valid_until": _sql("UPDATE memories SET valid_until = 1 WHERE id = '{live}'"),
    "edit entity": _sql("UPDATE memories SET entity = 'Bob' WHERE id = '{live}'"),
    "edit category": _sql("UPDATE memories SET category = 'work' WHERE id = '{live}'"),
    "edit confidence": _sql("UPDATE memories SET confidence = 0.1 WHERE id = '{live}'"),
    "edit tags": _sql("""UPDATE memories SET tags = '["vip"]' WHERE id = '{live}'"""),
    "edit namespace": _sql("UPDATE memories SET namespace = 'n2' WHERE id = '{live}'"),
    "un-forget": _sql(
        "UPDATE memories SET t_expired = 253402300799000000, status = 'active' WHERE id = '{gone}'"
    ),
    "un-supersede": _sql(
        "UPDATE memories SET t_expired = 253402300799000000, status = 'active',"
        " superseded_by = NULL WHERE id = '{old}'"
    ),
    "close without record": _sql(
        "UPDATE memories SET t_expired = 1, status = 'archived' WHERE id = '{live}'"
    ),
    "delete a memory row": _sql("DELETE FROM memories WHERE id = '{live}'"),
    "move a row to another tenant": _sql("UPDATE memories SET tenant = 'beta' WHERE id = '{new}'"),
    "insert a forged row": _forge_row,
    "edit an audit entry": _sql(
        "UPDATE audit SET agent_id = 'someone' WHERE tenant = 'acme' AND seq = 2"
    ),
    "delete an audit entry": _sql("DELETE FROM audit WHERE tenant = 'acme' AND seq = 3"),
    "reorder audit entries": _swap_entries,
    "truncate the chain and rewind its head": _truncate_and_rewind,
}


@pytest.mark.parametrize("kind", list(TAMPERS))
def test_each_tamper_of_the_file_is_detected(tmp_path: Path, kind: str) -> None:
    mem, ids = _build(tmp_path / "memory.db")
    anchor_report = mem.verify_audit_chain(context=A)
    assert anchor_report.ok, anchor_report.to_dict()
    assert mem.verify_audit_chain(context=B).ok
    anchor = (anchor_report.last_seq, str(anchor_report.last_hash))
    conn = sqlite3.connect(str(tmp_path / "memory.db"), isolation_level=None)
    for trigger in ("audit_no_update", "audit_no_delete"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    TAMPERS[kind](conn, ids)
    conn.close()
    reports = [mem.verify_audit_chain(anchor=anchor, context=A), mem.verify_audit_chain(context=B)]
    mem.close()
    problems = [p.kind for r in reports for p in r.problems]
    assert problems, f"{kind} went undetected"


# a forged tail after the saved anchor (signing on) -------------------------------------------
COLUMNS = ("tenant", "seq", "id", "ts", "agent_id", "role", "action", "target", "details",
           "prev_hash")  # fmt: skip


def _append_forged(conn: sqlite3.Connection, sign: Callable[[str, int, str], str] | None) -> None:
    """One entry after the chain's head, hashed exactly as the service hashes: the links,
    the head record (the insert trigger moves it) and every row check stay consistent."""
    last = conn.execute("SELECT seq, hash, ts FROM audit WHERE tenant = 'acme' "
                        "ORDER BY seq DESC LIMIT 1").fetchone()  # fmt: skip
    fields = {"tenant": "acme", "seq": last[0] + 1, "id": "forged-entry", "ts": last[2] + 1,
              "agent_id": "orch", "role": "orchestrator", "action": "export",
              "target": "acme", "details": {"namespace": "n1"}, "prev_hash": last[1]}  # fmt: skip
    digest = entry_hash(fields)
    signature = None if sign is None else sign("acme", fields["seq"], digest)
    row = {**fields, "details": '{"namespace":"n1"}', "hash": digest, "signature": signature}
    names = ", ".join(row)
    conn.execute(f"INSERT INTO audit ({names}) VALUES ({', '.join('?' * len(row))})",
                 list(row.values()))  # fmt: skip


def _strip_and_append(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE audit SET signature = NULL WHERE tenant = 'acme'")
    _append_forged(conn, None)


def _copy_signature(conn: sqlite3.Connection) -> None:
    first = conn.execute("SELECT signature FROM audit WHERE tenant = 'acme' AND seq = 1")
    _append_forged(conn, lambda *_: str(first.fetchone()[0]))


SIGNED_TAMPERS: dict[str, Callable[[sqlite3.Connection], None]] = {
    "append a consistent unsigned entry after the anchor": lambda c: _append_forged(c, None),
    "append an entry signed with another key": lambda c: _append_forged(
        c, Signer.generate().sign_audit
    ),
    "copy a real signature onto a forged entry": _copy_signature,
    "strip every signature, then append": _strip_and_append,
    "strip one signature": lambda c: c.execute(
        "UPDATE audit SET signature = NULL WHERE tenant = 'acme' AND seq = 3"
    ),
}


@pytest.mark.parametrize("kind", list(SIGNED_TAMPERS))
def test_a_forged_tail_after_the_anchor_is_detected_when_entries_are_signed(
    tmp_path: Path, kind: str
) -> None:
    mem, _ = _build(tmp_path / "memory.db", Signer.generate())
    clean = mem.verify_audit_chain(context=A)
    assert clean.ok, clean.to_dict()
    anchor = (clean.last_seq, str(clean.last_hash))
    conn = sqlite3.connect(str(tmp_path / "memory.db"), isolation_level=None)
    for trigger in ("audit_no_update", "audit_no_delete"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    SIGNED_TAMPERS[kind](conn)
    conn.close()
    report = mem.verify_audit_chain(anchor=anchor, context=A)
    mem.close()
    kinds = {p.kind for p in report.problems}
    assert kinds & {"unsigned", "bad_signature"}, (kind, report.to_dict())
    # nothing else gives it away: without the signatures the forgery would pass
    assert kinds <= {"unsigned", "bad_signature"}, report.to_dict()


def test_every_entry_verifies_with_the_public_key_of_an_export(tmp_path: Path) -> None:
    """An auditor holding only an export (its entries and the public key) checks every
    signature; a consistent forged entry does not verify."""
    mem, _ = _build(tmp_path / "memory.db", Signer.generate())
    export = mem.export_user("acme", context=A)
    mem.close()
    from attestor_arango.models import AuditEntry

    entries = [AuditEntry.model_validate(e) for e in export["audit"]]
    public = export["signing"]["public_key"]
    assert entries and all(verify_audit_with_public_key(public, e) for e in entries)
    forged = entries[-1].model_copy(update={"seq": entries[-1].seq + 1})
    assert not verify_audit_with_public_key(public, forged)
