"""The embedded store at scale: one tenant grown to a million memories, and many tenants.

Data (``scale_data``): the 788 real LoCoMo turns (conversations 26 and 30), then
synthetic turns made of their sentences under other names (``latency.py``'s
generator, seed 42, so the first 100k are latency.py's cached 100k), with MiniLM
vectors computed without MiniLM at run time: a real turn keeps its own MiniLM vector
and a synthetic turn gets the normalised mean of its sentences' MiniLM vectors (the
2,126 sentences are embedded once; everything is cached under benchmarks/.cache/).
So no timed call embeds, texts and vectors agree, and the vectors have MiniLM's
geometry. The corpus reuses 2,126 sentences: at 1M a one-sentence turn shares its
vector with ~150 others and every sentence's words occur in ~900 rows, which makes
the exact-tie handling of the vector lane and the postings of the text lane longer
than in a real corpus of that size (pessimistic for recall time).

Single tenant (``--checkpoints``, default 100k / 300k / 1M), one store grown through
them. Before each checkpoint the rows are written in bulk as ``import_user`` writes
them (``Store.insert_memory`` in transactions of ``--batch`` rows: the same rows and
indexes, no audit entry per row), then the last ``--window`` rows one by one through
``AgentMemory.add`` (the full write path: dedup, quota, signing, audit chain, its own
commit), each timed (wall and CPU time of the thread). At each checkpoint it closes
the store (timed: the close writes the tenant's index files), reports the sizes of
the SQLite file and the index files, then starts fresh processes on it: open time,
first-recall time and RSS, and recall p50/p95 over LoCoMo's questions after a warm-up.

Many tenants (``--tenants N --per-tenant M``): N tenants of M memories each in one
file (slices of the same corpus, written the same way, the last ``--window`` adds
spread over the tenants), then a fresh process recalls round-robin over them (each
tenant's first recall opens its index: reported separately from the steady recalls).

    .venv/bin/python benchmarks/scale.py [--checkpoints 100000 300000 1000000]
        [--tenants 100 --per-tenant 10000] [--queries 100] [--out FILE]

Timings are wall clock on a shared 2-core machine: the report keeps ``uptime`` load
averages at the start, at every checkpoint and at the end, and add CPU time beside
the wall time (a descheduled add shows in its wall time only).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
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

from latency import CACHE, _sentences, locomo_turns_and_questions, synthetic_turns_with_parts

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock, from_us
from attestor_arango.core.blas import limit_blas_threads
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.models import Memory, Provenance, content_hash
from attestor_arango.store.protocol import EmbeddingSpace

START = 1_767_225_600_000_000
STEP = 1_000_000  # one second between rows: row i is written at START + i * STEP
EMBEDDER = "minilm-l6-v2-int8-onnx"


# data -------------------------------------------------------------------------------------
def scale_data(size: int, console: Console, vectors: str = "minilm") -> Path:
    """Texts, vectors (float32 .npy) and questions of ``size`` rows, built once and cached.

    ``vectors="hashing"``: the hashing embedder's vectors of the same texts (no model;
    for tiny runs such as the test that keeps this script working).
    """
    folder = CACHE / (f"scale-{size}-v1" if vectors == "minilm" else f"scale-{size}-{vectors}")
    if (folder / "meta.json").exists():
        return folder
    real, questions = locomo_turns_and_questions()
    if vectors == "hashing":
        rng = random.Random(42)
        texts = real[:size] + [t for t, _ in synthetic_turns_with_parts(real, size - 788, rng)]
        texts = texts[:size]
        embedder = HashingEmbedder()
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / "vectors.npy", np.asarray(embedder.embed(texts), dtype=np.float32))
        np.save(folder / "questions.npy", np.asarray(embedder.embed(questions), np.float32))
        (folder / "texts.json").write_text(json.dumps(texts))
        (folder / "questions.json").write_text(json.dumps(questions))
        meta = {"embedder": embedder.name, "texts": len(texts), "questions": len(questions)}
        (folder / "meta.json").write_text(json.dumps(meta))
        return folder
    sentences = _sentences(real)
    known = CACHE / "scale-minilm-v1"
    if not (known / "meta.json").exists():
        from attestor_arango.embeddings import LocalMiniLMEmbedder

        console.print(f"embedding {len(real)} turns, {len(sentences)} sentences, questions")
        embedder = LocalMiniLMEmbedder()
        known.mkdir(parents=True, exist_ok=True)
        for name, texts in (("real", real), ("sentences", sentences), ("questions", questions)):
            chunks = [embedder.embed(texts[lo : lo + 128]) for lo in range(0, len(texts), 128)]
            np.save(known / f"{name}.npy", np.concatenate(chunks).astype(np.float32))
        (known / "meta.json").write_text(json.dumps({"embedder": embedder.name}))
    real_v = np.load(known / "real.npy")
    sentence_v = np.load(known / "sentences.npy").astype(np.float64)
    synthetic = synthetic_turns_with_parts(real, max(0, size - len(real)), random.Random(42))
    texts = real[:size] + [text for text, _ in synthetic]
    folder.mkdir(parents=True, exist_ok=True)
    out = np.lib.format.open_memmap(
        folder / "vectors.npy", mode="w+", dtype=np.float32, shape=(len(texts), 384)
    )
    head = min(size, len(real))
    out[:head] = real_v[:head]
    for lo in range(0, len(synthetic), 50_000):  # the mean of 1-3 sentence vectors, normalised
        part = synthetic[lo : lo + 50_000]
        mixed = np.zeros((len(part), 384))
        for j, (_, parts) in enumerate(part):
            mixed[j] = sentence_v[parts].mean(axis=0)
        mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
        out[head + lo : head + lo + len(part)] = mixed
    out.flush()
    del out
    np.save(folder / "questions.npy", np.load(known / "questions.npy"))
    (folder / "texts.json").write_text(json.dumps(texts))
    (folder / "questions.json").write_text(json.dumps(questions))
    meta = {"embedder": EMBEDDER, "texts": len(texts), "questions": len(questions)}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


class CachedVectors:
    """Serves precomputed vectors by text (as the write path stores it: stripped)."""

    def __init__(self, texts: list[str], vectors: np.ndarray, name: str = EMBEDDER) -> None:
        self.name = name
        self.dimension = int(vectors.shape[1])
        self._rows = {t.strip(): i for i, t in enumerate(texts)}
        self._vectors = vectors

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = [self._rows[t.strip()] for t in texts]
        return np.asarray(self._vectors[rows], dtype=np.float32)


def load_data(folder: Path) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    texts = json.loads((folder / "texts.json").read_text())
    questions = json.loads((folder / "questions.json").read_text())
    vectors = np.load(folder / "vectors.npy", mmap_mode="r")
    return texts, vectors, questions, np.load(folder / "questions.npy")


# measuring --------------------------------------------------------------------------------
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


def uptime() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def probe(data: str, db: str, tenants: list[str], queries: int) -> dict[str, Any]:
    """In a fresh process: open, first recall per tenant, then steady recalls."""
    limit_blas_threads()
    questions = json.loads((Path(data) / "questions.json").read_text())[:queries]
    name = json.loads((Path(data) / "meta.json").read_text())["embedder"]
    embedder = CachedVectors(questions, np.load(Path(data) / "questions.npy")[:queries], name)
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
    cpu: list[float] = []
    for i, q in enumerate(questions):
        ctx = contexts[i % len(contexts)]
        t, c = time.perf_counter(), time.thread_time()
        mem.recall(q, context=ctx, as_of=as_of)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.thread_time() - c) * 1000)
    out = {
        "open_ms": round(open_ms, 1),
        "first_recall_ms": round(firsts[0], 1),
        "first_recall_per_tenant_p50_ms": round(statistics.median(firsts), 1),
        "rss_after_first_recalls_mb": round(rss_first, 1),
        "recall_p50_ms": pct(wall, 50),
        "recall_p95_ms": pct(wall, 95),
        "recall_cpu_p50_ms": pct(cpu, 50),
        "recall_cpu_p95_ms": pct(cpu, 95),
        "rss_mb": round(rss_mb(), 1),
        "rss_anon_mb": round(rss_mb("RssAnon"), 1),
        "rss_file_mb": round(rss_mb("RssFile"), 1),
    }
    mem.close()
    return out


def run_probe(data: Path, db: Path, tenants: list[str], queries: int) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--probe", str(db), "--data", str(data)]
    cmd += ["--queries", str(queries), "--probe-tenants", *tenants]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# writing ----------------------------------------------------------------------------------
class Grower:
    """Writes rows ``lo..hi`` of the corpus into one store, in bulk or one add at a time."""

    def __init__(
        self, db: Path, texts: list[str], vectors: np.ndarray, seed: int, name: str = EMBEDDER
    ) -> None:
        self.db, self.texts, self.vectors, self.seed = db, texts, vectors, seed
        self.embedder = CachedVectors(texts, vectors, name)
        self.clock = ManualClock(START)
        self.ids = SeededIdSource(seed)
        self.mem = self._open()

    def _open(self) -> AgentMemory:
        return AgentMemory(self.db, embedder=self.embedder, clock=self.clock, ids=self.ids)

    def bulk(self, ctx: AgentContext, lo: int, hi: int, batch: int) -> None:
        """Rows as ``import_user`` writes them: ``Store.insert_memory`` in transactions."""
        store = self.mem.store
        scope = self.mem.runtime.scope(ctx)
        if store.get_embedding_space(scope) is None:
            space = EmbeddingSpace(self.embedder.name, self.embedder.dimension)
            store.set_embedding_space(scope, space)
        provenance = Provenance(agent_id=ctx.agent_id, role=ctx.role.value)
        for start in range(lo, hi, batch):
            end = min(start + batch, hi)
            block = np.asarray(self.vectors[start:end], dtype=np.float32)
            with store.transaction():
                for i in range(start, end):
                    now = START + i * STEP
                    text = self.texts[i].strip()
                    memory = Memory(
                        id=self.ids.new_id(now),
                        tenant=ctx.tenant,
                        namespace=ctx.namespace,
                        content=text,
                        valid_from=from_us(now),
                        t_created=from_us(now),
                        provenance=provenance,
                        content_hash=content_hash(text),
                    )
                    store.insert_memory(scope, memory, block[i - start])
        self.clock.set(START + hi * STEP)

    def adds(self, ctx: AgentContext, lo: int, hi: int) -> tuple[list[float], list[float]]:
        """Rows one by one through ``AgentMemory.add``: wall and CPU ms of each."""
        wall: list[float] = []
        cpu: list[float] = []
        for i in range(lo, hi):
            self.clock.set(START + i * STEP)
            t, c = time.perf_counter(), time.thread_time()
            self.mem.add(self.texts[i], context=ctx)
            wall.append((time.perf_counter() - t) * 1000)
            cpu.append((time.thread_time() - c) * 1000)
        return wall, cpu

    def close(self) -> float:
        """Closes the store (it writes the index files of the tenants it wrote to): seconds."""
        t0 = time.perf_counter()
        self.mem.close()
        return time.perf_counter() - t0

    def reopen(self) -> None:
        self.mem = self._open()


def add_figures(wall: list[float], cpu: list[float]) -> dict[str, Any]:
    return {
        "adds_timed": len(wall),
        "add_p50_ms": pct(wall, 50),
        "add_p95_ms": pct(wall, 95),
        "add_cpu_p50_ms": pct(cpu, 50),
        "add_cpu_p95_ms": pct(cpu, 95),
    }


def write(out: Path, report: dict[str, Any]) -> None:
    """The report so far (written after every checkpoint: a long run stopped early keeps it)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))


