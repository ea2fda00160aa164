"""One measured process of benchmarks/latency.py, driven over stdin/stdout (JSON lines).

It imports ``attestor_arango`` from wherever PYTHONPATH points, so the same driver can
time another commit's code (``latency.py --compare REV`` checks it out in a git
worktree) on the same data in the same run. Texts and their vectors come from the
files latency.py prepared (the vectors computed once by a real embedder, or by the
hashing one in synthetic mode), so no timed call embeds anything.

    python latency_worker.py DATA_DIR DB RETRIEVAL_JSON

Commands: {"cmd": "add", "hi": N} adds texts up to N; {"cmd": "recall", "q": i};
{"cmd": "rss"}; {"cmd": "gc"}; {"cmd": "close"}. Each answers one JSON line.
"""

from __future__ import annotations

import gc
import hashlib
import json
import resource
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

T_OPEN = time.perf_counter()

import numpy as np  # noqa: E402

from attestor_arango import AgentContext  # noqa: E402
from attestor_arango.clock import ManualClock, from_us  # noqa: E402
from attestor_arango.ids import SeededIdSource  # noqa: E402
from attestor_arango.memory import AgentMemory  # noqa: E402
from attestor_arango.retrieval import RetrievalConfig  # noqa: E402

try:  # the layout since session 6
    from attestor_arango.core.blas import limit_blas_threads
except ImportError:  # code from before it (--compare 6b1b05c): the same function, flat
    from attestor_arango.blas import limit_blas_threads  # type: ignore[no-redef]

START = 1_767_225_600_000_000
STEP = 1_000_000  # one second between adds: row i is written at START + i * STEP
AS_OF = START + 10**7 * STEP  # after every add: the same view for every code under test


class CachedVectors:
    """An embedder that serves vectors computed before the run, looked up by text."""

    def __init__(self, name: str, texts: list[str], vectors: np.ndarray) -> None:
        self.name = name
        self.dimension = int(vectors.shape[1])
        # keyed as the write path stores content (stripped)
        self._rows = {t.strip(): i for i, t in enumerate(texts)}
        self._vectors = vectors

    def embed(self, texts: list[str]) -> np.ndarray:
        try:
            rows = [self._rows[t.strip()] for t in texts]
            return np.asarray(self._vectors[rows], dtype=np.float32)
        except KeyError as exc:
            raise RuntimeError(f"no cached vector for {exc}") from exc


def rss_mb(field: str = "VmRSS") -> float:
    """Resident MB; RssFile is the mapped index files' pages (page cache, reclaimable)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stored_rows(db: str) -> int:
    if not Path(db).exists():
        return 0
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
    finally:
        conn.close()


def main() -> None:
    limit_blas_threads()  # what the CLI and servers do: one BLAS thread (core/blas.py)
    data, db, retrieval = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
    meta = json.loads((data / "meta.json").read_text())
    texts = json.loads((data / "texts.json").read_text())
    questions = json.loads((data / "questions.json").read_text())
    vectors = np.load(data / "vectors.npy", mmap_mode="r")
    embedder = CachedVectors(meta["embedder"], texts + questions, vectors)
    count = stored_rows(db)
    t0 = time.perf_counter()
    clock = ManualClock(START)
    # ids of a reopened store continue from another seed (the same ids for every code)
    mem = AgentMemory(db, embedder=embedder, clock=clock, ids=SeededIdSource(7 + count))
    mem.retrieval_config = RetrievalConfig.from_dict(retrieval)
    ctx = AgentContext(agent_id="bench", tenant="bench", namespace="n")
    out: dict[str, Any] = {
        "ready": True,
        "import_ms": (t0 - T_OPEN) * 1000,
        "open_ms": (time.perf_counter() - t0) * 1000,
    }
    print(json.dumps(out), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "add":
            times, cpu = [], []
            while count < cmd["hi"]:
                clock.set(START + count * STEP)
                t, c = time.perf_counter(), time.thread_time()
                mem.add(texts[count], context=ctx)
                times.append((time.perf_counter() - t) * 1000)
                cpu.append((time.thread_time() - c) * 1000)
                count += 1
            out = {"add_ms": times, "add_cpu_ms": cpu, "count": count}
        elif cmd["cmd"] == "recall":
            q = questions[cmd["q"]]
            clock.set(AS_OF + STEP)
            w, c = time.perf_counter(), time.process_time()
            response = mem.recall(q, context=ctx, as_of=from_us(AS_OF))
            wall, cpu = time.perf_counter() - w, time.process_time() - c
            digest = hashlib.sha256(response.model_dump_json().encode()).hexdigest()
            # the ranking alone (ids, scores, tokens in order): comparable across commits
            # whose response models differ in fields that do not rank
            ranked = "|".join(f"{r.memory.id}:{r.score!r}:{r.tokens}" for r in response.results)
            out = {
                "ms": wall * 1000,
                "cpu_ms": cpu * 1000,
                "results": len(response.results),
                "digest": digest,
                "ranking_digest": hashlib.sha256(ranked.encode()).hexdigest(),
            }
        elif cmd["cmd"] == "rss":
            out = {
                "rss_mb": rss_mb(),
                "rss_anon_mb": rss_mb("RssAnon"),
                "rss_file_mb": rss_mb("RssFile"),
            }
        elif cmd["cmd"] == "gc":
            t = time.perf_counter()
            gc.collect()
            out = {"gc_ms": (time.perf_counter() - t) * 1000}
        elif cmd["cmd"] == "close":
            t = time.perf_counter()
            mem.close()
            print(json.dumps({"close_ms": (time.perf_counter() - t) * 1000}), flush=True)
            return
        else:
            out = {"error": f"unknown command {cmd['cmd']!r}"}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
