"""The embedded store at scale: one tenant grown to a million memories, and many tenants.

Single tenant (``--checkpoints``, default 100k / 300k / 1M): memories are added one by
one through ``AgentMemory.add`` (synthetic conversation turns made of LoCoMo sentences
under other names, deterministic seed), their vectors computed by the hashing embedder
before each add's clock starts (embedding excluded). At each checkpoint it reports add
p50/p95 since the previous one, closes the store and reports the sizes of the SQLite
file and the index files, then starts fresh processes on it: open time, first-recall
time and RSS, and recall p50/p95 over LoCoMo's questions after a warm-up.

Many tenants (``--tenants N --per-tenant M``): N tenants of M memories each in one
file, then a fresh process recalls round-robin over the tenants (each tenant's first
recall loads its index: reported separately from the steady recalls).

    .venv/bin/python benchmarks/scale.py [--checkpoints 100000 300000 1000000]
        [--tenants 100 --per-tenant 10000] [--queries 100] [--out FILE]

On a loaded 2-core machine a million adds take long; pass smaller checkpoints and say so.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import locomo_turns_and_questions, synthetic_turns

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock, from_us
from attestor_arango.core.blas import limit_blas_threads
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory

START = 1_767_225_600_000_000
STEP = 1_000_000


class Prepared:
    """The hashing embedder, with the next vectors computed before the timed call."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()
        self.name = self.inner.name
        self.dimension = self.inner.dimension
        self.ready: dict[str, np.ndarray] = {}

    def prepare(self, texts: list[str]) -> None:
        self.ready = dict(zip(texts, self.inner.embed(texts), strict=True))

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) == 1 and texts[0] in self.ready:
            return self.ready[texts[0]][None, :]
        return np.asarray(self.inner.embed(texts))


def rss_mb(field: str = "VmRSS") -> float:
    """Resident MB; RssFile is the mapped index files' pages (page cache, reclaimable)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(np.array(values), q)), 3)


def file_sizes(db: Path) -> dict[str, float]:
    mb = 1024 * 1024
    folder = db.with_name(db.name + ".idx")
    index = sum(p.stat().st_size for p in folder.glob("*")) if folder.is_dir() else 0
    wal = db.with_name(db.name + "-wal")
    return {
        "db_mb": round(db.stat().st_size / mb, 3),
        "wal_mb": round(wal.stat().st_size / mb, 3) if wal.exists() else 0.0,
        "index_files_mb": round(index / mb, 3),
    }


def probe(db: str, tenants: list[str], queries: int) -> dict[str, Any]:
    """In a fresh process: open, first recall per tenant, then steady recalls."""
    limit_blas_threads()
    _, questions = locomo_turns_and_questions()
    questions = questions[:queries]
    embedder = Prepared()
    embedder.prepare(questions)
    as_of = from_us(START + 10**8 * STEP)
    t0 = time.perf_counter()
    mem = AgentMemory(db, embedder=embedder, clock=ManualClock(START + 10**8 * STEP + STEP))
    open_ms = (time.perf_counter() - t0) * 1000
    contexts = [AgentContext(agent_id="bench", tenant=t, namespace="n") for t in tenants]
    firsts = []
    for i, ctx in enumerate(contexts):
        t = time.perf_counter()
        mem.recall(questions[i % len(questions)], context=ctx, as_of=as_of)
        firsts.append((time.perf_counter() - t) * 1000)
    rss_first = rss_mb()
    for q in questions[:10]:
        mem.recall(q, context=contexts[0], as_of=as_of)
    wall: list[float] = []
    for i, q in enumerate(questions):
        ctx = contexts[i % len(contexts)]
        t = time.perf_counter()
        mem.recall(q, context=ctx, as_of=as_of)
        wall.append((time.perf_counter() - t) * 1000)
    out = {
        "open_ms": round(open_ms, 1),
        "first_recall_ms": round(firsts[0], 1),
        "first_recall_per_tenant_p50_ms": round(statistics.median(firsts), 1),
        "rss_after_first_recalls_mb": round(rss_first, 1),
        "recall_p50_ms": pct(wall, 50),
        "recall_p95_ms": pct(wall, 95),
        "rss_mb": round(rss_mb(), 1),
        "rss_anon_mb": round(rss_mb("RssAnon"), 1),
        "rss_file_mb": round(rss_mb("RssFile"), 1),
    }
    mem.close()
    return out


def run_probe(db: Path, tenants: list[str], queries: int) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--probe", str(db), "--queries", str(queries)]
    cmd += ["--probe-tenants", *tenants]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def grow(
    mem: AgentMemory,
    clock: ManualClock,
    embedder: Prepared,
    texts: list[str],
    ctx: AgentContext,
    count: int,
) -> list[float]:
    times: list[float] = []
    for lo in range(0, len(texts), 512):
        batch = texts[lo : lo + 512]
        embedder.prepare(batch)
        for text in batch:
            clock.set(START + count * STEP)
            t = time.perf_counter()
            mem.add(text, context=ctx)
            times.append((time.perf_counter() - t) * 1000)
            count += 1
    return times


def write(out: Path, report: dict[str, Any]) -> None:
    """The report so far (written after every checkpoint: a long run stopped early keeps it)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))


