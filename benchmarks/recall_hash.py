"""One hash over every recall of a deterministic store: does a change alter any ranking?

Builds a store with an injected clock and id source (pseudo-word texts as in
``latency.py``, plus entities and categories so supersession and the graph step take
part), runs the queries at a fixed ``as_of`` and hashes each result's id, score and
token count in order, with the response's lane errors. Two checkouts that print the
same hash rank every query identically, to the last bit of every score.

Only the public API is used (``AgentMemory``, ``AgentContext``, the hashing embedder,
``ManualClock``, ``SeededIdSource``), so the same script runs on older commits:

    .venv/bin/python benchmarks/recall_hash.py --memories 10000 --queries 200
    git worktree add /tmp/old <rev> && (cd /tmp/old && python /path/to/recall_hash.py ...)

Prints JSON ({memories, queries, hash, results}); nothing is timed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import tempfile
from pathlib import Path

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock, from_us
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory

SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "sa", "vor", "el", "qui", "dan", "pe", "ro", "zu", "ni"]
ENTITIES = [f"person{i}" for i in range(40)]
CATEGORIES = ["home", "job", "diet", "pet", "car"]


def vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def run(memories: int, queries: int, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    clock = ManualClock()
    ctx = AgentContext(agent_id="bench", tenant="bench")
    with tempfile.TemporaryDirectory() as tmp:
        mem = AgentMemory(
            Path(tmp) / "hash.db",
            embedder=HashingEmbedder(),
            clock=clock,
            ids=SeededIdSource(seed),
            context=ctx,
        )
        for i in range(memories):
            clock.advance(seconds=60)
            words = rng.choices(vocab, weights=weights, k=rng.randint(6, 14))
            if i % 10 == 0:  # a fact about an entity: supersession and the graph take part
                entity = rng.choice(ENTITIES)
                mem.add(
                    f"{entity} {' '.join(words)}",
                    entity=entity,
                    category=rng.choice(CATEGORIES),
                    context=ctx,
                )
            else:
                mem.add(" ".join(words), context=ctx)
        as_of = from_us(clock.now_us())
        clock.advance(days=30)  # recalls replay a past instant
        digest = hashlib.sha256()
        count = 0
        for _ in range(queries):
            query = " ".join(rng.choice(vocab) for _ in range(rng.randint(2, 5)))
            if rng.random() < 0.3:
                query = f"{rng.choice(ENTITIES)} {query}"
            response = mem.recall(query, as_of=as_of, context=ctx)
            rows = [[r.memory.id, repr(r.score), r.tokens] for r in response.results]
            count += len(rows)
            digest.update(json.dumps([query, rows, sorted(response.errors)]).encode())
        mem.close()
    return {"memories": memories, "queries": queries, "hash": digest.hexdigest(), "results": count}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    print(json.dumps(run(args.memories, args.queries, args.seed)))


if __name__ == "__main__":
    main()
