"""Property: after any sequence of ingested moves, as_of at each point shows that point's city."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from attestor_arango.clock import ManualClock, iso
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory

CITIES = ["Paris", "Berlin", "Lisbon", "Oslo", "Madrid", "Vienna"]
PHRASES = ["I live in {}.", "I moved to {}.", "Actually, I just relocated to {}."]


@settings(max_examples=12, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(CITIES), st.integers(0, len(PHRASES) - 1)),
        min_size=1,
        max_size=5,
    )
)
def test_as_of_replays_every_intermediate_belief(moves: list[tuple[str, int]]) -> None:
    clock = ManualClock(1_767_225_600_000_000)
    with tempfile.TemporaryDirectory() as tmp:
        mem = AgentMemory(
            Path(tmp) / "p.db", embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(1)
        )
        try:
            checkpoints: list[tuple[str, str]] = []
            for city, phrase in moves:
                clock.advance(days=1)
                mem.ingest_round({"user": PHRASES[phrase].format(city),
                                  "timestamp": iso(clock.now_us())})  # fmt: skip
                clock.advance(seconds=1)
                checkpoints.append((iso(clock.now_us()) or "", city))
            for at, city in checkpoints:
                believed = mem.current_facts(entity="user", as_of=at)
                assert len(believed) == 1, [m.content for m in believed]
                assert city in believed[0].content
                assert believed[0].metadata["ingest"]["value"] == city
        finally:
            mem.close()
