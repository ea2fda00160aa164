"""The embedded vector index alone: bounded int8 scan + exact re-score vs a plain float32 scan.

Builds a TenantVectors of random unit vectors (dense, like a sentence model) or
hashing-embedder vectors, then times ``search`` (k=50, every row visible)
against ``matrix @ query`` + argpartition, the scan it replaced. Also reports
how many rows the bounds left for exact re-scoring. Prints a table, writes JSON.

    .venv/bin/python benchmarks/vector_scan.py [--rows 10000 100000] [--dim 384]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table
from threadpoolctl import ThreadpoolController

from attestor_arango.clock import OPEN
from attestor_arango.core.blas import limit_blas_threads
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.scope import TemporalView
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", default="benchmarks/results/vector_scan.json")
    args = ap.parse_args()
    limit_blas_threads()
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