def single_tenant(
    checkpoints: list[int], queries: int, folder: Path, console: Console, report: dict[str, Any]
) -> list[dict[str, Any]]:
    real, _ = locomo_turns_and_questions()
    rng = random.Random(1000)
    db = folder / "one.db"
    embedder = Prepared()
    clock = ManualClock(START)
    mem = AgentMemory(db, embedder=embedder, clock=clock, ids=SeededIdSource(3))
    ctx = AgentContext(agent_id="bench", tenant="bench", namespace="n")
    rows: list[dict[str, Any]] = []
    count = 0
    for size in sorted(checkpoints):
        texts = synthetic_turns(real, size - count, rng) if count else real[:size]
        if not count and len(texts) < size:
            texts += synthetic_turns(real, size - len(texts), rng)
        t0 = time.perf_counter()
        adds = grow(mem, clock, embedder, texts, ctx, count)
        count = size
        grow_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        mem.close()  # saves the index files of the tenant it wrote to
        close_s = time.perf_counter() - t0
        row = {
            "memories": size,
            "add_p50_ms": pct(adds, 50),
            "add_p95_ms": pct(adds, 95),
            "grow_s": round(grow_s, 1),
            "close_s": round(close_s, 1),
            **run_probe(db, ["bench"], queries),
            **file_sizes(db),  # after the first reader (it writes a missing or stale file)
            "load_average": os.getloadavg(),
        }
        console.print(row)
        rows.append(row)
        report["single_tenant"] = rows
        write(Path(report["out"]), report)
        mem = AgentMemory(db, embedder=embedder, clock=clock, ids=SeededIdSource(3 + size))
    mem.close()
    return rows


def many_tenants(
    tenants: int, per_tenant: int, queries: int, folder: Path, console: Console
) -> dict[str, Any]:
    real, _ = locomo_turns_and_questions()
    rng = random.Random(2000)
    db = folder / "many.db"
    embedder = Prepared()
    clock = ManualClock(START)
    mem = AgentMemory(db, embedder=embedder, clock=clock, ids=SeededIdSource(5))
    names = [f"tenant{i:03d}" for i in range(tenants)]
    adds: list[float] = []
    count = 0
    t0 = time.perf_counter()
    for name in names:
        ctx = AgentContext(agent_id="bench", tenant=name, namespace="n")
        adds += grow(mem, clock, embedder, synthetic_turns(real, per_tenant, rng), ctx, count)
        count += per_tenant
    grow_s = time.perf_counter() - t0
    mem.close()
    row = {
        "tenants": tenants,
        "per_tenant": per_tenant,
        "add_p50_ms": pct(adds, 50),
        "add_p95_ms": pct(adds, 95),
        "grow_s": round(grow_s, 1),
        **run_probe(db, names, queries),
        **file_sizes(db),
        "load_average": os.getloadavg(),
    }
    console.print(row)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoints", type=int, nargs="*", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--per-tenant", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--out", default="benchmarks/results/scale.json")
    parser.add_argument("--probe", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--probe-tenants", nargs="*", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(probe(args.probe, args.probe_tenants, args.queries)))
        return
    limit_blas_threads()
    console = Console()
    report: dict[str, Any] = {
        "embedder": "hashing (vectors computed before each timed add)",
        "cpus": os.cpu_count(),
        "load_average_start": os.getloadavg(),
        "out": args.out,
        "single_tenant": [],
        "many_tenants": None,
    }
    with tempfile.TemporaryDirectory() as tmp:
        single_tenant(args.checkpoints, args.queries, Path(tmp), console, report)
        if args.tenants:
            report["many_tenants"] = many_tenants(
                args.tenants, args.per_tenant, args.queries, Path(tmp), console
            )
    report["load_average_end"] = os.getloadavg()
    write(Path(args.out), report)
    console.print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
