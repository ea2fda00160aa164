"""Add and recall latency of the embedded store, as a user of it feels them.

One tenant, one namespace, grown to each size in turn (default 1k, 10k, 100k).
By default (``--data locomo``) the memories are the real LoCoMo turns of
/work/shared/data (conversations 26 and 30) followed by synthetic turns made of
their sentences under other speakers' names, the questions are LoCoMo's own. The
real turns and the questions are embedded once by the local MiniLM model; a
synthetic turn's vector is the normalised mean of its sentences' MiniLM vectors.
The vectors are cached as files under benchmarks/.cache/, so no timed call embeds.
``--data synthetic`` keeps the older pseudo-word texts and the hashing embedder.

At each size it reports, per code under test:
- add p50/p95 (while growing to the size);
- open and first recall of a fresh process on the closed store (import excluded,
  the median of ``--rounds`` processes), and its RSS after that recall;
- recall p50/p95/p99 wall time and median CPU time over ``--queries`` questions,
  after 10 warm-up recalls; RSS after them; one full garbage collection;
- a hash of every recall response at a fixed ``as_of`` (same inputs, same bytes:
  two codes that rank alike give the same hash).

``--compare REV`` runs the code of another commit (checked out in a git worktree)
in the same run on the same data: each side builds its own store, the first-recall
processes alternate, and the steady recalls are interleaved query by query, so a
ratio between the two is fair on a loaded machine even when absolute figures drift.
``--this REV`` runs a given commit as "this" (a worktree too), so a checkout that
moves on while a long run is under way does not change the code measured.

    .venv/bin/python benchmarks/latency.py [--sizes 1000 10000 100000] [--queries 200]
        [--data locomo|synthetic] [--compare REV] [--this REV] [--retrieval JSON] [--out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from latency_worker import limit_blas_threads  # its import works for code of either layout
from rich.console import Console
from rich.table import Table

from attestor_arango.embeddings import Embedder, HashingEmbedder

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("ATTESTOR_BENCH_CACHE", ROOT / "benchmarks" / ".cache"))
LOCOMO = Path(os.environ.get("ATTESTOR_LOCOMO_DIR", ROOT.parent / "shared" / "data" / "locomo"))
WORKER = Path(__file__).resolve().parent / "latency_worker.py"

SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "sa", "vor", "el", "qui", "dan", "pe", "ro", "zu", "ni"]
NAMES = ["Avery", "Jordan", "Priya", "Mateo", "Lena", "Kofi", "Sana", "Emil", "Noor", "Tomas"]
NAMES += ["Ines", "Ravi", "Yuki", "Omar", "Freya", "Diego", "Hana", "Luca", "Maya", "Felix"]


def make_vocab(size: int, rng: random.Random) -> list[str]:
    """Pseudo-words; drawn with Zipf weights below, so a few are common and most are rare."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


VOCAB = make_vocab(5000, random.Random(7))
ZIPF = [1.0 / (rank + 1) for rank in range(len(VOCAB))]


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(VOCAB, weights=ZIPF, k=rng.randint(6, 14)))


def synthetic_questions(rng: random.Random, n: int) -> list[str]:
    """The synthetic mode's queries: 2-5 vocabulary words."""
    return [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(2, 5))) for _ in range(n)]


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


def bench_queries(rng: random.Random, n: int) -> tuple[PrecomputedQueries, list[str]]:
    """Synthetic queries and a hashing embedder that has them ready (recall_profile.py)."""
    embedder = PrecomputedQueries(HashingEmbedder())
    queries = synthetic_questions(rng, n)
    embedder.prepare(queries)
    return embedder, queries


# data ---------------------------------------------------------------------------------------
def locomo_turns_and_questions() -> tuple[list[str], list[str]]:
    turns: list[str] = []
    questions: list[str] = []
    for name in ("26.json", "30.json"):
        raw = json.loads((LOCOMO / name).read_text())
        sessions = sorted(
            (k for k in raw if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k[8:])
        )
        for key in sessions:
            turns += [f"{t['speaker']}: {t['text']}" for t in raw[key]]
        questions += [str(qa["question"]) for qa in raw.get("qa", []) if qa.get("question")]
    return list(dict.fromkeys(turns)), list(dict.fromkeys(questions))


