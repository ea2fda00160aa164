"""The opt-in vector prefilter against the exact default, end to end on a kept scale store.

Per question: one recall with the default config (exact), then one with
``vector_prefilter=KEEP``, interleaved; reports wall and CPU p50/p95 of each and how
much of the exact recall's top 10 the approximate one kept (set overlap, and the share
of questions whose top 10 is identical in order). Then the vector lane alone
(``Store.vector_candidates``, k = the config's vector_k) over every question of the
data (``--lane-queries``): overlap@10 and @50 of the approximate lane with the exact
one, the share of questions whose lane top 10 is whole, and each lane's time. Read-only
use of the store.

    .venv/bin/python benchmarks/prefilter_overlap.py --store /path/one.db \
        --data benchmarks/.cache/scale-1000000-v1 [--keep 5000] [--queries 100]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import START, STEP, CachedVectors

from attestor_arango import AgentContext, AgentMemory
from attestor_arango.clock import ManualClock, from_us
from attestor_arango.core.blas import limit_blas_threads


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--keep", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--tenant", default="bench")
    parser.add_argument("--namespace", default="n")
    parser.add_argument("--lane-queries", type=int, default=1000)
    args = parser.parse_args()
    limit_blas_threads()
    data = Path(args.data)
    every = json.loads((data / "questions.json").read_text())
    questions = every[: args.queries]
    meta = json.loads((data / "meta.json").read_text())
    all_vectors = np.load(data / "questions.npy")
    vectors = all_vectors[: args.queries]
    embedder = CachedVectors(questions, vectors, meta.get("embedder", "hashing"))
    as_of = from_us(START + 10**8 * STEP)
    clock = ManualClock(START + 10**8 * STEP + STEP)
    mem = AgentMemory(args.store, embedder=embedder, clock=clock)
    ctx = AgentContext(agent_id="bench", tenant=args.tenant, namespace=args.namespace)
    exact = mem.retrieval_config
    configs = {"exact": exact, "approx": exact.replace(vector_prefilter=args.keep)}
    for q in questions[:5]:  # warm-up: both sides' first reads
        for config in configs.values():
            mem.retrieval_config = config
            mem.recall(q, context=ctx, as_of=as_of)
    wall: dict[str, list[float]] = {name: [] for name in configs}
    cpu: dict[str, list[float]] = {name: [] for name in configs}
    overlap: list[float] = []
    same: list[bool] = []
    for q in questions[5:]:
        top: dict[str, list[str]] = {}
        for name, config in configs.items():
            mem.retrieval_config = config
            t0, c0 = time.perf_counter(), time.process_time()
            found = mem.recall(q, context=ctx, as_of=as_of)
            cpu[name].append(time.process_time() - c0)
            wall[name].append(time.perf_counter() - t0)
            top[name] = [r.memory.id for r in found.results][:10]
        overlap.append(len(set(top["exact"]) & set(top["approx"])) / max(1, len(top["exact"])))
        same.append(top["exact"] == top["approx"])
    out: dict[str, object] = {
        "keep": args.keep,
        "queries": len(overlap),
        "recall_top10_overlap": round(float(np.mean(overlap)), 3),
        "recall_top10_min": round(float(np.min(overlap)), 2),
        "top10_identical_share": round(float(np.mean(same)), 3),
        "load": os.getloadavg(),
    }
    for name in configs:
        out[name] = {
            "p50_ms": round(float(np.median(wall[name])) * 1e3, 1),
            "p95_ms": round(float(np.percentile(wall[name], 95)) * 1e3, 1),
            "cpu_p50_ms": round(float(np.median(cpu[name])) * 1e3, 1),
        }
    out["lane"] = lane_overlap(mem, ctx, all_vectors[: args.lane_queries], as_of, args.keep)
    print(json.dumps(out))


def lane_overlap(
    mem: AgentMemory, ctx: AgentContext, vectors: np.ndarray, as_of: object, keep: int
) -> dict[str, object]:
    """The vector lane alone, exact vs approximate, per question: overlaps and times."""
    scope = mem.runtime.scope(ctx)
    view = mem.runtime.view(as_of)  # type: ignore[arg-type]
    k = mem.retrieval_config.vector_k
    at10: list[float] = []
    at50: list[float] = []
    wall: dict[str, list[float]] = {"exact": [], "approx": []}
    for v in vectors:
        top: dict[str, list[str]] = {}
        for name, prefilter in (("exact", 0), ("approx", keep)):
            t0 = time.perf_counter()
            hits = mem.store.vector_candidates(scope, v, k, view, prefilter=prefilter)
            wall[name].append(time.perf_counter() - t0)
            top[name] = [h.memory.id for h in hits]
        at10.append(len(set(top["exact"][:10]) & set(top["approx"][:10])) / 10)
        at50.append(len(set(top["exact"]) & set(top["approx"])) / max(1, len(top["exact"])))
    return {
        "questions": len(at10),
        "k": k,
        "overlap_at10": round(float(np.mean(at10)), 4),
        "overlap_at10_min": round(float(np.min(at10)), 2),
        "top10_whole_share": round(float(np.mean(np.array(at10) == 1.0)), 4),
        "overlap_at50": round(float(np.mean(at50)), 4),
        "overlap_at50_min": round(float(np.min(at50)), 2),
        **{f"{name}_p50_ms": round(float(np.median(w)) * 1e3, 2) for name, w in wall.items()},
        **{
            f"{name}_p95_ms": round(float(np.percentile(w, 95)) * 1e3, 2)
            for name, w in wall.items()
        },
    }


if __name__ == "__main__":
    main()
