"""Adversarial finding: ``verify_audit_chain`` missed edits of a row beside its digest.

With the file in hand (its own connection, as in ``test_holes_tamper.py``), an attacker
could rewrite a memory's ``metadata``, ``agent_trail`` or ``parent_agent_id``, move the
moment a row was superseded, forgotten or archived (``t_expired``: what every ``as_of``
replay of that period returns), point ``superseded_by`` elsewhere, or break
``content_hash`` (what dedup compares), and the chain still verified ok. Writes now
record ``extra`` (a digest of metadata and agent trail), forget and retention archive
record the closing time (``at``) as supersession already did, an import records both
per row, and verification compares them; chains written before keep verifying.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
COPY = AgentContext(agent_id="orch", role="orchestrator", tenant="copy", namespace="n1")


def _build(path: Path) -> tuple[AgentMemory, dict[str, str]]:
    clock = ManualClock()
    mem = AgentMemory(path, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(5))
    child = A.as_agent("worker", role="executor")
    meta = mem.add("Ann lives in Oslo", entity="Ann", category="home",
                   metadata={"source": "chat"}, context=child)  # fmt: skip
    old = mem.add("Ann likes tea", entity="Ann", category="drink", context=A)
    mem.add("Ann likes coffee", entity="Ann", category="drink", context=A)
    gone = mem.add("Ann's old phone", context=A)
    mem.forget(gone.id, reason="stale", context=A)
    aged = mem.add("scratch note", category="scratch", context=A)
    clock.advance(days=10)
    policy = [{"name": "scratch", "category": "scratch", "older_than": "1d", "action": "archive"}]
    assert mem.apply_retention(policy, context=A).ok
    mem.import_user(mem.export_user("acme", context=A), context=COPY)
    copied = {m.content: m.id for m in mem.list(status="all", context=COPY)}
    ids = {"meta": meta.id, "old": old.id, "gone": gone.id, "aged": aged.id}
    ids |= {"copy_old": copied["Ann likes tea"], "copy_meta": copied["Ann lives in Oslo"]}
    return mem, ids


SET = "UPDATE memories SET "
TAMPERS = {
    "metadata": SET + "metadata = json_object('source', 'forged') WHERE id = '{meta}'",
    "agent_trail": """UPDATE memories SET agent_trail = '["orch"]' WHERE id = '{meta}'""",
    "parent_agent_id": "UPDATE memories SET parent_agent_id = 'boss' WHERE id = '{meta}'",
    "content_hash": SET + "content_hash = lower(hex(zeroblob(32))) WHERE id = '{meta}'",
    "superseded row closed a day earlier": (
        "UPDATE memories SET t_expired = t_expired - 86400000000 WHERE id = '{old}'"
    ),
    "forgotten row closed a year later": (
        "UPDATE memories SET t_expired = t_expired + 31536000000000 WHERE id = '{gone}'"
    ),
    "archived row closed later": SET + "t_expired = t_expired + 5 WHERE id = '{aged}'",
    "another successor": "UPDATE memories SET superseded_by = '{gone}' WHERE id = '{old}'",
    "a successor for a forgotten row": (
        "UPDATE memories SET superseded_by = '{old}' WHERE id = '{gone}'"
    ),
    "imported closed row moved": (
        "UPDATE memories SET t_expired = t_expired - 1000000 WHERE id = '{copy_old}'"
    ),
    "imported row's metadata": (
        "UPDATE memories SET metadata = json_object('source', 'x') WHERE id = '{copy_meta}'"
    ),
}


def test_an_untouched_store_verifies(tmp_path: Path) -> None:
    mem, _ = _build(tmp_path / "memory.db")
    for ctx in (A, COPY):
        report = mem.verify_audit_chain(context=ctx)
        assert report.ok, report.to_dict()
    mem.close()


@pytest.mark.parametrize("kind", list(TAMPERS))
def test_each_edit_of_a_row_is_detected(tmp_path: Path, kind: str) -> None:
    mem, ids = _build(tmp_path / "memory.db")
    conn = sqlite3.connect(str(tmp_path / "memory.db"), isolation_level=None)
    changed = conn.execute(TAMPERS[kind].format(**ids)).rowcount
    conn.close()
    assert changed == 1
    mem.close()  # a fresh process reads the edited file
    mem = AgentMemory(tmp_path / "memory.db", embedder=HashingEmbedder(64), clock=ManualClock())
    problems = [p.kind for c in (A, COPY) for p in mem.verify_audit_chain(context=c).problems]
    mem.close()
    assert problems == ["row_modified"], (kind, problems)