def _sentences(real: list[str]) -> list[str]:
    split = (re.split(r"(?<=[.!?])\s+", t.split(": ", 1)[-1]) for t in real)
    return list(dict.fromkeys(s for parts in split for s in parts if s))


def synthetic_turns_with_parts(
    real: list[str], n: int, rng: random.Random
) -> list[tuple[str, list[int]]]:
    """Turns made of real turns' sentences under other names (distinct, deterministic),
    each with the numbers of its sentences in ``_sentences(real)``."""
    sentences = _sentences(real)
    speakers = sorted({t.split(": ", 1)[0] for t in real})
    seen = set(real)
    out: list[tuple[str, list[int]]] = []
    while len(out) < n:
        parts = rng.sample(range(len(sentences)), rng.randint(1, 3))
        text = f"{rng.choice(NAMES)}: " + " ".join(sentences[i] for i in parts)
        for s in speakers:  # the real speakers' names, swapped for others
            text = text.replace(s, rng.choice(NAMES))
        if text not in seen:
            seen.add(text)
            out.append((text, parts))
    return out


def synthetic_turns(real: list[str], n: int, rng: random.Random) -> list[str]:
    return [text for text, _ in synthetic_turns_with_parts(real, n, rng)]


def _embed_all(embedder: Any, texts: list[str], console: Console) -> np.ndarray:
    console.print(f"embedding {len(texts):,} texts with {embedder.name} (once; cached)")
    chunks = [
        np.asarray(embedder.embed(texts[lo : lo + 256]), dtype=np.float32)
        for lo in range(0, len(texts), 256)
    ]
    return np.concatenate(chunks) if chunks else np.zeros((0, embedder.dimension), np.float32)


def prepare(mode: str, size: int, queries: int, console: Console) -> Path:
    """The texts, questions and vectors of a run, computed once and kept under .cache/."""
    key = hashlib.sha256(f"{mode}:{size}:{queries}:v2".encode()).hexdigest()[:16]
    folder = CACHE / f"{mode}-{size}-{key}"
    if (folder / "meta.json").exists():
        return folder
    rng = random.Random(42)
    if mode == "locomo":
        # real turns and questions embedded by MiniLM; a synthetic turn's vector is the
        # normalised mean of its sentences' MiniLM vectors (embedding 100k turns one by
        # one would take over half an hour on this shared machine)
        from attestor_arango.embeddings import LocalMiniLMEmbedder

        embedder: Any = LocalMiniLMEmbedder()
        real, questions = locomo_turns_and_questions()
        questions = questions[:queries]
        synthetic = synthetic_turns_with_parts(real, max(0, size - len(real)), rng)
        texts = real[:size] + [text for text, _ in synthetic]
        direct = _embed_all(embedder, real[:size] + questions, console)
        head = direct[: min(size, len(real))]
        parts = [head]
        if synthetic:
            sentence_vectors = _embed_all(embedder, _sentences(real), console)
            mixed = np.stack([sentence_vectors[p].mean(axis=0) for _, p in synthetic])
            mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
            parts.append(mixed.astype(np.float32))
        vectors = np.concatenate([*parts, direct[len(head) :]])
    else:
        texts = [sentence(rng) + f" #{i}" for i in range(size)]
        questions = synthetic_questions(rng, queries)
        embedder = HashingEmbedder()
        vectors = _embed_all(embedder, texts + questions, console)
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "vectors.npy", vectors)
    (folder / "texts.json").write_text(json.dumps(texts))
    (folder / "questions.json").write_text(json.dumps(questions))
    meta = {"mode": mode, "embedder": embedder.name, "texts": len(texts), "questions": queries}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


