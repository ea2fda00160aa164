"""The vector prefilter of this checkout against another commit's, in one process at scale.

Opens a kept scale store (one tenant, from ``vector_prefilter_rows`` rows on, where the
lane is approximate), then per question swaps the prefilter module the vector index uses
(this checkout's store/embedded/prefilter.py, or ``--compare REV``'s, read with
``git show`` and loaded as a module; each with its own sign bits) and runs, in turn:
the vector lane alone (``TenantVectors.search`` with the config's k and prefilter) and a
whole recall. Checks both answers are identical (ids, float scores, order) and reports
process CPU time (every thread: the Hamming pass may run in scan.py's parts) and wall
time per call, p50/p95/p99, and per-question median ratios. Orders alternate per
question, so both codes see the same machine load.

    .venv/bin/python benchmarks/prefilter_ab.py --store /path/one.db \
        --data benchmarks/.cache/scale-1000000-v1 --compare REV [--queries 303] [--out FILE]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import ROOT
from scale import START, STEP, CachedVectors, pct, uptime

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock, from_us
from attestor_arango.core.blas import limit_blas_threads
from attestor_arango.memory import AgentMemory
from attestor_arango.store.embedded import prefilter, vectors

PATH = "attestor_arango/store/embedded/prefilter.py"


def module_at(rev: str) -> types.ModuleType:
    """``rev``'s prefilter.py as a module of its own."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:{PATH}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType(f"prefilter_{rev}")
    exec(compile(source, f"{rev}:{PATH}", "exec"), module.__dict__)
    return module


def timed(call: Callable[[], Any]) -> tuple[Any, float, float]:
    c, t = time.process_time(), time.perf_counter()
    out = call()
    return out, (time.process_time() - c) * 1000, (time.perf_counter() - t) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--compare", required=True, help="the commit whose prefilter to run")
    parser.add_argument("--queries", type=int, default=303)
    parser.add_argument("--out", default="benchmarks/results/prefilter-ab.json")
    args = parser.parse_args()
    limit_blas_threads()
    data = Path(args.data)
    questions = json.loads((data / "questions.json").read_text())[: args.queries]
    q_vectors = np.load(data / "questions.npy")[: args.queries]
    name = json.loads((data / "meta.json").read_text())["embedder"]
    as_of = from_us(START + 10**8 * STEP)
    mem = AgentMemory(
        args.store,
        embedder=CachedVectors(questions, q_vectors, name),
        clock=ManualClock(START + 10**8 * STEP + STEP),
    )
    ctx = AgentContext(agent_id="bench", tenant="bench", namespace="n")
    view = mem.runtime.view(as_of)
    config = mem.retrieval_config
    mem.recall(questions[0], context=ctx, as_of=as_of)  # loads the tenant's index
    index = mem.store.memories._caches.tenant_vectors("bench")  # type: ignore[attr-defined]
    modules = {"this": prefilter, args.compare: module_at(args.compare)}
    signs = {code: module.SignBits() for code, module in modules.items()}

    def use(code: str) -> None:
        vectors.prefilter = modules[code]
        index._signs = signs[code]

    def lane(v: np.ndarray) -> Any:
        k, keep, rows = config.vector_k, config.vector_prefilter, config.vector_prefilter_rows
        return index.search(np.asarray(v, np.float32), k, "n", view, keep, rows)

    def recall(q: str) -> Any:
        found = mem.recall(q, context=ctx, as_of=as_of).results
        return [(r.memory.id, r.score) for r in found]

    first = {}
    for code in modules:  # each code's sign bits built, then a warm-up
        use(code)
        first[code] = round(timed(lambda: lane(q_vectors[0]))[2], 1)
        for q in questions[1:6]:
            recall(q)
    times: dict[str, dict[str, list[float]]] = {
        code: {k: [] for k in ("lane_cpu", "lane_wall", "recall_cpu", "recall_wall")}
        for code in modules
    }
    same = {"lane": 0, "recall": 0}
    load_before = uptime()
    for i, (q, v) in enumerate(zip(questions, q_vectors, strict=True)):
        answers: dict[str, list[Any]] = {}
        for code in list(modules)[:: 1 if i % 2 == 0 else -1]:
            use(code)
            got_lane, cpu, wall = timed(functools.partial(lane, v))
            times[code]["lane_cpu"].append(cpu)
            times[code]["lane_wall"].append(wall)
            got_recall, cpu, wall = timed(functools.partial(recall, q))
            times[code]["recall_cpu"].append(cpu)
            times[code]["recall_wall"].append(wall)
            answers[code] = [got_lane, got_recall]
        this, other = answers.values()
        same["lane"] += this[0] == other[0]
        same["recall"] += this[1] == other[1]
    use("this")
    mem.close()
    report = {
        "what": f"prefilter of this checkout vs {args.compare} on {args.store}, "
        f"{len(questions)} questions, swapped per question in one process",
        "command": " ".join(["benchmarks/prefilter_ab.py", *sys.argv[1:]]),
        "rows": index.n,
        "load_before": load_before,
        "load_after": uptime(),
        "first_lane_ms_with_sign_bits": first,
        "identical_answers": {k: f"{n}/{len(questions)}" for k, n in same.items()},
        "figures_ms": {
            code: {f"{k}_p{p}": pct(v, p) for k, v in series.items() for p in (50, 95, 99)}
            for code, series in times.items()
        },
        "median_ratio_this_over_compare": {
            k: round(
                statistics.median(
                    a / b for a, b in zip(times["this"][k], times[args.compare][k], strict=True)
                ),
                3,
            )
            for k in times["this"]
        },
        "cpus": os.cpu_count(),
    }
    print(json.dumps(report, indent=2))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
