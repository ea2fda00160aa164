"""A call that writes several memories and is refused part-way (a quota spent) stores
nothing and spends nothing, in-process and over REST.

Found by the session 14 red team: ``add_turns`` stored the turns that fitted the quota and
then raised, and ``ingest_round`` committed the round's episode before its facts, so a
round refused for quota left its episode behind. The quota never counts episodes, so a
caller with one write left could send such a round again and again and grow the store
without limit. A refused batch also kept the writes it had counted against the agent's
write limit, so the next call was refused for writes that were never stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from interface_support import fingerprint, role_key, running_server

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import QuotaExceededError
from attestor_arango.ids import SeededIdSource
from attestor_arango.ingest import Backends
from attestor_arango.ingest.extract import RuleExtractor
from attestor_arango.interfaces.api.auth import KeyRing
from attestor_arango.llm.base import LLMError
from attestor_arango.memory import AgentMemory

ORCH = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="acme")
ROUND = {  # four facts: four writes
    "user": "I live in Oslo. I work at Equinor. I love skiing. I have a dog named Rex.",
    "assistant": "Nice.",
}
TURNS = [{"speaker": "ana", "text": f"message number {i}", "session_id": "s1"} for i in range(4)]


def _memory(path: Path) -> AgentMemory:
    return AgentMemory(
        path / "memory.db", embedder=HashingEmbedder(64), clock=ManualClock(), ids=SeededIdSource(3)
    )


def _held(mem: AgentMemory) -> dict[str, Any]:
    """What the tenant holds, audit chain and its head aside (a refusal may be audited)."""
    data = mem.export_user("acme", context=ORCH)
    return {k: v for k, v in data.items() if k not in ("audit", "chain", "exported_at")}


def test_turns_over_the_daily_quota_store_none_of_them(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    mem.set_quota("acme", daily_writes=3, context=ORCH)
    mem.add("a fact to keep", context=ORCH)
    before = _held(mem)
    with pytest.raises(QuotaExceededError):
        mem.add_turns(TURNS, context=ORCH)  # 4 turns, 2 writes left
    assert _held(mem) == before
    assert mem.quota_status(context=ORCH)["used"] == 1
    assert len(mem.add_turns(TURNS[:2], context=ORCH)) == 2  # what fits is still stored
    mem.close()


def test_rounds_over_the_daily_quota_leave_no_episodes_however_often_sent(
    tmp_path: Path,
) -> None:
    mem = _memory(tmp_path)
    mem.set_quota("acme", daily_writes=2, context=ORCH)
    mem.add("a fact to keep", context=ORCH)
    before = _held(mem)
    for _ in range(5):  # one write left: the pre-check passes, the round needs four
        with pytest.raises(QuotaExceededError):
            mem.ingest_round(ROUND, context=ORCH)
    assert _held(mem) == before
    assert mem.stats(context=ORCH).episodes == 0
    mem.close()


class _DownExtractor:
    def extract(self, *args: Any, **kwargs: Any) -> Any:
        raise LLMError("the extraction model is down")


def test_a_round_whose_model_fails_still_keeps_its_episode(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    mem.ingest_backends = Backends(_DownExtractor(), Backends.rules().resolver)  # type: ignore[arg-type]
    with pytest.raises(LLMError):
        mem.ingest_round(ROUND, context=ORCH)
    assert mem.stats(context=ORCH).episodes == 1 and mem.list(context=ORCH) == []
    mem.ingest_backends = Backends(RuleExtractor(), Backends.rules().resolver)
    assert mem.ingest_round(ROUND, context=ORCH).memories  # and the next round works
    mem.close()


def test_a_refused_batch_spends_none_of_the_agents_writes(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    ctx = AgentContext(agent_id="bot", role="executor", tenant="acme", max_writes_per_agent=3)
    with pytest.raises(QuotaExceededError):
        mem.add_turns(TURNS, context=ctx)
    with pytest.raises(QuotaExceededError):
        mem.ingest_round(ROUND, context=ctx)
    assert ctx.writes_made == 0 and mem.list(context=ORCH) == []
    assert len(mem.add_turns(TURNS[:3], context=ctx)) == 3
    mem.close()


def test_rest_batches_over_a_keys_write_limit_store_and_spend_nothing(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    plain, key = role_key("executor")
    ring = KeyRing([key.model_copy(update={"max_writes_per_agent": 3})])
    headers = {"x-api-key": plain}
    before = fingerprint(mem)
    with running_server(mem, ring) as url, httpx.Client(base_url=url, headers=headers) as c:
        turns = c.post("/v1/turns", json={"turns": TURNS})
        ingest = c.post("/v1/ingest", json={"turn": ROUND})
        after = fingerprint(mem)
        fits = c.post("/v1/turns", json={"turns": TURNS[:3]})
    mem.close()
    assert (turns.status_code, ingest.status_code) == (429, 429), (turns.text, ingest.text)
    assert turns.json()["code"] == "quota_exceeded"
    assert after == before
    assert fits.status_code == 200 and len(fits.json()) == 3


def test_a_consolidation_round_refused_part_way_spends_none_of_the_agents_writes(
    tmp_path: Path,
) -> None:
    """consolidate() applies a round in one transaction (ingest/apply.py); when a fact is
    refused part-way the round rolls back, and the writes it had counted against the
    agent's limit are given back with it, as ``ingest_round`` and ``add_turns`` do."""
    mem = _memory(tmp_path)
    mem.ingest_backends = Backends(_DownExtractor(), Backends.rules().resolver)  # type: ignore[arg-type]
    with pytest.raises(LLMError):
        mem.ingest_round(ROUND, context=ORCH)  # the episode is kept, its facts are not
    ctx = AgentContext(agent_id="bot", role="executor", tenant="acme", max_writes_per_agent=3)
    with pytest.raises(QuotaExceededError):
        mem.consolidate(context=ctx)  # the round's four facts, three writes allowed
    assert ctx.writes_made == 0 and mem.list(context=ORCH) == []
    assert len(mem.add_turns(TURNS[:3], context=ctx)) == 3
    mem.close()
