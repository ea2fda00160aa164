"""The embedded vector index alone: bounded int8 scan + exact re-score vs a plain float32 scan.

Builds a TenantVectors of random unit vectors (dense, like a sentence model) or
hashing-embedder vectors, then times ``search`` (k=50, every row visible)
against ``matrix @ query`` + argpartition, the scan it replaced. Also reports
how many rows the bounds left for exact re-scoring. Prints a table, writes JSON.

``--parts`` times the int8 scan alone (store/embedded/scan.py) instead, interleaved
per query: one SimSIMD call per block, the same rows in parts shared with the helper
threads, and SimSIMD's own ``threads=2`` (OpenMP) for reference; wall p50/p95 and
process CPU (helpers included), then ``--threads`` callers scanning at once (a server's
recall workers): scans per second of each way. Load averages are printed beside.

    .venv/bin/python benchmarks/vector_scan.py [--rows 10000 100000] [--dim 384]
    .venv/bin/python benchmarks/vector_scan.py --parts [--rows 20000 40000 100000 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table
from threadpoolctl import ThreadpoolController

from attestor_arango.clock import OPEN
from attestor_arango.core.blas import limit_blas_threads
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.scope import TemporalView
from attestor_arango.store.embedded import quantise, scan
from attestor_arango.store.embedded.vectors import _INT8_ROWS, TenantVectors

K = 50


def dense(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    m = rng.standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def hashing(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    words = [f"w{i}" for i in range(5000)]
    weights = 1.0 / np.arange(1, len(words) + 1)
    weights /= weights.sum()
    texts = [
        " ".join(rng.choice(words, size=int(rng.integers(6, 15)), p=weights)) for _ in range(n)
    ]
    return HashingEmbedder(dimension=dim).embed(texts)


def timed(fn: object, queries: np.ndarray) -> list[float]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)  # type: ignore[operator]
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


Scan = Callable[[np.ndarray], object]


def _ways(codes: np.ndarray) -> dict[str, Scan]:
    """The int8 scan of ``codes``: one call, in parts with the helpers, OpenMP threads=2."""
    import simsimd

    def one(q: np.ndarray) -> object:
        return scan.dots([codes], q, quantise.simd_dots32, np.float32, 1 << 62)

    def in_parts(q: np.ndarray) -> object:
        return scan.dots([codes], q, quantise.simd_dots32, np.float32, 0)

    def omp(q: np.ndarray) -> object:
        return simsimd.cdist(q[None, :], codes, metric="dot", out_dtype="float32", threads=2)

    return {"one call": one, "in parts": in_parts, "omp threads=2": omp}


def _callers(way: Scan, qs: np.ndarray, threads: int, seconds: float = 2.0) -> float:
    """Scans per second of ``threads`` callers scanning at once (a server's workers)."""
    done = [0] * threads
    stop = threading.Event()

    def worker(i: int) -> None:
        while not stop.is_set():
            way(qs[(done[i] * 7 + i) % len(qs)])
            done[i] += 1

    workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    t0 = time.perf_counter()
    for w in workers:
        w.start()
    time.sleep(seconds)
    stop.set()
    for w in workers:
        w.join()
    return round(sum(done) / (time.perf_counter() - t0), 1)


def parts(rows: list[int], dim: int, queries: int, threads: int) -> list[dict[str, object]]:
    """Per row count: each way's wall p50/p95 and process CPU, interleaved per query."""
    rng = np.random.default_rng(7)
    codes_all = rng.integers(-127, 128, size=(max(rows), dim), dtype=np.int8)
    qs = rng.integers(-127, 128, size=(queries, dim), dtype=np.int8)
    out = []
    for n in rows:
        ways = _ways(codes_all[:n])
        want = np.asarray(ways["one call"](qs[0]))
        assert np.array_equal(np.asarray(ways["in parts"](qs[0])), want)  # the same dots
        wall: dict[str, list[float]] = {k: [] for k in ways}
        cpu: dict[str, list[float]] = {k: [] for k in ways}
        row: dict[str, object] = {"rows": n, "load_before": [round(x, 2) for x in os.getloadavg()]}
        for q in qs:
            for name, way in ways.items():
                t, c = time.perf_counter(), time.process_time()
                way(q)
                wall[name].append((time.perf_counter() - t) * 1e3)
                cpu[name].append((time.process_time() - c) * 1e3)
        for name in ways:
            row[name] = {
                "wall_p50_ms": round(float(np.percentile(wall[name], 50)), 3),
                "wall_p95_ms": round(float(np.percentile(wall[name], 95)), 3),
                "cpu_p50_ms": round(float(np.percentile(cpu[name], 50)), 3),
            }
        for name in ("one call", "in parts"):
            row[f"{name}: scans/s, {threads} callers"] = _callers(ways[name], qs, threads)
        row["load_after"] = [round(x, 2) for x in os.getloadavg()]
        print(json.dumps(row))
        out.append(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--parts", action="store_true", help="time the int8 scan in parts")
    ap.add_argument("--threads", type=int, default=2, help="--parts: callers at once")
    ap.add_argument("--out", default="benchmarks/results/vector_scan.json")
    args = ap.parse_args()
    limit_blas_threads()
    if args.parts:
        found = parts(args.rows, args.dim, args.queries, args.threads)
        meta = {"python": platform.python_version(), "cpus": os.cpu_count()}
        Path(args.out).write_text(json.dumps({**meta, "parts": found}, indent=2))
        print(f"wrote {args.out}")
        return
    rng = np.random.default_rng(7)
    view = TemporalView(as_of=OPEN - 1)
    rows = []
    for kind, make in (("dense", dense), ("hashing", hashing)):
        for n in args.rows:
            vecs = make(rng, n, args.dim)
            index = TenantVectors(args.dim)
            index.load(
                [f"m{i:07d}" for i in range(n)],
                ["n"] * n,
                vecs,
                np.tile(np.array([1, OPEN, 0, OPEN], dtype=np.int64), (n, 1)),
            )
            queries = make(rng, args.queries, args.dim)

            def float32_scan(q: np.ndarray, m: np.ndarray = vecs) -> np.ndarray:
                scores = m @ q
                return np.argpartition(-scores, K)[:K]

            def search(q: np.ndarray, index: TenantVectors = index) -> object:
                return index.search(q, K, None, view)

            for q in queries[:5]:  # warm caches
                search(q)
            ours = timed(search, queries)
            # the scan it replaced ran with BLAS's own threads (as many as cores)
            with ThreadpoolController().limit(limits=os.cpu_count() or 1, user_api="blas"):
                f32 = timed(float32_scan, queries)
            # rows the bounds leave for exact re-scoring (the cost beyond the scan)
            rescored = []
            for q in queries[:50]:
                approx, slack = index._scan(q)
                floor = np.partition(approx - slack, n - K)[n - K]
                rescored.append(int((approx + slack >= floor).sum()))
            row = {
                "vectors": kind,
                "rows": n,
                "dim": args.dim,
                "search_p50_ms": float(np.percentile(ours, 50)),
                "search_p95_ms": float(np.percentile(ours, 95)),
                "float32_scan_p50_ms": float(np.percentile(f32, 50)),
                "float32_scan_p95_ms": float(np.percentile(f32, 95)),
                "rescored_rows_p50": float(np.percentile(rescored, 50)),
                "rescored_rows_max": int(max(rescored)),
            }
            rows.append(row)
    table = Table(
        title=f"vector lane, k={K}: search (int8 scan from {_INT8_ROWS:,} rows) vs plain scan"
    )
    for col in ("vectors", "rows", "search p50/p95 ms", "float32 scan p50/p95 ms", "rescored"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            str(r["vectors"]),
            f"{r['rows']:,}",
            f"{r['search_p50_ms']:.2f} / {r['search_p95_ms']:.2f}",
            f"{r['float32_scan_p50_ms']:.2f} / {r['float32_scan_p95_ms']:.2f}",
            f"{r['rescored_rows_p50']:.0f} (max {r['rescored_rows_max']})",
        )
    Console().print(table)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"python": platform.python_version(), "machine": platform.machine()}
    out.write_text(json.dumps({**meta, "results": rows}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
