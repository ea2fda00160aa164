"""Session 18 attack battery, replay exactness and tenant isolation of keyword search.

``search`` without a filter ordered its hits by the backend's own text scores. The default
in-memory index scores BM25 over exactly the rows the view sees; FTS5 (``text_index:
fts5``) scores with statistics of every row the file holds: other tenants' rows and rows
written after the read. So on a tenant of three rows, another tenant's writes reordered
this tenant's results, and a replay at the read's ``as_of`` answered in another order
than the read did. The documented trade of FTS5 is which rows it picks above the pool
size; below it, the answer must depend on the view alone, as recall's and a filtered
search's already do (both re-score the pool over what the view sees).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock, from_us
from attestor_arango.config import Config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

HERE = AgentContext(agent_id="a", role="orchestrator", tenant="here")
THERE = AgentContext(agent_id="a", role="orchestrator", tenant="there")
OURS = ("manager go lisbon", "go lisbon tea", "rust cto lisbon")


def _memory(folder: Path, text_index: str) -> AgentMemory:
    config = Config(path=str(folder / "m.db"), text_index=text_index)
    return AgentMemory(
        folder / "m.db", config=config, embedder=HashingEmbedder(64), clock=ManualClock()
    )


@pytest.mark.parametrize("text_index", ["memory", "fts5"])
@pytest.mark.parametrize("whose", [THERE, HERE])
def test_later_rows_of_any_tenant_leave_a_pinned_search_alone(
    tmp_path: Path, text_index: str, whose: AgentContext
) -> None:
    mem = _memory(tmp_path, text_index)
    for text in OURS:
        mem.add(text, context=HERE)
    at = from_us(mem.clock.now_us())
    before = [m.id for m in mem.search("rust go", as_of=at, context=HERE)]
    assert len(before) == 3
    for i in range(30):  # 'rust' common in the file: FTS5's idf of it falls below 'go''s
        mem.add(f"note {i} rust home", context=whose)
    assert [m.id for m in mem.search("rust go", as_of=at, context=HERE)] == before
    mem.close()
