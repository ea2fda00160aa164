"""A purge that writes land during says which rows they wrote.

Before, an add landing after the purge erased the memories made it fail with "rows of
the tenant remain after every collection was purged": an operator read that as an erasure
that did not work (a store fault, an old file) though the rows left were written after the
purge began, by an agent still writing, and the subject's old rows were all erased. The
report now names the rows written after the purge began (``written_during``: their ids,
from the tenant's audit entries after ``purge_attempted``) and says so in its error, and
the outcome entry records them; a residue no later write explains keeps the old message.

Deterministic: the write runs inside the purge's own store call (``purge_collection``
wrapped), right after a chosen step committed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
OTHER_NS = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n2")


def _during(mem: AgentMemory, monkeypatch: pytest.MonkeyPatch, after: str, act: Any) -> None:
    original = mem.store.purge_collection

    def step(scope: Any, collection: str) -> int:
        removed = original(scope, collection)
        if collection == after:
            act()
        return removed

    monkeypatch.setattr(mem.store, "purge_collection", step)


def test_rows_written_after_the_purge_began_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    mem.add("Ann lives in Rome", entity="ann", category="home", context=CTX)
    late: list[str] = []

    def write() -> None:
        late.append(mem.add("Ann moved to Oslo", context=CTX).id)
        late.append(mem.add("Ann likes tea", context=OTHER_NS).id)

    _during(mem, monkeypatch, "memories", write)
    report = mem.purge_user("acme", "erasure #1", context=CTX)

    assert not report.ok
    assert sorted(report.written_during) == sorted(late)
    assert report.to_dict()["written_during"] == report.written_during
    assert report.error is not None and "written after the purge began" in report.error
    assert late[0] in report.error
    outcome = mem.audit_log(limit=100, context=CTX)[-1]
    assert outcome.action == "purge_failed"
    assert sorted(outcome.details["written_during"]) == sorted(late)
    # the subject's rows from before the purge are gone, only the late ones are held
    assert sorted(m.id for m in mem.list(context=CTX) + mem.list(context=OTHER_NS)) == sorted(late)
    mem.close()


def test_a_residue_no_later_write_explains_keeps_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    mem.add("Ann lives in Rome", context=CTX)
    original = mem.store.purge_collection
    # a step that removes nothing: the day's write counter stays, no write explains it
    monkeypatch.setattr(
        mem.store,
        "purge_collection",
        lambda scope, c: 0 if c == "write_counts" else original(scope, c),
    )
    report = mem.purge_user("acme", "erasure #2", context=CTX)
    assert not report.ok and report.remaining is not None
    assert report.remaining["write_counts"] == 1
    assert report.written_during == []
    assert report.error == "rows of the tenant remain after every collection was purged"
    mem.close()
