"""A traced recall checks, once it is done, whether a purge of its tenant began meanwhile
(``core.recall._erased``: one audit read). That check ran in a ``finally``: when it failed
too, its error replaced the one that ended the recall (a lane's StoreError, a tenant leak,
a timeout) and the caller saw an audit-read failure instead of what went wrong. The
recall's own error is raised now; the check's failure is logged and noted on it. A recall
that succeeded still fails when the check fails (a trace of erased rows may be left)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.config import Config, TraceSettings
from attestor_arango.core import recall as core_recall
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import StoreError, TenantLeakError
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n")


def _traced(tmp_path: Path) -> AgentMemory:
    trace = TraceSettings(enabled=True, path=str(tmp_path / "trace.jsonl"))
    config = Config(path=str(tmp_path / "m.db"), trace=trace)
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64))
    mem.add("Ann likes green tea", entity="ann", context=CTX)
    return mem


def _audit_read_fails(mem: AgentMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    def fails(*args: object, **kwargs: object) -> None:
        raise StoreError("audit read failed")

    monkeypatch.setattr(mem.store, "read_audit_actions", fails)


@pytest.mark.parametrize("error", [StoreError("lane failed"), TenantLeakError("lane leaked")])
def test_the_recalls_own_error_wins_over_a_failed_purge_check(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    error: Exception,
) -> None:
    mem = _traced(tmp_path)
    _audit_read_fails(mem, monkeypatch)

    def lane_fails(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(core_recall, "run_recall", lane_fails)
    with caplog.at_level(logging.WARNING), pytest.raises(type(error)) as raised:
        mem.recall("what does Ann like?", context=CTX)
    assert raised.value is error
    assert any("audit read failed" in note for note in getattr(error, "__notes__", []))
    assert any("audit read failed" in r.getMessage() for r in caplog.records)
    mem.close()


def test_a_recall_that_succeeded_fails_when_its_purge_check_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = _traced(tmp_path)
    _audit_read_fails(mem, monkeypatch)
    with pytest.raises(StoreError, match="audit read failed"):
        mem.recall("what does Ann like?", context=CTX)
    mem.close()
