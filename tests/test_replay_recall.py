"""The replay guarantee for recall and recall_as_pack (DESIGN section 4).

``recall(q, as_of=T)`` must return exactly what ``recall(q)`` returned at T:
same ids, order, scores and field values. Hypothesis drives random histories
of adds (with supersession), updates, forgets and clock moves; after every
step the live answers are recorded, and at the end every one of them is
replayed with ``as_of`` and compared as JSON text.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval import RetrievalConfig

WORDS = ["paris", "berlin", "violin", "bread", "salary", "acme", "garden", "rain", "tea"]
ENTITIES = [None, "Alice", "Bob", "Paris"]
CATEGORIES = [None, "home", "job"]
QUERIES = ["Where does Alice live at Paris?", "Bob salary violin bread garden"]

add_op = st.tuples(
    st.just("add"),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
    st.sampled_from(ENTITIES),
    st.sampled_from(CATEGORIES),
    st.floats(min_value=0.1, max_value=1.0),
)
forget_op = st.tuples(st.just("forget"), st.integers(min_value=0, max_value=50))
update_op = st.tuples(
    st.just("update"),
    st.integers(min_value=0, max_value=50),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
)
wait_op = st.tuples(st.just("wait"), st.integers(min_value=1, max_value=90))
history = st.lists(
    st.one_of(add_op, add_op, forget_op, update_op, wait_op), min_size=3, max_size=10
)


def _apply(mem: AgentMemory, clock: ManualClock, op: tuple, added: list[str]) -> None:  # type: ignore[type-arg]
    kind = op[0]
    if kind == "add":
        _, words, entity, category, conf = op
        subject = entity or "someone"
        m = mem.add(
            f"{subject} {' '.join(words)}",
            entity=entity,
            category=category,
            confidence=round(conf, 3),
        )
        added.append(m.id)
    elif kind == "forget" and added:
        target = added[op[1] % len(added)]
        if mem.get(target).t_expired is None:
            mem.forget(target, reason="test")
    elif kind == "update" and added:
        target = added[op[1] % len(added)]
        if mem.get(target).t_expired is None:
            added.append(mem.update(target, content=" ".join(op[2])).id)
    elif kind == "wait":
        clock.advance(days=op[1])


CONFIGS = [
    RetrievalConfig(),
    # every optional deterministic step on as well
    RetrievalConfig(neighbour_weight=1.0, vector_weight=0.6),
]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=history, variant=st.sampled_from([0, 1]))
def test_recall_and_pack_replay_exactly(ops: list[tuple], variant: int) -> None:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        clock = ManualClock(1_767_225_600_000_000)
        mem = AgentMemory(
            Path(tmp) / "m.db", embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(3)
        )
        mem.retrieval_config = CONFIGS[variant]
        try:
            added: list[str] = []
            seen: list[tuple[str, str, str]] = []  # (query, response json, pack json)
            for op in ops:
                _apply(mem, clock, op, added)
                clock.advance(seconds=1)
                for q in QUERIES:
                    resp = mem.recall(q)
                    # every active memory is a vector-lane candidate: none may go missing
                    assert (len(resp) > 0) == (mem.stats().active > 0)
                    pack = mem.recall_as_pack(q, as_of=resp.as_of)
                    seen.append((q, resp.model_dump_json(), pack.to_json()))
            for q, live_json, pack_json in seen:
                from attestor_arango.models import RecallResponse

                live = RecallResponse.model_validate_json(live_json)
                replay = mem.recall(q, as_of=live.as_of)
                assert replay.model_dump_json() == live_json
                assert mem.recall_as_pack(q, as_of=live.as_of).to_json() == pack_json
        finally:
            mem.close()


def test_recall_replays_exactly_when_more_rows_match_than_the_text_pool_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the 200-row text pool, later rows (and other tenants) must not change a replay.

    Every memory matches the query, so the text lane's pool is a real choice among
    600 rows; the rows added afterwards shift every statistic of the query's words.
    """
    from attestor_arango.context import AgentContext

    # the default in-memory text index (with text_index=fts5 this replay differs)
    monkeypatch.delenv("ATTESTOR_TEXT_INDEX", raising=False)
    clock = ManualClock(1_767_225_600_000_000)
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=clock)
    assert mem.store.text_index == "memory"  # type: ignore[attr-defined]
    here = AgentContext(agent_id="a", tenant="here", namespace="n")
    other = AgentContext(agent_id="a", tenant="other", namespace="n")
    try:
        # half the rows name the violin, half the garden: at T both words weigh the same
        for i in range(600):
            mem.add(f"note {i}: paris berlin {'violin' if i % 2 else 'garden'}", context=here)
            clock.advance(seconds=1)
        query = "paris berlin violin garden"
        live = mem.recall(query, context=here)
        assert len(live.results) > 50
        # later rows make "violin" common: an index that ranks by its global statistics
        # now prefers the garden rows, and a pool cut by it would differ from the one at T
        for i in range(600):
            mem.add(f"later {i}: violin violin violin", context=here if i % 2 else other)
            clock.advance(seconds=1)
        replay = mem.recall(query, as_of=live.as_of, context=here)
        assert replay.model_dump_json() == live.model_dump_json()
    finally:
        mem.close()
