"""Erasure leaves nothing (issue 16, finding 1): audit entries hold ids, actions, counts and
digests, never the subject's words; after ``purge_user`` no byte of them is on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from interface_support import keyring, running_server

from attestor_arango.clock import OPEN, ManualClock
from attestor_arango.config import Config, TraceSettings
from attestor_arango.context import AgentContext
from attestor_arango.core import audit as audit_log
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import MemoryFilter
from tests.support.trace_reading import trace_text

# words no other row holds, so a raw byte scan finds only the subject's own data
SECRETS = ("Qwertyzed", "Plimpton", "Grubbleton", "Fnorgstrasse", "5559876", "Blorptown")
TURNS = (
    "My name is Qwertyzed Plimpton.",
    "I live in Grubbleton on Fnorgstrasse.",
    "My phone number is 5559876.",
    "I moved to Blorptown.",
)
SESSION = "sess-Qwertyzed"


def _memory(path: Path, trace: Path | None = None) -> AgentMemory:
    config = None
    if trace is not None:  # recall tracing on, with content: queries and ids in the file
        settings = TraceSettings(enabled=True, path=str(trace), include_content=True)
        config = Config(path=str(path / "memory.db"), trace=settings)
    return AgentMemory(
        path / "memory.db",
        config=config,
        embedder=HashingEmbedder(64),
        clock=ManualClock(),
        ids=SeededIdSource(3),
    )


def _hits(folder: Path) -> list[tuple[str, str]]:
    found = []
    for file in sorted(folder.rglob("*")):
        if file.is_file():
            data = file.read_bytes()
            found += [(file.name, word) for word in SECRETS if word.encode() in data]
    return found


@pytest.mark.parametrize("tracing", [False, True], ids=["tracing off", "tracing on"])
def test_purge_leaves_no_byte_of_the_subject_in_the_files(tmp_path: Path, tracing: bool) -> None:
    trace = tmp_path / "traces" / "recall-trace.jsonl"
    mem = _memory(tmp_path, trace if tracing else None)
    ctx = AgentContext(agent_id="orch", role="orchestrator", tenant="zed", session_id=SESSION)
    other = AgentContext(agent_id="orch", role="orchestrator", tenant="other")
    for text in TURNS:
        mem.ingest_round({"user": text, "assistant": "Noted, Qwertyzed.", "session_id": SESSION},
                         context=ctx)  # fmt: skip
    mem.reflect(context=ctx)
    mem.add("Qwertyzed likes Blorptown", entity="Qwertyzed", category="pref", context=ctx)
    temp = mem.add("Qwertyzed Plimpton, 5559876", context=ctx)
    mem.forget(temp.id, reason="Qwertyzed asked to forget 5559876", context=ctx)
    mem.recall("Where does Qwertyzed Plimpton live, Grubbleton or Blorptown?", context=ctx)
    mem.add("the other tenant keeps its notes", context=other)
    mem.recall("where are the notes kept", context=other)
    view = TemporalView(as_of=OPEN - 1, include_closed=True)
    ids = [m.id for m in mem.store.list_memories(Scope("zed"), MemoryFilter(), view, 1000, 0)]
    assert _hits(tmp_path), "the scan must see the subject before the purge"
    if tracing:
        assert "Qwertyzed" in trace_text(trace)
    report = mem.purge_user("zed", "GDPR request of Qwertyzed Plimpton", context=ctx)
    assert report.ok, report.to_dict()
    log = mem.audit_log(limit=1000, context=ctx)
    assert log and all(e.agent_id == "orch" for e in log)  # the chain itself stays
    mem.close()
    assert _hits(tmp_path) == []
    if tracing:
        text = trace_text(trace)
        assert report.removed["trace_events"] > 0
        assert [i for i in ids if i in text] == [] and '"zed"' not in text
        assert "where are the notes kept" in text  # the other tenant's events stay


def test_purge_fails_while_trace_events_name_no_tenant(tmp_path: Path) -> None:
    """Events written before traces named their tenant cannot be attributed: the purge
    reports ok=false with how many and how to finish, instead of claiming success."""
    trace = tmp_path / "recall-trace.jsonl"
    trace.write_text('{"seq": 1, "step": "start", "query": "Qwertyzed lives where?"}\n')
    mem = _memory(tmp_path, trace)
    ctx = AgentContext(agent_id="orch", role="orchestrator", tenant="zed")
    mem.add("Qwertyzed likes Blorptown", context=ctx)
    report = mem.purge_user("zed", "GDPR request", context=ctx)
    assert not report.ok and report.remaining is not None
    assert report.remaining["trace_events_unattributed"] == 1
    assert "rotate or erase the trace file" in str(report.error)
    trace.unlink()  # the operator rotates the file; the purge then completes
    assert mem.purge_user("zed", "GDPR request", context=ctx).ok
    mem.close()


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
    assert all("fact_digest" in d for e in rounds for d in e.details["decisions"])


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
