"""consolidate and reflect re-read at most a budget of episode text per call.

Both re-extract the newest episodes' texts on every call: reflect (a read-only caller's
``reflect(store=False)`` too) up to 500 episodes' user texts, consolidate up to 10,000
episodes' user and assistant texts (each up to 64,000 characters). Rule extraction
takes ~8.5 us a character, so one reflect over 100 rounds of 64,000 characters took 74 s
(500 rounds ~6 min) and one consolidate(limit=10000) hours. The newest episodes are now
re-read until their texts reach ``EPISODE_TEXT_BUDGET`` characters (the newest always);
consolidate warns of those left out, reflect counts only the episodes it read.
"""

from __future__ import annotations

from typing import Any

import pytest

from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.ingest import consolidation
from attestor_arango.ingest.extract import RuleExtractor
from attestor_arango.memory import AgentMemory

SIDE = 300  # characters of each side of a round


def rounds(mem: AgentMemory, n: int) -> None:
    for i in range(n):
        user = f"I visited town number {i} today. ".ljust(SIDE, "x")[: SIDE - 1] + "."
        mem.ingest_round({"user": user, "assistant": "Nice. ".ljust(SIDE, "y")})


@pytest.fixture
def extracted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Lengths of the texts the rule extractor reads."""
    seen: list[int] = []
    original = RuleExtractor.extract

    def counting(self: RuleExtractor, text: str, *args: Any, **kw: Any) -> Any:
        seen.append(len(text))
        return original(self, text, *args, **kw)

    monkeypatch.setattr(RuleExtractor, "extract", counting)
    return seen


def test_reflect_reads_the_newest_user_texts_within_the_budget(
    mem: AgentMemory, extracted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    rounds(mem, 6)
    extracted.clear()
    monkeypatch.setattr(consolidation, "EPISODE_TEXT_BUDGET", 1_000, raising=False)
    own = mem.default_context
    reader = AgentContext(agent_id="r", role=AgentRole.REVIEWER, tenant=own.tenant,
                          namespace=own.namespace)  # fmt: skip
    result = mem.reflect(store=False, context=reader)
    assert result.episodes == 3  # 3 x 300 user characters fit 1,000; was 6
    assert sum(extracted) <= 1_000


def test_consolidate_warns_of_the_episodes_over_the_budget(
    mem: AgentMemory, extracted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    rounds(mem, 6)
    newest = mem.store.list_episodes(mem.default_context.scope, 100)[-2:]
    extracted.clear()
    monkeypatch.setattr(consolidation, "EPISODE_TEXT_BUDGET", 1_300, raising=False)
    report = mem.consolidate(limit=50)
    assert report.episodes == 2  # 2 x 600 characters of both sides fit 1,300; was 6
    assert sum(extracted) <= 1_300
    assert any("older episodes left out" in w and "1,300 characters" in w for w in report.warnings)
    read, cut = consolidation.recent_episodes(mem.runtime, mem.default_context.scope, 50)
    assert [e.id for e in read] == [e.id for e in newest] and cut


def test_the_newest_episode_is_read_even_past_the_budget(
    mem: AgentMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    rounds(mem, 3)
    monkeypatch.setattr(consolidation, "EPISODE_TEXT_BUDGET", 10, raising=False)
    assert mem.consolidate(limit=5).episodes == 1
    assert mem.reflect(store=False).episodes == 1


def test_the_budget_is_generous_for_real_use() -> None:
    # reflect's 500 episodes of 2,000 characters; consolidate's default 50 of 2 x 10,000
    assert consolidation.EPISODE_TEXT_BUDGET >= 1_000_000
