"""Where a recall's time goes: per-step timings on the embedded store.

Builds a store of N memories with the latency benchmark's generator (or opens an
existing one, e.g. a file kept from an earlier run), runs its queries and times
each pipeline step and store call by wrapping them. Steps nest (the text lane
contains the text pool), so the column does not sum to the total. Wrapping adds a
little time of its own; compare steps with each other, and take whole-recall
figures from latency.py.

    .venv/bin/python benchmarks/recall_profile.py [--memories 100000 | --store FILE]
        [--queries 200] [--out FILE]
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import bench_queries, sentence

import attestor_arango.retrieval.lane_run as lane_run
import attestor_arango.retrieval.pipeline as pipeline
import attestor_arango.retrieval.text_lane as text_module
from attestor_arango import AgentContext
from attestor_arango.core.blas import limit_blas_threads
from attestor_arango.memory import AgentMemory
from attestor_arango.store.embedded import store as embedded
from attestor_arango.store.embedded import text_index, vectors

# (owner, attribute, label): what is wrapped and timed
TIMED: list[tuple[Any, str, str]] = [
    (pipeline, "run_lanes", "lanes (vector + text + completion)"),
    (embedded.SQLiteStore, "vector_candidates", "  vector lane: store"),
    (vectors.TenantVectors, "_scan", "    int8 / float32 scan"),
    (lane_run, "text_lane", "  text lane"),
    (embedded.SQLiteStore, "text_pool_scores", "    text pool and its BM25 (store)"),
    (text_index, "pool_scores", "      BM25 over the pool"),
    (embedded.SQLiteStore, "text_pool", "    text pool (store; other backends)"),
    (text_module, "rescore_pool", "    BM25 re-scoring (other backends)"),
    (embedded.SQLiteStore, "get_memories", "  memories read and decoded"),
    (lane_run, "_complete", "  lane completion"),
    (pipeline, "fuse", "fusion"),
    (pipeline, "_graph", "graph"),
    (pipeline, "_vectors", "candidate vectors"),
    (pipeline, "apply_decay_boost", "decay and boost"),
    (pipeline, "apply_coverage", "coverage"),
    (pipeline, "apply_time_cue", "time cues"),
    (pipeline, "apply_freshness", "freshness"),
    (pipeline, "pack", "budget packing"),
]


def _wrap(owner: Any, name: str, label: str, times: dict[str, list[float]]) -> None:
    inner: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(inner)
    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            times[label].append(time.perf_counter() - t0)

    setattr(owner, name, timed)


def main() -> None:
    limit_blas_threads()  # what the CLI and servers do: one BLAS thread (core/blas.py)
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--store", default=None, help="an existing store file (tenant 'bench')")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", default="benchmarks/results/recall_profile.json")
    args = parser.parse_args()

    rng = random.Random(42)
    embedder, queries = bench_queries(rng, args.queries)
    ctx = AgentContext(agent_id="bench", tenant="bench", namespace="n")
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.store) if args.store else Path(tmp) / "bench.db"
        mem = AgentMemory(path, embedder=embedder)
        if not args.store:
            with Progress(console=console, transient=True) as progress:
                task = progress.add_task(f"adding {args.memories:,}", total=args.memories)
                for i in range(args.memories):
                    mem.add(sentence(rng) + f" #{i}", context=ctx)
                    progress.advance(task)
        for q in queries[:10]:
            mem.recall(q, context=ctx)  # load the caches
        times: dict[str, list[float]] = defaultdict(list)
        for owner, name, label in TIMED:
            _wrap(owner, name, label, times)
        totals = []
        for q in queries:
            t0 = time.perf_counter()
            mem.recall(q, context=ctx)
            totals.append(time.perf_counter() - t0)
        memories = mem.stats(context=ctx).total
        mem.close()

    def row(values: list[float]) -> dict[str, float]:
        ms = np.array(values) * 1000.0
        return {
            "per_recall_ms": float(ms.sum() / len(totals)),
            "p50_ms": float(np.percentile(ms, 50)),
            "p95_ms": float(np.percentile(ms, 95)),
            "calls_per_recall": len(values) / len(totals),
        }

    steps = {label: row(times[label]) for _, _, label in TIMED if times[label]}
    total = row(totals)
    table = Table(title=f"recall at {memories:,} memories, {len(totals)} queries (wrapped steps)")
    for col in ("step", "ms per recall", "p50 ms", "p95 ms", "calls"):
        table.add_column(col, justify="left" if col == "step" else "right")
    table.add_row("whole recall", f"{total['per_recall_ms']:.2f}", *_cells(total))
    for label, r in steps.items():
        table.add_row(label, f"{r['per_recall_ms']:.2f}", *_cells(r))
    console.print(table)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {"memories": memories, "queries": len(totals), "recall": total, "steps": steps}
    out.write_text(json.dumps(report, indent=2) + "\n")
    console.print(f"wrote {out}")


def _cells(r: dict[str, float]) -> tuple[str, str, str]:
    return f"{r['p50_ms']:.2f}", f"{r['p95_ms']:.2f}", f"{r['calls_per_recall']:.1f}"


if __name__ == "__main__":
    main()
