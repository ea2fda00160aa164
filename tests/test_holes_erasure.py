"""Erasure leaves nothing (issue 16, finding 1): audit entries hold ids, actions, counts and
digests, never the subject's words; after ``purge_user`` no byte of them is on disk."""

from __future__ import annotations

import json
from pathlib import Path

from interface_support import keyring, running_server

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.core import audit as audit_log
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory

# words no other row holds, so a raw byte scan finds only the subject's own data
SECRETS = ("Qwertyzed", "Plimpton", "Grubbleton", "Fnorgstrasse", "5559876", "Blorptown")
TURNS = (
    "My name is Qwertyzed Plimpton.",
    "I live in Grubbleton on Fnorgstrasse.",
    "My phone number is 5559876.",
    "I moved to Blorptown.",
)
SESSION = "sess-Qwertyzed"


def _memory(path: Path) -> AgentMemory:
    return AgentMemory(
        path / "memory.db", embedder=HashingEmbedder(64), clock=ManualClock(), ids=SeededIdSource(3)
    )


def _hits(folder: Path) -> list[tuple[str, str]]:
    found = []
    for file in sorted(folder.rglob("*")):
        if file.is_file():
            data = file.read_bytes()
            found += [(file.name, word) for word in SECRETS if word.encode() in data]
    return found


def test_purge_leaves_no_byte_of_the_subject_in_the_files(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    ctx = AgentContext(agent_id="orch", role="orchestrator", tenant="zed", session_id=SESSION)
    for text in TURNS:
        mem.ingest_round({"user": text, "assistant": "Noted, Qwertyzed.", "session_id": SESSION},
                         context=ctx)  # fmt: skip
    mem.reflect(context=ctx)
    mem.add("Qwertyzed likes Blorptown", entity="Qwertyzed", category="pref", context=ctx)
    temp = mem.add("Qwertyzed Plimpton, 5559876", context=ctx)
    mem.forget(temp.id, reason="Qwertyzed asked to forget 5559876", context=ctx)
    assert _hits(tmp_path), "the scan must see the subject before the purge"
    report = mem.purge_user("zed", "GDPR request of Qwertyzed Plimpton", context=ctx)
    assert report.ok, report.to_dict()
    log = mem.audit_log(limit=1000, context=ctx)
    assert log and all(e.agent_id == "orch" for e in log)  # the chain itself stays
    mem.close()
    assert _hits(tmp_path) == []


def test_audit_read_over_rest_holds_no_fact_text_or_session(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    ring, plain = keyring()
    with running_server(mem, ring) as url:
        writer = MemoryClient(url, plain["acme-orchestrator"])
        for text in TURNS:
            writer.ingest_round({"user": text, "assistant": "ok", "session_id": SESSION})
        writer.reflect()
        reader = MemoryClient(url, plain["acme-reviewer"])
        entries = reader.audit_log(limit=1000)
    mem.close()
    blob = json.dumps([e.model_dump(mode="json") for e in entries])
    assert {e.action for e in entries} >= {"episode", "ingest_round", "reflection"}
    assert [w for w in (*SECRETS, SESSION) if w in blob] == []
    rounds = [e for e in entries if e.action == "ingest_round"]
    assert all("fact_sha256" in d for e in rounds for d in e.details["decisions"])


def test_scrub_keeps_ids_and_counts_and_hashes_text() -> None:
    details = {"by": "01J0ABC", "n": 3, "reason": "because Ann said", "note": "two words"}
    out = audit_log.scrub(details)
    assert out["by"] == "01J0ABC" and out["n"] == 3
    assert out["reason"] == audit_log.digest_text("because Ann said")
    assert out["note"] == audit_log.digest_text("two words")
    assert audit_log.token("x" * 200) == audit_log.digest_text("x" * 200)


# finding 3 --------------------------------------------------------------------------------------
def test_purge_under_a_concurrent_reader_reports_failure_then_a_rerun_finishes(
    tmp_path: Path,
) -> None:
    import sqlite3

    mem = _memory(tmp_path)
    ctx = AgentContext(agent_id="orch", role="orchestrator", tenant="zed")
    other = AgentContext(agent_id="orch", role="orchestrator", tenant="acme")
    mem.add("Qwertyzed Plimpton lives in Grubbleton", context=ctx)
    mem.add("acme's own fact", context=other)
    reader = sqlite3.connect(str(tmp_path / "memory.db"), isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM memories").fetchone()  # holds an old snapshot
    try:
        report = mem.purge_user("zed", "erasure", context=ctx)
        mem.add("acme writes during the stalled erasure", context=other)  # not blocked
    finally:
        reader.execute("ROLLBACK")
        reader.close()
    assert not report.ok and report.remaining and report.remaining["wal_frames"] > 0
    assert report.error and "run purge_user again" in report.error
    again = mem.purge_user("zed", "erasure, second run", context=ctx)
    assert again.ok, again.to_dict()
    assert mem.stats(context=other).total == 2
    mem.close()
    assert _hits(tmp_path) == []