def single_tenant(
    args: argparse.Namespace, data: Path, folder: Path, console: Console, report: dict[str, Any]
) -> None:
    texts, vectors, _, _ = load_data(data)
    db = folder / "one.db"
    grower = Grower(db, texts, vectors, 3, json.loads((data / "meta.json").read_text())["embedder"])
    ctx = AgentContext(agent_id="bench", tenant="bench", namespace="n")
    count = 0
    for size in sorted(args.checkpoints):
        window = min(args.window, size - count)
        t0 = time.perf_counter()
        grower.bulk(ctx, count, size - window, args.batch)
        bulk_s = time.perf_counter() - t0
        wall, cpu = grower.adds(ctx, size - window, size)
        count = size
        row: dict[str, Any] = {
            "memories": size,
            "load_before": uptime(),
            "bulk_s": round(bulk_s, 1),
            **add_figures(wall, cpu),
            "close_s": round(grower.close(), 1),
            **run_probe(data, db, ["bench"], args.queries),
            **file_sizes(db),  # after the first reader (it writes a missing or stale file)
            "load_after": uptime(),
        }
        console.print(row)
        report["single_tenant"].append(row)
        write(Path(args.out), report)
        grower.reopen()
    grower.close()
    if not args.keep:
        for p in folder.glob("one.db*"):
            shutil.rmtree(p) if p.is_dir() else p.unlink()


