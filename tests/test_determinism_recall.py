"""Byte-identical recall output: repeated calls, and separate processes with different
PYTHONHASHSEED (set iteration order, dict-of-set builds and hash() all vary with it)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent(
    """
    import sys, tempfile
    from pathlib import Path
    from attestor_arango.clock import ManualClock
    from attestor_arango.embeddings import HashingEmbedder
    from attestor_arango.ids import SeededIdSource
    from attestor_arango.memory import AgentMemory
    from attestor_arango.models import Relation

    FACTS = [
        ("Alice lives in Paris near the river", "Alice", "home"),
        ("Alice works at Acme as an engineer", "Alice", "job"),
        ("Bob bakes sourdough bread on weekends", "Bob", "hobby"),
        ("Paris has lovely museums", "Paris", None),
        ("Carol plays the violin in an orchestra", "Carol", "hobby"),
        ("Alice moved to Berlin in March", "Alice", "home"),
        ("The team meets every Monday at nine", None, None),
        ("Bob and Carol went hiking in the Alps", "Bob", "trip"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        clock = ManualClock(1_767_225_600_000_000)
        with AgentMemory(Path(tmp) / "m.db", embedder=HashingEmbedder(128), clock=clock,
                         ids=SeededIdSource(11)) as mem:
            for content, entity, category in FACTS:
                mem.add(content, entity=entity, category=category)
                clock.advance(days=3)
            scope = mem.default_context.scope
            mem.store.add_relation(scope, Relation(
                id="rel-1", tenant=scope.tenant, namespace=scope.namespace, source="alice",
                relation="friend_of", target="bob", t_created=mem.store.get_memory(
                    scope, mem.list()[0].id).t_created))
            clock.advance(days=1)
            for q in ["Where does Alice live?", "bread and violin", "Who did Bob hike with?"]:
                sys.stdout.write(mem.recall(q).model_dump_json() + "\\n")
                sys.stdout.write(mem.recall_as_pack(q).to_json() + "\\n")
    """
)


def _run(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_recall_json_is_identical_across_processes_and_hash_seeds() -> None:
    outputs = [_run(seed) for seed in ("0", "1", "4242")]
    assert len(outputs[0].splitlines()) == 6
    assert '"query_entities":["alice"]' in outputs[0]
    assert '"graph_bonus":0.3' in outputs[0]
    assert outputs[0] == outputs[1] == outputs[2]


def test_repeated_calls_are_byte_identical(mem) -> None:  # type: ignore[no-untyped-def]
    mem.add("Alice lives in Paris", entity="Alice")
    mem.add("Bob bakes bread", entity="Bob")
    resp = mem.recall("Alice in Paris")
    again = [mem.recall("Alice in Paris", as_of=resp.as_of).model_dump_json() for _ in range(3)]
    assert again == [resp.model_dump_json()] * 3
    pack = mem.recall_as_pack("Alice in Paris", as_of=resp.as_of)
    assert pack.to_json() == mem.recall_as_pack("Alice in Paris", as_of=resp.as_of).to_json()
