"""Adversarial finding: tags and metadata bypassed the text checks content gets.

A lone UTF-16 surrogate in a tag or in metadata (in-process, or from the CLI's
``--metadata '{"k": "\\ud800"}'``) was stored; afterwards every REST list, recall and
export of the tenant answered 422 and the CLI's ``list`` died with a traceback, so the
tenant could no longer even be exported. Metadata nested past Python's recursion
limit raised a bare ``RecursionError``, and metadata had no size bound at all (50 MB
accepted while content stops at 32,000 characters); ``forget``'s reason, kept in the
audit chain, took any object. Each is now a ``ValidationError`` that stores nothing: no
row, no audit entry, no quota count.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
LONE = "\ud800"


def _deep(levels: int) -> dict[str, Any]:
    return functools.reduce(lambda inner, _: {"a": inner}, range(levels), {})


CASES: dict[str, Callable[[AgentMemory, str], object]] = {
    "tag surrogate": lambda m, _: m.add("fact a", tags=["ok", LONE], context=CTX),
    # a dict gave its keys as tags, a set an order that changes between runs
    "tags a dict": lambda m, _: m.add("fact g", tags={"a": 1}, context=CTX),  # type: ignore[arg-type]
    "tags a set": lambda m, _: m.add("fact h", tags={"x", "y"}, context=CTX),  # type: ignore[arg-type]
    "metadata key surrogate": lambda m, _: m.add("fact b", metadata={LONE: 1}, context=CTX),
    "metadata value surrogate": lambda m, _: m.add("fact c", metadata={"k": [LONE]}, context=CTX),
    "metadata 40 deep": lambda m, _: m.add("fact d", metadata=_deep(40), context=CTX),
    "metadata 3000 deep": lambda m, _: m.add("fact e", metadata=_deep(3000), context=CTX),
    "metadata over 1 MB": lambda m, _: m.add("fact f", metadata={"k": "x" * 2**20}, context=CTX),
    "update metadata surrogate": lambda m, mid: m.update(mid, metadata={"k": LONE}, context=CTX),
    "update tag surrogate": lambda m, mid: m.update(mid, tags=[LONE], context=CTX),
    "turn metadata surrogate": lambda m, _: m.add_turns(
        [{"speaker": "Ann", "text": "hello there", "metadata": {"k": LONE}}], context=CTX
    ),
    "ingest metadata surrogate": lambda m, _: m.ingest_round(
        {"user": "I like tea", "metadata": {"k": LONE}}, context=CTX
    ),
    "ingest metadata 3000 deep": lambda m, _: m.ingest_round(
        {"user": "I like tea", "metadata": _deep(3000)}, context=CTX
    ),
    # the forget reason the audit chain keeps: text, as a purge's reason is
    "forget reason not text": lambda m, mid: m.forget(mid, reason=5, context=CTX),  # type: ignore[arg-type]
    "forget reason surrogate": lambda m, mid: m.forget(mid, reason=LONE, context=CTX),
    "forget reason too long": lambda m, mid: m.forget(mid, reason="x" * 2001, context=CTX),
}


def _state(mem: AgentMemory) -> tuple[object, ...]:
    rows = mem.list(status="all", limit=1000, context=CTX)
    head = mem.verify_audit_chain(context=CTX)
    return (
        [(m.id, m.t_expired) for m in rows],
        mem.stats(context=CTX).episodes,
        head.last_seq,
        head.last_hash,
        mem.quota_status(context=CTX)["used"],
    )


@pytest.mark.parametrize("case", list(CASES))
def test_a_value_no_interface_can_give_back_is_refused_and_stores_nothing(
    tmp_path: Path, case: str
) -> None:
    mem = AgentMemory(tmp_path, embedder=HashingEmbedder(64))
    kept = mem.add("Ann lives in Oslo", entity="Ann", category="home", context=CTX)
    before = _state(mem)
    with pytest.raises(ValidationError):
        CASES[case](mem, kept.id)
    assert _state(mem) == before
    # REST still reads and exports the tenant (the no-auth app acts as the default context)
    mem.default_context = CTX
    client = TestClient(
        create_app(mem, None), base_url="http://127.0.0.1", raise_server_exceptions=False
    )
    listed = client.post("/v1/memories/list", json={"status": "all"})
    assert listed.status_code == 200, listed.text
    exported = client.post("/v1/governance/export", json={"user": "acme"})
    assert exported.status_code == 200, exported.text
    mem.close()


def test_metadata_within_the_bounds_is_kept_as_given(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path, embedder=HashingEmbedder(64))
    meta = {"deep": _deep(30), "text": "Zürich 東京 \U0001f600", "n": [1, 2.5, None, True]}
    stored = mem.add("Ann lives in Oslo", metadata=meta, context=CTX)
    assert mem.get(stored.id, context=CTX).metadata == meta
    mem.close()


@pytest.mark.parametrize("method", ["recall", "explain_recall", "recall_as_pack", "search"])
def test_a_query_that_is_not_text_is_refused(tmp_path: Path, method: str) -> None:
    """The response echoes the query; with a lone surrogate it could not be serialised
    (``model_dump_json`` raised), so MCP or any JSON caller failed after the search ran."""
    mem = AgentMemory(tmp_path, embedder=HashingEmbedder(64))
    mem.add("Ann lives in Oslo", context=CTX)
    with pytest.raises(ValidationError, match="surrogate"):
        getattr(mem, method)(f"where {LONE} Ann", context=CTX)
    assert mem.recall("where does Ann live", context=CTX).model_dump_json()
    mem.close()


def test_a_read_by_an_id_with_a_lone_surrogate_says_what_is_wrong(tmp_path: Path) -> None:
    # a read stores nothing: the error must not say the text "cannot be stored"
    mem = AgentMemory(str(tmp_path / "m.db"), embedder=HashingEmbedder())
    try:
        ctx = AgentContext(agent_id="a", tenant="t")
        with pytest.raises(ValidationError) as err:
            mem.get("a\ud800", context=ctx)
        assert "surrogate" in str(err.value) and "cannot be stored" not in str(err.value)
    finally:
        mem.close()
