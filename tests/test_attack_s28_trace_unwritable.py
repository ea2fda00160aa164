"""Session 28 attack: a recall trace that cannot be written failed recall with a bare OSError.

With tracing on (``trace.enabled``), every recall appends its steps to the trace file. When
that file cannot be written (its folder replaced by a link loop here; a full disk, a
folder whose rights were taken away or a path made too long do the same), ``recall``
raised the ``OSError`` itself: an in-process caller got no ``AttestorError`` and the REST
service answered 500 with no message a client could act on. The failure is now a
``StoreError`` (503 over REST) that names the trace and what to fix.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from attestor_arango import AgentContext
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import StoreError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme")


def _traced_memory_over_a_broken_trace_folder(tmp_path: Path) -> AgentMemory:
    folder = tmp_path / "traces"
    trace = TraceSettings(enabled=True, path=str(folder / "trace.jsonl"))
    config = Config(path=str(tmp_path / "m.db"), trace=trace)
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64))
    mem.add("Ann likes green tea", context=CTX)
    mem.recall("what does Ann like", context=CTX)  # the premise: traced while it could be
    assert any(folder.iterdir())
    mem.close()
    shutil.rmtree(folder)
    os.symlink(folder, folder)  # a link to itself: every path under it fails (ELOOP)
    return AgentMemory(config=config, embedder=HashingEmbedder(64))


def test_a_recall_whose_trace_cannot_be_written_is_a_store_error(tmp_path: Path) -> None:
    mem = _traced_memory_over_a_broken_trace_folder(tmp_path)

    with pytest.raises(StoreError, match="trace"):
        mem.recall("what does Ann like", context=CTX)
    mem.close()


def test_rest_answers_a_recall_whose_trace_cannot_be_written_with_503(tmp_path: Path) -> None:
    mem = _traced_memory_over_a_broken_trace_folder(tmp_path)
    key = ApiKey(id="k", sha256=hash_key("sk"), tenant="acme", roles=("orchestrator",),
                 agent_ids=("orch",))  # fmt: skip
    client = TestClient(create_app(mem, KeyRing([key])), raise_server_exceptions=False)

    answer = client.post(
        "/v1/recall", json={"query": "what does Ann like"}, headers={"Authorization": "Bearer sk"}
    )

    assert answer.status_code == 503, answer.text
    assert answer.json()["code"] == "store_error" and "trace" in answer.json()["message"]
    mem.close()