# workers ------------------------------------------------------------------------------------
class Worker:
    """One process of latency_worker.py running the code at ``code`` on store ``db``."""

    def __init__(self, code: Path, data: Path, db: Path, retrieval: dict[str, Any]) -> None:
        env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), str(data), str(db), json.dumps(retrieval)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(code),
        )
        self.ready = self._read()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker exited with {self.proc.wait()}")
        out: dict[str, Any] = json.loads(line)
        return out

    def send(self, **cmd: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> float:
        out = self.send(cmd="close")
        self.proc.wait(timeout=600)
        return float(out["close_ms"])


def pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(np.array(values), q)), 3)


def worktree(rev: str, console: Console) -> Path:
    path = Path(tempfile.mkdtemp(prefix="latency-compare-"))
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), rev],
        check=True,
        capture_output=True,
    )
    sha = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    console.print(f"comparing with {rev} ({sha}) checked out at {path}")
    return path


def measure_size(
    codes: dict[str, Path],
    dbs: dict[str, Path],
    data: Path,
    size: int,
    queries: int,
    rounds: int,
    retrieval: dict[str, Any],
    console: Console,
) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {label: {"memories": size} for label in codes}
    for label, code in codes.items():  # grow each side's store, then close it (saves files)
        w = Worker(code, data, dbs[label], retrieval)
        added = w.send(cmd="add", hi=size)["add_ms"]
        rows[label]["close_ms"] = round(w.close(), 1)
        if added:
            rows[label]["add_p50_ms"] = pct(added, 50)
            rows[label]["add_p95_ms"] = pct(added, 95)
            rows[label]["adds_timed"] = len(added)
    firsts: dict[str, list[tuple[float, float, float]]] = {label: [] for label in codes}
    for r in range(rounds):  # fresh processes on the closed store, alternating sides
        for label in codes if r % 2 == 0 else list(codes)[::-1]:
            w = Worker(codes[label], data, dbs[label], retrieval)
            first = w.send(cmd="recall", q=0)["ms"]
            rss = w.send(cmd="rss")["rss_mb"]
            firsts[label].append((w.ready["open_ms"], first, rss))
            w.close()
    for label in codes:
        opens, first, rss = zip(*firsts[label], strict=True)
        rows[label]["open_ms"] = round(statistics.median(opens), 1)
        rows[label]["first_recall_ms"] = round(statistics.median(first), 1)
        rows[label]["rss_after_first_recall_mb"] = round(statistics.median(rss), 1)
    workers = {label: Worker(codes[label], data, dbs[label], retrieval) for label in codes}
    for w in workers.values():
        for q in range(min(10, queries)):
            w.send(cmd="recall", q=q)
    times: dict[str, list[dict[str, Any]]] = {label: [] for label in codes}
    order = list(workers)
    for q in range(queries):  # query by query, each side in turn (alternating who goes first)
        for label in order if q % 2 == 0 else order[::-1]:
            times[label].append(workers[label].send(cmd="recall", q=q))
    for label, w in workers.items():
        wall = [t["ms"] for t in times[label]]
        cpu = [t["cpu_ms"] for t in times[label]]
        digest = hashlib.sha256("".join(t["digest"] for t in times[label]).encode())
        ranking = hashlib.sha256("".join(t["ranking_digest"] for t in times[label]).encode())
        rows[label].update(
            recall_p50_ms=pct(wall, 50),
            recall_p95_ms=pct(wall, 95),
            recall_p99_ms=pct(wall, 99),
            recall_cpu_p50_ms=pct(cpu, 50),
            recall_cpu_mean_ms=round(statistics.mean(cpu), 3),
            results_per_recall=round(statistics.mean(t["results"] for t in times[label]), 1),
            **{k: round(v, 1) for k, v in w.send(cmd="rss").items()},
            full_gc_ms=round(w.send(cmd="gc")["gc_ms"], 2),
            recall_hash=digest.hexdigest()[:16],
            ranking_hash=ranking.hexdigest()[:16],
            recalls_timed=len(wall),
        )
        w.close()
    if len(codes) == 2:
        # the same query on both sides, one right after the other: the median of the
        # per-query CPU ratios shrugs off load that changes over the run
        this, other = (times[label] for label in codes)
        ratios = [a["cpu_ms"] / b["cpu_ms"] for a, b in zip(this, other, strict=True)]
        rows["this"]["recall_cpu_paired_ratio"] = round(statistics.median(ratios), 3)
    for label in codes:
        console.print(label, rows[label])
    return rows