def many_tenants(
    args: argparse.Namespace, data: Path, folder: Path, console: Console
) -> dict[str, Any]:
    texts, vectors, _, _ = load_data(data)
    db = folder / "many.db"
    grower = Grower(db, texts, vectors, 5, json.loads((data / "meta.json").read_text())["embedder"])
    names = [f"tenant{i:03d}" for i in range(args.tenants)]
    per = args.per_tenant
    timed = min(per, max(1, args.window // args.tenants))  # adds timed per tenant, at its end
    wall: list[float] = []
    cpu: list[float] = []
    load_before = uptime()
    t0 = time.perf_counter()
    for t, name in enumerate(names):
        ctx = AgentContext(agent_id="bench", tenant=name, namespace="n")
        lo = t * per
        grower.bulk(ctx, lo, lo + per - timed, args.batch)
        w, c = grower.adds(ctx, lo + per - timed, lo + per)
        wall += w
        cpu += c
    grow_s = time.perf_counter() - t0
    row = {
        "tenants": args.tenants,
        "per_tenant": per,
        "load_before": load_before,
        "grow_s": round(grow_s, 1),
        **add_figures(wall, cpu),
        "close_s": round(grower.close(), 1),
        **run_probe(data, db, names, args.queries),
        **file_sizes(db),
        "load_after": uptime(),
    }
    console.print(row)
    return row


def finish_many(args: argparse.Namespace, data: Path, console: Console) -> dict[str, Any]:
    """A many-tenant store whose writer was stopped early: its first ``--tenants`` tenants.

    What the stopped writer's close would have done (write the index files of the
    tenants it wrote to) is done by a store opened on the file with those tenants
    marked as written; then the same probe as ``many_tenants``.
    """
    from attestor_arango.store.embedded.store import SQLiteStore

    db = Path(args.finish_many)
    names = [f"tenant{i:03d}" for i in range(args.tenants)]
    store = SQLiteStore(db)
    store.persisted.written.update(names)  # the stopped writer's close, replayed
    load_before = uptime()
    t0 = time.perf_counter()
    store.close()
    row = {
        "tenants": args.tenants,
        "per_tenant": args.per_tenant,
        "note": "writer stopped early (session time); its close replayed on the file",
        "load_before": load_before,
        "close_s": round(time.perf_counter() - t0, 1),
        **run_probe(data, db, names, args.queries),
        **file_sizes(db),
        "load_after": uptime(),
    }
    console.print(row)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoints", type=int, nargs="*", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--per-tenant", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--window", type=int, default=2000, help="adds timed per checkpoint")
    parser.add_argument("--batch", type=int, default=5000, help="rows per bulk transaction")
    parser.add_argument("--folder", default=None, help="where the stores go (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the stores (in --folder)")
    parser.add_argument("--out", default="benchmarks/results/scale.json")
    parser.add_argument("--finish-many", default=None, help="a stopped many-tenant store")
    parser.add_argument("--vectors", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument("--corpus", type=int, default=None, help="rows of the corpus built")
    parser.add_argument("--data", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--probe", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--probe-tenants", nargs="*", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(probe(args.data, args.probe, args.probe_tenants, args.queries)))
        return
    limit_blas_threads()
    console = Console()
    largest = max([*args.checkpoints, args.tenants * args.per_tenant if args.tenants else 0])
    data = scale_data(args.corpus or largest, console, args.vectors)
    report: dict[str, Any] = {
        "data": "LoCoMo 26+30 turns, then synthetic turns of their sentences; MiniLM vectors "
        "(a synthetic turn: normalised mean of its sentences' MiniLM vectors)",
        "writes": f"bulk: Store.insert_memory in transactions of {args.batch} (as import_user); "
        f"timed: the last {args.window} rows before each checkpoint through AgentMemory.add",
        "command": " ".join(["benchmarks/scale.py", *sys.argv[1:]]),
        "cpus": os.cpu_count(),
        "load_start": uptime(),
        "out": args.out,
        "single_tenant": [],
        "many_tenants": None,
    }
    if args.finish_many:
        report["many_tenants"] = finish_many(args, data, console)
        report["load_end"] = uptime()
        write(Path(args.out), report)
        return
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        folder = Path(args.folder) if args.keep and args.folder else Path(tmp)
        if args.checkpoints:
            single_tenant(args, data, folder, console, report)
        if args.tenants:
            report["many_tenants"] = many_tenants(args, data, folder, console)
            write(Path(args.out), report)
    report["load_end"] = uptime()
    write(Path(args.out), report)
    console.print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
