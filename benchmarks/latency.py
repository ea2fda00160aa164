"""Add and recall latency on the embedded store at 1k, 10k and 100k memories.

One tenant, one namespace. Query embedding is excluded from recall timings
(query vectors are computed before the clock starts); document embedding is
included in add timings. Also measured at each size: how long one full garbage
collection of this process takes with the tenant loaded (every other pause in
an embedding application grows by it). Prints a table and writes JSON to
benchmarks/results/.

    .venv/bin/python benchmarks/latency.py [--sizes 1000 10000 100000] [--queries 200]
        [--retrieval JSON] [--out FILE]

``--retrieval`` overrides RetrievalConfig settings, e.g. every ranking step off to
time the two lanes alone (benchmarks/results/latency-lanes-only.json).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from attestor_arango import AgentContext
from attestor_arango.core.blas import limit_blas_threads
from attestor_arango.embeddings import Embedder, HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval import RetrievalConfig

SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "sa", "vor", "el", "qui", "dan", "pe", "ro", "zu", "ni"]


def make_vocab(size: int, rng: random.Random) -> list[str]:
    """Pseudo-words; drawn with Zipf weights below, so a few are common and most are rare."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


VOCAB = make_vocab(5000, random.Random(7))
ZIPF = [1.0 / (rank + 1) for rank in range(len(VOCAB))]


class PrecomputedQueries:
    """Wraps an embedder; query vectors computed up front are served from a dict."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.cache: dict[str, np.ndarray] = {}

    def prepare(self, texts: list[str]) -> None:
        for text, vec in zip(texts, self.inner.embed(texts), strict=True):
            self.cache[text] = vec

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) == 1 and texts[0] in self.cache:
            return self.cache[texts[0]][None, :]
        return self.inner.embed(texts)


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(VOCAB, weights=ZIPF, k=rng.randint(6, 14)))


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values) * 1000.0, q))


def bench_queries(rng: random.Random, n: int) -> tuple[PrecomputedQueries, list[str]]:
    """The benchmark's queries (2-5 vocabulary words) and an embedder that has them ready."""
    embedder = PrecomputedQueries(HashingEmbedder())
    queries = [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(2, 5))) for _ in range(n)]
    embedder.prepare(queries)
    return embedder, queries


def full_gc_ms(repeats: int = 5) -> float:
    """Median time of one full garbage collection of this process, in ms."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        gc.collect()
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 2)


class FullCollections:
    """Counts full garbage collections (and their time) between ``start`` and ``stop``."""

    def __init__(self) -> None:
        self.on = False
        self.count = 0
        self.ms = 0.0
        self._t0 = 0.0
        gc.callbacks.append(self._callback)

    def start(self) -> None:
        self.on, self.count, self.ms = True, 0, 0.0

    def stop(self) -> None:
        self.on = False

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if not self.on or info["generation"] != 2:
            return
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.count += 1
            self.ms += (time.perf_counter() - self._t0) * 1000


def main() -> None:
    limit_blas_threads()  # what the CLI and servers do: one BLAS thread (core/blas.py)
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--retrieval", default="{}", help="JSON overrides of RetrievalConfig")
    parser.add_argument("--out", default="benchmarks/results/latency.json")
    args = parser.parse_args()
    overrides = json.loads(args.retrieval)
    retrieval = RetrievalConfig.from_dict(overrides)  # an unknown setting is an error

    rng = random.Random(42)
    embedder, queries = bench_queries(rng, args.queries)
    ctx = AgentContext(agent_id="bench", tenant="bench", namespace="n")
    console = Console()
    results = []
    gc_before_store = full_gc_ms()
    collections = FullCollections()
    with tempfile.TemporaryDirectory() as tmp:
        mem = AgentMemory(Path(tmp) / "bench.db", embedder=embedder)
        mem.retrieval_config = retrieval
        count = 0
        for size in sorted(args.sizes):
            add_times: list[float] = []
            with Progress(console=console, transient=True) as progress:
                task = progress.add_task(f"adding to {size:,}", total=size - count)
                while count < size:
                    text = sentence(rng) + f" #{count}"
                    t0 = time.perf_counter()
                    mem.add(text, context=ctx)
                    add_times.append(time.perf_counter() - t0)
                    count += 1
                    progress.advance(task)
            for q in queries[:10]:
                mem.recall(q, context=ctx)  # warm the vector matrix and caches
            rec_times: list[float] = []
            collections.start()
            for q in queries:
                t0 = time.perf_counter()
                mem.recall(q, context=ctx)
                rec_times.append(time.perf_counter() - t0)
            collections.stop()
            row = {
                "memories": size,
                "add_p50_ms": pct(add_times, 50),
                "add_p95_ms": pct(add_times, 95),
                "recall_p50_ms": pct(rec_times, 50),
                "recall_p95_ms": pct(rec_times, 95),
                "recall_p99_ms": pct(rec_times, 99),
                "full_gc_ms": full_gc_ms(),
                # full collections that fell inside the timed recalls (each one is a stall)
                "full_gcs_in_recalls": collections.count,
                "full_gcs_in_recalls_ms": round(collections.ms, 1),
                "adds_timed": len(add_times),
                "recalls_timed": len(rec_times),
            }
            results.append(row)
            console.print(row)
        mem.close()

    table = Table(title=f"embedded store latency ({embedder.name}, query embedding excluded)")
    columns = ("memories", "add p50 ms", "add p95 ms", "recall p50 ms", "recall p95 ms")
    for col in (*columns, "recall p99 ms", "full GC ms"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(
            f"{r['memories']:,}",
            f"{r['add_p50_ms']:.2f}",
            f"{r['add_p95_ms']:.2f}",
            f"{r['recall_p50_ms']:.2f}",
            f"{r['recall_p95_ms']:.2f}",
            f"{r['recall_p99_ms']:.2f}",
            f"{r['full_gc_ms']:.2f}",
        )
    console.print(table)
    console.print(f"full GC before the store was opened: {gc_before_store:.2f} ms")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "embedder": embedder.name,
                "python": platform.python_version(),
                "machine": platform.machine(),
                "full_gc_ms_before_store": gc_before_store,
                "retrieval_overrides": overrides,
                "results": results,
            },
            indent=2,
        )
    )
    console.print(f"wrote {out}")


if __name__ == "__main__":
    main()
