"""The replay guarantee (DESIGN §4), as a property.

Random interleavings of add, update, supersede and forget run under an injected
clock; every read is recorded with the instant it saw. Afterwards each read is
re-run with ``as_of`` set to that instant and must return exactly the same
memories, in the same order, with the same field values.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attestor_arango import AgentContext, AgentRole
from attestor_arango.clock import ManualClock, from_us
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory

ENTITIES = ["alice", "bob", "payments"]
CATEGORIES = ["role", "location"]
WORDS = ["lisbon", "paris", "manager", "cto", "go", "rust", "tea", "coffee"]
CTX = AgentContext(agent_id="o", role=AgentRole.ORCHESTRATOR, tenant="t1", namespace="n1")

op = st.one_of(
    st.tuples(
        st.just("add"),
        st.sampled_from([*ENTITIES, None]),
        st.sampled_from(CATEGORIES),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    ),
    st.tuples(
        st.just("update"),
        st.integers(0, 50),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    ),
    st.tuples(st.just("forget"), st.integers(0, 50)),
    st.tuples(st.just("tick"), st.integers(0, 5_000_000)),
    st.tuples(
        st.just("read"),
        st.sampled_from(["list", "all", "timeline", "get", "search", "current"]),
        st.integers(0, 50),
        st.sampled_from(ENTITIES),
    ),
)

Read = Callable[[Any], Any]


def _read(mem: AgentMemory, kind: str, ids: list[str], n: int, entity: str) -> Read | None:
    if kind == "list":
        return lambda at: mem.list(as_of=at, context=CTX)
    if kind == "all":
        return lambda at: mem.list(status="all", as_of=at, context=CTX)
    if kind == "timeline":
        return lambda at: mem.timeline(entity, as_of=at, context=CTX)
    if kind == "current":
        return lambda at: mem.current_facts(entity=entity, as_of=at, context=CTX)
    if kind == "search":
        return lambda at: mem.search(WORDS[n % len(WORDS)], as_of=at, context=CTX)
    if kind == "get" and ids:
        mid = ids[n % len(ids)]
        return lambda at: mem.get(mid, as_of=at, context=CTX)
    return None


def _dump(result: Any) -> Any:
    if isinstance(result, list):
        return [m.model_dump() for m in result]
    return result.model_dump()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=40))
def test_every_read_replays_exactly(ops: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        clock = ManualClock()
        mem = AgentMemory(
            Path(tmp) / "m.db", embedder=HashingEmbedder(32), clock=clock, ids=SeededIdSource(1)
        )
        ids: list[str] = []
        recorded: list[tuple[Read, int, Any]] = []
        for step in ops:
            kind = step[0]
            if kind == "add":
                _, entity, category, words = step
                m = mem.add(" ".join(words), entity=entity, category=category, context=CTX)
                ids.append(m.id)
            elif kind == "update" and ids:
                current = mem.get(ids[step[1] % len(ids)], context=CTX)
                if current.is_active:
                    ids.append(
                        mem.update(current.id, content=" ".join(step[2]) + " v2", context=CTX).id
                    )
            elif kind == "forget" and ids:
                current = mem.get(ids[step[1] % len(ids)], context=CTX)
                if current.is_active:
                    mem.forget(current.id, context=CTX)
            elif kind == "tick":
                clock.advance(seconds=step[1] / 1e6)
            elif kind == "read":
                read = _read(mem, step[1], ids, step[2], step[3])
                if read is not None:
                    result = read(None)
                    recorded.append((read, mem.clock.last, _dump(result)))
        for read, at, expected in recorded:
            assert _dump(read(from_us(at))) == expected
        mem.close()