METRICS = [
    ("add_p50_ms", "add p50 ms"),
    ("add_p95_ms", "add p95 ms"),
    ("open_ms", "open ms (fresh process)"),
    ("first_recall_ms", "first recall ms"),
    ("rss_after_first_recall_mb", "RSS after first recall MB"),
    ("recall_p50_ms", "recall p50 ms"),
    ("recall_p95_ms", "recall p95 ms"),
    ("recall_p99_ms", "recall p99 ms"),
    ("recall_cpu_p50_ms", "recall CPU p50 ms"),
    ("recall_cpu_mean_ms", "recall CPU mean ms"),
    ("recall_cpu_paired_ratio", "median per-query CPU ratio"),
    ("rss_mb", "RSS after recalls MB"),
    ("rss_anon_mb", "  of it anonymous MB"),
    ("rss_file_mb", "  of it mapped files MB"),
    ("full_gc_ms", "full GC ms"),
    ("results_per_recall", "results per recall"),
    ("recall_hash", "recall hash"),
    ("ranking_hash", "ranking hash (ids, scores, tokens)"),
]


def main() -> None:
    limit_blas_threads()  # what the CLI and servers do: one BLAS thread (core/blas.py)
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes per first recall")
    parser.add_argument("--data", choices=["locomo", "synthetic"], default="locomo")
    parser.add_argument("--compare", default=None, help="another commit to run alongside")
    parser.add_argument(
        "--this", default=None, help="run this commit (a worktree) instead of the checkout"
    )
    parser.add_argument("--retrieval", default="{}", help="JSON overrides of RetrievalConfig")
    parser.add_argument("--out", default="benchmarks/results/latency.json")
    args = parser.parse_args()
    retrieval = json.loads(args.retrieval)
    console = Console()
    load_before = os.getloadavg()
    data = prepare(args.data, max(args.sizes), args.queries, console)
    queries = min(args.queries, len(json.loads((data / "questions.json").read_text())))
    trees = [worktree(rev, console) for rev in (args.this, args.compare) if rev]
    codes = {"this": trees[0] if args.this else ROOT}
    if args.compare:
        codes[args.compare] = trees[-1]
    results: list[dict[str, dict[str, Any]]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            dbs = {label: Path(tmp) / f"{i}" / "bench.db" for i, label in enumerate(codes)}
            for size in sorted(args.sizes):
                results.append(
                    measure_size(codes, dbs, data, size, queries, args.rounds, retrieval, console)
                )
    finally:
        for tree in trees:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                check=False,
                capture_output=True,
            )
    load_after = os.getloadavg()
    meta = json.loads((data / "meta.json").read_text())
    for rows in results:
        table = Table(title=f"{rows['this']['memories']:,} memories ({meta['embedder']})")
        table.add_column("metric")
        for label in codes:
            table.add_column(label, justify="right")
        if args.compare:
            table.add_column(f"this / {args.compare}", justify="right")
        for key, name in METRICS:
            values = [rows[label].get(key) for label in codes]
            cells = [
                "" if v is None else (f"{v:,.2f}" if isinstance(v, float) else str(v))
                for v in values
            ]
            if args.compare:
                a, b = values
                if key == "recall_cpu_paired_ratio":  # a ratio already, of this side only
                    cells.append("" if a is None else f"{a:.3f}")
                elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
                    cells.append(f"{a / b:.2f}")
                else:
                    cells.append("same" if a == b else "DIFFERENT")
            table.add_row(name, *cells)
        console.print(table)
    console.print(f"load average before {load_before}, after {load_after}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "data": meta,
                "compare": args.compare,
                "python": platform.python_version(),
                "machine": platform.machine(),
                "cpus": os.cpu_count(),
                "load_average_before": load_before,
                "load_average_after": load_after,
                "retrieval_overrides": retrieval,
                "results": results,
            },
            indent=2,
        )
    )
    console.print(f"wrote {out}")


if __name__ == "__main__":
    main()
